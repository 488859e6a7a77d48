// GpuLauncher: the hot path of `kernel[grid](*args, **kwargs)` on the GPU,
// one per @tk.jit function. A launch is one C++ call that binds the
// arguments to the parameters, computes the specialisation key from them,
// finds the loaded kernel in a small map and calls cuLaunchKernel; Python
// code runs only when the key is new (to compile), when an argument is of a
// kind the key cannot describe, or when something is wrong (to raise the
// TypeError that names it).
//
//   launcher = _C.Launcher(jit_function, ["x", "y", "out", "n", "BLOCK"],
//                          [False, False, False, False, True], [True] * 5,
//                          defaults, missing_sentinel)
//   launcher[(grid,)](x, y, out, n, BLOCK=1024)
//
// `jit_function[grid]` runs no Python code: JITFunction derives from the C
// type tk._C.LaunchBase, whose subscript returns a BoundLaunch (reused while
// the same grid object comes again), a C object whose call is a vectorcall
// into launch(). No argument tuple, kwargs dict or pybind11 dispatch is made
// per launch, the key is built in a buffer on the stack and the parameters
// are packed on the stack (nothing is allocated).
//
// What a launch reads from Python objects is read through C calls. A
// torch.Tensor (or nn.Parameter) is read through libtorch's exported C
// functions on the tensor's at::Tensor (TorchAbi.h: data pointer, device,
// dtype number, mapped to torch's dtype object), and torch's current stream
// likewise, once a probe showed that they agree with torch's Python answers;
// otherwise, and for other tensor types, the method descriptors of
// `data_ptr` and `get_device` and the `dtype` getter, found once per type,
// are called directly (no attribute lookup), and the stream comes from
// torch._C._cuda_getCurrentRawStream(0), looked up once.
//
// The key, per parameter (bytes appended to one string):
//   torch tensor      'T' dtype-object pointer, its fact (data_ptr() % 16 == 0)
//   __cuda_array_interface__ 'C' typestr, alignment bit
//   other data_ptr()  'D' dtype-object pointer (kept alive), alignment bit
//   int               'I' its type (i32 / i64 / u64) and its fact (== 1, % 16, % 8)
//   bool, float, None 'B', 'F', 'N'
//   constexpr         its value: int64, double bits, bool, None, or the
//                     identity of any other object (kept alive)
// plus the launch options given (num_warps, num_stages, ...; not stream),
// after the values of the knobs that change code or cubins (Effect Code or
// Cubin in support/Knobs.def: TK_ARCH, TK_TEST_MISCOMPILE, ...) as a number,
// one per distinct set of values seen: the Python side's compile key has
// them, so a launch after TK_LLVM_OPT is set to O0 in os.environ runs the kernel
// compiled under it, not the one found before.
// The types and facts come from the specialisation rule the Python side's
// signature comes from (compiler/ArgSpecialization.h: integerType,
// integerFact, pointerFact), and the facts are left out for
// do_not_specialize parameters, exactly as the signature leaves them out, so
// one key never maps to two signatures.
//
// Each entry also remembers the globals the kernel and its helpers read,
// as (globals dict, name, value object); a launch whose globals no longer
// hold those objects compiles again (the Python side then finds or builds the
// kernel for the new values).
//
// A tensor must be on device 0 (tk launches in device 0's primary context,
// the one torch and CuPy share); a CPU tensor or one on another device goes
// to the Python side, which raises the TypeError naming it.
#pragma once

#include "JitKernel.h"
#include "TorchAbi.h"
#include "compiler/ArgSpecialization.h"

#include <pybind11/pybind11.h>

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tk {

class GpuLauncher {
public:
  /// `defaults[i]` is parameter i's default, or `missing` when it has none.
  GpuLauncher(pybind11::object jitFunction, std::vector<std::string> names,
              std::vector<bool> isConstexpr, std::vector<bool> specialize, pybind11::list defaults,
              pybind11::object missing);

  /// One launch; returns the Python CompiledKernel. Raises what the Python
  /// side raises, or tk.DriverError for a failed cuLaunchKernel.
  pybind11::object call(pybind11::handle grid, pybind11::handle args, pybind11::handle kwargs);
  /// The same launch in vectorcall form: `args[0..numArgs)` positional, then
  /// the values of the keywords named by the tuple `kwnames` (or, with
  /// `kwargs`, a dict of keywords). What `launcher[grid](...)` calls, with
  /// no tuple or dict built on the way.
  /// `gridCache`, when given, belongs to the caller's bound launch and
  /// remembers the dimensions of a grid that cannot change (a tuple of ints).
  struct GridCache {
    bool known = false;
    std::array<unsigned, 3> dims{};
  };
  /// `unchecked`: a GPU launch even under TK_CHECK=1 (the check's own).
  pybind11::object launch(pybind11::handle grid, PyObject *const *args, size_t numArgs,
                          PyObject *kwnames, PyObject *kwargs, GridCache *gridCache = nullptr,
                          bool unchecked = false);
  /// call() without TK_CHECK's comparison: python/tk/check.py's launch.
  pybind11::object callUnchecked(pybind11::handle grid, pybind11::handle args,
                                 pybind11::handle kwargs);
  /// The one grid check (readGrid): TypeError or ValueError naming `kernel`.
  static std::array<unsigned, 3> checkGrid(pybind11::handle grid, const std::string &kernel);
  /// `launcher[grid]`: a callable bound to the grid.
  pybind11::object bind(pybind11::object grid);

  size_t numEntries() const { return entries_.size(); }

  /// The garbage collector's view (tk._C.Launcher is a GC type): the
  /// JITFunction holds its launcher and the launcher holds the JITFunction,
  /// so a kernel made at run time is freed only by a collection. visit()
  /// reports every Python object held; clear() drops those through which a
  /// cycle can run (the function, the compiled kernels with their guards and
  /// key objects, the defaults, the per-type descriptors), after which a
  /// launch raises instead of compiling.
  int traverse(visitproc visit, void *arg) const;
  void clear();
  /// The key of the last launch, for tests ("" when it had none).
  std::string lastKey() const { return lastKey_ ? *lastKey_ : std::string(); }

private:
  struct Guard {
    pybind11::object dict, name, value;
    // The dict's version tag when `name` last held `value` (0: unknown).
    // An unchanged tag means an unchanged dict, so the lookup is skipped.
    mutable uint64_t version = 0;
  };
  struct Entry {
    pybind11::object compiled; // the Python CompiledKernel
    JitKernel *kernel = nullptr;
    std::vector<Guard> guards;
    std::vector<pybind11::object> keepAlive; // objects whose identity is in the key
  };
  enum class TypeKind : uint8_t { Torch, CudaArrayInterface, DataPtr, Other };
  /// What a launch knows about an argument's type, found once per type. For
  /// C types (torch.Tensor) the members are the type's own descriptors,
  /// called directly; null where the attribute is anything else (a Python
  /// method: looked up on the object at each launch).
  struct TypeInfo {
    PyTypeObject *type = nullptr;
    pybind11::object typeRef; // keeps `type` alive: its address is the lookup key
    TypeKind kind = TypeKind::Other;
    pybind11::object dataPtr, getDevice; // method descriptors
    pybind11::object dtype;              // a getset descriptor
    // torch.Tensor or torch.nn.Parameter while TorchAbi is usable: read
    // through libtorch's C functions (TorchAbi.h), not the descriptors.
    bool plainTensor = false;
  };
  /// A torch tensor's pointer and dtype object (borrowed) through TorchAbi.
  enum class AbiRead : uint8_t { Done, NotDevice0, UsePython };
  static AbiRead readTorchAbi(const TypeInfo &info, PyObject *v, uint64_t &ptr, PyObject *&dtype);

  bool interpretMode() const;
  /// TK_CHECK=1: launches are checked against the interpreter.
  bool checkMode() const;
  /// Reads TK_INTERPRET, TK_CHECK and the code knobs again if os.environ
  /// changed.
  void readModeKnobs() const;
  /// codeKnobsNumber_ for the code knobs' values `text`.
  void setCodeKnobs(std::string text) const;
  /// jit_, or a ReferenceError once clear() has run.
  pybind11::object jitFunction() const;
  /// The type's entry: a scan of the few types seen, inlined; the first
  /// sight of a type goes to addTypeInfo.
  [[gnu::always_inline]] const TypeInfo &typeInfo(PyTypeObject *type) {
    for (const TypeInfo &info : typeInfos_)
      if (info.type == type) [[likely]]
        return info;
    return addTypeInfo(type);
  }
  [[gnu::noinline]] const TypeInfo &addTypeInfo(PyTypeObject *type);
  /// True while every guard of `entry` still holds.
  static bool guardsHold(const Entry &entry);
  /// `obj.data_ptr()`, `obj.get_device()`, `obj.dtype` through `info`'s
  /// descriptors when it has them; a new reference, or null (error cleared).
  static PyObject *callNoArgs(PyObject *descr, PyObject *obj, PyObject *name);
  static PyObject *getAttr(PyObject *descr, PyObject *obj, PyObject *name);
  pybind11::object launchWith(const Entry &entry, pybind11::handle grid,
                              const pybind11::list &runtime, pybind11::object meta,
                              pybind11::object stream);
  /// The grid's three dimensions (calling it with meta() when callable);
  /// TypeError or ValueError naming `kernel` when it is not a grid.
  template <class MetaFn>
  static std::array<unsigned, 3> gridDims(pybind11::handle grid, const MetaFn &meta,
                                          const std::string &kernel);
  /// The stream= option (an int, a torch or CuPy stream, or null for
  /// torch's current stream on device 0).
  CUstream streamOf(PyObject *option);

  pybind11::object jit_;
  std::vector<pybind11::object> names_; // interned parameter names
  // Bytes, not std::vector<bool>: read for every parameter of every launch.
  std::vector<uint8_t> isConstexpr_, specialize_;
  std::vector<pybind11::object> defaults_;
  pybind11::object missing_;
  int interpret_ = -1; // @tk.jit(interpret=...): -1 unset (TK_INTERPRET decides)
  // Looked up with the key's bytes on the stack (no std::string per launch).
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, Entry, KeyHash, std::equal_to<>> entries_;
  std::vector<TypeInfo> typeInfos_;
  pybind11::object rawStream_; // torch._C._cuda_getCurrentRawStream, once torch is imported
  pybind11::object deviceZero_;
  // os.environ's dict of bytes (TK_INTERPRET is read there at each launch:
  // a dict lookup, where getenv scans the whole environment).
  pybind11::object environ_, interpretKey_, checkKey_;
  // The names of the knobs that change code or cubins, as os.environ's keys.
  std::vector<pybind11::object> codeKnobKeys_;
  // TK_INTERPRET's and TK_CHECK's answers, the number of the code knobs'
  // values (an index into codeKnobValues_, every set of values seen) and
  // os.environ's version tag when they were read.
  mutable uint64_t environVersion_ = 0;
  mutable bool interpretCached_ = false, checkCached_ = false;
  mutable uint32_t codeKnobsNumber_ = 0;
  mutable std::vector<std::string> codeKnobValues_;
  const std::string *lastKey_ = nullptr; // a key of entries_ (nodes never move)
  Entry *lastEntry_ = nullptr;           // its entry: compared before hashing
};

/// A Python int's value and its type by the specialisation rule
/// (integerType: i32 or i64, or u64 with `value` holding its bits). False,
/// with no Python error set, when it does not fit in 64 bits. Inlined: one
/// per int argument of every launch.
[[gnu::always_inline]] inline bool pythonInt(PyObject *v, int64_t &value, DType &type) {
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow == 0) {
    if (x == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    value = x;
    type = integerType(x, false);
    return true;
  }
  if (overflow < 0)
    return false;
  unsigned long long u = PyLong_AsUnsignedLongLong(v);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  value = static_cast<int64_t>(u);
  type = integerType(value, /*aboveInt64=*/true);
  return true;
}

/// tk._C.Launcher, tk._C.BoundLaunch and tk._C.LaunchBase, the C base of
/// JITFunction: `LaunchBase._attach_launcher(launcher)` makes `self[grid]`
/// launcher[grid] without a Python frame.
void bindGpuLauncher(pybind11::module_ &m);

} // namespace tk
