// tk::Graph (include/tk/Graph.h): stream capture and replay through the
// CUDA driver's graph entry points (CudaDriver's optional ones). Every
// failure is a tk::Error with the driver's message; nothing prints.
#include "runtime/PublicApiImpl.h"
#include "tk/Graph.h"

namespace tk {
namespace {

// cuda.h's CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: only this thread's unsafe
// calls (a synchronize, an allocation) invalidate the capture.
constexpr int kCaptureThreadLocal = 1;

// The CUDA driver with its graph entry points, or a thrown Error saying why
// not.
CudaDriver &graphDriver(const char *what) {
  std::string error;
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  if (r.hip)
    throw Error(std::string(what) + ": CUDA graphs need the CUDA driver (tk::Graph does not "
                                    "support the HIP runtime)");
  if (!r.cuda->hasGraphs(error))
    throw Error(std::string(what) + ": " + error);
  return *r.cuda;
}

CUstream cudaStream(const Stream &stream) { return static_cast<CUstream>(stream.handle()); }

} // namespace

void Graph::beginCapture(const Stream &stream) {
  CudaDriver &cuda = graphDriver("tk::Graph::beginCapture");
  if (!stream.handle())
    throw Error("tk::Graph::beginCapture: the legacy default stream (tk::Stream()) cannot be "
                "captured; capture a stream of Stream::create()");
  std::string error;
  if (!cuda.check(cuda.api().cuStreamBeginCapture(cudaStream(stream), kCaptureThreadLocal),
                  "cuStreamBeginCapture", error))
    throw Error(error);
}

Graph Graph::endCapture(const Stream &stream) {
  CudaDriver &cuda = graphDriver("tk::Graph::endCapture");
  std::string error;
  Graph out;
  CUgraph graph = nullptr;
  bool ended = cuda.check(cuda.api().cuStreamEndCapture(cudaStream(stream), &graph),
                          "cuStreamEndCapture", error);
  out.graph_ = graph; // destroyed by `out` on any failure below
  if (!ended)
    throw Error(error);
  CUgraphExec exec = nullptr;
  if (!cuda.check(cuda.api().cuGraphInstantiateWithFlags(&exec, graph, 0),
                  "cuGraphInstantiateWithFlags", error))
    throw Error(error);
  out.exec_ = exec;
  return out;
}

void Graph::abandonCapture(const Stream &stream) noexcept {
  std::string error;
  CudaDriver *cuda = CudaDriver::get(error);
  if (!cuda || !cuda->api().cuStreamEndCapture || !cuda->api().cuGraphDestroy)
    return;
  CUgraph graph = nullptr;
  if (cuda->api().cuStreamEndCapture(cudaStream(stream), &graph) == 0 && graph)
    cuda->api().cuGraphDestroy(graph);
}

Status Graph::tryLaunch(const Stream &stream) const noexcept {
  if (!exec_)
    return Status::failure("tk::Graph::launch: the graph is empty (default-constructed or "
                           "moved from)");
  std::string error;
  CudaDriver *cuda = CudaDriver::get(error);
  if (!cuda)
    return Status::failure(error);
  if (!cuda->check(cuda->api().cuGraphLaunch(static_cast<CUgraphExec>(exec_), cudaStream(stream)),
                   "cuGraphLaunch", error))
    return Status::failure(error);
  return {};
}

void Graph::launch(const Stream &stream) const { check(tryLaunch(stream)); }

void Graph::release() noexcept {
  if (exec_ || graph_) {
    std::string error;
    if (CudaDriver *cuda = CudaDriver::get(error)) {
      if (exec_)
        cuda->api().cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
      if (graph_)
        cuda->api().cuGraphDestroy(static_cast<CUgraph>(graph_));
    }
  }
  exec_ = nullptr;
  graph_ = nullptr;
}

Graph::~Graph() { release(); }

Graph::Graph(Graph &&other) noexcept : graph_(other.graph_), exec_(other.exec_) {
  other.graph_ = nullptr;
  other.exec_ = nullptr;
}

Graph &Graph::operator=(Graph &&other) noexcept {
  if (this != &other) {
    release();
    graph_ = std::exchange(other.graph_, nullptr);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

} // namespace tk
