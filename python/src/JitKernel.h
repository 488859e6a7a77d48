// JitKernel: one @tk.jit kernel compiled for one specialisation, as the
// Python extension tk._C holds it; plain C++ with no Python in it, so the
// bindings (TkModule.cpp) only convert values.
//
// The Python side sends the sources of the kernel and of every @tk.jit helper
// it reaches (each with its file name and first line, so diagnostics point
// into the user's .py files), the signature it derived from the argument
// values, and the compile-time values of constexpr parameters and of the
// globals the functions read:
//
//   JitRequest req;
//   req.sources = {{"/home/me/add.py", "@tk.jit\ndef add(x, y, n, B: tk.constexpr):\n...", 12},
//                  {"/home/me/util.py", "@tk.jit\ndef twice(v):\n    return v * 2\n", 3}};
//   req.kernel = "add";
//   req.signature = "*fp32:16, *fp32:16, i32";
//   req.constants["B"] = ConstValue::ofInt(1024);
//   req.moduleAliases = {"tk"};
//   std::string errors;
//   std::unique_ptr<JitKernel> k = JitKernel::compile(req, errors);  // null: errors rendered
//   k->ir();        // block IR as lowered;  k->irOpt(): after lowering/Pipeline.h
//   k->run(args, /*grid=*/{4, 1, 1}, /*numThreads=*/1, /*maxSteps=*/0, printed, errors);
//
// Each source is parsed as its own buffer; the function definitions are then
// checked and lowered as one module, so a helper defined in another Python
// module inlines exactly like one defined next to the kernel.
#pragma once

#include "driver/HostBuffer.h"
#include "driver/Interpreter.h"
#include "ir/IRContext.h"
#include "ir/Module.h"
#include "ir/Specialize.h"
#include "lang/AST.h"
#include "lang/SourceManager.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tk {

struct JitSource {
  std::string fileName;
  std::string text;
  uint32_t firstLine = 1;
};

struct JitRequest {
  std::vector<JitSource> sources; // sources[0] holds the kernel
  std::string kernel;
  std::string signature;
  std::map<std::string, ConstValue> constants; // constexpr parameters and globals
  std::vector<std::string> externalGlobals;    // names of the globals in `constants`
  std::vector<std::string> moduleAliases;      // globals bound to the tk module
  std::vector<std::string> doNotSpecialize;
};

/// One kernel argument of a run, as the Python side describes it. A pointer
/// names the memory it may reach: `bytes` bytes at `base`, the argument
/// pointing `offset` bytes into them.
struct JitArg {
  enum class Kind : uint8_t { Pointer, Int, Float };
  Kind kind = Kind::Int;
  uint64_t base = 0;
  uint64_t bytes = 0;
  int64_t offset = 0;
  DType dtype = DType::U8;
  std::string name;
  int64_t intValue = 0;
  double floatValue = 0;
};

class JitKernel {
public:
  /// Compiles `req`; on failure returns null with the rendered diagnostics in
  /// `errors`.
  static std::unique_ptr<JitKernel> compile(const JitRequest &req, std::string &errors);

  const std::string &name() const { return name_; }
  const std::string &ir() const { return ir_; }
  const std::string &irOpt() const { return irOpt_; }
  /// What TK_DUMP_IR / TK_TIME_PASSES asked for while compiling; usually empty.
  const std::string &passLog() const { return passLog_; }
  /// The parameters that are IR arguments, in order: what run() expects.
  const std::vector<std::string> &argumentNames() const { return argumentNames_; }

  /// Runs the kernel over `grid` in the interpreter (`maxSteps` operations
  /// at most, 0 for no limit). Returns false with the rendered error in
  /// `errors` (out of bounds, a failed device_assert, a bad argument list, the
  /// step budget). `print` output is appended to `printed`.
  bool run(const std::vector<JitArg> &args, std::array<int64_t, 3> grid, unsigned numThreads,
           uint64_t maxSteps, std::string &printed, std::string &errors);

private:
  JitKernel() = default;

  std::string name_;
  std::string ir_, irOpt_, passLog_;
  std::vector<std::string> argumentNames_;
  // The IR's locations point into the source manager: it lives as long as
  // the module.
  std::unique_ptr<SourceManager> sm_;
  std::unique_ptr<ast::Context> astContext_;
  std::unique_ptr<IRContext> ctx_;
  std::unique_ptr<Module> module_;
  Function *fn_ = nullptr;
};

} // namespace tk
