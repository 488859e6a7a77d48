// Block pointers (tk.make_block_ptr, tk.advance, tk.load/tk.store on one)
// and tensor descriptors (tk.make_tensor_descriptor, desc.load, desc.store,
// desc.atomic_*, tk.load_tensor_descriptor, tk.store_tensor_descriptor),
// lowered to pointer arithmetic and masks: a block at offsets o of a
// descriptor with base b, shape s and strides t is the tensor of pointers
// b + sum_d (o_d + arange(0, B_d)) * t_d, masked by 0 <= o_d + arange < s_d
// on the checked dimensions. The descriptor itself is a front-end value
// (Val::Kind::Desc), so a later TMA lowering can take the same values.
#include "ir/ASTToIRBuiltins.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tk::astir {

using namespace ast;

namespace {

size_t rankOf(const Val &d) { return d.dims.size(); }

// The integer scalars of a list argument (shape, strides, offsets).
bool scalarList(Lowerer &L, const Val &v, SourceLoc loc, const std::string &what,
                std::vector<Val> &out) {
  if (v.kind != Val::Kind::Tuple) {
    L.fail(loc, fmt::format("{} must be a list or tuple of integers, got {}", what, describe(v)));
    return false;
  }
  for (const Val &e : v.elts) {
    bool dynInt = e.isDyn() && e.v->type()->isScalar() && e.v->type()->isIntLike() &&
                  !e.v->type()->isPointer() && e.v->type() != L.ctx().i1();
    if (!dynInt && e.kind != Val::Kind::Int) {
      L.fail(loc, fmt::format("{} must be integer scalars, got {} in {}", what, describe(e),
                              describe(v)));
      return false;
    }
  }
  out = v.elts;
  return true;
}

bool sameRank(Lowerer &L, size_t got, size_t rank, SourceLoc loc, const std::string &what,
              const std::string &of) {
  if (got == rank)
    return true;
  L.fail(loc, fmt::format("{} has {} elements but {} is {}-D; give one per dimension", what, got,
                          of, rank));
  return false;
}

} // namespace

// The block of `d` at `offsets`: its tensor of pointers and the mask of the
// dimensions in `checked` (null when none).
bool descriptorBlock(Lowerer &L, const Val &d, const std::vector<Val> &offsets,
                     const std::vector<bool> &checked, SourceLoc loc, Value *&ptr, Value *&mask) {
  Builder &b = L.builder();
  size_t r = rankOf(d);
  Val sum = Val::ofInt(0), m = Val::none();
  for (size_t k = 0; k < r; ++k) {
    Val idx = L.binary(BinaryOp::Add, offsets[k], Val::dyn(b.makeRange(loc, 0, d.dims[k])), loc);
    if (!idx.ok())
      return false;
    Value *i64 = L.castTo(idx.v, L.ctx().i64(), loc);
    std::vector<int64_t> shape(r, 1);
    shape[k] = d.dims[k];
    if (r > 1)
      i64 = b.reshape(loc, i64, shape);
    Val stride = d.elts[1 + r + k];
    sum = L.binary(BinaryOp::Add, sum, L.binary(BinaryOp::Mul, Val::dyn(i64), stride, loc), loc);
    if (!sum.ok())
      return false;
    if (k < checked.size() && checked[k]) {
      // Two statements: the IR's order must not depend on the order in which
      // a compiler evaluates function arguments.
      Val lower = L.compare(CmpOp::Ge, Val::dyn(i64), Val::ofInt(0), loc);
      Val upper = L.compare(CmpOp::Lt, Val::dyn(i64), d.elts[1 + k], loc);
      Val in = L.binary(BinaryOp::BitAnd, lower, upper, loc);
      m = m.kind == Val::Kind::None ? in : L.binary(BinaryOp::BitAnd, m, in, loc);
      if (!m.ok())
        return false;
    }
  }
  Val p = L.binary(BinaryOp::Add, d.elts[0], sum, loc);
  if (!p.ok())
    return false;
  ptr = L.broadcastTo(p.v, d.dims, loc);
  mask = m.kind == Val::Kind::None ? nullptr : L.broadcastTo(m.v, d.dims, loc);
  return ptr != nullptr;
}

Val descriptorLoad(Lowerer &L, const Val &d, const std::vector<Val> &offsets,
                   const std::vector<bool> &checked, const std::string &padding, SourceLoc loc) {
  Value *ptr, *mask;
  if (!descriptorBlock(L, d, offsets, checked, loc, ptr, mask))
    return Val::error();
  Value *other = nullptr;
  if (mask) {
    Type *elem = d.type;
    if (padding == "nan" && !elem->isFloatLike())
      return L.fail(loc, fmt::format("padding_option 'nan' needs a floating-point block, got {}",
                                     elem->str()));
    Val fill = padding == "nan" ? Val::ofFloat(std::nan("")) : Val::ofInt(0);
    other = L.broadcastTo(L.castTo(L.materialize(fill, loc, elem), elem, loc), d.dims, loc);
  }
  return Val::dyn(L.builder().load(loc, ptr, mask, other));
}

// Stores (or, with `atomic`, applies that atomic op with) `value` at the
// block of `d` at `offsets`.
Val descriptorStore(Lowerer &L, const Val &d, const std::vector<Val> &offsets,
                    const std::vector<bool> &checked, const Val &value, SourceLoc loc,
                    const std::string &atomic = "") {
  Value *ptr, *mask;
  if (!descriptorBlock(L, d, offsets, checked, loc, ptr, mask))
    return Val::error();
  Value *v = L.materialize(value, loc, d.type);
  if (!v)
    return Val::error();
  v = L.castTo(v, d.type, loc);
  v = v ? L.broadcastTo(v, d.dims, loc) : nullptr;
  if (!v)
    return Val::error();
  if (atomic.empty())
    L.builder().store(loc, ptr, v, mask);
  else
    L.builder().atomicRMW(loc, atomic, ptr, v, mask);
  return Val::none();
}

// Whether `d` is a host descriptor passed with its CUtensorMap (a `tma`
// signature entry): elts[2R + 1] is the map (ASTToIR.cpp).
bool hasTensorMap(const Val &d) { return d.i == 1 && d.elts.size() == 2 * rankOf(d) + 2; }

// The operands of a tma_load (`value` null) or tma_store of a `tma`
// descriptor at `offsets`: the map, [the value,] the coordinates as i32
// (the TMA's; a descriptor's sizes are below 2^31).
bool tmaOperands(Lowerer &L, const Val &d, const std::vector<Val> &offsets, Value *value,
                 SourceLoc loc, std::vector<Value *> &operands) {
  operands = {d.elts[2 * rankOf(d) + 1].v};
  if (value)
    operands.push_back(value);
  for (const Val &o : offsets) {
    Value *v = L.materialize(o, loc, L.ctx().i32());
    v = v ? L.castTo(v, L.ctx().i32(), loc) : nullptr;
    if (!v)
      return false;
    operands.push_back(v);
  }
  return true;
}

Val tmaStore(Lowerer &L, const Val &d, const std::vector<Val> &offsets, const Val &value,
             SourceLoc loc) {
  Value *v = L.materialize(value, loc, d.type);
  v = v ? L.castTo(v, d.type, loc) : nullptr;
  v = v ? L.broadcastTo(v, d.dims, loc) : nullptr;
  std::vector<Value *> operands;
  if (!v || !tmaOperands(L, d, offsets, v, loc, operands))
    return Val::error();
  L.builder().create(Opcode::TmaStore, loc, operands, {});
  return Val::none();
}

// The block of a `tma` descriptor at `offsets`: one tma_load.
Val tmaLoad(Lowerer &L, const Val &d, const std::vector<Val> &offsets, SourceLoc loc) {
  std::vector<Value *> operands;
  if (!tmaOperands(L, d, offsets, nullptr, loc, operands))
    return Val::error();
  Type *t = L.ctx().tensor(d.dims, d.type);
  return Val::dyn(L.builder().create(Opcode::TmaLoad, loc, operands, {t})->result());
}

std::optional<Val> BuiltinCall::lowerDescriptor() {
  bool block = info.id == BuiltinId::MakeBlockPtr;
  switch (info.id) {
  case BuiltinId::MakeBlockPtr:
  case BuiltinId::MakeTensorDescriptor: {
    Val base = args.get("base");
    if (!base.isDyn() || base.v->type()->isTensor() || !base.v->type()->isPointerLike())
      return L.fail(args.loc("base"),
                    fmt::format("{}: base must be a pointer, got {}", name, describe(base)));
    std::optional<std::vector<int64_t>> bs =
        shapeOf(L, args.get("block_shape"), args.loc("block_shape"));
    if (!bs)
      return Val::error();
    size_t r = bs->size();
    if (r < 1 || r > 5)
      return L.fail(args.loc("block_shape"),
                    fmt::format("{}: block_shape must have 1 to 5 dimensions, got {}", name, r));
    Val d;
    d.kind = Val::Kind::Desc;
    d.i = block ? 0 : 1;
    d.dims = *bs;
    d.type = cast<PointerType>(base.v->type())->pointee();
    d.elts.push_back(base);
    const char *lists[] = {"shape", "strides", "offsets"};
    for (int l = 0; l < (block ? 3 : 2); ++l) {
      std::vector<Val> xs;
      std::string what = fmt::format("{}: {}", name, lists[l]);
      if (!scalarList(L, args.get(lists[l]), args.loc(lists[l]), what, xs) ||
          !sameRank(L, xs.size(), r, args.loc(lists[l]), what, "block_shape"))
        return Val::error();
      d.elts.insert(d.elts.end(), xs.begin(), xs.end());
    }
    if (block) {
      Val order = args.get("order");
      std::vector<int64_t> sorted;
      bool perm = order.kind == Val::Kind::Tuple;
      for (const Val &e : order.elts)
        perm = perm && e.kind == Val::Kind::Int && (sorted.push_back(e.i), true);
      std::sort(sorted.begin(), sorted.end());
      perm = perm && sorted.size() == r;
      for (size_t k = 0; perm && k < r; ++k)
        perm = sorted[k] == int64_t(k);
      if (!perm)
        return L.fail(args.loc("order"),
                      fmt::format("{}: order must be a permutation of 0..{}, got {}", name, r - 1,
                                  describe(args.get("order"))));
    } else {
      Val last = d.elts[2 * r];
      if (last.kind != Val::Kind::Int || last.i != 1)
        return L.fail(args.loc("strides"),
                      fmt::format("{}: the last stride must be the constant 1, got {}", name,
                                  describe(last)));
      // Triton's rule for every tensor descriptor (a TMA box row is at
      // least 16 bytes), kept on the pointer path too so that a kernel tk
      // takes is one Triton takes.
      if (d.type->isScalar()) {
        int64_t rowBytes = d.dims.back() * int64_t(dtypeBytes(d.type->dtype()));
        if (rowBytes < 16)
          return L.fail(args.loc("block_shape"),
                        fmt::format("{}: Descriptor block shape must have at least 16 bytes in "
                                    "the last dimension, got {} x {} = {} bytes",
                                    name, d.dims.back(), d.type->str(), rowBytes));
      }
      Val pad = args.has("padding_option") ? args.get("padding_option") : Val::ofStr("zero");
      if (pad.kind != Val::Kind::Str || (pad.s != "zero" && pad.s != "nan"))
        return L.fail(
            args.loc("padding_option"),
            fmt::format("{}: padding_option must be 'zero' or 'nan', got {}", name, describe(pad)));
      d.s = pad.s;
    }
    return d;
  }
  case BuiltinId::Advance: {
    Val d = args.get("base");
    if (d.kind != Val::Kind::Desc || d.i != 0)
      return L.fail(
          args.loc("base"),
          fmt::format("{} needs a block pointer (tk.make_block_ptr), got {}", name, describe(d)));
    std::vector<Val> xs;
    size_t r = rankOf(d);
    std::string what = name + ": offsets";
    if (!scalarList(L, args.get("offsets"), args.loc("offsets"), what, xs) ||
        !sameRank(L, xs.size(), r, args.loc("offsets"), what, "the block pointer"))
      return Val::error();
    for (size_t k = 0; k < r; ++k) {
      Val &o = d.elts[1 + 2 * r + k];
      o = L.binary(BinaryOp::Add, o, xs[k], args.loc("offsets"));
      if (!o.ok())
        return Val::error();
    }
    return d;
  }
  case BuiltinId::LoadTensorDescriptor:
  case BuiltinId::StoreTensorDescriptor: {
    return descriptorAccess(L, args.get("desc"), args.loc("desc"), name, args.get("offsets"),
                            args.loc("offsets"), args.get("value"), loc);
  }
  default:
    return std::nullopt;
  }
}

Val descriptorAccess(Lowerer &L, const Val &d, SourceLoc descLoc, const std::string &method,
                     const Val &offsets, SourceLoc offsetsLoc, const Val &value, SourceLoc loc) {
  if (d.kind != Val::Kind::Desc || d.i != 1)
    return L.fail(descLoc, fmt::format("{} needs a tensor descriptor (tk.make_tensor_descriptor "
                                       "or a TensorDescriptor argument), got {}",
                                       method, describe(d)));
  std::vector<Val> xs;
  std::string what = fmt::format("{}: offsets", method);
  if (!scalarList(L, offsets, offsetsLoc, what, xs) ||
      !sameRank(L, xs.size(), rankOf(d), offsetsLoc, what, "the tensor descriptor"))
    return Val::error();
  std::vector<bool> all(rankOf(d), true);
  std::string kind = method.substr(method.find('.') + 1); // desc.load -> load
  if (kind == "load" || kind == "load_tensor_descriptor")
    return hasTensorMap(d) && d.type != L.ctx().i1() ? tmaLoad(L, d, xs, loc)
                                                     : descriptorLoad(L, d, xs, all, d.s, loc);
  if (value.kind == Val::Kind::None)
    return L.fail(loc, fmt::format("{} needs a value", method));
  std::string atomic = kind.rfind("atomic_", 0) == 0 ? kind.substr(7) : "";
  if (atomic.empty() && hasTensorMap(d) && d.type != L.ctx().i1())
    return tmaStore(L, d, xs, value, loc);
  return descriptorStore(L, d, xs, all, value, loc, atomic);
}

// tk.load / tk.store of a block pointer: boundary_check and padding_option.
Val blockPointerAccess(Lowerer &L, Args &args, bool store, SourceLoc loc) {
  Val d = args.get("pointer");
  if (d.i != 0)
    return L.fail(args.loc("pointer"),
                  fmt::format("tk.{} takes a block pointer or a tensor of pointers, got {}; use "
                              "desc.{}(offsets) on a tensor descriptor",
                              store ? "store" : "load", describe(d), store ? "store" : "load"));
  if (args.has("mask") || args.has("other"))
    return L.fail(args.loc(args.has("mask") ? "mask" : "other"),
                  "mask and other cannot be given with a block pointer; use boundary_check");
  size_t r = rankOf(d);
  std::vector<bool> checked(r, false);
  Val bc = args.get("boundary_check");
  std::vector<Val> dims =
      bc.kind == Val::Kind::Tuple
          ? bc.elts
          : (bc.kind == Val::Kind::None ? std::vector<Val>{} : std::vector<Val>{bc});
  for (const Val &e : dims) {
    if (e.kind != Val::Kind::Int || e.i < 0 || e.i >= int64_t(r))
      return L.fail(args.loc("boundary_check"),
                    fmt::format("boundary_check must hold dimensions 0..{} of the {}-D block "
                                "pointer, got {}",
                                r - 1, r, describe(bc)));
    checked[size_t(e.i)] = true;
  }
  std::vector<Val> offsets(d.elts.begin() + 1 + 2 * r, d.elts.end());
  if (store)
    return descriptorStore(L, d, offsets, checked, args.get("value"), loc);
  Val pad = args.get("padding_option");
  std::string p = pad.kind == Val::Kind::Str ? pad.s : "";
  if (pad.kind != Val::Kind::None &&
      (pad.kind != Val::Kind::Str || (p != "" && p != "zero" && p != "nan")))
    return L.fail(args.loc("padding_option"),
                  fmt::format("padding_option must be '', 'zero' or 'nan', got {}", describe(pad)));
  return descriptorLoad(L, d, offsets, checked, p, loc);
}

} // namespace tk::astir
