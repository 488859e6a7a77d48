// The public API's argument binding (include/tk/Kernel.h): converting a
// launch argument to its parameter's type, and specialising a compile on
// the facts the arguments give, by the rule Python's @tk.jit uses
// (compiler/ArgSpecialization.h, docs/semantics.md): an i32/u32/i64/u64
// argument equal to 1 becomes the constant 1 (":1"), else one divisible by
// 16 carries ":16", else one divisible by 8 ":8"; a pointer aligned to 16
// bytes carries ":16". For tutorial 4's matmul launched with M = N = K =
// 4096 and unit column strides, the key says "M, N, K, the row strides :16;
// the column strides :1; the pointers :16", so the compile sees the unit
// strides as constants and its loads vectorise, as the signature
// "*fp16:16, ..., i32:16, i32:1, ..." written by hand would make them.
#include "compiler/ArgSpecialization.h"
#include "compiler/KernelFrontEnd.h"
#include "lang/Float16.h"
#include "runtime/PublicApiImpl.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

namespace tk::detail {

bool frontEndBindings(const std::string &source, const std::string &fileName,
                      const GpuCompileOptions &opts, std::vector<ParamBinding> &out,
                      std::string &error) {
  KernelFrontEnd fe;
  if (!fe.run(source, fileName, {opts.kernel, opts.signature, opts.constants, {}}, error))
    return false;
  out = std::move(fe.bindings);
  return true;
}

//
// Argument conversion
//

int64_t intArgValue(const Arg &a) noexcept {
  switch (a.kind) {
  case Arg::Kind::I1:
    return a.value.i1;
  case Arg::Kind::I8:
    return a.value.i8;
  case Arg::Kind::I16:
    return a.value.i16;
  case Arg::Kind::I32:
    return a.value.i32;
  case Arg::Kind::I64:
    return a.value.i64;
  default:
    return 0;
  }
}

double floatArgValue(const Arg &a) noexcept {
  switch (a.kind) {
  case Arg::Kind::F16:
    return halfToFloat(a.value.bits16);
  case Arg::Kind::BF16:
    return bf16ToFloat(a.value.bits16);
  case Arg::Kind::F32:
    return a.value.f32;
  case Arg::Kind::F64:
    return a.value.f64;
  default:
    return 0;
  }
}

namespace {

// An integer parameter of `bits` takes a value of its signed or its unsigned
// type (u8..u64 pass as the signed kind of their width).
bool fitsBits(int64_t v, unsigned bits) {
  if (bits >= 64)
    return true;
  if (bits == 1)
    return v == 0 || v == 1;
  return v >= -(int64_t(1) << (bits - 1)) && v <= (int64_t(1) << bits) - 1;
}

unsigned intKindBits(Arg::Kind k) {
  switch (k) {
  case Arg::Kind::I1:
    return 1;
  case Arg::Kind::I8:
    return 8;
  case Arg::Kind::I16:
    return 16;
  case Arg::Kind::I32:
    return 32;
  default:
    return 64;
  }
}

} // namespace

bool convertArg(const Arg &a, Arg::Kind want, GpuArg &out) noexcept {
  if (want == Arg::Kind::Pointer) {
    if (a.kind != Arg::Kind::Pointer)
      return false;
    out = GpuArg::ptr(a.value.pointer);
    return true;
  }
  if (isIntKind(want)) {
    if (!isIntKind(a.kind))
      return false;
    int64_t v = intArgValue(a);
    if (!fitsBits(v, intKindBits(want)))
      return false;
    switch (want) {
    case Arg::Kind::I1:
      out = GpuArg::ofI1(v != 0);
      break;
    case Arg::Kind::I8:
      out = GpuArg::ofI8(int8_t(uint8_t(v)));
      break;
    case Arg::Kind::I16:
      out = GpuArg::ofI16(int16_t(uint16_t(v)));
      break;
    case Arg::Kind::I32:
      out = GpuArg::ofI32(int32_t(uint32_t(v)));
      break;
    default:
      out = GpuArg::ofI64(v);
      break;
    }
    return true;
  }
  if (!isFloatKind(a.kind))
    return false;
  // The common cases keep their bits without a round trip through double.
  if (a.kind == want) {
    switch (want) {
    case Arg::Kind::F16:
      out = GpuArg::ofF16Bits(a.value.bits16);
      return true;
    case Arg::Kind::BF16:
      out = GpuArg::ofBF16Bits(a.value.bits16);
      return true;
    case Arg::Kind::F32:
      out = GpuArg::ofF32(a.value.f32);
      return true;
    default:
      out = GpuArg::ofF64(a.value.f64);
      return true;
    }
  }
  double v = floatArgValue(a);
  switch (want) {
  case Arg::Kind::F16:
    out = GpuArg::ofF16Bits(doubleToHalf(v));
    break;
  case Arg::Kind::BF16:
    out = GpuArg::ofBF16Bits(doubleToBF16(v));
    break;
  case Arg::Kind::F32:
    out = GpuArg::ofF32(float(v));
    break;
  default:
    out = GpuArg::ofF64(v);
    break;
  }
  return true;
}

std::string conversionError(const std::string &kernel, size_t index, const std::string &name,
                            Arg::Kind want, const Arg &a) {
  if (isIntKind(want) && isIntKind(a.kind)) {
    unsigned bits = intKindBits(want);
    std::string range =
        bits == 1 ? "0 or 1"
                  : fmt::format("{} to {}", -(int64_t(1) << (bits - 1)), (int64_t(1) << bits) - 1);
    return fmt::format("kernel '{}': argument {} ('{}') is {} in the signature; the {} passed, {}, "
                       "does not fit ({})",
                       kernel, index, name, argKindName(want), argKindName(a.kind), intArgValue(a),
                       range);
  }
  return fmt::format("kernel '{}': argument {} ('{}') is {} in the signature but the argument "
                     "passed is {}",
                     kernel, index, name, argKindName(want), argKindName(a.kind));
}

//
// Specialisation
//

namespace {

// Two bits per runtime parameter: its ArgFact.
ArgFact factOf(const Specializer::Key &key, size_t i) {
  return ArgFact(unsigned(key[i / 32] >> (2 * (i % 32))) & 3u);
}

} // namespace

bool Specializer::init(const std::string &source, const std::string &fileName,
                       const GpuCompileOptions &base, const std::vector<std::string> &noSpecialize,
                       std::string &error) {
  KernelFrontEnd fe;
  if (!fe.run(source, fileName, {base.kernel, base.signature, base.constants, {}}, error))
    return false;
  const std::vector<ParamBinding> &bindings = fe.bindings;
  // The kernel's own @tk.jit(do_not_specialize=[...]) drops the facts in the
  // compiler; keying on them would only compile the same kernel again.
  std::set<std::string> generic = decoratorDoNotSpecialize(*fe.def);
  generic.insert(noSpecialize.begin(), noSpecialize.end());
  params_.clear();
  runtime_.clear();
  active_ = false;
  for (const ParamBinding &b : bindings) {
    Param p;
    p.name = b.name;
    p.argument = b.isArgument;
    if (b.isArgument) {
      p.pointer = b.isPointer;
      p.entry = (b.isPointer ? "*" : "") + std::string(dtypeName(b.dtype));
      p.baseDivisibility = b.divisibility;
      p.baseEqualsOne = b.isConstant;
      bool named = generic.count(b.name) != 0;
      // Pointers and i32/u32/i64/u64 take facts; narrower integers, bools
      // and floats keep one compile.
      p.canSpecialize = !named && takesFacts(b.isPointer, b.dtype);
      active_ = active_ || p.canSpecialize;
      runtime_.push_back(params_.size());
    } else {
      // A constant: its value goes to the constants (the signature entry is
      // a placeholder, which a named constant overrides).
      p.entry = "0";
      p.value = b.value;
      p.valueInBase = base.constants.count(b.name) != 0;
    }
    params_.push_back(std::move(p));
  }
  if (runtime_.size() > 64) {
    error = fmt::format("kernel '{}' has {} runtime parameters; a launch passes at most 64",
                        base.kernel, runtime_.size());
    return false;
  }
  return true;
}

Specializer::Key Specializer::keyOf(std::span<const Arg> args) const noexcept {
  Key key{0, 0};
  size_t n = std::min(args.size(), runtime_.size());
  for (size_t i = 0; i < n; ++i) {
    const Param &p = params_[runtime_[i]];
    if (!p.canSpecialize)
      continue;
    const Arg &a = args[i];
    ArgFact fact = ArgFact::None;
    if (p.pointer) {
      if (a.kind == Arg::Kind::Pointer)
        fact = pointerFact(a.value.pointer);
    } else if (isIntKind(a.kind)) {
      fact = integerFact(intArgValue(a));
    }
    key[i / 32] |= uint64_t(fact) << (2 * (i % 32));
  }
  return key;
}

GpuCompileOptions Specializer::optionsFor(const GpuCompileOptions &config, const Key &key) const {
  GpuCompileOptions o = config;
  std::string sig;
  size_t r = 0;
  for (const Param &p : params_) {
    std::string entry = p.entry;
    if (p.argument) {
      // The base signature's facts and the arguments' are both true: the
      // stronger divisibility is stated.
      ArgFact fact = factOf(key, r++);
      int64_t divisibility = std::max(p.baseDivisibility, factDivisibility(fact));
      if (p.baseEqualsOne || fact == ArgFact::EqualsOne)
        entry += ":1";
      else if (divisibility > 1)
        entry += fmt::format(":{}", divisibility);
    } else if (!p.valueInBase && !o.constants.count(p.name)) {
      o.constants[p.name] = p.value;
    }
    sig += (sig.empty() ? "" : ", ") + entry;
  }
  o.signature = sig;
  return o;
}

std::string Specializer::describe(const Key &key) const {
  std::string out;
  for (size_t i = 0; i < runtime_.size(); ++i)
    if (ArgFact f = factOf(key, i); f != ArgFact::None)
      out +=
          fmt::format("{}{}{}", out.empty() ? "" : ", ", params_[runtime_[i]].name, factSuffix(f));
  return out;
}

const SpecializedVariants::Variant *SpecializedVariants::variantFor(std::span<const Arg> args,
                                                                    std::string &error) {
  const Specializer::Key key = specializer.keyOf(args);
  auto hash = [&] { return hashOf(key); };
  auto same = [&](const Variant &v) { return sameKey(v.key, key); };
  if (const Variant *v = compiled.find(hash, same))
    return v;
  // Compiled outside the lock: GpuKernel::compileShared is thread-safe and
  // finds a live kernel, so two threads racing for one key share one.
  std::shared_ptr<const GpuKernel> kernel =
      GpuKernel::compileShared(source, fileName, specializer.optionsFor(base, key), error);
  if (!kernel)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (const Variant *v = compiled.find(hash, same))
    return v;
  return compiled.insert(std::make_unique<Variant>(Variant{hash(), key, std::move(kernel)}));
}

} // namespace tk::detail
