// Calls of tk.* builtins, Python builtins and tensor members (x.to(...),
// x.shape): binding the arguments to the builtin's signature from
// lang/Builtins.def (the checks already validated counts and keywords) and
// dispatching to the builtin families (ASTToIRBuiltins.h).
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>

namespace tk::astir {

using namespace ast;

// Binds `call`'s arguments (after `self`, for methods) to `sig`.
bool bindArgs(Lowerer &L, const Signature &sig, const Call *call, const Val *self, Args &out) {
  out.sig = &sig;
  out.callLoc = call->loc;
  out.vals.assign(sig.params.size(), std::nullopt);
  out.locs.assign(sig.params.size(), SourceLoc{});
  size_t p = 0;
  std::vector<std::pair<Val, SourceLoc>> positional;
  if (self)
    positional.emplace_back(*self, call->loc);
  for (const Expr *a : call->args) {
    Val v = L.expr(a);
    if (!v.ok())
      return false;
    positional.emplace_back(v, a->loc);
  }
  for (auto &[v, loc] : positional) {
    while (p < sig.params.size() && sig.params[p].keywordOnly)
      ++p;
    if (p >= sig.params.size()) {
      L.fail(loc, "too many arguments");
      return false;
    }
    if (sig.params[p].variadic) {
      out.rest.push_back(v);
      out.locs[p] = loc;
      continue;
    }
    out.vals[p] = v;
    out.locs[p] = loc;
    ++p;
  }
  for (const Keyword &k : call->keywords) {
    int i = out.index(k.name);
    if (i < 0) {
      L.fail(k.loc, fmt::format("unexpected keyword argument '{}'", k.name));
      return false;
    }
    Val v = L.expr(k.value);
    if (!v.ok())
      return false;
    out.vals[i] = v;
    out.locs[i] = k.value->loc;
  }
  return true;
}

namespace {

std::string memberName(TensorMemberId id) { return std::string(tensorMemberInfo(id).name); }

} // namespace

Val Lowerer::callBuiltin(const BuiltinInfo &info, const Call *call) {
  if (info.id == BuiltinId::PyGetattr)
    return getattrCall(call);
  if (info.id == BuiltinId::PyHasattr || info.id == BuiltinId::PyIsinstance)
    return introspectionCall(info, call);
  Args args;
  if (!bindArgs(*this, info.signature, call, nullptr, args))
    return Val::error();
  return lowerBuiltin(*this, info, args, call->loc);
}

//===----------------------------------------------------------------------===//
// Members: x.to(...), x.shape, x.dtype.element_ty, ...
//===----------------------------------------------------------------------===//

Val Lowerer::member(const Val &self, const std::string &attr, SourceLoc attrLoc, SourceLoc loc) {
  std::optional<TensorMemberId> id = lookupTensorMember(attr);
  if (!id || tensorMemberInfo(*id).kind != MemberKind::Property)
    return fail(attrLoc, fmt::format("{} has no attribute '{}'", describe(self), attr));
  if (self.kind == Val::Kind::DType) {
    Type *t = self.type;
    switch (*id) {
    case TensorMemberId::ElementTy:
      if (!t->isPointer())
        return fail(attrLoc, fmt::format("{} is not a pointer dtype", describe(self)));
      return Val::ofType(cast<PointerType>(t)->pointee());
    case TensorMemberId::PrimitiveBitwidth:
      return Val::ofInt(t->isPointer() ? 64 : dtypeBits(t->dtype()));
    default:
      return fail(attrLoc, fmt::format("a dtype has no attribute '{}'", attr));
    }
  }
  if (self.kind == Val::Kind::Desc) {
    size_t r = self.dims.size();
    switch (*id) {
    case TensorMemberId::BlockShape: {
      std::vector<Val> dims;
      for (int64_t d : self.dims)
        dims.push_back(Val::ofInt(d));
      return Val::tuple(dims);
    }
    case TensorMemberId::MDtype:
      return Val::ofType(self.type);
    case TensorMemberId::Shape:
      return Val::tuple({self.elts.begin() + 1, self.elts.begin() + 1 + r});
    case TensorMemberId::Strides:
      return Val::tuple({self.elts.begin() + 1 + r, self.elts.begin() + 1 + 2 * r});
    default:
      return fail(attrLoc, fmt::format("{} has no attribute '{}'", describe(self), attr));
    }
  }
  if (*id == TensorMemberId::Value && self.isConst())
    return self;
  // Triton's `.type` of a compile-time value is constexpr_type(value); of a
  // number assigned to a plain variable (a tensor in Triton) its dtype.
  if (*id == TensorMemberId::Type && self.isConst()) {
    if (self.lifted)
      return Val::ofType(constantDType(self));
    Val t;
    t.kind = Val::Kind::ConstexprType;
    Val inner = self;
    inner.lifted = false;
    t.elts = {inner};
    return t;
  }
  // A compile-time number's dtype is the one Triton gives it as a tensor
  // (`value = 1; tl.full(..., dtype=value.dtype)`).
  if (*id == TensorMemberId::MDtype && self.isScalarConst())
    return Val::ofType(constantDType(self));
  if (!self.isDyn())
    return fail(attrLoc, fmt::format("{} has no attribute '{}'", describe(self), attr));
  Type *t = self.v->type();
  switch (*id) {
  case TensorMemberId::Shape: {
    std::vector<Val> dims;
    for (int64_t d : t->shape())
      dims.push_back(Val::ofInt(d));
    return Val::tuple(dims);
  }
  case TensorMemberId::MDtype:
    return Val::ofType(t->elementType());
  case TensorMemberId::Type:
    return Val::ofType(t->elementType());
  case TensorMemberId::Numel:
    return Val::ofInt(t->numElements());
  case TensorMemberId::T:
    if (t->rank() != 2)
      return fail(attrLoc, fmt::format(".T needs a 2-D tensor, got {}", t->str()));
    return Val::dyn(b_.trans(loc, self.v, {1, 0}));
  default:
    return fail(attrLoc, fmt::format("not supported yet: .{}", memberName(*id)));
  }
}

//===----------------------------------------------------------------------===//
// getattr(object, name[, default])
//===----------------------------------------------------------------------===//

namespace {

Val builtinRef(const BuiltinInfo &info) {
  Val r;
  r.kind = Val::Kind::Builtin;
  r.builtin = &info;
  return r;
}

} // namespace

Val Lowerer::exprOrBuiltin(const Expr *e) {
  if (auto *n = dyn_cast<Name>(e); n && !env->count(n->id) && n->binding == NameBinding::Builtin)
    return builtinRef(builtinInfo(n->builtin));
  if (auto *a = dyn_cast<ast::Attribute>(e); a && a->builtin >= 0)
    return builtinRef(builtinInfo(a->builtin));
  return expr(e);
}

Val Lowerer::getattrCall(const Call *call) {
  const Signature &sig = builtinInfo(BuiltinId::PyGetattr).signature;
  std::vector<std::optional<Val>> vals(sig.params.size());
  std::vector<SourceLoc> locs(sig.params.size(), call->loc);
  for (size_t i = 0; i < call->args.size() && i < vals.size(); ++i) {
    // The object may name tk, a namespace or an enum, which are values only here.
    vals[i] = i == 0 ? exprOrBuiltin(call->args[i]) : expr(call->args[i]);
    locs[i] = call->args[i]->loc;
  }
  for (const Keyword &k : call->keywords)
    for (size_t i = 0; i < sig.params.size(); ++i)
      if (sig.params[i].name == k.name) {
        vals[i] = i == 0 ? exprOrBuiltin(k.value) : expr(k.value);
        locs[i] = k.value->loc;
      }
  for (const std::optional<Val> &v : vals)
    if (v && !v->ok())
      return Val::error();
  if (!vals[0] || !vals[1])
    return fail(call->loc, "getattr() needs an object and a name");
  const Val &self = *vals[0];
  if (vals[1]->kind != Val::Kind::Str)
    return fail(locs[1], fmt::format("getattr() needs a compile-time string name, got {}",
                                     describe(*vals[1])));
  const std::string &name = vals[1]->s;
  SourceLoc at = locs[1];
  auto missing = [&]() -> Val {
    if (vals[2])
      return *vals[2];
    return fail(at, fmt::format("{} has no attribute '{}'", describe(self), name));
  };
  // A builtin as a value: dtypes are dtypes; functions, enums and
  // namespaces are references that a call, an enum member or a further
  // getattr resolves.
  auto asValue = [&](const BuiltinInfo &info) -> Val {
    if (info.kind == BuiltinKind::Unsupported)
      return fail(at, std::string(info.summary));
    if (info.kind == BuiltinKind::DType || info.id == BuiltinId::Pi32T)
      return builtinValue(info, at);
    return builtinRef(info);
  };
  if (self.kind == Val::Kind::Module) {
    std::optional<BuiltinId> id = lookupTkBuiltin(name);
    return id ? asValue(builtinInfo(*id)) : missing();
  }
  if (self.kind == Val::Kind::Builtin) {
    const BuiltinInfo &owner = *self.builtin;
    if (owner.kind == BuiltinKind::Enum) {
      const EnumMemberInfo *m = lookupEnumMember(owner.id, name);
      return m ? Val::ofInt(m->value) : missing();
    }
    if (owner.kind == BuiltinKind::Namespace) {
      std::optional<BuiltinId> id = lookupNamespaceMember(owner.id, name);
      return id ? asValue(builtinInfo(*id)) : missing();
    }
    return missing();
  }
  std::optional<TensorMemberId> id = lookupTensorMember(name);
  if (!id || tensorMemberInfo(*id).kind != MemberKind::Property)
    return missing();
  return member(self, name, at, call->loc);
}

//===----------------------------------------------------------------------===//
// hasattr(obj, name), isinstance(obj, class_or_tuple): answered at compile
// time from what the front end knows of obj.
//===----------------------------------------------------------------------===//

namespace {

// Whether getattr(self, name) or self.name(...) means something: the same
// cases getattr and member answer, without reporting.
bool hasMember(const Val &self, const std::string &name) {
  switch (self.kind) {
  case Val::Kind::Module:
    return lookupTkBuiltin(name).has_value();
  case Val::Kind::Builtin:
    if (self.builtin->kind == BuiltinKind::Enum)
      return lookupEnumMember(self.builtin->id, name) != nullptr;
    if (self.builtin->kind == BuiltinKind::Namespace)
      return lookupNamespaceMember(self.builtin->id, name).has_value();
    return false;
  case Val::Kind::None:
  case Val::Kind::Error:
  case Val::Kind::Func:
    return false;
  default:
    break;
  }
  std::optional<TensorMemberId> id = lookupTensorMember(name);
  if (!id)
    return false;
  using M = TensorMemberId;
  bool dtypeMethod = *id == M::IsFloating || *id == M::IsInt || *id == M::IsIntSigned ||
                     *id == M::IsIntUnsigned || *id == M::IsPtr || *id == M::IsFp16 ||
                     *id == M::IsBf16 || *id == M::IsFp32 || *id == M::IsFp64;
  bool descMember = *id == M::DLoad || *id == M::DStore || *id == M::MAdvance ||
                    *id == M::BlockShape || *id == M::Strides;
  switch (self.kind) {
  case Val::Kind::DType:
    return dtypeMethod || *id == M::PrimitiveBitwidth ||
           (*id == M::ElementTy && self.type->isPointer());
  case Val::Kind::Desc:
    return *id == M::MDtype || *id == M::Shape || (descMember && *id != M::MAdvance) ||
           (self.i == 0 && *id == M::MAdvance);
  case Val::Kind::Dyn:
    if (tensorMemberInfo(*id).kind == MemberKind::Method)
      return !dtypeMethod && !descMember;
    return *id == M::Shape || *id == M::MDtype || *id == M::Type || *id == M::Numel ||
           (*id == M::T && self.v->type()->rank() == 2);
  default: // a compile-time value
    return *id == M::Value || (*id == M::MDtype && self.isScalarConst());
  }
}

} // namespace

Val Lowerer::introspectionCall(const BuiltinInfo &info, const Call *call) {
  bool isHasattr = info.id == BuiltinId::PyHasattr;
  const char *what = isHasattr ? "hasattr" : "isinstance";
  if (call->args.size() != 2 || !call->keywords.empty())
    return fail(call->loc, fmt::format("{}() takes two positional arguments", what));
  // Names of tk, namespaces, enums and type markers are values only here.
  Val self = exprOrBuiltin(call->args[0]);
  if (!self.ok())
    return Val::error();
  if (isHasattr) {
    Val name = expr(call->args[1]);
    if (!name.ok())
      return Val::error();
    if (name.kind != Val::Kind::Str)
      return fail(
          call->args[1]->loc,
          fmt::format("hasattr() needs a compile-time string name, got {}", describe(name)));
    return Val::ofBool(hasMember(self, name.s));
  }
  // isinstance: the classes tk can answer for, each a builtin reference.
  std::vector<std::pair<Val, SourceLoc>> classes;
  if (auto *t = dyn_cast<ast::Tuple>(call->args[1])) {
    for (const Expr *e : t->elts)
      classes.emplace_back(exprOrBuiltin(e), e->loc);
  } else {
    classes.emplace_back(exprOrBuiltin(call->args[1]), call->args[1]->loc);
  }
  bool result = false;
  for (auto &[cls, loc] : classes) {
    if (!cls.ok())
      return Val::error();
    BuiltinId id = cls.kind == Val::Kind::Builtin ? cls.builtin->id : BuiltinId::PyPrint;
    bool match;
    switch (id) {
    case BuiltinId::Tensor:
      match = self.isDyn();
      break;
    case BuiltinId::Dtype:
      match = self.kind == Val::Kind::DType;
      break;
    case BuiltinId::PointerType:
      match = self.kind == Val::Kind::DType && self.type->isPointer();
      break;
    case BuiltinId::TensorDescriptor:
      match = self.kind == Val::Kind::Desc && self.i == 1;
      break;
    case BuiltinId::PyInt: // Python's bool is an int
      match = self.kind == Val::Kind::Int || self.kind == Val::Kind::Bool;
      break;
    case BuiltinId::PyFloat:
      match = self.kind == Val::Kind::Float;
      break;
    case BuiltinId::PyBool:
      match = self.kind == Val::Kind::Bool;
      break;
    default:
      return fail(loc, fmt::format("isinstance() takes tk.tensor, tk.dtype, tk.pointer_type, "
                                   "tk.tensor_descriptor, int, float or bool (or a tuple of "
                                   "them), got {}",
                                   cls.kind == Val::Kind::Builtin ? qualifiedName(*cls.builtin)
                                                                  : describe(cls)));
    }
    result = result || match;
  }
  return Val::ofBool(result);
}

Val Lowerer::item(const Val &self, SourceLoc loc) {
  if (self.isScalarConst() || (self.isDyn() && !self.v->type()->isTensor()))
    return self;
  if (!self.isDyn())
    return fail(loc, fmt::format(".item() needs a tensor, got {}", describe(self)));
  Value *x = self.v;
  if (x->type()->numElements() != 1)
    return fail(loc, fmt::format(".item() needs a one-element tensor, got {} ({} elements)",
                                 typeStr(x), x->type()->numElements()));
  // The scalar is a reduction over the one element whose combiner keeps its
  // left operand (never called on one element): exact for every dtype.
  if (x->type()->rank() != 1)
    x = b_.reshape(loc, x, {1});
  Operation *op = b_.createReduce(loc, {x}, 0);
  Builder::InsertionGuard g(b_);
  b_.setInsertionPointToEnd(&op->body());
  b_.yield(loc, {op->body().argument(0)});
  return Val::dyn(op->result());
}

Val Lowerer::callMethod(const Val &self, const ast::Attribute *callee, const Call *call) {
  if (self.kind == Val::Kind::Desc)
    return descriptorMethod(self, callee, call);
  std::optional<TensorMemberId> id = lookupTensorMember(callee->attr);
  if (!id || tensorMemberInfo(*id).kind != MemberKind::Method)
    return fail(callee->attrLoc,
                fmt::format("{} has no method '{}'", describe(self), callee->attr));
  // dtype predicates: x.dtype.is_floating(), ...
  if (self.kind == Val::Kind::DType) {
    Type *t = self.type;
    bool scalar = !t->isPointer();
    DType d = scalar ? t->dtype() : DType::I64;
    switch (*id) {
    case TensorMemberId::IsFloating:
      return Val::ofBool(scalar && isFloat(d));
    case TensorMemberId::IsInt:
      return Val::ofBool(scalar && isInteger(d));
    case TensorMemberId::IsIntSigned:
      return Val::ofBool(scalar && isSigned(d));
    case TensorMemberId::IsIntUnsigned:
      return Val::ofBool(scalar && isUnsigned(d));
    case TensorMemberId::IsPtr:
      return Val::ofBool(!scalar);
    case TensorMemberId::IsFp16:
      return Val::ofBool(scalar && d == DType::F16);
    case TensorMemberId::IsBf16:
      return Val::ofBool(scalar && d == DType::BF16);
    case TensorMemberId::IsFp32:
      return Val::ofBool(scalar && d == DType::F32);
    case TensorMemberId::IsFp64:
      return Val::ofBool(scalar && d == DType::F64);
    default:
      return fail(callee->attrLoc, fmt::format("a dtype has no method '{}'", callee->attr));
    }
  }
  if (*id == TensorMemberId::Item)
    return item(self, call->loc);
  if (*id == TensorMemberId::LogicalAnd || *id == TensorMemberId::LogicalOr)
    return logicalMethod(self, *id == TensorMemberId::LogicalAnd, callee, call);
  // Every other method is the tk.* builtin of the same name with the
  // receiver as its first argument (x.to is tk.cast).
  std::string_view builtinName =
      *id == TensorMemberId::To ? std::string_view("cast") : std::string_view(callee->attr);
  std::optional<BuiltinId> bid = lookupTkBuiltin(builtinName);
  if (!bid)
    return fail(callee->attrLoc, fmt::format("not supported yet: .{}()", callee->attr));
  const BuiltinInfo &info = builtinInfo(*bid);
  Args args;
  if (!bindArgs(*this, info.signature, call, &self, args))
    return Val::error();
  return lowerBuiltin(*this, info, args, call->loc);
}

// x.logical_and(other) / x.logical_or(other): `&` / `|` of two booleans, as
// Triton's methods (which take only int1 operands: another dtype would be a
// bitcast to int1, which Triton refuses for any width but 1).
Val Lowerer::logicalMethod(const Val &self, bool isAnd, const ast::Attribute *callee,
                           const Call *call) {
  const TensorMemberInfo &m =
      tensorMemberInfo(isAnd ? TensorMemberId::LogicalAnd : TensorMemberId::LogicalOr);
  Args args;
  if (!bindArgs(*this, m.signature, call, nullptr, args))
    return Val::error();
  if (!args.has("other"))
    return fail(call->loc, fmt::format(".{}() needs the other operand", m.name));
  auto isBool = [](const Val &v) {
    return v.kind == Val::Kind::Bool ||
           (v.isDyn() && v.v->type()->dtype() == DType::I1 && !v.v->type()->isPointerLike());
  };
  auto check = [&](const Val &v, SourceLoc loc, const char *which) {
    if (isBool(v))
      return true;
    fail(loc, fmt::format(".{}() needs booleans (int1), but {} is {}; compare first (x != 0) "
                          "or convert with .to(tk.int1)",
                          m.name, which, describe(v)));
    return false;
  };
  if (!check(self, callee->loc, "the receiver") ||
      !check(args.get("other"), args.loc("other"), "'other'"))
    return Val::error();
  return binary(isAnd ? ast::BinaryOp::BitAnd : ast::BinaryOp::BitOr, self, args.get("other"),
                call->loc);
}

// desc.load(offsets), desc.store(offsets, value), desc.atomic_add(offsets,
// value) ... and, on a block pointer, bp.advance(offsets).
Val Lowerer::descriptorMethod(const Val &self, const ast::Attribute *callee, const Call *call) {
  const std::string &m = callee->attr;
  bool atomic = m == "atomic_add" || m == "atomic_min" || m == "atomic_max" || m == "atomic_and" ||
                m == "atomic_or" || m == "atomic_xor";
  if (self.i == 0 && m == "advance") {
    Args args;
    if (!bindArgs(*this, builtinInfo(BuiltinId::Advance).signature, call, &self, args))
      return Val::error();
    return lowerBuiltin(*this, builtinInfo(BuiltinId::Advance), args, call->loc);
  }
  if (self.i != 1 || (m != "load" && m != "store" && !atomic))
    return fail(callee->attrLoc, fmt::format("{} has no method '{}'", describe(self), m));
  Args args;
  const Signature &sig = builtinInfo(BuiltinId::StoreTensorDescriptor).signature;
  if (!bindArgs(*this, sig, call, &self, args))
    return Val::error();
  if (m == "load" && args.has("value"))
    return fail(args.loc("value"), "desc.load takes only the offsets");
  return descriptorAccess(*this, self, call->loc, "desc." + m, args.get("offsets"),
                          args.loc("offsets"), args.get("value"), call->loc);
}

} // namespace tk::astir
