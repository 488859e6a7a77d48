// tk.inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
// one `inline_asm` op (ir/InlineAsm.h) over the arguments broadcast to one
// shape, as Triton's. Python numbers among the args become scalars of
// Triton's to_tensor dtype first. dtype is one dtype (one result) or a tuple
// of them (a tuple of results). The checks here are the verifier's
// (inlineAsmProblem), worded for the call and located at the argument.
#include "ir/ASTToIRBuiltins.h"
#include "ir/InlineAsm.h"

#include <fmt/format.h>

namespace tk::astir {

std::optional<Val> BuiltinCall::lowerInlineAsm() {
  if (info.id != BuiltinId::InlineAsmElementwise)
    return std::nullopt;
  auto constString = [&](const char *param) -> std::optional<std::string> {
    Val v = args.get(param);
    if (v.kind == Val::Kind::Str)
      return v.s;
    L.fail(args.loc(param), fmt::format("{}'s {} must be a string (a literal or a str "
                                        "tk.constexpr), got {}",
                                        name, param, describe(v)));
    return std::nullopt;
  };
  std::optional<std::string> asmText = constString("asm");
  if (!asmText)
    return Val::error();
  std::optional<std::string> constraints = constString("constraints");
  if (!constraints)
    return Val::error();

  Val pure = args.get("is_pure");
  if (pure.kind != Val::Kind::Bool)
    return L.fail(args.loc("is_pure"),
                  fmt::format("{}'s is_pure must be True or False, got {}", name, describe(pure)));
  Val packVal = args.get("pack");
  if (packVal.kind != Val::Kind::Int || packVal.i < 1)
    return L.fail(args.loc("pack"),
                  fmt::format("{}'s pack must be a compile-time integer >= 1, got {}", name,
                              describe(packVal)));
  int64_t pack = packVal.i;

  // The result dtypes.
  Val dtypeVal = args.get("dtype");
  bool tupleResult = dtypeVal.kind == Val::Kind::Tuple;
  std::vector<Val> dtypes = tupleResult ? dtypeVal.elts : std::vector<Val>{dtypeVal};
  if (dtypes.empty())
    return L.fail(args.loc("dtype"), fmt::format("{} must give at least one result: dtype is an "
                                                 "empty tuple (return a dummy int32 result)",
                                                 name));
  for (const Val &d : dtypes)
    if (d.kind != Val::Kind::DType || !d.type->isScalar() || d.type->dtype() == DType::I1)
      return L.fail(args.loc("dtype"),
                    fmt::format("{}'s dtype must be a dtype of 8 to 64 bits (tk.int32, "
                                "tk.float16, ...) or a tuple of them, got {}",
                                name, describe(d)));

  // The arguments, broadcast to one shape.
  Val argsVal = args.get("args");
  if (argsVal.kind != Val::Kind::Tuple)
    return L.fail(args.loc("args"),
                  fmt::format("{}'s args must be a list or tuple of tensors, got {}", name,
                              describe(argsVal)));
  std::vector<Value *> xs;
  std::vector<int64_t> shape;
  auto registerSized = [&](size_t i, Value *x) {
    Type *e = x->type()->elementType();
    if ((e->isScalar() || e->isPointer()) && !(e->isScalar() && e->dtype() == DType::I1))
      return true;
    L.fail(args.loc("args"),
           fmt::format("{}'s args[{}] is {}; inline assembly takes numbers of 8 to 64 "
                       "bits and pointers (convert a boolean to tk.int8 or tk.int32)",
                       name, i, typeStr(x)));
    return false;
  };
  if (!broadcastValues(argsVal.elts, args.loc("args"), xs, shape, registerSized))
    return Val::error();

  int64_t numElements = 1;
  for (int64_t d : shape)
    numElements *= d;
  if (numElements % pack != 0 || (pack & (pack - 1)) != 0)
    return L.fail(args.loc("pack"),
                  fmt::format("{}'s pack ({}) must be a power of two that divides the number of "
                              "elements of the broadcast args ({}{})",
                              name, pack, numElements, shape.empty() ? ", a scalar" : ""));

  std::vector<Type *> resultTypes;
  for (const Val &d : dtypes)
    resultTypes.push_back(shape.empty() ? d.type : ctx.tensor(shape, d.type));

  // The register counts the constraints must give (ir/InlineAsm.h).
  auto registers = [&](Type *t) { return pack / inlineAsmElementsPerRegister(t, pack); };
  int64_t outputs = 0, inputs = 0;
  for (Type *t : resultTypes)
    outputs += registers(t->elementType());
  for (Value *x : xs)
    inputs += registers(x->type()->elementType());
  AsmConstraintCounts n = countAsmConstraints(*constraints);
  if (n.empty || n.outputs != outputs || n.inputs != inputs)
    return L.fail(args.loc("constraints"),
                  fmt::format("{}'s constraints \"{}\" name {} output and {} input register(s); "
                              "{} result(s) and {} arg(s) with pack={} need {} output (\"=r\", "
                              "...) and {} input register(s), outputs first ($0 to ${})",
                              name, *constraints, n.outputs, n.inputs, resultTypes.size(),
                              xs.size(), pack, outputs, inputs, outputs + inputs - 1));

  AttrDict attrs;
  attrs.set("asm", Attribute(*asmText));
  attrs.set("constraints", Attribute(normalizeAsmConstraints(*constraints)));
  attrs.set("pure", Attribute(pure.i != 0));
  attrs.set("pack", Attribute(pack));
  Operation *op = b.create(Opcode::InlineAsm, loc, xs, resultTypes, std::move(attrs));
  if (!tupleResult)
    return Val::dyn(op->result(0));
  std::vector<Val> results;
  for (Value *r : op->results())
    results.push_back(Val::dyn(r));
  return Val::tuple(std::move(results));
}

} // namespace tk::astir
