// The libdevice functions (libdevice.asin, ..., lang/Libdevice.def): one
// `extern_elementwise` op naming the overload the arguments pick, as Triton's
// extern_elementwise picks it. Python numbers become scalars first (an int:
// int32, uint32 from 2**31, then int64, uint64; a float: fp32 when fp32 holds
// its magnitude, else fp64). When the arguments' dtypes are an overload's,
// that overload is taken and only the shapes broadcast: libdevice.pow(x, 2)
// with x fp32 is __nv_powif. Otherwise every argument is promoted to the
// arguments' common dtype (as for arithmetic) and the dtypes looked up again,
// so libdevice.atan2(x_fp32, y_fp64) is __nv_atan2; what still matches no
// overload is an error naming the dtypes taken.
#include "ir/ASTToIRBuiltins.h"
#include "lang/Libdevice.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tk::astir {

namespace {

// "(fp32, int32)".
std::string dtypeList(const std::vector<DType> &ds) {
  std::string out = "(";
  for (size_t i = 0; i < ds.size(); ++i)
    out += (i ? ", " : "") + std::string(dtypePythonName(ds[i]));
  return out + ")";
}

const LibdeviceOverload *findOverload(const LibdeviceFunction &f, const std::vector<DType> &ds) {
  for (const LibdeviceOverload *o : f.overloads)
    if (o->args == ds)
      return o;
  return nullptr;
}

} // namespace

std::optional<Val> BuiltinCall::lowerLibdevice() {
  const LibdeviceFunction *f = libdeviceFunction(info.id);
  if (!f)
    return std::nullopt;
  std::vector<Value *> xs;
  std::vector<SourceLoc> locs;
  for (const ParamSpec &p : args.sig->params) {
    Val v = args.get(p.name);
    SourceLoc at = args.loc(p.name);
    // Triton's to_tensor dtype for a number.
    Type *like = L.constantDType(v);
    Value *x = L.materialize(v, at, like);
    if (!x)
      return Val::error();
    if (!x->type()->elementType()->isScalar())
      return L.fail(at,
                    fmt::format("{}() takes numbers, got {} for '{}'", name, typeStr(x), p.name));
    xs.push_back(x);
    locs.push_back(at);
  }
  auto dtypesOf = [&]() {
    std::vector<DType> ds;
    for (Value *x : xs)
      ds.push_back(x->type()->elementType()->dtype());
    return ds;
  };
  std::vector<DType> given = dtypesOf();
  const LibdeviceOverload *o = findOverload(*f, given);
  if (!o) {
    Type *common = xs[0]->type()->elementType();
    for (size_t i = 1; i < xs.size() && common; ++i)
      common = L.promote(common, xs[i]->type(), loc, name.c_str());
    if (!common)
      return Val::error();
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = L.castTo(xs[i], common, locs[i]);
    o = findOverload(*f, dtypesOf());
  }
  if (!o) {
    std::string taken;
    for (size_t i = 0; i < f->overloads.size(); ++i)
      taken += (i == 0                         ? ""
                : i + 1 == f->overloads.size() ? " or "
                                               : ", ") +
               dtypeList(f->overloads[i]->args);
    return fail(fmt::format("{}() takes {}, got {}", name, taken, dtypeList(given)));
  }
  std::vector<int64_t> shape;
  for (Value *x : xs) {
    std::optional<std::vector<int64_t>> s = L.broadcastShapes(shape, x->type()->shape(), loc);
    if (!s)
      return Val::error();
    shape = *s;
  }
  for (Value *&x : xs)
    x = L.broadcastTo(x, shape, loc);
  Value *r = b.externElementwise(loc, std::string(o->symbol), xs, ctx.scalar(o->result));
  // Triton's isnan and isinf give int1, from libdevice's int32.
  if (info.id == BuiltinId::LibdeviceIsnan || info.id == BuiltinId::LibdeviceIsinf)
    r = b.cmpi(loc, "ne", r, b.constantInt(loc, 0, r->type()));
  return Val::dyn(r);
}

} // namespace tk::astir
