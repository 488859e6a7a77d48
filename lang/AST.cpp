#include "lang/AST.h"

namespace tk::ast {

const char *nodeKindName(NodeKind k) {
  switch (k) {
  case NodeKind::Name:
    return "Name";
  case NodeKind::IntLit:
    return "IntLit";
  case NodeKind::FloatLit:
    return "FloatLit";
  case NodeKind::BoolLit:
    return "BoolLit";
  case NodeKind::NoneLit:
    return "NoneLit";
  case NodeKind::StringLit:
    return "StringLit";
  case NodeKind::Attribute:
    return "Attribute";
  case NodeKind::Call:
    return "Call";
  case NodeKind::Subscript:
    return "Subscript";
  case NodeKind::Slice:
    return "Slice";
  case NodeKind::Tuple:
    return "Tuple";
  case NodeKind::List:
    return "List";
  case NodeKind::Dict:
    return "Dict";
  case NodeKind::Binary:
    return "Binary";
  case NodeKind::Unary:
    return "Unary";
  case NodeKind::Compare:
    return "Compare";
  case NodeKind::BoolOp:
    return "BoolOp";
  case NodeKind::IfExp:
    return "IfExp";
  case NodeKind::ExprStmt:
    return "ExprStmt";
  case NodeKind::Assign:
    return "Assign";
  case NodeKind::AugAssign:
    return "AugAssign";
  case NodeKind::AnnAssign:
    return "AnnAssign";
  case NodeKind::If:
    return "If";
  case NodeKind::For:
    return "For";
  case NodeKind::While:
    return "While";
  case NodeKind::Break:
    return "Break";
  case NodeKind::Continue:
    return "Continue";
  case NodeKind::Return:
    return "Return";
  case NodeKind::Pass:
    return "Pass";
  case NodeKind::Assert:
    return "Assert";
  case NodeKind::FunctionDef:
    return "FunctionDef";
  case NodeKind::Import:
    return "Import";
  case NodeKind::ImportFrom:
    return "ImportFrom";
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
