// tk._C: the Python extension. It converts Python values to the C++ types of
// JitKernel.h and back and does nothing else; the `tk` package (python/tk/)
// decides what to compile and raises the Python exceptions.
//
//   from tk import _C
//   k, errors = _C.compile([(file, text, first_line)], "add", "*fp32:16, i32",
//                          {"BLOCK": 1024}, ["BLOCK"], ["tk"], [])
//   if k is None: raise CompilationError(errors)
//   printed, errors, bad_argument = k.run([("p", base, nbytes, 0, "fp32", "x", read_only),
//                                          ("i", 1000)], (4, 1, 1))
//
// A compile or run never raises for a mistake in the kernel or its
// arguments: both come back as rendered diagnostic text. Only values of the
// wrong Python type raise (TypeError), with the name that carried them.
#include "Autotune.h"
#include "GpuLauncher.h"
#include "JitKernel.h"
#include "compiler/ArgSpecialization.h"
#include "runtime/ResultCheck.h"
#include "support/Knobs.h"

#include "lang/Builtins.h"
#include "lang/DType.h"
#include "tk/Version.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <atomic>
#include <functional>
#include <memory>

namespace py = pybind11;

namespace tk {
namespace {

DType dtypeFromName(const std::string &name, const std::string &what) {
  if (std::optional<DType> d = parseDTypeName(name))
    return *d;
  if (std::optional<DType> d = parseDTypePythonName(name))
    return *d;
  throw py::type_error(fmt::format("{}: unknown dtype '{}'", what, name));
}

// A compile-time value: bool is tested before int because Python's bool is
// an int; a tk dtype object carries its short name in `_tk_dtype_name`, a
// JITFunction its function's name in `_tk_jit_function_name`.
ConstValue toConstValue(const std::string &name, py::handle v) {
  if (v.is_none())
    return ConstValue::none();
  if (py::isinstance<py::bool_>(v))
    return ConstValue::ofBool(v.cast<bool>());
  if (py::isinstance<py::int_>(v)) {
    try {
      return ConstValue::ofInt(v.cast<int64_t>());
    } catch (const py::cast_error &) {
      throw py::type_error(fmt::format("constexpr '{}' = {} does not fit in 64 bits", name,
                                       py::str(v).cast<std::string>()));
    }
  }
  if (py::isinstance<py::float_>(v))
    return ConstValue::ofFloat(v.cast<double>());
  if (py::isinstance<py::str>(v))
    return ConstValue::ofString(v.cast<std::string>());
  if (py::hasattr(v, "_tk_dtype_name"))
    return ConstValue::ofDType(dtypeFromName(v.attr("_tk_dtype_name").cast<std::string>(), name));
  // A @tk.jit function passed as a constexpr (runtime/jit.py compiles its
  // source with the kernel's).
  if (py::hasattr(v, "_tk_jit_function_name"))
    return ConstValue::ofFunction(v.attr("_tk_jit_function_name").cast<std::string>());
  // A tk builtin (tk.language.core.Builtin: tl.extra.cuda.globaltimer).
  if (py::hasattr(v, "_tk_builtin_name") && py::hasattr(v, "signature"))
    return ConstValue::ofBuiltin(v.attr("_tk_builtin_name").cast<std::string>());
  // A tuple of compile-time values (Triton's constexpr tuples: a shape).
  if (py::isinstance<py::tuple>(v)) {
    std::vector<ConstValue> elements;
    for (py::handle e : v.cast<py::tuple>())
      elements.push_back(toConstValue(name, e));
    return ConstValue::ofTuple(std::move(elements));
  }
  throw py::type_error(
      fmt::format("constexpr '{}': a compile-time value must be an int, float, bool, str, "
                  "None, tk dtype, @tk.jit function, tk builtin or a tuple of them, not {}",
                  name, py::str(py::type::of(v).attr("__name__")).cast<std::string>()));
}

JitArg toJitArg(py::handle item) {
  auto t = item.cast<py::tuple>();
  std::string tag = t[0].cast<std::string>();
  JitArg a;
  if (tag == "p") {
    a.kind = JitArg::Kind::Pointer;
    a.base = t[1].cast<uint64_t>();
    a.bytes = t[2].cast<uint64_t>();
    a.offset = t[3].cast<int64_t>();
    a.name = t[5].cast<std::string>();
    a.dtype = dtypeFromName(t[4].cast<std::string>(), a.name);
    a.readOnly = t.size() > 6 && t[6].cast<bool>();
  } else if (tag == "i") {
    a.kind = JitArg::Kind::Int;
    a.intValue = t[1].cast<int64_t>();
  } else if (tag == "f") {
    a.kind = JitArg::Kind::Float;
    a.floatValue = t[1].cast<double>();
  } else {
    throw py::type_error(fmt::format("unknown argument tag '{}'", tag));
  }
  return a;
}

const char *kindName(BuiltinKind k) {
  switch (k) {
  case BuiltinKind::Function:
    return "function";
  case BuiltinKind::Iterator:
    return "iterator";
  case BuiltinKind::DType:
    return "dtype";
  case BuiltinKind::TypeMarker:
    return "type";
  case BuiltinKind::Decorator:
    return "decorator";
  case BuiltinKind::HostHelper:
    return "host";
  case BuiltinKind::Enum:
    return "enum";
  case BuiltinKind::Namespace:
    return "namespace";
  case BuiltinKind::Unsupported:
    return "unsupported";
  }
  return "unknown";
}

// Ctrl-C stops a compile or a run: every 10 ms it takes the GIL and lets
// Python run its signal handlers; a KeyboardInterrupt (or whatever a handler
// raised) stops it and is raised once it has ended. Off the main thread (an
// autotuner's compile threads) Python runs no handlers and this says no.
bool pythonSignalled() {
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

// Compiles on other threads (the autotuner's pool) stop through a
// CompileCancel: the thread that started them cancels it when Ctrl-C (or any
// exception) reaches it, and each compile started under it on a pool thread
// (_C.set_compile_cancel) stops at its next poll, with an error.
struct CompileCancel {
  std::atomic<bool> cancelled{false};
};
thread_local std::shared_ptr<CompileCancel> currentCancel;

// What a compile started now on this thread polls: the signal handlers and
// the thread's CompileCancel, if it has one.
std::function<bool()> compileInterrupted() {
  std::shared_ptr<CompileCancel> cancel = currentCancel;
  if (!cancel)
    return pythonSignalled;
  return [cancel] { return cancel->cancelled.load() || pythonSignalled(); };
}

py::tuple compile(const std::vector<std::tuple<std::string, std::string, uint32_t>> &sources,
                  const std::string &kernel, const std::string &signature,
                  const py::dict &constants, const std::vector<std::string> &externalGlobals,
                  const std::vector<std::string> &moduleAliases,
                  const std::vector<std::string> &doNotSpecialize, bool gpu, int numWarps,
                  int numStages, const std::string &arch,
                  const std::map<std::string, std::map<std::string, std::string>> &userModules,
                  const std::string &libdevice, bool remarks, bool fpFusion, bool reflectFtz) {
  JitRequest req;
  req.libdevicePath = libdevice;
  req.fpFusion = fpFusion;
  req.reflectFtz = reflectFtz;
  req.gpu = gpu;
  req.remarks = remarks;
  req.numWarps = numWarps;
  req.numStages = numStages;
  req.arch = arch;
  for (const auto &[file, text, line] : sources)
    req.sources.push_back({file, text, line == 0 ? 1 : line});
  req.kernel = kernel;
  req.signature = signature;
  for (auto [key, value] : constants) {
    std::string name = key.cast<std::string>();
    req.constants[name] = toConstValue(name, value);
  }
  req.externalGlobals = externalGlobals;
  req.moduleAliases = moduleAliases;
  req.userModules = userModules;
  req.doNotSpecialize = doNotSpecialize;
  req.interrupted = compileInterrupted();
  std::string errors;
  std::unique_ptr<JitKernel> k;
  {
    py::gil_scoped_release noGil;
    k = JitKernel::compile(req, errors);
  }
  if (PyErr_Occurred()) // Ctrl-C: the KeyboardInterrupt, not the compile's error
    throw py::error_already_set();
  if (!k)
    return py::make_tuple(py::none(), errors);
  return py::make_tuple(py::cast(std::move(k)), "");
}

// The specialisation rule (compiler/ArgSpecialization.h) for one argument
// the Python side has reduced to a kind and a value (runtime/jit.py's
// _specialize): (signature entry, value to launch with). An int's value comes
// back as the int64 the launch passes (a u64's bits); an int beyond 64 bits
// is an OverflowError.
py::tuple specializeOne(const std::string &kind, py::handle value, bool specialize,
                        const std::string &dtype) {
  RuntimeArg arg;
  py::object launchValue;
  if (kind == "int") {
    int64_t bits;
    DType type;
    if (!PyLong_Check(value.ptr()) || !pythonInt(value.ptr(), bits, type))
      throw py::value_error(fmt::format("the integer {} does not fit in 64 bits",
                                        py::str(value).cast<std::string>()));
    arg = type == DType::U64 ? RuntimeArg::unsignedInteger(uint64_t(bits))
                             : RuntimeArg::integer(bits);
    launchValue = py::int_(bits);
  } else if (kind == "float") {
    arg = RuntimeArg::real();
    launchValue = py::float_(value.cast<double>());
  } else if (kind == "bool") {
    arg = RuntimeArg::boolean();
    launchValue = py::int_(int(value.cast<bool>()));
  } else if (kind == "scalar" || kind == "pointer") {
    DType d = dtypeFromName(dtype, "specialize_arg");
    if (kind == "pointer") {
      int64_t bits;
      DType type;
      if (!PyLong_Check(value.ptr()) || !pythonInt(value.ptr(), bits, type) ||
          (type != DType::U64 && bits < 0))
        throw py::value_error(fmt::format("the address {} is not a 64-bit address",
                                          py::str(value).cast<std::string>()));
      arg = RuntimeArg::pointer(d, uint64_t(bits));
      launchValue = py::int_(arg.address);
    } else if (isFloat(d)) {
      arg = RuntimeArg::scalar(d);
      launchValue = py::float_(value.cast<double>());
    } else {
      arg = RuntimeArg::scalar(d, value.cast<int64_t>());
      launchValue = py::int_(arg.intValue);
    }
  } else {
    throw py::value_error("specialize_arg: the kind is 'int', 'float', 'bool', 'scalar' or "
                          "'pointer', not '" +
                          kind + "'");
  }
  return py::make_tuple(specializeArg(arg, specialize).entry(), launchValue);
}

py::tuple run(JitKernel &k, const py::list &args, const std::array<int64_t, 3> &grid,
              unsigned numThreads, uint64_t maxSteps, uint64_t maxMemoryMiB) {
  std::vector<JitArg> jitArgs;
  for (py::handle item : args)
    jitArgs.push_back(toJitArg(item));
  InterpretOptions options;
  options.grid = grid;
  options.numThreads = numThreads;
  options.maxSteps = maxSteps;
  options.maxMemoryBytes = maxMemoryMiB > (UINT64_MAX >> 20) ? 0 : maxMemoryMiB << 20;
  options.interrupted = pythonSignalled;
  std::string printed, errors;
  RunResult result;
  {
    // The caller keeps the arrays alive for the call; other Python threads
    // may run meanwhile.
    py::gil_scoped_release noGil;
    result = k.run(jitArgs, options, printed, errors);
  }
  if (PyErr_Occurred())
    throw py::error_already_set();
  return py::make_tuple(printed, errors, result == RunResult::BadArgument);
}

// TK_CHECK's interpreter side: (printed, report, outcome), outcome one of
// "ok", "mismatch", "failed", "argument".
py::tuple checkLaunch(JitKernel &k, const py::list &args, const std::vector<uint64_t> &gpuAfter,
                      const std::array<int64_t, 3> &grid, uint64_t maxSteps,
                      uint64_t maxMemoryMiB) {
  std::vector<JitArg> jitArgs;
  for (py::handle item : args)
    jitArgs.push_back(toJitArg(item));
  InterpretOptions options;
  options.grid = grid;
  options.maxSteps = maxSteps;
  options.maxMemoryBytes = maxMemoryMiB > (UINT64_MAX >> 20) ? 0 : maxMemoryMiB << 20;
  options.interrupted = pythonSignalled;
  std::string printed, report;
  RunResult result;
  {
    py::gil_scoped_release noGil;
    result = k.check(jitArgs, gpuAfter, options, printed, report);
  }
  if (PyErr_Occurred())
    throw py::error_already_set();
  static const char *const names[] = {"ok", "failed", "argument", "mismatch"};
  return py::make_tuple(printed, report, names[int(result)]);
}

} // namespace
} // namespace tk

PYBIND11_MODULE(_C, m) {
  using namespace tk;
  m.doc() = "tk's compiler and interpreter (the C++ side of the tk package)";
  m.attr("__version__") = TK_VERSION_STRING;

  py::class_<JitKernel>(m, "CompiledKernel")
      .def_property_readonly("name", &JitKernel::name)
      .def_property_readonly("ir", &JitKernel::ir)
      .def_property_readonly("ir_opt", &JitKernel::irOpt)
      .def_property_readonly("pass_log", &JitKernel::passLog)
      .def_property_readonly("remarks",
                             [](const JitKernel &k) -> py::object {
                               // None when the compile recorded none; else
                               // (file, line, col, kind, status, function,
                               // message, {name: number}, rendered) each.
                               if (!k.hasRemarks())
                                 return py::none();
                               py::list out;
                               for (const KernelRemark &r : k.remarks()) {
                                 py::dict numbers;
                                 for (const auto &[name, value] : r.numbers)
                                   numbers[py::str(name)] = value;
                                 out.append(py::make_tuple(r.file, r.line, r.col, r.kind, r.status,
                                                           r.function, r.message, numbers,
                                                           r.rendered));
                               }
                               return out;
                             })
      .def_property_readonly("argument_names", &JitKernel::argumentNames)
      .def_property_readonly("stored_arguments", &JitKernel::storedArguments)
      .def_property_readonly("ptx", &JitKernel::ptx)
      .def_property_readonly(
          "code_object", [](const JitKernel &k) { return py::bytes(k.codeObject()); },
          "amdgcn: the code object (an ELF, `tkc --emit=hsaco`); b'' for NVIDIA.")
      .def_property_readonly("is_amdgpu", &JitKernel::isAmdgpu)
      .def_property_readonly(
          "threads_per_program",
          [](const JitKernel &k) {
            std::array<unsigned, 3> b = k.block();
            return b[0] * b[1] * b[2];
          },
          "num_warps x 32 on NVIDIA; the code object's workgroup size on AMD.")
      .def_property_readonly("argument_types", &JitKernel::argumentTypes)
      .def_property_readonly("num_warps", &JitKernel::numWarps)
      .def_property_readonly("is_gpu", &JitKernel::isGpu)
      .def_property_readonly("dynamic_shared", &JitKernel::dynamicShared)
      .def_property_readonly("ptx_from_cache", &JitKernel::ptxFromCache)
      .def_property_readonly("cubin_from_cache", &JitKernel::cubinFromCache)
      .def_property_readonly("ptx_compiler", &JitKernel::ptxCompiler)
      .def_property_readonly("failure",
                             [](const JitKernel &k) -> py::object {
                               // (resource, needed, limit) after an
                               // out-of-resources load failure, else None.
                               const GpuFailure &f = k.failure();
                               if (f.kind != GpuFailure::Kind::OutOfResources)
                                 return py::none();
                               return py::make_tuple(f.resource, f.needed, f.limit);
                             })
      .def_property_readonly("loaded", &JitKernel::loaded)
      .def(
          "llvm_ir",
          [](JitKernel &k) {
            std::string out, errors;
            bool ok = k.llvmIR(out, errors);
            return py::make_tuple(ok ? out : std::string(), errors);
          },
          "(LLVM IR text, '') or ('', rendered error).")
      .def(
          "load",
          [](JitKernel &k) {
            std::string errors;
            bool ok;
            {
              py::gil_scoped_release noGil;
              ok = k.load(errors);
            }
            return ok ? std::string() : errors;
          },
          "Loads the PTX on device 0; '' or the driver's error (with the JIT log).")
      .def_property_readonly("resources",
                             [](const JitKernel &k) {
                               const KernelResources &r = k.resources();
                               py::dict d;
                               d["registers"] = r.registers;
                               d["local_bytes"] = r.localBytes;
                               d["static_shared_bytes"] = r.staticSharedBytes;
                               d["max_threads_per_block"] = r.maxThreadsPerBlock;
                               return d;
                             })
      .def("run", &run, py::arg("args"), py::arg("grid"), py::arg("num_threads") = 1,
           py::arg("max_steps") = 100'000'000, py::arg("max_memory_mib") = 1024)
      .def("check", &checkLaunch, py::arg("args"), py::arg("gpu_after"), py::arg("grid"),
           py::arg("max_steps") = 100'000'000, py::arg("max_memory_mib") = 1024,
           "TK_CHECK: a sample of the launch's programs on the interpreter, compared with the "
           "GPU's buffers (python/src/LaunchCheck.h).");

  bindGpuLauncher(m);
  bindAutotune(m);

  m.def(
      "gpu_available",
      [] {
        std::string error;
        CudaDriver *d = CudaDriver::get(error);
        return py::make_tuple(d != nullptr, d ? d->deviceName() : error);
      },
      "(True, device name) when a CUDA driver and device are usable, else (False, why).");
  m.def(
      "hip_available",
      [] {
        std::string error;
        HipDriver *h = HipDriver::get(error);
        return py::make_tuple(h != nullptr, h ? h->deviceName() : error);
      },
      "(True, device name) when a HIP runtime and an AMD GPU are usable (amdgcn launches), else "
      "(False, why).");

  m.def(
      "_copy_from_device",
      [](uint64_t host, uint64_t device, uint64_t bytes) {
        // TK_CHECK's copies: device 0's memory to host memory, after every
        // stream of the context is done with it.
        std::string error;
        CudaDriver *d = CudaDriver::get(error);
        bool ok;
        {
          py::gil_scoped_release noGil;
          ok = d && d->makeCurrent(error) && d->synchronize(error) &&
               d->copyToHost(reinterpret_cast<void *>(host), CUdeviceptr(device), size_t(bytes),
                             error);
        }
        if (!ok)
          throw std::runtime_error(error);
      },
      py::arg("host"), py::arg("device"), py::arg("bytes"),
      "Copies `bytes` bytes of device memory to host memory once the device is idle.");
  m.def(
      "_copy_to_device",
      [](uint64_t device, uint64_t host, uint64_t bytes) {
        // The autotuner's restores: host memory to device 0's, once the
        // device is idle.
        std::string error;
        CudaDriver *d = CudaDriver::get(error);
        bool ok;
        {
          py::gil_scoped_release noGil;
          ok = d && d->makeCurrent(error) && d->synchronize(error) &&
               d->copyToDevice(CUdeviceptr(device), reinterpret_cast<const void *>(host),
                               size_t(bytes), error) &&
               d->synchronize(error);
        }
        if (!ok)
          throw std::runtime_error(error);
      },
      py::arg("device"), py::arg("host"), py::arg("bytes"),
      "Copies `bytes` bytes of host memory to device memory once the device is idle.");
  m.def(
      "first_difference",
      [](py::buffer got, py::buffer expected, const std::string &dtype) -> py::object {
        // The autotuner's output check, by runtime/ResultCheck.h's rule.
        DType d = dtypeFromName(dtype, "first_difference");
        py::buffer_info g = got.request(), e = expected.request();
        size_t bytes = size_t(g.size * g.itemsize);
        if (bytes != size_t(e.size * e.itemsize))
          throw py::value_error("first_difference: the buffers differ in size");
        size_t count = bytes / dtypeBytes(d);
        const auto *gp = static_cast<const std::byte *>(g.ptr);
        const auto *ep = static_cast<const std::byte *>(e.ptr);
        std::optional<Difference> diff =
            firstDifference(gp, ep, count, d, largestMagnitude(ep, count, d));
        if (!diff)
          return py::none();
        return py::make_tuple(diff->index, diff->got, diff->expected, diff->why);
      },
      py::arg("got"), py::arg("expected"), py::arg("dtype"),
      "None when the two buffers of `dtype` elements agree within its tolerance "
      "(runtime/ResultCheck.h), else (index, got, expected, why) of the first that does not.");
  m.def(
      "dtype_bytes",
      [](const std::string &dtype) { return dtypeBytes(dtypeFromName(dtype, "dtype_bytes")); },
      py::arg("dtype"));
  m.def(
      "_set_launch_params",
      [](const std::string &how) {
        if (how != "packed" && how != "array")
          throw py::value_error("launch params are 'packed' or 'array', not '" + how + "'");
        JitKernel::setPackedLaunches(how == "packed");
      },
      "How GPU launches pass their arguments to cuLaunchKernel: 'array' (kernelParams) or "
      "'packed' (one buffer through `extra`, the default), for benchmarks that compare them.");
  m.def("_launch_params", [] { return JitKernel::packedLaunches() ? "packed" : "array"; });
  py::class_<CompileCancel, std::shared_ptr<CompileCancel>>(
      m, "CompileCancel",
      "Stops the compiles started under it (set_compile_cancel) on other threads: cancel() "
      "makes each end at its next poll (within 10 ms) with an error.")
      .def(py::init<>())
      .def("cancel", [](CompileCancel &c) { c.cancelled = true; })
      .def_property_readonly("cancelled",
                             [](const CompileCancel &c) { return c.cancelled.load(); });
  m.def(
      "set_compile_cancel",
      [](std::shared_ptr<CompileCancel> cancel) { currentCancel = std::move(cancel); },
      py::arg("cancel").none(true),
      "The CompileCancel the compiles this thread starts from now on obey (None: none).");
  m.def("compile", &compile, py::arg("sources"), py::arg("kernel"), py::arg("signature"),
        py::arg("constants"), py::arg("external_globals"), py::arg("module_aliases"),
        py::arg("do_not_specialize"), py::arg("gpu") = false, py::arg("num_warps") = 4,
        py::arg("num_stages") = 0, py::arg("arch") = "sm_90",
        py::arg("user_modules") = std::map<std::string, std::map<std::string, std::string>>{},
        py::arg("libdevice") = "", py::arg("remarks") = false, py::arg("fp_fusion") = true,
        py::arg("reflect_ftz") = true,
        "Compiles a kernel; returns (CompiledKernel, '') or (None, rendered diagnostics). "
        "user_modules: globals bound to Python modules other than tk's, each {attribute: the "
        "@tk.jit function it is}. libdevice: the libdevice bitcode to link (extern_libs), '' "
        "for TK_LIBDEVICE_PATH's. With remarks, the kernel's `remarks` holds the compile's "
        "remarks (docs/remarks.md). fp_fusion: Triton's enable_fp_fusion. reflect_ftz: Triton's "
        "enable_reflect_ftz.");

  m.def("specialize_arg", &specializeOne, py::arg("kind"), py::arg("value"),
        py::arg("specialize") = true, py::arg("dtype") = "",
        "(signature entry, launch value) of one runtime argument by the specialisation rule "
        "(compiler/ArgSpecialization.h): kind 'int' (a Python int: i32, i64 or u64), 'float' "
        "(fp32), 'bool' (i1), 'scalar' (of `dtype`) or 'pointer' (an address, to `dtype`).");
  m.def(
      "launch_option_error",
      [](const std::string &name, int64_t value) -> std::string {
        // The compiler's one rule for num_warps and num_stages
        // (compiler/Compiler.h), for both of Python's paths.
        if (name == "num_warps")
          return isValidNumWarps(value)
                     ? ""
                     : fmt::format("must be a power of two from 1 to {}", kMaxNumWarps);
        if (name == "num_stages")
          return isValidNumStages(value)
                     ? ""
                     : fmt::format("must be an integer from 1 to {}", kMaxNumStages);
        throw py::key_error("no launch option named '" + name + "'");
      },
      py::arg("name"), py::arg("value"),
      "'' when `value` is a valid num_warps / num_stages, else what it must be.");
  m.def(
      "knob",
      [](const std::string &name) -> py::object {
        // The knob's value as support/Knobs.h parses it; a value it does not
        // take raises ValueError naming the variable.
        const KnobInfo *k = findKnob(name);
        if (!k)
          throw py::key_error("no knob named '" + name + "' (support/Knobs.def)");
        std::string text = readRaw(k->id).value_or("");
        std::string error;
        py::object value;
        switch (k->type) {
        case KnobType::Bool: {
          KnobValue<bool> v = parseBoolKnob(*k, text);
          error = v.error;
          value = py::bool_(v.value);
          break;
        }
        case KnobType::Int: {
          KnobValue<int64_t> v = parseIntKnob(*k, text);
          error = v.error;
          value = py::int_(v.value);
          break;
        }
        case KnobType::Choice:
        case KnobType::String:
        case KnobType::Path: {
          KnobValue<std::string> v = parseChoiceKnob(*k, text);
          error = v.error;
          value = py::str(v.value);
          break;
        }
        }
        if (!error.empty())
          throw py::value_error(error);
        return value;
      },
      py::arg("name"), "A TK_ environment variable's value, parsed as tk's C++ side parses it.");
  m.def(
      "knobs",
      [] {
        // (name, type, default, choices, effect, meaning) per knob.
        static const char *const types[] = {"bool", "int", "choice", "string", "path"};
        static const char *const effects[] = {"nothing", "code", "cubin"};
        py::list out;
        for (const KnobInfo &k : allKnobs())
          out.append(py::make_tuple(std::string(k.name), types[int(k.type)],
                                    std::string(k.defaultValue), std::string(k.choices),
                                    effects[int(k.effect)], std::string(k.meaning)));
        return out;
      },
      "The knob table (support/Knobs.def).");
  m.def(
      "encode_tensor_map",
      [](int dataType, uint64_t address, std::vector<uint64_t> dims, std::vector<uint64_t> strides,
         std::vector<uint32_t> box, int oobFill, int swizzle) -> py::tuple {
        std::string error;
        CudaDriver *d = CudaDriver::get(error);
        alignas(64) char map[128] = {};
        TensorMapSpec spec;
        spec.dataType = dataType;
        spec.address = address;
        spec.dims = std::move(dims);
        spec.strides = std::move(strides);
        spec.box = std::move(box);
        spec.swizzle = swizzle;
        spec.oobFill = oobFill;
        if (!d || !d->encodeTensorMap(spec, map, error))
          return py::make_tuple(py::none(), error);
        return py::make_tuple(py::bytes(map, sizeof map), "");
      },
      py::arg("data_type"), py::arg("address"), py::arg("dims"), py::arg("strides"), py::arg("box"),
      py::arg("oob_fill"), py::arg("swizzle") = 0,
      "cuTensorMapEncodeTiled (dimensions innermost first, strides in bytes): (the 128 bytes, "
      "'') or (None, the driver's error).");
  m.def(
      "code_knobs",
      [] {
        // What the code knobs are now, as compile cache keys see them: a
        // kernel compiled under other values is another kernel.
        CompileOptions options;
        std::string error;
        if (!options.readKnobs(error))
          throw py::value_error(error);
        return options.keyText();
      },
      "The code-changing knobs' values as one string (part of every compile's key).");

  m.def(
      "builtins",
      [] {
        // tk.NAME entries in table order: (name, kind, signature, summary).
        py::list out;
        for (const BuiltinInfo &b : allBuiltins())
          if (b.scope == BuiltinScope::Tk)
            out.append(py::make_tuple(std::string(b.name), kindName(b.kind),
                                      b.kind == BuiltinKind::Unsupported ? std::string()
                                                                         : formatSignature(b),
                                      std::string(b.summary)));
        return out;
      },
      "The names of the tk module as the compiler knows them.");

  m.def(
      "enum_members",
      [] {
        // (enum, member, value, summary): tk.PropagateNan.ALL is ("PropagateNan", "ALL", ...).
        py::list out;
        for (const EnumMemberInfo &e : allEnumMembers())
          out.append(py::make_tuple(std::string(builtinInfo(e.owner).name), std::string(e.name),
                                    e.value, std::string(e.summary)));
        return out;
      },
      "The members of the tk module's enums (tk.PropagateNan) as the compiler knows them.");

  m.def(
      "kernel_module",
      [](const std::string &path) {
        // Whether kernels can use the Python module `path` (tk.language.math,
        // tk.language.extra.libdevice, ...): the front end's module paths.
        bool isRoot = false;
        return lookupModulePath(path, isRoot).has_value() || isRoot;
      },
      "Whether a module of tk's tree is one kernels can import (lookupModulePath).");

  m.def(
      "dtypes",
      [] {
        // (short name, Python name, bits, is_float, is_signed) per dtype.
        py::list out;
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND)                                                 \
  out.append(py::make_tuple(IRNAME, PYNAME, BITS, isFloat(DType::ENUM), isSigned(DType::ENUM)));
#include "lang/DTypes.def"
        return out;
      },
      "Every dtype tk knows.");
}
