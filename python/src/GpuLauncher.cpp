#include "GpuLauncher.h"

#include "TorchAbi.h"
#include "compiler/LaunchArgs.h"
#include "support/Knobs.h"

#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <structmember.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace py = pybind11;

namespace tk {
namespace {

// The most parameters the fast path binds on the stack; a kernel with more
// takes the Python path at every launch.
constexpr size_t kMaxParams = 128;
static_assert(kMaxParams <= kMaxPackedParams, "the packed buffer holds every runtime argument");

// The launch options Triton takes as keywords (docs/python.md); `stream`
// is not part of the key.
constexpr const char *kLaunchOptions[] = {"num_warps",
                                          "num_stages",
                                          "num_ctas",
                                          "maxnreg",
                                          "enable_fp_fusion",
                                          "enable_reflect_ftz",
                                          "launch_cooperative_grid",
                                          "stream"};
constexpr size_t kNumLaunchOptions = sizeof(kLaunchOptions) / sizeof(kLaunchOptions[0]);
constexpr size_t kStreamOption = kNumLaunchOptions - 1;

// The key under construction: bytes in a buffer on the stack, so a launch
// allocates nothing; a key longer than the buffer (many parameters, long
// typestrs) moves to the heap.
class KeyBuffer {
public:
  // Inlined: a launch appends a dozen small pieces, each a store or two.
  [[gnu::always_inline]] void append(const char *data, size_t n) {
    if (size_ + n <= sizeof(inline_)) [[likely]] {
      std::memcpy(inline_ + size_, data, n);
      size_ += n;
      return;
    }
    appendSlow(data, n);
  }
  [[gnu::always_inline]] KeyBuffer &operator+=(char c) {
    if (size_ < sizeof(inline_)) [[likely]]
      inline_[size_++] = c;
    else
      appendSlow(&c, 1);
    return *this;
  }
  KeyBuffer &operator+=(const char *s) {
    append(s, std::strlen(s));
    return *this;
  }
  std::string_view view() const {
    return size_ <= sizeof(inline_) ? std::string_view(inline_, size_) : std::string_view(heap_);
  }

private:
  // Past the buffer, the whole key lives in heap_ (size_ keeps counting, so
  // it stays above the buffer's size from then on).
  [[gnu::noinline]] void appendSlow(const char *data, size_t n) {
    if (size_ <= sizeof(inline_))
      heap_.assign(inline_, size_);
    heap_.append(data, n);
    size_ += n;
  }

  char inline_[512];
  size_t size_ = 0;
  std::string heap_;
};

template <class T> void appendRaw(KeyBuffer &key, const T &value) {
  key.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

// A dict's version tag (PEP 509): it changes whenever the dict is
// modified, so an unchanged tag means that a lookup would find what it found
// before. 0 (always look up) where Python no longer keeps it per mutation
// (3.14 on). The field is deprecated from 3.12, hence the pragma.
uint64_t dictVersion(PyObject *dict) {
#if PY_VERSION_HEX < 0x030E0000
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return reinterpret_cast<PyDictObject *>(dict)->ma_version_tag;
#pragma GCC diagnostic pop
#else
  (void)dict;
  return 0;
#endif
}

// TK_INTERPRET's (or TK_CHECK's) text as a boolean, by the knob table's one
// rule; a value it does not take is the launch's error (Python's ValueError).
bool boolKnob(Knob knob, const char *text) {
  KnobValue<bool> v = parseBoolKnob(knobInfo(knob), text ? text : "");
  if (!v.ok())
    throw py::value_error(v.error);
  return v.value;
}

// A compile-time value in the key. Identity keys keep the object alive, so
// its address cannot be reused by another object while the entry exists.
// Inlined: one per constexpr parameter of every launch, ints first (the
// usual BLOCK sizes).
void appendTuple(KeyBuffer &key, PyObject *v, std::vector<py::object> &keepAlive);

[[gnu::always_inline]] inline void appendConstant(KeyBuffer &key, PyObject *v,
                                                  std::vector<py::object> &keepAlive) {
  if (PyLong_CheckExact(v)) {
    int64_t x;
    DType type;
    if (pythonInt(v, x, type)) [[likely]] {
      key += 'i';
      appendRaw(key, x);
      key += char(type);
      return;
    }
    key += 'o';
    appendRaw(key, v);
    keepAlive.push_back(py::reinterpret_borrow<py::object>(v));
  } else if (v == Py_None) {
    key += 'n';
  } else if (PyBool_Check(v)) {
    key += v == Py_True ? 'b' : 'c';
  } else if (PyFloat_CheckExact(v)) {
    key += 'f';
    appendRaw(key, PyFloat_AS_DOUBLE(v));
  } else if (PyTuple_CheckExact(v)) {
    appendTuple(key, v, keepAlive); // by value: a new (8, 8) each launch is one key
  } else {
    key += 'o';
    appendRaw(key, v);
    keepAlive.push_back(py::reinterpret_borrow<py::object>(v));
  }
}

void appendTuple(KeyBuffer &key, PyObject *v, std::vector<py::object> &keepAlive) {
  key += 't';
  appendRaw(key, int64_t(PyTuple_GET_SIZE(v)));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); ++i)
    appendConstant(key, PyTuple_GET_ITEM(v, i), keepAlive);
}

// A pointer-sized Python int. PyLong_AsUnsignedLong walks the digits;
// PyLong_AsUnsignedLongLong goes through a byte array (slower, same result
// where long is 64 bits).
uint64_t asPointer(PyObject *v) {
  if constexpr (sizeof(unsigned long) == sizeof(uint64_t))
    return PyLong_AsUnsignedLong(v);
  else
    return PyLong_AsUnsignedLongLong(v);
}

py::object interned(const char *s) {
  return py::reinterpret_steal<py::object>(PyUnicode_InternFromString(s));
}

PyObject *strDataPtr() {
  static PyObject *s = PyUnicode_InternFromString("data_ptr");
  return s;
}
PyObject *strGetDevice() {
  static PyObject *s = PyUnicode_InternFromString("get_device");
  return s;
}
PyObject *strDtype() {
  static PyObject *s = PyUnicode_InternFromString("dtype");
  return s;
}
PyObject *strCai() {
  static PyObject *s = PyUnicode_InternFromString("__cuda_array_interface__");
  return s;
}

// A grid whose dimensions cannot change: a tuple (not a subclass) of ints.
bool isConstantGrid(PyObject *grid) {
  if (!PyTuple_CheckExact(grid))
    return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(grid); ++i)
    if (!PyLong_CheckExact(PyTuple_GET_ITEM(grid, i)))
      return false;
  return true;
}

// The grid as three dimensions: a tuple or list of 1 to 3 ints, or one int,
// each within the GPU's limits (x below 2^31, y and z at most 65535). The one
// grid check of every launch, the interpreter's too (_C.grid_dims). False
// when it is something else: `why` set for a dimension out of range
// (ValueError), empty for what is not a grid at all (TypeError). A bool, a
// float, a string are not grid dimensions.
bool readGrid(PyObject *grid, std::array<unsigned, 3> &dims, std::string &why) {
  dims = {1, 1, 1};
  auto dim = [&](PyObject *v, size_t i) {
    // numpy integers and the like: anything with __index__, but not a bool
    // (Python's, or numpy's, whose type is named numpy.bool or numpy.bool_).
    std::string_view type = Py_TYPE(v)->tp_name;
    if (PyBool_Check(v) || type == "numpy.bool" || type == "numpy.bool_" || !PyIndex_Check(v))
      return false;
    long long limit = i == 0 ? 0x7fffffffLL : 65535;
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) {
      // An int past 64 bits is out of range too, not another kind of grid.
      if (PyErr_ExceptionMatches(PyExc_OverflowError))
        why = fmt::format("grid dimension {} is {}; it must be from 0 to {}", i,
                          py::repr(v).cast<std::string>(), limit);
      PyErr_Clear();
      return false;
    }
    if (x < 0 || x > limit) {
      why = fmt::format("grid dimension {} is {}; it must be from 0 to {}", i, x, limit);
      return false;
    }
    dims[i] = unsigned(x);
    return true;
  };
  if (PyTuple_Check(grid) || PyList_Check(grid)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(grid);
    if (n < 1 || n > 3) {
      why = fmt::format("it has {} dimensions; a grid has 1 to 3", n);
      return false;
    }
    PyObject **items = PySequence_Fast_ITEMS(grid);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!dim(items[i], size_t(i)))
        return false;
    return true;
  }
  return dim(grid, 0);
}

[[noreturn]] void raiseDriverError(const std::string &message) {
  // Never released: a static py::object would be destroyed after the
  // interpreter has gone.
  static PyObject *driverError =
      py::object(py::module_::import("tk.errors").attr("DriverError")).release().ptr();
  PyErr_SetString(driverError, message.c_str());
  throw py::error_already_set();
}

} // namespace

GpuLauncher::GpuLauncher(py::object jitFunction, std::vector<std::string> names,
                         std::vector<bool> isConstexpr, std::vector<bool> specialize,
                         py::list defaults, py::object missing)
    : jit_(std::move(jitFunction)), isConstexpr_(isConstexpr.begin(), isConstexpr.end()),
      specialize_(specialize.begin(), specialize.end()), missing_(std::move(missing)) {
  for (const std::string &n : names)
    names_.push_back(interned(n.c_str()));
  for (py::handle d : defaults)
    defaults_.push_back(py::reinterpret_borrow<py::object>(d));
  py::object interpret = jit_.attr("interpret");
  if (!interpret.is_none())
    interpret_ = py::cast<bool>(interpret) ? 1 : 0;
  py::object environ = py::module_::import("os").attr("environ");
  if (py::hasattr(environ, "_data") && PyDict_Check(environ.attr("_data").ptr())) {
    environ_ = environ.attr("_data");
    interpretKey_ = py::bytes("TK_INTERPRET");
    checkKey_ = py::bytes("TK_CHECK");
    for (const KnobInfo &k : allKnobs())
      if (k.effect != KnobEffect::Nothing)
        codeKnobKeys_.push_back(py::bytes(std::string(k.name)));
  }
}

int GpuLauncher::traverse(visitproc visit, void *arg) const {
  // Every object held, as Py_VISIT would: the first nonzero result is
  // returned (and no more objects are visited).
  int r = 0;
  auto v = [&](const py::object &o) {
    if (!r && o)
      r = visit(o.ptr(), arg);
  };
  for (const py::object *o :
       {&jit_, &missing_, &rawStream_, &deviceZero_, &environ_, &interpretKey_, &checkKey_})
    v(*o);
  for (const py::object &o : names_)
    v(o);
  for (const py::object &o : codeKnobKeys_)
    v(o);
  for (const py::object &o : defaults_)
    v(o);
  for (const TypeInfo &t : typeInfos_) {
    v(t.typeRef);
    v(t.dataPtr);
    v(t.getDevice);
    v(t.dtype);
  }
  for (const auto &[key, entry] : entries_) {
    v(entry.compiled);
    for (const Guard &g : entry.guards) {
      v(g.dict);
      v(g.name);
      v(g.value);
    }
    for (const py::object &o : entry.keepAlive)
      v(o);
  }
  return r;
}

void GpuLauncher::clear() {
  // Moved out first and released at the end, so that code run by a
  // released object's finalizer finds this launcher already empty.
  py::object jit = std::move(jit_);
  auto entries = std::move(entries_);
  auto typeInfos = std::move(typeInfos_);
  entries_.clear();
  typeInfos_.clear();
  lastKey_ = nullptr;
  lastEntry_ = nullptr;
  // The defaults keep their count (binding indexes them): None now.
  std::vector<py::object> defaults(defaults_.size(), py::none());
  defaults_.swap(defaults);
}

py::object GpuLauncher::jitFunction() const {
  if (!jit_) {
    PyErr_SetString(PyExc_ReferenceError, "this tk._C.Launcher was cleared by the garbage "
                                          "collector: its @tk.jit function no longer exists");
    throw py::error_already_set();
  }
  return jit_;
}

void GpuLauncher::readModeKnobs() const {
  // TK_INTERPRET and TK_CHECK as Python sees them: os.environ's dict holds
  // the environment of the process's start plus every assignment through
  // os.environ (which also reach the C environment). Dict lookups instead of
  // getenv, which scans the environment (tens of ns with the usual 30-100
  // entries).
  if (!environ_) {
    std::optional<std::string> interpret = readRaw(Knob::Interpret), check = readRaw(Knob::Check);
    interpretCached_ = boolKnob(Knob::Interpret, interpret ? interpret->c_str() : nullptr);
    checkCached_ = boolKnob(Knob::Check, check ? check->c_str() : nullptr);
    std::string text;
    for (const KnobInfo &k : allKnobs())
      if (k.effect != KnobEffect::Nothing)
        text += readRaw(k.id).value_or("") + '\0';
    setCodeKnobs(std::move(text));
    return;
  }
  // Read again only when the dict changed since (its version tag).
  const uint64_t version = dictVersion(environ_.ptr());
  if (version != 0 && version == environVersion_)
    return;
  auto read = [&](const py::object &key, Knob knob) {
    PyObject *v = PyDict_GetItemWithError(environ_.ptr(), key.ptr());
    if (!v || !PyBytes_Check(v)) {
      PyErr_Clear();
      return false;
    }
    return boolKnob(knob, PyBytes_AS_STRING(v));
  };
  interpretCached_ = read(interpretKey_, Knob::Interpret);
  checkCached_ = read(checkKey_, Knob::Check);
  // The code knobs' values as they are, unset and empty alike (the table's
  // rule reads both as the default; where it does not, two numbers for one
  // compile key only cost a trip to the Python side).
  std::string text;
  for (const py::object &key : codeKnobKeys_) {
    PyObject *v = PyDict_GetItemWithError(environ_.ptr(), key.ptr());
    if (v && PyBytes_Check(v))
      text += PyBytes_AS_STRING(v);
    else
      PyErr_Clear();
    text += '\0';
  }
  setCodeKnobs(std::move(text));
  environVersion_ = version;
}

void GpuLauncher::setCodeKnobs(std::string text) const {
  if (!codeKnobValues_.empty() && codeKnobValues_[codeKnobsNumber_] == text)
    return;
  auto it = std::find(codeKnobValues_.begin(), codeKnobValues_.end(), text);
  codeKnobsNumber_ = uint32_t(it - codeKnobValues_.begin());
  if (it == codeKnobValues_.end())
    codeKnobValues_.push_back(std::move(text));
}

bool GpuLauncher::interpretMode() const {
  if (interpret_ >= 0)
    return interpret_ == 1;
  readModeKnobs();
  return interpretCached_;
}

bool GpuLauncher::checkMode() const {
  readModeKnobs();
  return checkCached_;
}

bool GpuLauncher::guardsHold(const Entry &entry) {
  for (const Guard &g : entry.guards) {
    PyObject *dict = g.dict.ptr();
    const uint64_t version = PyDict_Check(dict) ? dictVersion(dict) : 0;
    if (version != 0 && version == g.version)
      continue;
    PyObject *now = PyDict_Check(dict) ? PyDict_GetItemWithError(dict, g.name.ptr()) : nullptr;
    if (now != g.value.ptr()) {
      if (PyErr_Occurred())
        PyErr_Clear();
      return false;
    }
    g.version = version;
  }
  return true;
}

const GpuLauncher::TypeInfo &GpuLauncher::addTypeInfo(PyTypeObject *type) {
  // Looked at once per type: torch tensors (and subclasses such as
  // nn.Parameter) by their module, then the two generic protocols.
  PyObject *typeObj = reinterpret_cast<PyObject *>(type);
  TypeInfo info;
  info.type = type;
  info.typeRef = py::reinterpret_borrow<py::object>(typeObj);
  bool hasDataPtr = PyObject_HasAttr(typeObj, strDataPtr());
  bool isTorch = false;
  for (PyTypeObject *t = type; t && !isTorch; t = t->tp_base) {
    py::object module = py::getattr(reinterpret_cast<PyObject *>(t), "__module__", py::none());
    isTorch = py::isinstance<py::str>(module) && module.cast<std::string>().rfind("torch", 0) == 0;
  }
  if (hasDataPtr && isTorch)
    info.kind = TypeKind::Torch;
  else if (PyObject_HasAttr(typeObj, strCai()))
    info.kind = TypeKind::CudaArrayInterface;
  else if (hasDataPtr)
    info.kind = TypeKind::DataPtr;
  // The type's own C descriptors, to call without looking the name up on
  // every launch (a method found on the type, where an instance could only
  // shadow it through its __dict__, which tensors do not use for these).
  auto descriptor = [&](PyObject *name, PyTypeObject *descrType) {
    PyObject *d = PyObject_GetAttr(typeObj, name);
    if (!d) {
      PyErr_Clear();
      return py::object();
    }
    py::object o = py::reinterpret_steal<py::object>(d);
    return Py_IS_TYPE(d, descrType) ? o : py::object();
  };
  if (info.kind == TypeKind::Torch || info.kind == TypeKind::DataPtr) {
    info.dataPtr = descriptor(strDataPtr(), &PyMethodDescr_Type);
    info.getDevice = descriptor(strGetDevice(), &PyMethodDescr_Type);
    info.dtype = descriptor(strDtype(), &PyGetSetDescr_Type);
  }
  if (info.kind == TypeKind::Torch)
    if (const TorchAbi *abi = TorchAbi::get())
      info.plainTensor = abi->isPlainTensor(type);
  if (PyErr_Occurred())
    PyErr_Clear();
  typeInfos_.push_back(std::move(info));
  return typeInfos_.back();
}

// The stand-in mode of _set_stand_in_torch(): CPU torch tensors count as
// device 0's and torch's current stream is not read, so that tk's own work
// per launch on real torch tensors can be measured against the stand-in
// driver on a machine without a GPU (bench/python_launch_bench.py
// --stand-in). Never on otherwise.
static bool standInTorch = false;

[[gnu::always_inline]] inline GpuLauncher::AbiRead
GpuLauncher::readTorchAbi(const TypeInfo &info, PyObject *v, uint64_t &ptr, PyObject *&dtype) {
  const TorchAbi *abi = TorchAbi::get(); // null after _set_torch_abi(False)
  TorchAbi::Facts f;
  if (!abi || !abi->read(v, f))
    return AbiRead::UsePython; // which reports what is wrong, if anything
  if (f.deviceType == TorchAbi::kCuda ? f.deviceIndex != 0
                                      : !(standInTorch && f.deviceType == TorchAbi::kCpu))
    return AbiRead::NotDevice0;
  dtype = abi->dtypeObject(f.dtype);
  if (!dtype) {
    // The first tensor of this dtype: its dtype object, once, through the
    // getter (the key holds the object's address, as on the Python path).
    PyObject *d = getAttr(info.dtype.ptr(), v, strDtype());
    if (!d)
      return AbiRead::UsePython;
    abi->rememberDtype(f.dtype, d);
    Py_DECREF(d);
    dtype = abi->dtypeObject(f.dtype);
    if (!dtype)
      return AbiRead::UsePython; // a dtype number past the table
  }
  ptr = reinterpret_cast<uint64_t>(f.data);
  return AbiRead::Done;
}

// Inlined into launch() (it was before launch() grew its float-subclass
// case; the call costs ~30 instructions per launch of three tensors).
[[gnu::always_inline]] inline PyObject *GpuLauncher::callNoArgs(PyObject *descr, PyObject *obj,
                                                                PyObject *name) {
  PyObject *r =
      descr ? PyObject_Vectorcall(descr, &obj, 1, nullptr) : PyObject_CallMethodNoArgs(obj, name);
  if (!r)
    PyErr_Clear();
  return r;
}

PyObject *GpuLauncher::getAttr(PyObject *descr, PyObject *obj, PyObject *name) {
  PyObject *r =
      descr ? Py_TYPE(descr)->tp_descr_get(descr, obj, reinterpret_cast<PyObject *>(Py_TYPE(obj)))
            : PyObject_GetAttr(obj, name);
  if (!r)
    PyErr_Clear();
  return r;
}

namespace {

// `launcher[grid]` and the object that makes it: plain CPython types rather
// than pybind11 classes, so that `kernel[grid](x, y, n, BLOCK=256)` is one
// subscript and one vectorcall into GpuLauncher::launch, with no argument
// tuple, kwargs dict or pybind11 dispatch on the way (about a microsecond
// less per launch than a pybind11 __call__ taking py::args, py::kwargs).
struct BoundLaunchObject {
  PyObject_HEAD;
  vectorcallfunc vectorcall;
  PyObject *owner; // the Launcher's Python object: keeps `launcher` alive
  GpuLauncher *launcher;
  PyObject *grid;
  GpuLauncher::GridCache gridCache; // grid's dimensions once read, if it is a tuple of ints
};

// tk._C.LaunchBase, the C base class of JITFunction: its subscript is
// `kernel[grid]`, so no Python frame runs for it. It remembers the last grid
// object and its bound launch: `kernel[grid]` with the same grid object (a
// module-level tuple, a lambda) then allocates nothing. A GC type (its
// subclass instances reach the launcher, which reaches them back).
struct LaunchBaseObject {
  PyObject_HEAD;
  PyObject *owner; // the Launcher's Python object, null until attached
  GpuLauncher *launcher;
  PyObject *lastGrid;
  PyObject *lastBound;
};

PyObject *boundLaunchCall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  auto *b = reinterpret_cast<BoundLaunchObject *>(self);
  try {
    return b->launcher
        ->launch(b->grid, args, size_t(PyVectorcall_NARGS(nargsf)), kwnames, nullptr, &b->gridCache)
        .release()
        .ptr();
  } catch (py::error_already_set &e) {
    e.restore();
  } catch (...) {
    py::detail::try_translate_exceptions();
  }
  return nullptr;
}

// A GC type too: the JITFunction caches its last bound launch, which holds
// the launcher, so an untracked one would hide that cycle from the
// collector. Clearing drops the grid only: the launcher stays valid for as
// long as a bound launch may still be called.
int boundLaunchTraverse(PyObject *self, visitproc visit, void *arg) {
  auto *b = reinterpret_cast<BoundLaunchObject *>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(b->owner);
  Py_VISIT(b->grid);
  return 0;
}

int boundLaunchClear(PyObject *self) {
  auto *b = reinterpret_cast<BoundLaunchObject *>(self);
  Py_XSETREF(b->grid, Py_NewRef(Py_None)); // a call now raises the grid's TypeError
  b->gridCache = {};
  return 0;
}

// A launch whose grid is a new object (`kernel[(n,)](...)`) makes a bound
// launch and frees the one before it, so the last few freed ones are kept
// for reuse: a GC allocation and free cost about 90 instructions more than
// PyObject_New and free, tracking and untracking a reused one less. Kept
// objects keep their reference to the type; the GIL guards the list.
constexpr int kMaxFreeBound = 4;
BoundLaunchObject *freeBound[kMaxFreeBound];
int numFreeBound = 0;

void boundLaunchDealloc(PyObject *self) {
  auto *b = reinterpret_cast<BoundLaunchObject *>(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(b->owner);
  Py_CLEAR(b->grid);
  if (numFreeBound < kMaxFreeBound) {
    freeBound[numFreeBound++] = b;
    return;
  }
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

int launchBaseTraverse(PyObject *self, visitproc visit, void *arg) {
  auto *b = reinterpret_cast<LaunchBaseObject *>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(b->owner);
  Py_VISIT(b->lastGrid);
  Py_VISIT(b->lastBound);
  return 0;
}

int launchBaseClear(PyObject *self) {
  auto *b = reinterpret_cast<LaunchBaseObject *>(self);
  b->launcher = nullptr;
  Py_CLEAR(b->owner);
  Py_CLEAR(b->lastGrid);
  Py_CLEAR(b->lastBound);
  return 0;
}

void launchBaseDealloc(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  launchBaseClear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyMemberDef boundLaunchMembers[] = {{"__vectorcalloffset__", T_PYSSIZET,
                                     offsetof(BoundLaunchObject, vectorcall), READONLY, nullptr},
                                    {nullptr, 0, 0, 0, nullptr}};

PyTypeObject *boundLaunchType = nullptr;
PyTypeObject *launchBaseType = nullptr;

PyObject *newBoundLaunch(PyObject *owner, GpuLauncher *launcher, PyObject *grid) {
  BoundLaunchObject *b;
  if (numFreeBound > 0) {
    b = freeBound[--numFreeBound];
    Py_SET_REFCNT(reinterpret_cast<PyObject *>(b), 1);
  } else if (!(b = PyObject_GC_New(BoundLaunchObject, boundLaunchType))) {
    return nullptr;
  }
  b->vectorcall = boundLaunchCall;
  b->owner = Py_NewRef(owner);
  b->launcher = launcher;
  b->grid = Py_NewRef(grid);
  b->gridCache = {};
  PyObject_GC_Track(b);
  return reinterpret_cast<PyObject *>(b);
}

PyObject *launchBaseSubscript(PyObject *self, PyObject *grid) {
  auto *b = reinterpret_cast<LaunchBaseObject *>(self);
  if (b->lastBound && b->lastGrid == grid)
    return Py_NewRef(b->lastBound);
  if (!b->launcher) {
    PyErr_SetString(PyExc_TypeError, "LaunchBase: no launcher attached (_attach_launcher)");
    return nullptr;
  }
  PyObject *bound = newBoundLaunch(b->owner, b->launcher, grid);
  if (!bound)
    return nullptr;
  Py_XSETREF(b->lastGrid, Py_NewRef(grid));
  Py_XSETREF(b->lastBound, Py_NewRef(bound));
  return bound;
}

PyTypeObject *launcherType = nullptr; // the pybind11 class tk._C.Launcher

// The launcher's C++ object, or null while pybind11 has not constructed it
// (between allocation and __init__).
GpuLauncher *launcherOf(PyObject *self) {
  if (!py::detail::is_holder_constructed(self))
    return nullptr;
  return py::handle(self).cast<GpuLauncher *>();
}

int launcherTraverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  GpuLauncher *l = launcherOf(self);
  return l ? l->traverse(visit, arg) : 0;
}

int launcherClear(PyObject *self) {
  if (GpuLauncher *l = launcherOf(self))
    l->clear();
  return 0;
}

PyObject *launchBaseAttach(PyObject *self, PyObject *launcher) {
  if (!launcherType || !PyObject_TypeCheck(launcher, launcherType)) {
    PyErr_SetString(PyExc_TypeError, "_attach_launcher takes a tk._C.Launcher");
    return nullptr;
  }
  auto *b = reinterpret_cast<LaunchBaseObject *>(self);
  Py_XSETREF(b->owner, Py_NewRef(launcher));
  b->launcher = py::handle(launcher).cast<GpuLauncher *>();
  Py_CLEAR(b->lastGrid);
  Py_CLEAR(b->lastBound);
  Py_RETURN_NONE;
}

PyMethodDef launchBaseMethods[] = {
    {"_attach_launcher", launchBaseAttach, METH_O,
     "Makes self[grid] the launcher's bound launch (tk._C.Launcher)."},
    {nullptr, nullptr, 0, nullptr}};

void readyTypes() {
  if (boundLaunchType)
    return;
  PyType_Slot boundSlots[] = {{Py_tp_dealloc, reinterpret_cast<void *>(boundLaunchDealloc)},
                              {Py_tp_traverse, reinterpret_cast<void *>(boundLaunchTraverse)},
                              {Py_tp_clear, reinterpret_cast<void *>(boundLaunchClear)},
                              {Py_tp_call, reinterpret_cast<void *>(PyVectorcall_Call)},
                              {Py_tp_members, boundLaunchMembers},
                              {0, nullptr}};
  PyType_Spec boundSpec = {"tk._C.BoundLaunch", sizeof(BoundLaunchObject), 0,
                           Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
                           boundSlots};
  PyType_Slot baseSlots[] = {{Py_tp_dealloc, reinterpret_cast<void *>(launchBaseDealloc)},
                             {Py_tp_traverse, reinterpret_cast<void *>(launchBaseTraverse)},
                             {Py_tp_clear, reinterpret_cast<void *>(launchBaseClear)},
                             {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
                             {Py_tp_methods, launchBaseMethods},
                             {Py_mp_subscript, reinterpret_cast<void *>(launchBaseSubscript)},
                             {0, nullptr}};
  PyType_Spec baseSpec = {"tk._C.LaunchBase", sizeof(LaunchBaseObject), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, baseSlots};
  boundLaunchType = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&boundSpec));
  launchBaseType = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&baseSpec));
  if (!boundLaunchType || !launchBaseType)
    throw py::error_already_set();
}

} // namespace

py::object GpuLauncher::bind(py::object grid) {
  py::object owner = py::cast(this, py::return_value_policy::reference);
  return py::reinterpret_steal<py::object>(newBoundLaunch(owner.ptr(), this, grid.ptr()));
}

void bindGpuLauncher(py::module_ &m) {
  readyTypes();
  m.attr("BoundLaunch") = py::handle(reinterpret_cast<PyObject *>(boundLaunchType));
  m.attr("LaunchBase") = py::handle(reinterpret_cast<PyObject *>(launchBaseType));
  m.def(
      "grid_dims",
      [](py::handle grid, const std::string &kernel) {
        std::array<unsigned, 3> dims = GpuLauncher::checkGrid(grid, kernel);
        return py::make_tuple(dims[0], dims[1], dims[2]);
      },
      py::arg("grid"), py::arg("kernel"),
      "The grid's three dimensions by the GPU launch's one rule (a tuple or list of 1 to 3 ints, "
      "or an int; x below 2**31, y and z at most 65535); TypeError or ValueError naming the "
      "kernel otherwise. The interpreter path checks its grids with it too.");
  m.def(
      "launch_options",
      [] {
        py::tuple names(kNumLaunchOptions);
        for (size_t i = 0; i < kNumLaunchOptions; ++i)
          names[i] = kLaunchOptions[i];
        return names;
      },
      "The launch options (Triton's keywords, not kernel parameters) the C++ launcher binds "
      "and keys on, stream last; jit.LAUNCH_OPTIONS starts with them.");
  m.def("_torch_abi", &TorchAbi::status,
        "Whether launches read torch tensors and the stream through libtorch's C functions "
        "(TorchAbi.h): 'on; stream: ...', or why not.");
  m.def("_torch_abi_reads", &TorchAbi::readCount,
        "How many tensors launches have read through libtorch's C functions (for tests).");
  m.def("_set_torch_abi", &TorchAbi::setEnabled, py::arg("on"),
        "Turns those C reads off (False: the Python calls, as with TK_TORCH_ABI=0) or on; for "
        "measuring them.");
  m.def(
      "_set_stand_in_torch", [](bool on) { standInTorch = on; }, py::arg("on"),
      "Stand-in driver measurements only: CPU torch tensors count as device 0's and torch's "
      "current stream is not read.");
  m.def("_stand_in_torch", [] { return standInTorch; });
  // A GC type (GpuLauncher::traverse/clear): it holds its JITFunction,
  // which holds it.
  py::class_<GpuLauncher> launcher(m, "Launcher", py::custom_type_setup([](PyHeapTypeObject *ht) {
                                     PyTypeObject *type = &ht->ht_type;
                                     type->tp_flags |= Py_TPFLAGS_HAVE_GC;
                                     type->tp_traverse = launcherTraverse;
                                     type->tp_clear = launcherClear;
                                   }));
  launcherType = reinterpret_cast<PyTypeObject *>(launcher.ptr());
  launcher
      .def(py::init<py::object, std::vector<std::string>, std::vector<bool>, std::vector<bool>,
                    py::list, py::object>(),
           py::arg("jit_function"), py::arg("names"), py::arg("is_constexpr"),
           py::arg("specialize"), py::arg("defaults"), py::arg("missing"))
      .def("__getitem__", &GpuLauncher::bind)
      .def("call", &GpuLauncher::call, py::arg("grid"), py::arg("args"), py::arg("kwargs"))
      .def("call_unchecked", &GpuLauncher::callUnchecked, py::arg("grid"), py::arg("args"),
           py::arg("kwargs"))
      .def_property_readonly("num_entries", &GpuLauncher::numEntries)
      .def_property_readonly("last_key",
                             [](const GpuLauncher &l) { return py::bytes(l.lastKey()); });
}

template <class MetaFn>
std::array<unsigned, 3> GpuLauncher::gridDims(py::handle grid, const MetaFn &meta,
                                              const std::string &kernel) {
  py::object g = py::reinterpret_borrow<py::object>(grid);
  if (PyCallable_Check(grid.ptr()))
    g = g(meta());
  return checkGrid(g, kernel);
}

std::array<unsigned, 3> GpuLauncher::checkGrid(py::handle grid, const std::string &kernel) {
  std::array<unsigned, 3> dims;
  std::string why;
  if (!readGrid(grid.ptr(), dims, why)) {
    if (!why.empty())
      throw py::value_error(fmt::format("the grid of {}: {}", kernel, why));
    throw py::type_error(fmt::format("the grid of {} must be a tuple of 1 to 3 ints or a "
                                     "callable returning one, not {}",
                                     kernel, py::repr(grid).cast<std::string>()));
  }
  return dims;
}

py::object GpuLauncher::call(py::handle grid, py::handle argsHandle, py::handle kwargsHandle) {
  if (!PyTuple_Check(argsHandle.ptr()) ||
      !(kwargsHandle.is_none() || PyDict_Check(kwargsHandle.ptr())))
    throw py::type_error("Launcher.call(grid, args, kwargs) takes a tuple and a dict");
  return launch(grid, &PyTuple_GET_ITEM(argsHandle.ptr(), 0),
                size_t(PyTuple_GET_SIZE(argsHandle.ptr())), nullptr,
                kwargsHandle.is_none() ? nullptr : kwargsHandle.ptr());
}

py::object GpuLauncher::callUnchecked(py::handle grid, py::handle argsHandle,
                                      py::handle kwargsHandle) {
  if (!PyTuple_Check(argsHandle.ptr()) ||
      !(kwargsHandle.is_none() || PyDict_Check(kwargsHandle.ptr())))
    throw py::type_error("Launcher.call_unchecked(grid, args, kwargs) takes a tuple and a dict");
  return launch(grid, &PyTuple_GET_ITEM(argsHandle.ptr(), 0),
                size_t(PyTuple_GET_SIZE(argsHandle.ptr())), nullptr,
                kwargsHandle.is_none() ? nullptr : kwargsHandle.ptr(), nullptr,
                /*unchecked=*/true);
}

py::object GpuLauncher::launch(py::handle grid, PyObject *const *args, size_t numArgs,
                               PyObject *kwnames, PyObject *kwargs, GridCache *gridCache,
                               bool unchecked) {
  // The Python side takes a tuple and a dict; built only when it is called.
  auto pythonArgs = [&]() {
    py::tuple t(numArgs);
    for (size_t i = 0; i < numArgs; ++i)
      t[i] = py::reinterpret_borrow<py::object>(args[i]);
    py::dict d;
    if (kwargs)
      d = py::reinterpret_borrow<py::dict>(PyDict_Copy(kwargs)).cast<py::dict>();
    for (Py_ssize_t j = 0; kwnames && j < PyTuple_GET_SIZE(kwnames); ++j)
      d[PyTuple_GET_ITEM(kwnames, j)] = py::reinterpret_borrow<py::object>(args[numArgs + j]);
    return std::make_pair(t, d);
  };
  readModeKnobs(); // the code knobs' number, for the key
  if (interpretMode()) {
    auto [t, d] = pythonArgs();
    return jitFunction().attr("_interpret_run")(grid, t, d);
  }
  // TK_CHECK=1: the Python side copies the inputs, launches through
  // call_unchecked, and compares with the interpreter (python/tk/check.py).
  if (!unchecked && checkMode()) {
    auto [t, d] = pythonArgs();
    return jitFunction().attr("_checked_run")(grid, t, d);
  }

  const size_t numParams = names_.size();

  // Binding, as Python binds; anything unusual (too many arguments, an
  // unknown or repeated keyword, a missing one) sets `keyable` false and the
  // Python side raises the TypeError.
  bool keyable = numParams <= kMaxParams && numArgs <= numParams;
  PyObject *values[kMaxParams];
  std::fill_n(values, std::min(numParams, kMaxParams), nullptr);
  PyObject *options[kNumLaunchOptions] = {};
  bool anyOption = false; // a launch option among the keywords
  auto bindKeyword = [&](PyObject *k, PyObject *v) {
    size_t found = numParams;
    for (size_t i = 0; i < numParams && found == numParams; ++i)
      if (names_[i].ptr() == k)
        found = i;
    for (size_t i = 0; i < numParams && found == numParams; ++i)
      if (PyUnicode_Compare(names_[i].ptr(), k) == 0)
        found = i;
    if (found < numParams) {
      keyable = values[found] == nullptr;
      values[found] = v;
      return;
    }
    size_t opt = kNumLaunchOptions;
    for (size_t i = 0; i < kNumLaunchOptions && opt == kNumLaunchOptions; ++i)
      if (PyUnicode_CompareWithASCIIString(k, kLaunchOptions[i]) == 0)
        opt = i;
    keyable = opt < kNumLaunchOptions;
    if (keyable) {
      options[opt] = v;
      anyOption = true;
    }
  };
  if (keyable) {
    for (size_t i = 0; i < numArgs; ++i)
      values[i] = args[i];
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (keyable && kwargs && PyDict_Next(kwargs, &pos, &k, &v))
      bindKeyword(k, v);
    for (Py_ssize_t j = 0; keyable && kwnames && j < PyTuple_GET_SIZE(kwnames); ++j)
      bindKeyword(PyTuple_GET_ITEM(kwnames, j), args[numArgs + j]);
    if (PyErr_Occurred())
      PyErr_Clear();
    for (size_t i = 0; keyable && i < numParams; ++i) {
      if (!values[i])
        values[i] = defaults_[i].ptr() == missing_.ptr() ? nullptr : defaults_[i].ptr();
      keyable = values[i] != nullptr;
    }
  }

  // The key, and the runtime values on the way.
  KeyBuffer key;
  std::vector<py::object> keepAlive;
  // Each runtime argument as a typed value (compiler/LaunchArgs.h) of the
  // kind its parameter's slot has: the kind the specialisation rule gives
  // the value (a Python int i32 or i64, a bool i1), which is what the
  // signature compiled for it says; a float is the fp64 Python holds, which
  // storeArg rounds into an fp32 slot as it stores it.
  ArgValue runtime[kMaxParams];
  size_t numRuntime = 0;
  appendRaw(key, codeKnobsNumber_);
  for (size_t o = 0; anyOption && keyable && o < kStreamOption; ++o)
    if (options[o]) {
      key += char('A' + o);
      appendConstant(key, options[o], keepAlive);
    }
  for (size_t i = 0; keyable && i < numParams; ++i) {
    PyObject *v = values[i];
    if (isConstexpr_[i]) {
      appendConstant(key, v, keepAlive);
      continue;
    }
    const bool spec = specialize_[i];
    ArgValue &rv = runtime[numRuntime];
    if (v == Py_None) {
      key += 'N';
      continue;
    }
    if (PyBool_Check(v)) {
      key += 'B';
      rv = ArgValue::ofI1(v == Py_True);
      ++numRuntime;
      continue;
    }
    if (PyLong_CheckExact(v)) {
      // The type and the fact by the specialisation rule, as _specialize
      // gives them (compiler/ArgSpecialization.h): a Python int's type is
      // i32, i64 or u64, each of which takes facts.
      DType type;
      int64_t x;
      if (!pythonInt(v, x, type)) {
        keyable = false;
        break;
      }
      key += 'I';
      key += char(type);
      key += char(spec ? integerFact(x) : ArgFact::None);
      rv = type == DType::I32 ? ArgValue::ofI32(int32_t(x)) : ArgValue::ofI64(x);
      ++numRuntime;
      continue;
    }
    if (PyFloat_CheckExact(v)) {
      key += 'F';
      rv = ArgValue::ofF64(PyFloat_AS_DOUBLE(v));
      ++numRuntime;
      continue;
    }
    const TypeInfo &info = typeInfo(Py_TYPE(v));
    const TypeKind kind = info.kind;
    uint64_t ptr = 0;
    PyObject *abiDtype = nullptr;
    const AbiRead abi =
        info.plainTensor ? readTorchAbi(info, v, ptr, abiDtype) : AbiRead::UsePython;
    if (abi == AbiRead::NotDevice0) {
      keyable = false; // the Python side raises the TypeError that names it
      break;
    }
    if (abi == AbiRead::Done) {
      key += 'T';
      appendRaw(key, abiDtype);
    } else if (kind == TypeKind::Torch || kind == TypeKind::DataPtr) {
      if (kind == TypeKind::Torch) {
        // A CPU tensor (-1) or one on another device: the Python side
        // raises the TypeError that names it.
        PyObject *dev = callNoArgs(info.getDevice.ptr(), v, strGetDevice());
        long d = dev ? PyLong_AsLong(dev) : -2;
        Py_XDECREF(dev);
        if (d != 0 && !(standInTorch && d == -1)) {
          PyErr_Clear();
          keyable = false;
          break;
        }
      }
      PyObject *p = callNoArgs(info.dataPtr.ptr(), v, strDataPtr());
      PyObject *dt = getAttr(info.dtype.ptr(), v, strDtype());
      if (p)
        ptr = asPointer(p);
      Py_XDECREF(p);
      if (!p || !dt || PyErr_Occurred()) {
        PyErr_Clear();
        Py_XDECREF(dt);
        keyable = false;
        break;
      }
      key += kind == TypeKind::Torch ? 'T' : 'D';
      appendRaw(key, dt);
      // torch dtypes live as long as torch; other dtype objects are kept.
      if (kind == TypeKind::DataPtr)
        keepAlive.push_back(py::reinterpret_borrow<py::object>(dt));
      Py_DECREF(dt);
    } else if (kind == TypeKind::CudaArrayInterface) {
      PyObject *cai = PyObject_GetAttr(v, strCai());
      // Interned keys: PyDict_GetItemString would make and hash a new str
      // per lookup (about 700 instructions each).
      static PyObject *dataKey = PyUnicode_InternFromString("data");
      static PyObject *typestrKey = PyUnicode_InternFromString("typestr");
      const bool isDict = cai && PyDict_Check(cai);
      PyObject *data = isDict ? PyDict_GetItemWithError(cai, dataKey) : nullptr;
      PyObject *typestr = isDict ? PyDict_GetItemWithError(cai, typestrKey) : nullptr;
      bool ok = data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) >= 1 && typestr &&
                PyUnicode_Check(typestr);
      if (ok)
        ptr = asPointer(PyTuple_GET_ITEM(data, 0));
      if (ok && !PyErr_Occurred()) {
        key += 'C';
        key += PyUnicode_AsUTF8(typestr);
        key += '\0';
      }
      ok = ok && !PyErr_Occurred();
      Py_XDECREF(cai);
      if (!ok) {
        PyErr_Clear();
        keyable = false;
        break;
      }
    } else if (PyFloat_Check(v)) {
      // np.float64 and other subclasses of float: fp32 like a float, as
      // runtime/jit.py specialises them (checked here, after the exact types,
      // so that tensors do not pay for the subtype walk).
      key += 'F';
      rv = ArgValue::ofF64(PyFloat_AS_DOUBLE(v));
      ++numRuntime;
      continue;
    } else {
      keyable = false;
      break;
    }
    key += char(spec ? pointerFact(ptr) : ArgFact::None);
    rv = ArgValue::ofPointer(ptr);
    ++numRuntime;
  }

  // The same key as the last launch (the common case: a loop) is found by
  // one compare, without hashing.
  Entry *entry = nullptr;
  if (keyable && lastKey_ && key.view() == std::string_view(*lastKey_)) {
    entry = lastEntry_;
  } else {
    lastKey_ = nullptr;
    lastEntry_ = nullptr;
    if (keyable) {
      auto it = entries_.find(key.view());
      if (it != entries_.end()) {
        lastKey_ = &it->first;
        lastEntry_ = entry = &it->second;
      }
    }
  }
  if (entry && !guardsHold(*entry))
    entry = nullptr;

  // The meta dict of a callable grid: the bound arguments and the launch
  // options given, as the Python side builds it.
  auto buildMeta = [&]() {
    py::dict meta;
    for (size_t i = 0; i < numParams; ++i)
      meta[names_[i]] = py::reinterpret_borrow<py::object>(values[i]);
    for (size_t o = 0; o < kNumLaunchOptions; ++o)
      if (options[o])
        meta[kLaunchOptions[o]] = py::reinterpret_borrow<py::object>(options[o]);
    return py::object(meta);
  };

  // The fast path: a known key whose globals are unchanged. The values go
  // straight into what cuLaunchKernel reads (compiler/LaunchArgs.h's
  // packArgs): one buffer at the kernel's parameter offsets, and the array
  // of pointers into it, both on the stack; JitKernel::packedLaunches says
  // which of the two the launch passes.
  if (entry) {
    const JitKernel &kernel = *entry->kernel;
    const ParamLayout &layout = kernel.layout();
    const bool packed = JitKernel::packedLaunches();
    alignas(8) char buffer[kMaxPackedBytes];
    void *slotPtrs[kMaxParams];
    // Each value has its slot's kind (see `runtime`), so each is one store.
    bool ok = layout.kinds.size() == numRuntime &&
              packArgs({runtime, numRuntime}, layout, buffer, slotPtrs) == numRuntime;
    // A mismatch cannot happen for a key the Python side compiled; if it
    // does, the general path below says what is wrong.
    if (ok) {
      // A tuple of ints cannot change: its dimensions are read once per
      // bound launch (which holds the tuple, so its address is not reused).
      std::array<unsigned, 3> dims;
      if (gridCache && gridCache->known) {
        dims = gridCache->dims;
      } else {
        dims = gridDims(grid, buildMeta, kernel.name());
        if (gridCache && isConstantGrid(grid.ptr()))
          *gridCache = {true, dims};
      }
      if (uint64_t(dims[0]) * dims[1] * dims[2] == 0)
        return entry->compiled;
      CUstream stream = streamOf(options[kStreamOption]);
      std::string error;
      if (!(packed ? kernel.launchPacked(dims, buffer, stream, error)
                   : kernel.launch(dims, slotPtrs, stream, error)))
        raiseDriverError(error);
      return entry->compiled;
    }
  }

  // The Python side: compile (or find) the kernel for these arguments, or
  // raise the TypeError that names what is wrong. It returns the
  // CompiledKernel, the guards, the runtime values and the meta dict.
  std::string ownKey(key.view()); // the Python side may launch through this launcher
  auto [pyArgs, pyKwargs] = pythonArgs();
  py::tuple r = jitFunction().attr("_gpu_compile")(pyArgs, pyKwargs);
  py::object compiled = r[0];
  Entry fresh;
  fresh.compiled = compiled;
  fresh.kernel = compiled.attr("_compiled").cast<JitKernel *>();
  for (py::handle g : r[1].cast<py::list>()) {
    py::tuple t = g.cast<py::tuple>();
    fresh.guards.push_back({t[0], t[1], t[2]});
  }
  fresh.keepAlive = std::move(keepAlive);
  py::object meta = r[3];
  py::object stream = py::reinterpret_borrow<py::dict>(meta).contains("stream")
                          ? py::object(py::reinterpret_borrow<py::dict>(meta)["stream"])
                          : py::object(py::none());
  const Entry *use = &fresh;
  if (keyable) {
    auto it = entries_.insert_or_assign(std::move(ownKey), std::move(fresh)).first;
    lastKey_ = &it->first;
    lastEntry_ = &it->second;
    use = &it->second;
  }
  return launchWith(*use, grid, r[2].cast<py::list>(), meta, stream);
}

CUstream GpuLauncher::streamOf(PyObject *option) {
  if (option && option != Py_None) {
    if (PyLong_Check(option))
      return reinterpret_cast<CUstream>(PyLong_AsUnsignedLongLong(option));
    return reinterpret_cast<CUstream>(
        jitFunction().attr("_stream_handle")(py::handle(option)).cast<uint64_t>());
  }
  // torch's current stream on device 0, once torch is imported; before
  // that, the default stream. Through libtorch's C function once it agreed
  // with the Python one (TorchAbi::verifyStream, at the first launch).
  const TorchAbi *abi = TorchAbi::get();
  void *s;
  if (abi && abi->currentStream(0, &s)) [[likely]]
    return static_cast<CUstream>(s);
  if (standInTorch)
    return nullptr;
  if (!rawStream_) {
    PyObject *torch = TorchAbi::importedTorch();
    if (!torch)
      return nullptr;
    py::object t = py::reinterpret_borrow<py::object>(torch);
    py::object c = py::getattr(t, "_C", py::none());
    if (c.is_none() || !py::hasattr(c, "_cuda_getCurrentRawStream"))
      return nullptr;
    rawStream_ = c.attr("_cuda_getCurrentRawStream");
    deviceZero_ = py::int_(0);
  }
  PyObject *r = PyObject_CallOneArg(rawStream_.ptr(), deviceZero_.ptr());
  if (!r)
    throw py::error_already_set();
  const uint64_t value = asPointer(r);
  Py_DECREF(r);
  if (PyErr_Occurred())
    throw py::error_already_set();
  if (abi && abi->streamUnchecked())
    abi->verifyStream(0, value);
  return reinterpret_cast<CUstream>(value);
}

// The general launch: runtime values as Python objects (ints, floats, bools;
// pointers as ints), as the Python side computed them, each read as its
// slot's class (a pointer, an int64, a double) and stored by packArgs as the
// fast path stores them, with LaunchArgs' error naming an argument that does
// not go into its slot.
py::object GpuLauncher::launchWith(const Entry &entry, py::handle grid, const py::list &runtime,
                                   py::object meta, py::object stream) {
  const JitKernel &k = *entry.kernel;
  const ParamLayout &layout = k.layout();
  const size_t n = layout.kinds.size();
  if (n != runtime.size())
    throw std::runtime_error(fmt::format(
        "internal error: '{}' takes {} runtime arguments, {} given", k.name(), n, runtime.size()));
  std::vector<ArgValue> values;
  for (size_t i = 0; i < n; ++i) {
    py::handle v = runtime[i];
    SlotKind kind = layout.kinds[i];
    if (kind == SlotKind::TensorMap) {
      // A `tma` descriptor's CUtensorMap: the 128 bytes jit.py encoded (the
      // list holds the bytes object until the launch has packed them).
      if (!PyBytes_Check(v.ptr()) || PyBytes_GET_SIZE(v.ptr()) != 128)
        throw std::runtime_error(fmt::format(
            "internal error: argument {} of '{}' must be a 128-byte CUtensorMap", i, k.name()));
      values.push_back(ArgValue::ofTensorMap(PyBytes_AS_STRING(v.ptr())));
      continue;
    }
    values.push_back(kind == SlotKind::Pointer ? ArgValue::ofPointer(v.cast<uint64_t>())
                     : isFloatSlot(kind)       ? ArgValue::ofF64(v.cast<double>())
                                               : ArgValue::ofI64(v.cast<int64_t>()));
  }
  // packArgs may store a whole 8-byte word at the last slot's offset.
  std::vector<char> buffer(layout.bytes + 8);
  std::vector<void *> slotPtrs(n);
  size_t bad = packArgs(values, layout, buffer.data(), slotPtrs.data());
  if (bad < n)
    throw py::type_error(
        argError(k.name(), bad, k.argumentNames()[bad], layout.kinds[bad], values[bad]));
  std::array<unsigned, 3> dims = gridDims(
      grid, [&] { return meta; }, k.name());
  if (uint64_t(dims[0]) * dims[1] * dims[2] == 0)
    return entry.compiled;
  std::string error;
  CUstream s = streamOf(stream.ptr());
  if (!(JitKernel::packedLaunches() ? k.launchPacked(dims, buffer.data(), s, error)
                                    : k.launch(dims, slotPtrs.data(), s, error)))
    raiseDriverError(error);
  return entry.compiled;
}

} // namespace tk
