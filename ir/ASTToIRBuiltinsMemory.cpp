// The memory builtins: tk.load, tk.store and the atomics (atomic_add ...
// atomic_xchg, atomic_cas), their pointer, mask and value operands
// broadcast to one shape, the value cast to the pointee type.
#include "ir/ASTToIRBuiltins.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tk::astir {

using namespace ast;

// Pointer, optional mask and value operands of load/store/atomics, all
// broadcast to one shape; the value is cast to the pointee type.
bool BuiltinCall::memoryOperands(Value *&ptr, Value *&mask, Value *&value, const char *valueParam) {
  ptr = tensor("pointer");
  if (!ptr)
    return false;
  if (!ptr->type()->isPointerLike()) {
    fail(fmt::format("{} needs a pointer or a tensor of pointers, got {}", name, typeStr(ptr)));
    return false;
  }
  // Triton's words: a store or atomic through a tk.const parameter (or a
  // pointer computed from one).
  if (valueParam && cast<PointerType>(ptr->type()->elementType())->isConst()) {
    L.fail(args.loc("pointer"),
           fmt::format("Cannot store to a constant pointer: the pointer of {} is {}, "
                       "read-only (it comes from a parameter annotated tk.const)",
                       name, typeStr(ptr)));
    return false;
  }
  std::vector<int64_t> shape = ptr->type()->shape();
  mask = nullptr;
  value = nullptr;
  auto widen = [&](Value *v, SourceLoc at) {
    std::optional<std::vector<int64_t>> s = L.broadcastShapes(shape, v->type()->shape(), at);
    if (!s)
      return false;
    shape = *s;
    return true;
  };
  if (args.has("mask")) {
    mask = tensor("mask");
    if (!mask)
      return false;
    if (mask->type()->elementType() != ctx.i1()) {
      L.fail(args.loc("mask"),
             fmt::format("mask must be a boolean (i1) tensor, got {}", typeStr(mask)));
      return false;
    }
    if (!widen(mask, args.loc("mask")))
      return false;
  }
  Type *pointee = cast<PointerType>(ptr->type()->elementType())->pointee();
  if (valueParam && args.has(valueParam)) {
    value = L.materialize(args.get(valueParam), args.loc(valueParam), pointee);
    if (!value)
      return false;
    // Pointers and integers meet as Triton's store casts them: a pointer
    // stored through a pointer to 64-bit integers is its address (PtrToInt),
    // an integer stored through a pointer to pointers becomes one (IntToPtr).
    if (value->type()->isPointerLike() != pointee->isPointer()) {
      Type *e = value->type()->elementType();
      bool ok = pointee->isPointer()
                    ? isInteger(e->dtype()) && e->dtype() != DType::I1
                    : isInteger(pointee->dtype()) && dtypeBits(pointee->dtype()) == 64;
      if (!ok) {
        L.fail(args.loc(valueParam),
               fmt::format("cannot store {} through {}{}", typeStr(value), typeStr(ptr),
                           pointee->isPointer()
                               ? ""
                               : "; a pointer is stored as a 64-bit integer (int64 or uint64)"));
        return false;
      }
    }
    value = L.castTo(value, pointee, args.loc(valueParam));
    if (!value || !widen(value, args.loc(valueParam)))
      return false;
  }
  ptr = L.broadcastTo(ptr, shape, loc);
  if (mask)
    mask = L.broadcastTo(mask, shape, args.loc("mask"));
  if (value)
    value = L.broadcastTo(value, shape, args.loc(valueParam));
  return ptr && (!args.has("mask") || mask) && (!valueParam || !args.has(valueParam) || value);
}

// A load's or store's `cache_modifier` and `eviction_policy` (Triton's
// values; "" or None for none) as the attributes "cache" and "evict" of `op`;
// anything else is a located error. The PTX each becomes: docs/codegen/loads-stores.md.
bool BuiltinCall::cacheAttrs(Operation *op) {
  bool load = op->is(Opcode::Load);
  struct Param {
    const char *name, *attr;
    std::vector<std::string_view> values;
  };
  for (const Param &p : {Param{"cache_modifier", "cache",
                               load ? std::vector<std::string_view>{".ca", ".cg", ".cv"}
                                    : std::vector<std::string_view>{".wb", ".cg", ".cs", ".wt"}},
                         Param{"eviction_policy", "evict", {"evict_first", "evict_last"}}}) {
    Val v = args.get(p.name);
    if (v.kind == Val::Kind::None || (v.kind == Val::Kind::Str && v.s.empty()))
      continue;
    if (v.kind != Val::Kind::Str ||
        std::find(p.values.begin(), p.values.end(), v.s) == p.values.end()) {
      L.fail(args.loc(p.name), fmt::format("{}: {} must be '', '{}' or None, got {}", name, p.name,
                                           fmt::join(p.values, "', '"), describe(v)));
      return false;
    }
    // The IR spells a cache operator without its dot ("cg"), as PTX's
    // qualifier after the dot.
    op->setAttr(p.attr, v.s[0] == '.' ? v.s.substr(1) : v.s);
  }
  return true;
}

Val BuiltinCall::atomic(const std::string &kind) {
  Value *ptr, *mask, *val;
  if (!memoryOperands(ptr, mask, val, "val"))
    return Val::error();
  if (!val)
    return fail(fmt::format("{} needs a value", name));
  if (Type *e = val->type()->elementType(); e->isScalar() && isFp8(e->dtype()))
    return fail(fmt::format("{} does not take {} values (no fp8 atomics)", name, e->str()));
  Value *r = b.atomicRMW(loc, kind, ptr, val, mask);
  return memoryOrder(r->definingOp()) ? Val::dyn(r) : Val::error();
}

// An atomic's `sem` and `scope` (Triton's values; None keeps the defaults,
// acq_rel and gpu) as attributes of `op`; anything else is a located error.
bool BuiltinCall::memoryOrder(Operation *op) {
  struct Param {
    const char *name;
    std::vector<std::string_view> values;
  };
  for (const Param &p : {Param{"sem", {"relaxed", "acquire", "release", "acq_rel"}},
                         Param{"scope", {"cta", "gpu", "sys"}}}) {
    Val v = args.get(p.name);
    if (v.kind == Val::Kind::None)
      continue;
    if (v.kind != Val::Kind::Str ||
        std::find(p.values.begin(), p.values.end(), v.s) == p.values.end()) {
      L.fail(args.loc(p.name), fmt::format("{}: {} must be one of \"{}\" or None, got {}", name,
                                           p.name, fmt::join(p.values, "\", \""), describe(v)));
      return false;
    }
    op->setAttr(p.name, v.s);
  }
  return true;
}

std::optional<Val> BuiltinCall::lowerMemory() {
  switch (info.id) {
  case BuiltinId::Load: {
    if (args.get("pointer").kind == Val::Kind::Desc)
      return blockPointerAccess(L, args, false, loc);
    Value *ptr, *mask, *unused;
    if (!memoryOperands(ptr, mask, unused, nullptr))
      return Val::error();
    Value *other = nullptr;
    if (args.has("other")) {
      if (!mask)
        return L.fail(args.loc("other"), "tk.load: 'other' needs a mask");
      Type *pointee = cast<PointerType>(ptr->type()->elementType())->pointee();
      other = L.materialize(args.get("other"), args.loc("other"), pointee);
      if (!other)
        return Val::error();
      other = L.castTo(other, pointee, args.loc("other"));
      other = other ? L.broadcastTo(other, ptr->type()->shape(), args.loc("other")) : nullptr;
      if (!other)
        return Val::error();
    }
    Value *r = b.load(loc, ptr, mask, other);
    if (!cacheAttrs(r->definingOp()))
      return Val::error();
    if (args.has("volatile") && L.constTruth(args.get("volatile")).value_or(false))
      r->definingOp()->setAttr("volatile", true);
    return Val::dyn(r);
  }
  case BuiltinId::Store: {
    if (args.get("pointer").kind == Val::Kind::Desc)
      return blockPointerAccess(L, args, true, loc);
    Value *ptr, *mask, *value;
    if (!memoryOperands(ptr, mask, value, "value"))
      return Val::error();
    // None (Args::has's "absent") is no value: a helper whose `return` was
    // not reached gives it (Triton would store a poison value).
    if (!value)
      return L.fail(args.loc("value"), fmt::format("{} needs a value to store, got {}", name,
                                                   describe(args.get("value"))));
    if (!cacheAttrs(b.store(loc, ptr, value, mask)))
      return Val::error();
    return Val::none();
  }
  case BuiltinId::AtomicAdd:
    return atomic("add");
  case BuiltinId::AtomicMax:
    return atomic("max");
  case BuiltinId::AtomicMin:
    return atomic("min");
  case BuiltinId::AtomicAnd:
    return atomic("and");
  case BuiltinId::AtomicOr:
    return atomic("or");
  case BuiltinId::AtomicXor:
    return atomic("xor");
  case BuiltinId::AtomicXchg:
    return atomic("xchg");
  case BuiltinId::AtomicCas: {
    Value *ptr = tensor("pointer");
    if (!ptr)
      return Val::error();
    if (!ptr->type()->isPointerLike())
      return L.fail(loc, fmt::format("tk.atomic_cas needs a pointer, got {}", typeStr(ptr)));
    if (cast<PointerType>(ptr->type()->elementType())->isConst())
      return L.fail(args.loc("pointer"),
                    fmt::format("Cannot store to a constant pointer: the pointer of "
                                "tk.atomic_cas is {}, read-only (it comes from a parameter "
                                "annotated tk.const)",
                                typeStr(ptr)));
    Type *pointee = cast<PointerType>(ptr->type()->elementType())->pointee();
    if (pointee->isScalar() && isFp8(pointee->dtype()))
      return L.fail(loc, fmt::format("tk.atomic_cas does not take {} values (no fp8 atomics)",
                                     pointee->str()));
    Value *cmp = L.materialize(args.get("cmp"), loc, pointee);
    Value *val = L.materialize(args.get("val"), loc, pointee);
    if (!cmp || !val)
      return Val::error();
    cmp = L.broadcastTo(L.castTo(cmp, pointee, loc), ptr->type()->shape(), loc);
    val = L.broadcastTo(L.castTo(val, pointee, loc), ptr->type()->shape(), loc);
    if (!cmp || !val)
      return Val::error();
    Value *r = b.atomicCAS(loc, ptr, cmp, val);
    return memoryOrder(r->definingOp()) ? Val::dyn(r) : Val::error();
  }
  default:
    return std::nullopt; // another family's
  }
}

} // namespace tk::astir
