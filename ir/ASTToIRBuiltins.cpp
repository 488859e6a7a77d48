// The dispatch of builtin calls to their families (ASTToIRBuiltins.h), the
// helpers they share, and the three small families: creation (program ids,
// arange, zeros, full), compile-time values (tk.constexpr, pointer_type,
// next_power_of_2, Python's min/max/int/float/bool/len) and debugging and
// hints (static_assert/print, device_print/assert, debug_barrier, assume,
// multiple_of, max_contiguous, max_constancy).
#include "ir/ASTToIRBuiltins.h"
#include "ir/Layout.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tk::astir {

namespace {

// Python's float(str): surrounding whitespace, an optional sign, then "inf",
// "infinity" or "nan" in any case, or a decimal number; nullopt otherwise.
std::optional<double> parsePythonFloat(const std::string &text) {
  const char *space = " \t\n\r\f\v";
  size_t b = text.find_first_not_of(space);
  if (b == std::string::npos)
    return std::nullopt;
  std::string t = text.substr(b, text.find_last_not_of(space) - b + 1);
  size_t signLen = (t[0] == '+' || t[0] == '-') ? 1 : 0;
  double sign = t[0] == '-' ? -1 : 1;
  std::string lower;
  for (char c : t.substr(signLen))
    lower.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "inf" || lower == "infinity")
    return sign * std::numeric_limits<double>::infinity();
  if (lower == "nan")
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  if (lower.empty() || !(std::isdigit(static_cast<unsigned char>(lower[0])) || lower[0] == '.'))
    return std::nullopt;
  char *end = nullptr;
  double f = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size())
    return std::nullopt;
  return f;
}

} // namespace

using namespace ast;

Val lowerBuiltin(Lowerer &L, const BuiltinInfo &info, Args &args, SourceLoc loc) {
  BuiltinCall call(L, info, args, loc);
  using Family = std::optional<Val> (BuiltinCall::*)();
  for (Family lower :
       {&BuiltinCall::lowerCreation, &BuiltinCall::lowerMemory, &BuiltinCall::lowerMath,
        &BuiltinCall::lowerReduction, &BuiltinCall::lowerDot, &BuiltinCall::lowerShape,
        &BuiltinCall::lowerSort, &BuiltinCall::lowerRandom, &BuiltinCall::lowerDebug,
        &BuiltinCall::lowerCompileTime, &BuiltinCall::lowerLibdevice, &BuiltinCall::lowerDescriptor,
        &BuiltinCall::lowerInlineAsm})
    if (std::optional<Val> v = (call.*lower)())
      return std::move(*v);
  return call.notSupported();
}

Val BuiltinCall::notSupported() { return fail(fmt::format("not supported yet: {}", name)); }

bool BuiltinCall::broadcastValues(const std::vector<Val> &vals, SourceLoc at,
                                  std::vector<Value *> &xs, std::vector<int64_t> &shape,
                                  const std::function<bool(size_t, Value *)> &check) {
  for (size_t i = 0; i < vals.size(); ++i) {
    Value *x = L.materialize(vals[i], at, L.constantDType(vals[i]));
    if (!x || (check && !check(i, x)))
      return false;
    std::optional<std::vector<int64_t>> s = L.broadcastShapes(shape, x->type()->shape(), at);
    if (!s)
      return false;
    shape = *s;
    xs.push_back(x);
  }
  for (Value *&x : xs)
    x = L.broadcastTo(x, shape, loc);
  return true;
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::optional<std::vector<int64_t>> shapeOf(Lowerer &L, const Val &v, SourceLoc loc,
                                            bool powerOfTwo) {
  std::vector<Val> elts = v.kind == Val::Kind::Tuple ? v.elts : std::vector<Val>{v};
  std::vector<int64_t> shape;
  for (const Val &e : elts) {
    if (e.kind != Val::Kind::Int) {
      L.fail(loc, fmt::format("a shape must be compile-time integers, got {}", describe(v)));
      return std::nullopt;
    }
    if (e.i <= 0 || (powerOfTwo && !isPowerOfTwo(e.i))) {
      L.fail(loc, fmt::format("tensor dimensions must be powers of two, got {} in {}", e.i,
                              describe(v)));
      return std::nullopt;
    }
    shape.push_back(e.i);
  }
  if (std::optional<std::string> error = tensorShapeError(shape)) {
    L.fail(loc, *error);
    return std::nullopt;
  }
  return shape;
}

std::optional<int64_t> constInt(Lowerer &L, const Val &v, SourceLoc loc, const char *what) {
  if (v.kind == Val::Kind::Int || v.kind == Val::Kind::Bool)
    return v.i;
  L.fail(loc, fmt::format("{} must be a compile-time integer, got {}", what, describe(v)));
  return std::nullopt;
}

std::optional<int> axisFor(Lowerer &L, int64_t axis, unsigned rank, SourceLoc loc, Type *t) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= int64_t(rank)) {
    L.fail(loc, fmt::format("axis {} is out of range for {}", axis, t->str()));
    return std::nullopt;
  }
  return int(a);
}

std::optional<Val> BuiltinCall::lowerCreation() {
  switch (info.id) {
  case BuiltinId::ProgramId:
  case BuiltinId::NumPrograms: {
    std::optional<int64_t> axis = constInt(L, args.get("axis"), args.loc("axis"), "axis");
    if (!axis)
      return Val::error();
    if (*axis < 0 || *axis > 2)
      return L.fail(args.loc("axis"), fmt::format("{} axis must be 0, 1, or 2 but got {}",
                                                  qualifiedName(info), *axis));
    return Val::dyn(info.id == BuiltinId::ProgramId ? b.programId(loc, int(*axis))
                                                    : b.numPrograms(loc, int(*axis)));
  }
  case BuiltinId::CudaGlobaltimer:
    return Val::dyn(b.specialRegister(loc, "globaltimer"));
  case BuiltinId::CudaSmid:
    return Val::dyn(b.specialRegister(loc, "smid"));
  case BuiltinId::CudaNumThreads:
    return Val::ofInt(int64_t(kWarpSize) * L.numWarps());
  case BuiltinId::Arange: {
    std::optional<int64_t> lo = constInt(L, args.get("start"), args.loc("start"), "start");
    std::optional<int64_t> hi =
        lo ? constInt(L, args.get("end"), args.loc("end"), "end") : std::nullopt;
    if (!hi)
      return Val::error();
    if (*hi <= *lo)
      return L.fail(
          loc, fmt::format("tk.arange({}, {}) is empty: end must be greater than start", *lo, *hi));
    if (!isPowerOfTwo(*hi - *lo))
      return L.fail(loc, fmt::format("tk.arange({}, {}) has {} elements; the size must be a power "
                                     "of two",
                                     *lo, *hi, *hi - *lo));
    if (*lo < 0 || *hi > (int64_t(1) << 31))
      return L.fail(loc, fmt::format("tk.arange({}, {}) does not fit in int32", *lo, *hi));
    return Val::dyn(b.makeRange(loc, *lo, *hi));
  }
  case BuiltinId::Zeros:
  case BuiltinId::Full: {
    std::optional<std::vector<int64_t>> shape = shapeOf(L, args.get("shape"), args.loc("shape"));
    if (!shape)
      return Val::error();
    Val d = args.get("dtype");
    if (d.kind != Val::Kind::DType || d.type->isPointer())
      return L.fail(args.loc("dtype"),
                    fmt::format("dtype must be a scalar dtype, got {}", describe(d)));
    Val value = info.id == BuiltinId::Zeros ? Val::ofInt(0) : args.get("value");
    Value *v = L.materialize(value, args.loc("value"), d.type);
    if (!v)
      return Val::error();
    v = L.castTo(v, d.type, loc);
    return Val::dyn(shape->empty() ? v : L.broadcastTo(v, *shape, loc));
  }
  case BuiltinId::ZerosLike: {
    Value *x = tensor("input");
    if (!x)
      return Val::error();
    Value *zero =
        L.castTo(L.materialize(Val::ofInt(0), loc, x->type()), x->type()->elementType(), loc);
    return Val::dyn(L.broadcastTo(zero, x->type()->shape(), loc));
  }
  default:
    return std::nullopt; // another family's
  }
}

std::optional<Val> BuiltinCall::lowerCompileTime() {
  switch (info.id) {
  case BuiltinId::Constexpr: {
    Val v = args.get("value");
    v.lifted = false;
    return v;
  }
  case BuiltinId::ConstexprType: {
    Val v = args.get("value");
    if (!v.isConst())
      return L.fail(args.loc("value"),
                    fmt::format("constexpr_type needs a compile-time value, got {}", describe(v)));
    v.lifted = false;
    Val t;
    t.kind = Val::Kind::ConstexprType;
    t.elts = {v};
    return t;
  }
  case BuiltinId::PointerType: {
    // A dtype: `tk.load(table + g).to(tk.pointer_type(tk.float16))` turns an
    // address loaded as an integer into a pointer (IntToPtr), as Triton's
    // grouped GEMM tutorial does with its tables of tensors.
    Val e = args.get("element_ty");
    if (e.kind != Val::Kind::DType || e.type->isPointer())
      return L.fail(args.loc("element_ty"),
                    fmt::format("tk.pointer_type needs a scalar dtype, got {}", describe(e)));
    if (args.has("address_space")) {
      std::optional<int64_t> as =
          constInt(L, args.get("address_space"), args.loc("address_space"), "address_space");
      if (!as)
        return Val::error();
      if (*as != 1)
        return L.fail(args.loc("address_space"),
                      fmt::format("tk.pointer_type: only global pointers (address_space=1), "
                                  "got {}",
                                  *as));
    }
    return Val::ofType(ctx.pointer(e.type));
  }
  case BuiltinId::GetIntDtype: {
    // Triton's core.get_int_dtype(bitwidth, signed): int1 for width 1 (either
    // signedness), else int<N> / uint<N>.
    std::optional<int64_t> bits =
        constInt(L, args.get("bitwidth"), args.loc("bitwidth"), "get_int_dtype's bitwidth");
    if (!bits)
      return Val::error();
    std::optional<bool> isSignedWanted = L.constTruth(args.get("signed"));
    if (!isSignedWanted)
      return L.fail(args.loc("signed"),
                    fmt::format("get_int_dtype's signed must be known at compile time, got {}",
                                describe(args.get("signed"))));
    std::optional<DType> d;
    if (*bits == 1)
      d = DType::I1;
    else if (*bits == 8 || *bits == 16 || *bits == 32 || *bits == 64)
      d = parseDTypeName(fmt::format("{}{}", *isSignedWanted ? "i" : "u", *bits));
    if (!d)
      return L.fail(
          args.loc("bitwidth"),
          fmt::format("get_int_dtype: no integer dtype of {} bits (1, 8, 16, 32 or 64)", *bits));
    return Val::ofType(ctx.scalar(*d));
  }
  case BuiltinId::StandardLog2: {
    std::optional<int64_t> n = constInt(L, args.get("i"), args.loc("i"), "_log2's argument");
    if (!n)
      return Val::error();
    if (*n <= 0)
      return L.fail(args.loc("i"), fmt::format("_log2 needs a positive integer, got {}", *n));
    // Triton's loop: halve while above 1 (the floor of log2).
    int64_t log2 = 0;
    for (int64_t v = *n; v > 1; v >>= 1)
      ++log2;
    return Val::ofInt(log2);
  }
  case BuiltinId::NextPowerOf2: {
    std::optional<int64_t> n = constInt(L, args.get("n"), loc, "tk.next_power_of_2's n");
    if (!n)
      return Val::error();
    if (*n > (int64_t(1) << 62))
      return L.fail(loc, fmt::format("tk.next_power_of_2({}) overflows", *n));
    int64_t p = 1;
    while (p < *n)
      p <<= 1;
    return Val::ofInt(p);
  }
  case BuiltinId::PyMin:
  case BuiltinId::PyMax: {
    bool isMax = info.id == BuiltinId::PyMax;
    std::vector<Val> vals = {args.get("arg1")};
    vals.insert(vals.end(), args.rest.begin(), args.rest.end());
    if (vals.size() == 1 && vals[0].kind == Val::Kind::Tuple)
      vals = vals[0].elts;
    if (vals.empty())
      return L.fail(loc, fmt::format("{}() of nothing", isMax ? "max" : "min"));
    Val acc = vals[0];
    for (size_t i = 1; i < vals.size() && acc.ok(); ++i) {
      if (acc.isConst() && vals[i].isConst()) {
        Val less = L.compare(ast::CmpOp::Lt, vals[i], acc, loc);
        if (!less.ok())
          return less;
        if ((less.i != 0) != isMax)
          acc = vals[i];
      } else {
        acc = minMax(isMax, acc, vals[i]);
      }
    }
    return acc;
  }
  case BuiltinId::PyInt:
  case BuiltinId::PyFloat:
  case BuiltinId::PyBool: {
    Val x = args.get("x");
    if (info.id == BuiltinId::PyFloat && x.kind == Val::Kind::Str) {
      if (std::optional<double> f = parsePythonFloat(x.s))
        return Val::ofFloat(*f);
      return L.fail(loc, fmt::format("could not convert string to float: '{}'", x.s));
    }
    if (!x.isScalarConst())
      return L.fail(
          loc, fmt::format("{}() needs a compile-time number, got {}", info.name, describe(x)));
    if (info.id == BuiltinId::PyBool)
      return Val::ofBool(*L.constTruth(x));
    if (info.id == BuiltinId::PyFloat)
      return Val::ofFloat(x.kind == Val::Kind::Float ? x.f : double(x.i));
    if (x.kind == Val::Kind::Float) {
      if (!std::isfinite(x.f) || std::fabs(x.f) > 9.2e18)
        return L.fail(loc, fmt::format("int() of {} does not fit in 64 bits", x.f));
      return Val::ofInt(int64_t(x.f));
    }
    return Val::ofInt(x.i);
  }
  case BuiltinId::PyDivmod: {
    Val q = L.binary(ast::BinaryOp::FloorDiv, args.get("a"), args.get("b"), loc);
    if (!q.ok())
      return q;
    Val r = L.binary(ast::BinaryOp::Mod, args.get("a"), args.get("b"), loc);
    if (!r.ok())
      return r;
    return Val::tuple({q, r});
  }
  case BuiltinId::PyLen: {
    Val x = args.get("obj");
    if (x.kind == Val::Kind::Tuple)
      return Val::ofInt(int64_t(x.elts.size()));
    if (x.isDyn() && x.v->type()->rank() == 1)
      return Val::ofInt(x.v->type()->shape()[0]);
    return L.fail(loc, fmt::format("len() needs a tuple or a 1-D tensor, got {}", describe(x)));
  }
  default:
    return std::nullopt; // another family's
  }
}

// tk.multiple_of / max_contiguous / max_constancy: a promise about the
// value, recorded on its defining op (or on the kernel argument) for the
// axis analysis; the value itself is unchanged.
Val BuiltinCall::hint(const char *attr) {
  Val x = args.get("input");
  if (!x.isDyn())
    return fail(fmt::format("{} needs a tensor or scalar value, got {}", name, describe(x)));
  Val vs = args.get("values");
  std::vector<Val> elts = vs.kind == Val::Kind::Tuple ? vs.elts : std::vector<Val>{vs};
  std::vector<int64_t> values;
  for (const Val &e : elts) {
    if (e.kind != Val::Kind::Int || e.i <= 0)
      return fail(
          fmt::format("{} needs positive compile-time integers, got {}", name, describe(vs)));
    values.push_back(e.i);
  }
  unsigned rank = std::max(1u, x.v->type()->rank());
  if (values.size() == 1 && rank > 1)
    values.assign(rank, values[0]);
  if (values.size() != rank)
    return fail(fmt::format("{} needs one value per dimension of {}, got {}", name, typeStr(x.v),
                            values.size()));
  if (Operation *def = x.v->definingOp()) {
    def->setAttr(attr, values);
  } else if (x.v->ownerBlock() && !x.v->ownerBlock()->parentOp() &&
             std::string_view(attr) == "multiple_of") {
    Function *fn = x.v->ownerBlock()->parent()->parentFunction();
    if (fn)
      fn->argAttrs(x.v->index()).set("divisibility", values[0]);
  }
  return x;
}

std::optional<Val> BuiltinCall::lowerDebug() {
  switch (info.id) {
  case BuiltinId::StaticAssert: {
    Val cond = args.get("cond");
    std::optional<bool> t = L.constTruth(cond);
    if (!t)
      return L.fail(args.loc("cond"), fmt::format("tk.static_assert needs a compile-time "
                                                  "condition, got {}",
                                                  describe(cond)));
    if (!*t) {
      Val msg = args.get("msg");
      std::string text = msg.kind == Val::Kind::Str ? msg.s : "";
      return L.fail(loc, "static assertion failed" + (text.empty() ? "" : ": " + text));
    }
    return Val::none();
  }
  case BuiltinId::StaticPrint: {
    std::string text;
    for (const Val &v : args.rest)
      text += (text.empty() ? "" : " ") + (v.kind == Val::Kind::Str ? v.s : describe(v));
    L.diag().report(Severity::Note, loc, "tk.static_print: " + text);
    return Val::none();
  }
  case BuiltinId::DevicePrint:
  case BuiltinId::PyPrint: {
    std::string prefix;
    std::vector<Val> rest = args.rest;
    if (info.id == BuiltinId::DevicePrint) {
      Val p = args.get("prefix");
      if (p.kind != Val::Kind::Str)
        return L.fail(args.loc("prefix"), fmt::format("tk.device_print needs a string prefix, got "
                                                      "{}",
                                                      describe(p)));
      prefix = p.s;
    } else if (!rest.empty() && rest[0].kind == Val::Kind::Str) {
      prefix = rest[0].s;
      rest.erase(rest.begin());
    }
    std::vector<Value *> values;
    for (const Val &v : rest) {
      Value *x = L.materialize(v, loc);
      if (!x)
        return Val::error();
      values.push_back(x);
    }
    Operation *op = b.print(loc, prefix, values);
    if (args.has("hex") && L.constTruth(args.get("hex")).value_or(false))
      op->setAttr("hex", true);
    return Val::none();
  }
  case BuiltinId::DeviceAssert: {
    Val cond = args.get("cond");
    Val msg = args.get("msg");
    std::string text = msg.kind == Val::Kind::Str ? msg.s : "";
    if (std::optional<bool> t = L.constTruth(cond)) {
      if (!*t)
        return L.fail(loc, "assertion is always false" + (text.empty() ? "" : ": " + text));
      return Val::none();
    }
    b.assertOp(loc, L.castTo(cond.v, ctx.i1(), loc), text);
    return Val::none();
  }
  case BuiltinId::DebugBarrier:
    // bar.sync of the whole program on the GPU; the interpreter runs a
    // program's threads as one, so there it orders nothing.
    b.create(Opcode::Barrier, loc, {}, {});
    return Val::none();
  case BuiltinId::Assume: {
    // A promise for the optimiser (Triton's tl.assume); tk's analyses do not
    // use it yet, so the condition is checked for type errors and dropped.
    if (!args.get("cond").ok())
      return Val::error();
    return Val::none();
  }
  case BuiltinId::MultipleOf:
    return hint("multiple_of");
  case BuiltinId::MaxContiguous:
    return hint("max_contiguous");
  case BuiltinId::MaxConstancy:
    return hint("max_constancy");
  default:
    return std::nullopt; // another family's
  }
}

} // namespace tk::astir
