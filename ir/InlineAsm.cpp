#include "ir/InlineAsm.h"

#include "ir/Operation.h"
#include "ir/Types.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tk {

int64_t inlineAsmElementsPerRegister(Type *elem, int64_t pack) {
  int64_t bits = elem->isPointer() ? 64 : int64_t(dtypeBits(elem->dtype()));
  if (bits >= 32 || pack < 1)
    return 1;
  return std::min<int64_t>(pack, 32 / bits);
}

std::string normalizeAsmConstraints(std::string_view constraints) {
  std::string out;
  for (char c : constraints)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += c;
  return out;
}

AsmConstraintCounts countAsmConstraints(std::string_view constraints) {
  AsmConstraintCounts n;
  std::string all = normalizeAsmConstraints(constraints);
  if (all.empty())
    return n;
  size_t start = 0;
  while (true) {
    size_t comma = all.find(',', start);
    std::string_view code =
        std::string_view(all).substr(start, comma == std::string::npos ? all.npos : comma - start);
    if (code.empty())
      n.empty = true;
    else if (code[0] == '=')
      ++n.outputs;
    else if (code[0] == '~')
      ++n.clobbers;
    else
      ++n.inputs;
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return n;
}

namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Registers of one value per invocation.
int64_t registersOf(Type *t, int64_t pack) {
  return pack / inlineAsmElementsPerRegister(t->elementType(), pack);
}

} // namespace

std::string inlineAsmProblem(const Operation &op) {
  int64_t pack = op.attrs().getInt("pack").value_or(0);
  if (!isPowerOfTwo(pack))
    return fmt::format("pack must be a power of two (1, 2, 4, ...), got {}", pack);
  if (op.numResults() == 0)
    return "needs at least one result";
  Type *first = op.result(0)->type();
  for (Value *v : op.operands())
    if (v->type()->shape() != first->shape() || v->type()->isTensor() != first->isTensor())
      return fmt::format("operands and results must have one shape: {} and {}", first->str(),
                         v->type()->str());
  for (Value *r : op.results())
    if (r->type()->shape() != first->shape() || r->type()->isTensor() != first->isTensor())
      return fmt::format("results must have one shape: {} and {}", first->str(), r->type()->str());
  for (Value *v : op.operands()) {
    Type *e = v->type()->elementType();
    if (e->isScalar() && e->dtype() == DType::I1)
      return fmt::format("operands must not be i1 (convert to i8 or i32), got {}",
                         v->type()->str());
  }
  for (Value *r : op.results()) {
    Type *e = r->type()->elementType();
    if (!e->isScalar() || e->dtype() == DType::I1)
      return fmt::format("results must be numbers of 8 to 64 bits, got {}", r->type()->str());
  }
  int64_t outputs = 0, inputs = 0;
  for (Value *r : op.results())
    outputs += registersOf(r->type(), pack);
  for (Value *v : op.operands())
    inputs += registersOf(v->type(), pack);
  std::string constraints = op.attrs().getString("constraints").value_or("");
  AsmConstraintCounts n = countAsmConstraints(constraints);
  if (n.empty)
    return fmt::format("constraints \"{}\" have an empty entry", constraints);
  if (n.outputs != outputs || n.inputs != inputs)
    return fmt::format("constraints \"{}\" name {} output and {} input register(s); with pack = "
                       "{} the results need {} output and the operands {} input register(s)",
                       constraints, n.outputs, n.inputs, pack, outputs, inputs);
  return {};
}

} // namespace tk
