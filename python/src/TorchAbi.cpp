#include "TorchAbi.h"

#include "support/Knobs.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace py = pybind11;

namespace tk {
namespace {

// The process's state: tried once torch is imported (a failure is final,
// a success is shared by every launcher).
TorchAbi *instance = nullptr;
std::string failure; // why instance is null once tried
bool tried = false;
bool enabled = true; // setEnabled(); TK_TORCH_ABI=0 clears it
bool envChecked = false;

// A library torch has already loaded, by its soname or, failing that, by
// its path under torch/lib (RTLD_NOLOAD: never loads anything new).
void *loadedLibrary(const char *soname, const std::string &torchLib) {
  if (void *h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD))
    return h;
  return dlopen((torchLib + "/" + soname).c_str(), RTLD_LAZY | RTLD_NOLOAD);
}

template <class Fn> Fn symbol(void *lib, const char *name) {
  return lib ? reinterpret_cast<Fn>(dlsym(lib, name)) : nullptr;
}

} // namespace

std::string TorchAbi::init(PyObject *torchModule) {
  py::handle torch(torchModule);
  py::object tensor = py::getattr(torch, "Tensor", py::none());
  py::object nn = py::getattr(torch, "nn", py::none());
  py::object parameter = nn.is_none() ? py::none() : py::getattr(nn, "Parameter", py::none());
  if (!PyType_Check(tensor.ptr()) || !PyType_Check(parameter.ptr()))
    return "torch.Tensor or torch.nn.Parameter is not a type";
  tensorType_ = reinterpret_cast<PyTypeObject *>(tensor.ptr());
  parameterType_ = reinterpret_cast<PyTypeObject *>(parameter.ptr());
  Py_INCREF(tensor.ptr()); // kept for the process, like the function pointers
  Py_INCREF(parameter.ptr());

  py::object file = py::getattr(torch, "__file__", py::none());
  std::string torchLib =
      file.is_none()
          ? std::string()
          : (std::filesystem::path(file.cast<std::string>()).parent_path() / "lib").string();
  void *cpu = loadedLibrary("libtorch_cpu.so", torchLib);
  getDataPtr_ = symbol<DataPtrFn>(cpu, "aoti_torch_get_data_ptr");
  getDeviceType_ = symbol<TensorFn>(cpu, "aoti_torch_get_device_type");
  getDeviceIndex_ = symbol<TensorFn>(cpu, "aoti_torch_get_device_index");
  getDtype_ = symbol<TensorFn>(cpu, "aoti_torch_get_dtype");
  getLayout_ = symbol<TensorFn>(cpu, "aoti_torch_get_layout");
  if (!getDataPtr_ || !getDeviceType_ || !getDeviceIndex_ || !getDtype_ || !getLayout_)
    return cpu ? "libtorch_cpu.so lacks the aoti_torch_get_* functions"
               : "libtorch_cpu.so is not loaded";

  // The probes: a float32 view with a storage offset (data_ptr includes
  // it) and an int64 tensor, both on the CPU. The handle is trusted only
  // after the word at the cdata offset equals t._cdata (the TensorImpl
  // address, read without calling anything through the handle).
  py::object arange = torch.attr("arange");
  py::object probes[] = {arange(8, py::arg("dtype") = torch.attr("float32"))[py::slice(3, 8, 1)],
                         torch.attr("zeros")(2, py::arg("dtype") = torch.attr("int64")),
                         parameter(torch.attr("ones")(3))};
  int32_t codes[3];
  for (size_t i = 0; i < 3; ++i) {
    py::object &p = probes[i];
    if (Py_TYPE(p.ptr()) != (i == 2 ? parameterType_ : tensorType_))
      return "a probe tensor is not of type torch.Tensor / torch.nn.Parameter";
    if (size_t(Py_TYPE(p.ptr())->tp_basicsize) < sizeof(PyObject) + sizeof(void *))
      return "torch.Tensor objects are smaller than PyObject_HEAD and a pointer";
    void *impl;
    std::memcpy(&impl, reinterpret_cast<char *>(p.ptr()) + sizeof(PyObject), sizeof(impl));
    if (reinterpret_cast<uintptr_t>(impl) != p.attr("_cdata").cast<uintptr_t>())
      return "the tensor object's layout differs from torch 2.11's (cdata after the header)";
    Facts f;
    if (!isPlainTensor(Py_TYPE(p.ptr())) || !read(p.ptr(), f))
      return "aoti_torch_get_* failed on a probe tensor";
    if (reinterpret_cast<uintptr_t>(f.data) != p.attr("data_ptr")().cast<uintptr_t>() ||
        f.deviceType != kCpu || f.deviceIndex != p.attr("get_device")().cast<int>())
      return fmt::format("aoti_torch_get_* disagree with data_ptr()/get_device() on a probe "
                         "(device type {}, index {})",
                         f.deviceType, f.deviceIndex);
    codes[i] = f.dtype;
    if (dtypeObject(f.dtype) == nullptr)
      rememberDtype(f.dtype, p.attr("dtype").ptr());
  }
  if (codes[0] == codes[1] || codes[0] != codes[2] || dtypeObject(codes[0]) == nullptr)
    return "aoti_torch_get_dtype gave the same number to float32 and int64";
  // A sparse probe: its layout is not strided, so read() refuses it before
  // it asks for a data pointer.
  py::object sparse = torch.attr("zeros")(2).attr("to_sparse")();
  Facts f;
  int32_t layout = kStrided;
  if (getLayout_(reinterpret_cast<char *>(sparse.ptr()) + sizeof(PyObject), &layout) != 0 ||
      layout == kStrided || read(sparse.ptr(), f))
    return "aoti_torch_get_layout does not tell a sparse tensor from a strided one";

  void *cuda = loadedLibrary("libtorch_cuda.so", torchLib);
  getCurrentStream_ = symbol<StreamFn>(cuda, "aoti_torch_get_current_cuda_stream");
  streamState_ = getCurrentStream_ ? StreamState::Unchecked : StreamState::Off;
  streamStatus_ = getCurrentStream_ ? "unchecked"
                  : cuda            ? "libtorch_cuda.so lacks aoti_torch_get_current_cuda_stream"
                                    : "libtorch_cuda.so is not loaded";
  return "";
}

void TorchAbi::rememberDtype(int32_t code, PyObject *dtype) const {
  if (code < 0 || code >= kMaxDtypes || dtypes_[code])
    return;
  Py_INCREF(dtype);
  dtypes_[code] = dtype;
}

void TorchAbi::verifyStream(int32_t device, uint64_t pythonValue) const {
  if (streamState_ != StreamState::Unchecked)
    return;
  void *s = nullptr;
  int32_t rc = getCurrentStream_(device, &s);
  if (rc == 0 && reinterpret_cast<uint64_t>(s) == pythonValue) {
    streamState_ = StreamState::On;
    streamStatus_ = "on";
  } else {
    streamState_ = StreamState::Off;
    streamStatus_ = rc != 0 ? fmt::format("aoti_torch_get_current_cuda_stream failed ({})", rc)
                            : fmt::format("aoti_torch_get_current_cuda_stream gave {:#x}, "
                                          "_cuda_getCurrentRawStream {:#x}",
                                          reinterpret_cast<uint64_t>(s), pythonValue);
  }
}

const TorchAbi *TorchAbi::getSlow() {
  if (!envChecked) {
    envChecked = true;
    // A value TK_TORCH_ABI does not take leaves the default: this runs
    // inside a launch, where the launch's own arguments are what fail.
    enabled = readBool(Knob::TorchAbi).value;
  }
  if (!enabled || tried) {
    settled_ = true;
    current_ = enabled ? instance : nullptr;
    return current_;
  }
  // Until torch is imported, every call comes here (one dict lookup, as
  // before TorchAbi).
  PyObject *torch = importedTorch();
  if (!torch)
    return nullptr;
  tried = true;
  settled_ = true;
  auto *abi = new TorchAbi();
  try {
    failure = abi->init(torch);
  } catch (py::error_already_set &e) {
    failure = std::string("probing torch raised ") + e.what();
  } catch (const std::exception &e) {
    failure = std::string("probing torch failed: ") + e.what();
  }
  if (PyErr_Occurred())
    PyErr_Clear();
  if (!failure.empty()) {
    delete abi; // the few references it took stay (types, dtypes: alive anyway)
    return nullptr;
  }
  instance = abi;
  current_ = instance;
  return instance;
}

std::string TorchAbi::status() {
  if (!enabled)
    return "off (TK_TORCH_ABI=0 or _set_torch_abi(False))";
  if (instance)
    return "on; stream: " + instance->streamStatus();
  if (!tried)
    return "not tried (torch is not imported, or no torch tensor was launched yet)";
  return "off: " + failure;
}

PyObject *TorchAbi::importedTorch() {
  static PyObject *torchName = PyUnicode_InternFromString("torch");
  PyObject *torch = PyDict_GetItemWithError(PyImport_GetModuleDict(), torchName);
  if (!torch && PyErr_Occurred())
    PyErr_Clear();
  return torch;
}

uint64_t TorchAbi::readCount() { return instance ? instance->reads() : 0; }

void TorchAbi::setEnabled(bool on) {
  envChecked = true;
  enabled = on;
  settled_ = tried || !on;
  current_ = on ? instance : nullptr;
}

} // namespace tk
