// TorchAbi: reads a torch tensor's data pointer, device and dtype, and
// torch's current CUDA stream, through libtorch's own exported C functions
// instead of calling the tensor's Python methods. The launcher
// (GpuLauncher.h) uses it for the three tensors of a typical launch, where
// the nine Python calls (data_ptr, get_device, dtype each) plus
// _cuda_getCurrentRawStream cost about as much as the rest of tk's launch
// path together.
//
// What it relies on, checked in torch 2.11's headers and then again at run
// time against a probe tensor before it is used:
//   - torch/csrc/inductor/aoti_torch/c/shim.h (the AOTInductor shim, a C ABI
//     libtorch exports): aoti_torch_get_data_ptr, aoti_torch_get_device_type,
//     aoti_torch_get_device_index, aoti_torch_get_dtype, aoti_torch_get_layout
//     take an
//     AtenTensorHandle, which is an `at::Tensor *`, and return 0 on success;
//     aoti_torch_get_current_cuda_stream(device, &stream) (libtorch_cuda).
//   - torch/csrc/autograd/python_variable.h: a THPVariable (the object of a
//     torch.Tensor) is PyObject_HEAD followed by its `at::Tensor cdata`, so
//     the handle of tensor object `t` is `(char *)t + sizeof(PyObject)`.
//     An at::Tensor is one pointer to its TensorImpl, which Python shows as
//     `t._cdata`: the probe compares the two before it calls anything
//     through the handle (a layout that differs, such as older torch's
//     MaybeOwned<at::Tensor>, fails that compare and nothing is called).
//
//   const TorchAbi *abi = TorchAbi::get();     // null: use the Python calls
//   TorchAbi::Facts f;
//   if (abi && abi->isPlainTensor(Py_TYPE(obj)) && abi->read(obj, f))
//     ... f.data, f.deviceType (1 = CUDA), f.deviceIndex, f.dtype ...
//
// Only objects whose type is exactly torch.Tensor or torch.nn.Parameter are
// read this way (a subclass may override data_ptr or __torch_function__;
// those keep the Python calls). The functions are found with dlopen
// (RTLD_NOLOAD: only libraries torch already loaded) and dlsym; nothing is
// linked against torch, so tk builds and imports without it. Setting
// TK_TORCH_ABI=0 turns it off (then everything goes through Python, as
// before); `tk._C._torch_abi()` says whether it is on and, if not, why.
#pragma once

#include <Python.h>

#include <cstdint>
#include <string>

namespace tk {

class TorchAbi {
public:
  /// What a launch needs to know of a tensor. Device types are c10's
  /// (0 CPU, 1 CUDA); dtype is c10::ScalarType's number.
  struct Facts {
    void *data = nullptr;
    int32_t deviceType = -1, deviceIndex = -1, dtype = -1;
  };
  static constexpr int32_t kCpu = 0, kCuda = 1;
  static constexpr int32_t kStrided = 0; // c10::Layout

  /// The process's instance once torch is imported and the probe agreed;
  /// null otherwise (tried again only while torch is not imported yet).
  /// Needs the GIL.
  [[gnu::always_inline]] static const TorchAbi *get() { return settled_ ? current_ : getSlow(); }
  /// Why get() returns null ("on" when it does not), for tests and docs.
  static std::string status();
  /// Turns the C reads off (false) or back on for the rest of the process,
  /// for measuring them against the Python calls; TK_TORCH_ABI=0 sets off.
  static void setEnabled(bool on);
  /// sys.modules["torch"] (borrowed), or null while torch is not imported:
  /// tk never imports torch itself.
  static PyObject *importedTorch();
  /// reads() of the process's instance (0 before there is one).
  static uint64_t readCount();

  bool isPlainTensor(PyTypeObject *type) const {
    return type == tensorType_ || type == parameterType_;
  }
  /// The facts of a plain tensor (isPlainTensor); false when torch reports
  /// an error (a tensor without storage, say).
  [[gnu::always_inline]] bool read(PyObject *tensor, Facts &f) const {
    void *h = reinterpret_cast<char *>(tensor) + sizeof(PyObject);
    ++reads_;
    // Strided tensors only: data_ptr() throws for sparse ones, and torch's
    // shim logs what it catches (the Python path reports it instead).
    int32_t layout;
    return getLayout_(h, &layout) == 0 && layout == kStrided &&
           getDeviceType_(h, &f.deviceType) == 0 && getDeviceIndex_(h, &f.deviceIndex) == 0 &&
           getDataPtr_(h, &f.data) == 0 && getDtype_(h, &f.dtype) == 0;
  }
  /// How many tensors read() has read, for tests that must see this path
  /// taken (tk._C._torch_abi_reads()).
  uint64_t reads() const { return reads_; }
  /// The torch dtype object for `code`, or null when no tensor of that
  /// dtype was seen yet (rememberDtype then records it). Borrowed.
  PyObject *dtypeObject(int32_t code) const {
    return code >= 0 && code < kMaxDtypes ? dtypes_[code] : nullptr;
  }
  void rememberDtype(int32_t code, PyObject *dtype) const;

  /// torch's current stream on `device` through the C function. Used only
  /// once it agreed with torch._C._cuda_getCurrentRawStream: the launcher
  /// calls the Python function while streamUnchecked(), then hands its
  /// result to verifyStream(), which decides for the process.
  bool streamUnchecked() const { return streamState_ == StreamState::Unchecked; }
  void verifyStream(int32_t device, uint64_t pythonValue) const;
  [[gnu::always_inline]] bool currentStream(int32_t device, void **stream) const {
    return streamState_ == StreamState::On && getCurrentStream_(device, stream) == 0;
  }
  /// "unchecked", "on", or why not.
  const std::string &streamStatus() const { return streamStatus_; }

private:
  using TensorFn = int32_t (*)(void *, int32_t *);
  using DataPtrFn = int32_t (*)(void *, void **);
  using StreamFn = int32_t (*)(int32_t, void **);
  static constexpr int32_t kMaxDtypes = 64;

  TorchAbi() = default;
  static const TorchAbi *getSlow();
  /// Finds the functions and checks them on probe tensors; "" or why not.
  std::string init(PyObject *torch);

  // What get() returns once settled_ (tried, or turned off): the instance
  // while it is on, else null. Read on every launch, hence inline.
  inline static const TorchAbi *current_ = nullptr;
  inline static bool settled_ = false;

  PyTypeObject *tensorType_ = nullptr, *parameterType_ = nullptr;
  TensorFn getDeviceType_ = nullptr, getDeviceIndex_ = nullptr, getDtype_ = nullptr,
           getLayout_ = nullptr;
  DataPtrFn getDataPtr_ = nullptr;
  StreamFn getCurrentStream_ = nullptr;
  enum class StreamState : uint8_t { Unchecked, On, Off };
  mutable StreamState streamState_ = StreamState::Off;
  mutable std::string streamStatus_;
  mutable PyObject *dtypes_[kMaxDtypes] = {}; // strong references, kept for the process
  mutable uint64_t reads_ = 0;
};

} // namespace tk
