// The public API's launch-time specialisation (include/tk/Kernel.h; its
// arguments convert through compiler/LaunchArgs.h, PublicApiImpl.h): a
// compile specialised on the facts the arguments give, by the rule Python's
// @tk.jit uses
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
