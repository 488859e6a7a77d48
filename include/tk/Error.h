// tk/Error.h: how the public C++ API reports failures. Every call that can
// fail throws tk::Error; the try* variants return a tk::Status instead and
// never throw. Nothing in tk aborts or prints.
//
//   try {
//     tk::Kernel k = tk::Kernel::fromFile("softmax.tk", opts);
//   } catch (const tk::Error &e) {
//     std::cerr << e.what();       // rendered diagnostics or the driver's message
//     if (e.cudaError() == "CUDA_ERROR_OUT_OF_MEMORY") ...
//   }
//
//   tk::Status s = kernel.tryLaunch(grid, args);
//   if (!s) std::cerr << s.message << " (" << s.cudaError << ")\n";
#pragma once

#include <stdexcept>
#include <string>

namespace tk {

/// The outcome of a non-throwing call: ok() or a message, plus the CUDA
/// error's name ("CUDA_ERROR_INVALID_VALUE") when the driver reported one.
struct Status {
  std::string message;   // empty when ok
  std::string cudaError; // empty unless a CUDA call failed

  bool ok() const { return message.empty(); }
  explicit operator bool() const { return ok(); }
  /// A failure from a message; the CUDA error name is taken from it when it
  /// names one ("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)").
  static Status failure(std::string message);
};

/// What the throwing calls throw.
class Error : public std::runtime_error {
public:
  explicit Error(const Status &status)
      : std::runtime_error(status.message), cudaError_(status.cudaError) {}
  explicit Error(const std::string &message) : Error(Status::failure(message)) {}
  /// "CUDA_ERROR_..." or "" when the failure was not the driver's.
  const std::string &cudaError() const { return cudaError_; }

private:
  std::string cudaError_;
};

/// Throws `status` as an Error unless it is ok.
inline void check(const Status &status) {
  if (!status.ok())
    throw Error(status);
}

} // namespace tk
