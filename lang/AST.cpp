#include "lang/AST.h"

namespace tk::ast {

const char *nodeKindName(NodeKind k) {
  switch (k) {
#define K(N)                                                                                       \
  case NodeKind::N:                                                                                \
    return #N;
    K(Name)
    K(IntLit) K(FloatLit) K(BoolLit) K(NoneLit) K(StringLit) K(Attribute) K(Call) K(Subscript)
        K(Slice) K(Tuple) K(List) K(Dict) K(Binary) K(Unary) K(Compare) K(BoolOp) K(IfExp)
            K(ExprStmt) K(Assign) K(AugAssign) K(AnnAssign) K(If) K(For) K(While) K(Break)
                K(Continue) K(Return) K(Pass) K(Assert) K(FunctionDef) K(Import) K(ImportFrom)
#undef K
  }
  return "?";
}

const char *binaryOpSpelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::FloorDiv:
    return "//";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Pow:
    return "**";
  case BinaryOp::MatMul:
    return "@";
  case BinaryOp::LShift:
    return "<<";
  case BinaryOp::RShift:
    return ">>";
  case BinaryOp::BitAnd:
    return "&";
  case BinaryOp::BitOr:
    return "|";
  case BinaryOp::BitXor:
    return "^";
  }
  return "?";
}

const char *unaryOpSpelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg:
    return "-";
  case UnaryOp::Pos:
    return "+";
  case UnaryOp::Invert:
    return "~";
  case UnaryOp::Not:
    return "not";
  }
  return "?";
}

const char *cmpOpSpelling(CmpOp op) {
  switch (op) {
  case CmpOp::Eq:
    return "==";
  case CmpOp::Ne:
    return "!=";
  case CmpOp::Lt:
    return "<";
  case CmpOp::Le:
    return "<=";
  case CmpOp::Gt:
    return ">";
  case CmpOp::Ge:
    return ">=";
  case CmpOp::Is:
    return "is";
  case CmpOp::IsNot:
    return "is not";
  case CmpOp::In:
    return "in";
  case CmpOp::NotIn:
    return "not in";
  }
  return "?";
}

FunctionDef *Module::findFunction(std::string_view name) const {
  for (Stmt *s : body)
    if (auto *f = dyn_cast<FunctionDef>(s); f && f->name == name)
      return f;
  return nullptr;
}

std::vector<FunctionDef *> Module::functions() const {
  std::vector<FunctionDef *> out;
  for (Stmt *s : body)
    if (auto *f = dyn_cast<FunctionDef>(s))
      out.push_back(f);
  return out;
}

} // namespace tk::ast
