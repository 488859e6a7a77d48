// tk/Graph.h: record a sequence of launches on a stream once as a CUDA
// graph, then replay it with one call (cuGraphLaunch) instead of one
// cuLaunchKernel per kernel: what a decode step of a model wants, where the
// host's launch overhead is of the order of the kernels' run time.
//
//   tk::Stream stream = tk::Stream::create();        // not the legacy default stream
//   step(stream);                                     // compile, autotune and warm up first
//   stream.synchronize();
//   tk::Graph graph = tk::Graph::capture(stream, [&] { step(stream); });
//   for (...) graph.launch(stream);                   // the same launches, same arguments
//   stream.synchronize();
//
// Capture (cuStreamBeginCapture in CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
// cuStreamEndCapture, cuGraphInstantiateWithFlags) records what the calling
// thread queues on the stream; nothing runs until launch(). A replay runs the
// recorded kernels with the recorded arguments: the same device buffers and
// scalars (write new inputs into the same buffers between replays). While
// capturing, the thread must not synchronize, allocate or copy through the
// legacy default stream, which is why everything a launch compiles or tunes
// must have happened before (a first launch of each kernel with the same
// argument facts, an Autotuner's first launch of each key). Capturing the
// legacy default stream (tk::Stream()) is an error: the driver refuses it.
//
// Failures throw tk::Error with the driver's message and its CUDA error name
// (Error::cudaError(): "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED" when a launch
// failed during capture, for instance); on the HIP runtime, or with a CUDA
// driver that has no graph entry points, capture throws. A Graph is
// move-only and destroys its graph and executable graph when it goes.
#pragma once

#include "tk/Device.h"
#include "tk/Error.h"

#include <utility>

namespace tk {

class Graph {
public:
  Graph() = default;
  ~Graph();
  Graph(Graph &&other) noexcept;
  Graph &operator=(Graph &&other) noexcept;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  /// Starts recording `stream` (throws if the driver refuses).
  static void beginCapture(const Stream &stream);
  /// Ends the recording begun by beginCapture and instantiates the graph.
  /// Throws if the capture failed; the stream is no longer capturing
  /// either way.
  static Graph endCapture(const Stream &stream);
  /// beginCapture, `record()`, endCapture. If `record` throws, the capture
  /// is ended (its graph dropped) and the exception propagates.
  template <class F> static Graph capture(const Stream &stream, F &&record) {
    beginCapture(stream);
    try {
      std::forward<F>(record)();
    } catch (...) {
      abandonCapture(stream);
      throw;
    }
    return endCapture(stream);
  }

  /// Replays the graph on `stream` (any stream; asynchronous like a launch).
  void launch(const Stream &stream) const;
  Status tryLaunch(const Stream &stream) const noexcept;

  bool valid() const { return exec_ != nullptr; }
  /// The driver's CUgraph and CUgraphExec, for callers that go on with the
  /// driver API (valid while this Graph lives).
  void *graph() const { return graph_; }
  void *executable() const { return exec_; }

private:
  /// Ends a capture whose recording failed, dropping what it recorded;
  /// never throws.
  static void abandonCapture(const Stream &stream) noexcept;
  void release() noexcept;
  void *graph_ = nullptr;
  void *exec_ = nullptr;
};

} // namespace tk
