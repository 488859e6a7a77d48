#include "ir/Verifier.h"

#include "ir/IRContext.h"
#include "ir/InlineAsm.h"
#include "ir/Layout.h"
#include "lang/Libdevice.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_set>

namespace tk {
namespace {

bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

bool oneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), s) != options.end();
}

std::string typeListStr(const std::vector<Type *> &types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i)
    s += (i ? ", " : "") + types[i]->str();
  return s + ")";
}

std::vector<Type *> typesOf(const std::vector<Value *> &values) {
  std::vector<Type *> out;
  for (Value *v : values)
    out.push_back(v->type());
  return out;
}

class Verifier {
public:
  Verifier(Module &m, DiagnosticEngine &diag) : module_(m), ctx_(m.context()), diag_(diag) {}

  bool run() {
    std::set<std::string> names;
    for (auto &fn : module_.functions()) {
      if (!names.insert(fn->name()).second && (ok_ = false, true))
        diag_.error(fn->loc(), fmt::format("redefinition of function '@{}'", fn->name()));
      verifyFunction(*fn);
    }
    return ok_;
  }

private:
  // --- reporting
  Diagnostic &error(Operation &op, std::string msg) {
    ok_ = false;
    return diag_.error(op.loc(), fmt::format("'{}' {}", op.name(), msg));
  }

  // --- the types of values: what a type may be in tk, whoever made it
  // (the front end, a pass, the IR parser). Each bad type is reported once
  // per function, at its first value.
  void verifyValueType(SourceLoc loc, Type *t, const std::string &what) {
    if (!checkedTypes_.insert(t).second)
      return;
    auto bad = [&](std::string why) {
      ok_ = false;
      diag_.error(loc, fmt::format("{} ({}): {}", what, t->str(), why));
    };
    auto *tensor = dyn_cast<TensorType>(t);
    if (tensor)
      if (std::optional<std::string> error = tensorShapeError(tensor->dims()))
        return bad(*error);
    if (auto *p = dyn_cast<PointerType>(t->elementType())) {
      if (p->addressSpace() != PointerType::kGlobal && p->addressSpace() != PointerType::kShared)
        return bad(fmt::format("address space {} is not tk's: pointers are global (1) or "
                               "shared (3)",
                               p->addressSpace()));
      if (p->pointee()->isPointer())
        return bad("a pointer to a pointer; tk's pointers point to scalars");
    }
    const LayoutAttr *layout = tensor ? tensor->layout() : nullptr;
    if (!layout || isa<SharedLayout>(layout))
      return;
    // Every distributed layout of a function spreads over its num_warps warps
    // (the code generator sizes the program by it); without the attribute
    // the layouts must at least agree with each other.
    int64_t warps = layoutNumWarps(layout);
    if (std::optional<int64_t> numWarps = fn_->attrs().getInt("num_warps")) {
      if (warps != *numWarps)
        bad(fmt::format("the layout spreads over {} warps but '@{}' has num_warps = {}", warps,
                        fn_->name(), *numWarps));
    } else if (!layoutWarps_) {
      layoutWarps_ = {warps, t};
    } else if (layoutWarps_->first != warps) {
      bad(fmt::format("the layout spreads over {} warps but {} in '@{}' over {}", warps,
                      layoutWarps_->second->str(), fn_->name(), layoutWarps_->first));
    }
    // And its warps are the function's (threads_per_warp: 64 on AMD's wave64).
    if (int64_t lanes = layoutWarpSize(layout); lanes != functionWarpSize(*fn_))
      bad(fmt::format("the layout has {}-thread warps but '@{}' has threads_per_warp = {}", lanes,
                      fn_->name(), functionWarpSize(*fn_)));
  }

  // --- structure and dominance
  void verifyFunction(Function &fn) {
    fn_ = &fn;
    visible_.clear();
    checkedTypes_.clear();
    layoutWarps_.reset();
    if (std::optional<int64_t> lanes = fn.attrs().getInt("threads_per_warp");
        lanes && !isWarpSize(*lanes)) {
      ok_ = false;
      diag_.error(fn.loc(), fmt::format("threads_per_warp of '@{}' must be 32 or 64, got {}",
                                        fn.name(), *lanes));
      return;
    }
    for (unsigned i = 0; i < fn.numArguments(); ++i)
      verifyValueType(fn.loc(), fn.argument(i)->type(),
                      fmt::format("argument #{} of '@{}'", i, fn.name()));
    for (Type *t : fn.resultTypes())
      verifyValueType(fn.loc(), t, fmt::format("a result of '@{}'", fn.name()));
    Block &body = fn.body();
    if (fn.bodyRegion().numBlocks() != 1) {
      ok_ = false;
      diag_.error(fn.loc(), fmt::format("function '@{}' must have exactly one block", fn.name()));
      return;
    }
    verifyBlock(body);
    Operation *term = body.terminator();
    if (!term || !term->is(Opcode::Return)) {
      ok_ = false;
      diag_.error(body.empty() ? fn.loc() : body.back()->loc(),
                  fmt::format("function '@{}' must end with 'return'", fn.name()));
    }
  }

  void verifyBlock(Block &block) {
    std::vector<Value *> added;
    Operation *owner = block.parentOp();
    unsigned index = 0;
    for (Value *a : block.arguments()) {
      visible_.insert(a);
      added.push_back(a);
      if (owner)
        verifyValueType(owner->loc(), a->type(),
                        fmt::format("'{}' region argument #{}", owner->name(), index++));
    }
    for (Operation &op : block) {
      if (op.hasTrait(OpTrait::Terminator) && &op != block.back())
        error(op, "is a terminator but is not the last op of its block");
      verifyOp(op);
      index = 0;
      for (Value *r : op.results()) {
        visible_.insert(r);
        added.push_back(r);
        verifyValueType(op.loc(), r->type(), fmt::format("'{}' result #{}", op.name(), index++));
      }
    }
    for (Value *v : added)
      visible_.erase(v);
  }

  void verifyOp(Operation &op) {
    const OpInfo &info = opInfo(op.opcode());
    bool arityOk = true;
    unsigned n = op.numOperands();
    if (n < unsigned(info.minOperands) ||
        (info.maxOperands >= 0 && n > unsigned(info.maxOperands))) {
      std::string expected =
          info.minOperands == info.maxOperands ? fmt::format("{}", info.minOperands)
          : info.maxOperands < 0               ? fmt::format("at least {}", info.minOperands)
                                 : fmt::format("{} to {}", info.minOperands, info.maxOperands);
      error(op, fmt::format("expects {} operand(s), got {}", expected, n));
      arityOk = false;
    }
    if (info.numResults >= 0 && op.numResults() != unsigned(info.numResults)) {
      error(op, fmt::format("expects {} result(s), got {}", info.numResults, op.numResults()));
      arityOk = false;
    }
    if (info.numRegions >= 0 && op.numRegions() != unsigned(info.numRegions)) {
      error(op, fmt::format("expects {} region(s), got {}", info.numRegions, op.numRegions()));
      arityOk = false;
    }
    for (unsigned i = 0; i < n; ++i) {
      Value *v = op.operand(i);
      if (!v) {
        error(op, fmt::format("operand #{} is null", i));
        arityOk = false;
      } else if (!visible_.count(v)) {
        Diagnostic &d = error(op, fmt::format("operand #{} ({}) is used before its definition or "
                                              "outside the region that defines it",
                                              i, v->type()->str()));
        if (v->definingOp())
          d.notes.push_back({v->definingOp()->loc(), "defined here"});
      }
    }
    bool attrsOk = verifyAttrs(op, info.attrSpec);
    for (unsigned r = 0; r < op.numRegions(); ++r) {
      Region &region = op.region(r);
      if (region.numBlocks() != 1) {
        error(op,
              fmt::format("region #{} must have exactly one block, has {}", r, region.numBlocks()));
        arityOk = false;
        continue;
      }
      verifyBlock(region.front());
    }
    if (arityOk && attrsOk)
      verifyTypes(op);
  }

  // Checks the attributes listed in Ops.def: "name:kind,name:kind?".
  bool verifyAttrs(Operation &op, std::string_view spec) {
    bool good = true;
    while (!spec.empty()) {
      size_t comma = spec.find(',');
      std::string_view item = spec.substr(0, comma);
      spec = comma == std::string_view::npos ? "" : spec.substr(comma + 1);
      bool optional = item.ends_with('?');
      if (optional)
        item.remove_suffix(1);
      size_t colon = item.find(':');
      std::string_view name = item.substr(0, colon), kind = item.substr(colon + 1);
      const Attribute *a = op.attrs().get(name);
      if (!a) {
        if (!optional) {
          error(op, fmt::format("needs attribute '{}' ({})", name, kind));
          good = false;
        }
        continue;
      }
      bool kindOk = kind == "num" ? (a->isInt() || a->isFloat()) : attrKindName(a->kind()) == kind;
      if (!kindOk) {
        error(op, fmt::format("attribute '{}' must be {}, got {} {}", name,
                              kind == "num" ? "int or float" : kind, attrKindName(a->kind()),
                              a->str()));
        good = false;
      }
    }
    return good;
  }

  // --- type rules
  bool sameShape(Operation &op, Value *a, Value *b, std::string_view what) {
    if (a->type()->shape() == b->type()->shape() && a->type()->isTensor() == b->type()->isTensor())
      return true;
    error(op, fmt::format("{} shape {} does not match {} ({} vs {})", what,
                          shapeStr(b->type()->shape()), shapeStr(a->type()->shape()),
                          b->type()->str(), a->type()->str()));
    return false;
  }

  bool expectType(Operation &op, Type *got, Type *want, std::string_view what) {
    if (got == want)
      return true;
    error(op, fmt::format("{} must be {}, got {}", what, want->str(), got->str()));
    return false;
  }

  bool isI1Like(Type *t) { return t->elementType() == ctx_.i1(); }

  // Result types that an op's rule computes from shapes alone (make_range,
  // reduce) are compared without the layout, which the layout passes choose.
  Type *withoutLayout(Type *t) {
    auto *tt = dyn_cast<TensorType>(t);
    return tt && tt->layout() ? ctx_.tensor(tt->dims(), tt->element()) : t;
  }

  /// The type a load through `ptr` gives: the pointee in the pointer's shape.
  Type *pointeeLike(Type *ptr) {
    auto *p = dyn_cast<PointerType>(ptr->elementType());
    return p ? ctx_.withElement(ptr, p->pointee()) : nullptr;
  }

  // The operand and result dtypes are the ones the libdevice symbol takes.
  void verifyExternElementwise(Operation &op) {
    std::string symbol(*op.attrs().getString("symbol"));
    const LibdeviceOverload *f = findLibdeviceOverload(symbol);
    if (!f) {
      error(op,
            fmt::format("'{}' is not a libdevice function tk knows (lang/Libdevice.def)", symbol));
      return;
    }
    auto dtypeStr = [](DType d) { return std::string(dtypeName(d)); };
    auto list = [&](const std::vector<DType> &ds) {
      std::string out;
      for (DType d : ds)
        out += (out.empty() ? "" : ", ") + dtypeStr(d);
      return out;
    };
    std::vector<DType> got;
    for (Value *v : op.operands()) {
      Type *e = v->type()->elementType();
      if (!e->isScalar()) {
        error(op, fmt::format("{} takes ({}), got an operand of type {}", symbol, list(f->args),
                              v->type()->str()));
        return;
      }
      got.push_back(e->dtype());
    }
    if (got != f->args) {
      error(op, fmt::format("{} takes ({}), got ({})", symbol, list(f->args), list(got)));
      return;
    }
    Type *r = op.result()->type()->elementType();
    if (!r->isScalar() || r->dtype() != f->result)
      error(op, fmt::format("{} returns {}, but the result type is {}", symbol, dtypeStr(f->result),
                            op.result()->type()->str()));
  }

  // fp8 values only load, store, move (shape ops, select), bitcast and
  // convert: an op that computes on them (arithmetic, compares, math,
  // reductions by kind, dot, atomics) is an error.
  bool verifyNoFp8Arithmetic(Operation &op) {
    bool computes = false;
    switch (op.opcode()) {
    case Opcode::FPExt:
    case Opcode::FPTrunc:
    case Opcode::Bitcast:
    case Opcode::Select:
    case Opcode::AddPtr:
      return true;
    case Opcode::Reduce:
    case Opcode::Scan:
      computes = op.attrs().has("kind");
      break;
    case Opcode::Dot:
      // fp8 operands multiply exactly (the dot widens them or takes fp8
      // tensor-core instructions); the accumulator is not fp8.
      computes = !(isFp8(op.operand(0)->type()->dtype()) && isFp8(op.operand(1)->type()->dtype()));
      if (!computes && isFp8(op.operand(2)->type()->dtype()))
        computes = true;
      break;
    case Opcode::AtomicRMW:
    case Opcode::AtomicCAS:
      computes = true;
      break;
    default:
      computes = op.hasTrait(OpTrait::Elementwise);
      break;
    }
    if (!computes)
      return true;
    auto isFp8Value = [](Value *v) {
      Type *e = v->type()->elementType();
      if (auto *p = dyn_cast<PointerType>(e))
        e = p->pointee();
      return e->isScalar() && isFp8(e->dtype());
    };
    for (Value *v : op.operands())
      if (isFp8Value(v)) {
        error(op, fmt::format("on {}: fp8 values only load, store, bitcast and convert; "
                              "convert to fp16 or fp32 first",
                              v->type()->elementType()->str()));
        return false;
      }
    return true;
  }

  void verifyTypes(Operation &op) {
    const auto &ops = op.operands();
    if (op.hasTrait(OpTrait::SameOperandsAndResultType) || op.hasTrait(OpTrait::SameOperandsType)) {
      for (unsigned i = 1; i < ops.size(); ++i)
        if (ops[i]->type() != ops[0]->type()) {
          error(op, fmt::format("operands have different types: {} and {}", ops[0]->type()->str(),
                                ops[i]->type()->str()));
          return;
        }
      if (op.hasTrait(OpTrait::SameOperandsAndResultType) && op.numResults() &&
          !expectType(op, op.result()->type(), ops[0]->type(), "result type"))
        return;
    }
    if (op.hasTrait(OpTrait::Elementwise) && op.numResults())
      for (Value *v : ops)
        if (!sameShape(op, op.result(), v, "operand"))
          return;

    if (!verifyNoFp8Arithmetic(op))
      return;
    switch (op.opcode()) {
    case Opcode::Constant:
      return verifyConstant(op);
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Mul:
    case Opcode::Div:
    case Opcode::Rem:
    case Opcode::FloorDiv:
    case Opcode::Neg:
      if (!ops[0]->type()->isIntLike() && !ops[0]->type()->isFloatLike())
        error(op, fmt::format("needs integer or float operands, got {}", ops[0]->type()->str()));
      return;
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Xor:
    case Opcode::Shl:
    case Opcode::AShr:
    case Opcode::LShr:
      if (!ops[0]->type()->isIntLike())
        error(op, fmt::format("needs integer operands, got {}", ops[0]->type()->str()));
      return;
    case Opcode::CmpI:
    case Opcode::CmpF:
      return verifyCompare(op);
    case Opcode::SExt:
    case Opcode::ZExt:
    case Opcode::Trunc:
    case Opcode::FPExt:
    case Opcode::FPTrunc:
    case Opcode::SIToFP:
    case Opcode::UIToFP:
    case Opcode::FPToSI:
    case Opcode::FPToUI:
    case Opcode::Bitcast:
    case Opcode::PtrToInt:
    case Opcode::IntToPtr:
      return verifyCast(op);
    case Opcode::Exp:
    case Opcode::Exp2:
    case Opcode::Log:
    case Opcode::Log2:
    case Opcode::Sqrt:
    case Opcode::Rsqrt:
    case Opcode::Sin:
    case Opcode::Cos:
    case Opcode::Floor:
    case Opcode::Ceil:
    case Opcode::Erf:
    case Opcode::Fma:
      if (!ops[0]->type()->isFloatLike())
        error(op, fmt::format("needs float operands, got {}", ops[0]->type()->str()));
      return;
    case Opcode::Abs:
      if (!ops[0]->type()->isIntLike() && !ops[0]->type()->isFloatLike())
        error(op, fmt::format("needs integer or float operands, got {}", ops[0]->type()->str()));
      return;
    case Opcode::Max:
    case Opcode::Min:
      return verifyMinMax(op);
    case Opcode::ExternElementwise:
      return verifyExternElementwise(op);
    case Opcode::InlineAsm:
      if (std::string problem = inlineAsmProblem(op); !problem.empty())
        error(op, problem);
      return;
    case Opcode::Select:
      if (!isI1Like(ops[0]->type()))
        error(op, fmt::format("condition must be i1, got {}", ops[0]->type()->str()));
      else if (ops[1]->type() != ops[2]->type())
        error(op, fmt::format("operands have different types: {} and {}", ops[1]->type()->str(),
                              ops[2]->type()->str()));
      else
        expectType(op, op.result()->type(), ops[1]->type(), "result type");
      return;
    case Opcode::ProgramId:
    case Opcode::NumPrograms: {
      int64_t axis = *op.attrs().getInt("axis");
      if (axis < 0 || axis > 2)
        error(op, fmt::format("axis must be 0, 1 or 2, got {}", axis));
      expectType(op, op.result()->type(), ctx_.i32(), "result type");
      return;
    }
    case Opcode::SpecialRegister: {
      std::string name = *op.attrs().getString("name");
      if (name != "globaltimer" && name != "smid")
        error(op, fmt::format("name must be \"globaltimer\" or \"smid\", got \"{}\"", name));
      else
        expectType(op, op.result()->type(), name == "globaltimer" ? ctx_.i64() : ctx_.i32(),
                   "result type");
      return;
    }
    case Opcode::MakeRange:
      return verifyMakeRange(op);
    case Opcode::Splat:
    case Opcode::Broadcast:
    case Opcode::ExpandDims:
    case Opcode::Reshape:
    case Opcode::Trans:
      return verifyShapeOp(op);
    case Opcode::Gather:
      return verifyGather(op);
    case Opcode::AddPtr:
      if (!ops[0]->type()->isPointerLike())
        error(op, fmt::format("needs a pointer, got {}", ops[0]->type()->str()));
      else if (!ops[1]->type()->isIntLike())
        error(op, fmt::format("needs an integer offset, got {}", ops[1]->type()->str()));
      else
        expectType(op, op.result()->type(), ops[0]->type(), "result type");
      return;
    case Opcode::Load:
    case Opcode::Store:
    case Opcode::AtomicRMW:
    case Opcode::AtomicCAS:
      return verifyMemory(op);
    case Opcode::Reduce:
    case Opcode::Scan:
      return verifyReduceScan(op);
    case Opcode::MapElementwise:
      return verifyMapElementwise(op);
    case Opcode::Dot:
      return verifyDot(op);
    case Opcode::Assert:
      if (!isI1Like(ops[0]->type()))
        error(op, fmt::format("condition must be i1, got {}", ops[0]->type()->str()));
      return;
    case Opcode::Print:
      return;
    case Opcode::ConvertLayout:
      if (!ops[0]->type()->isTensor() ||
          withoutLayout(ops[0]->type()) != withoutLayout(op.result()->type()))
        error(op, fmt::format("must keep the shape and element type: {} -> {}",
                              ops[0]->type()->str(), op.result()->type()->str()));
      return;
    case Opcode::LocalAlloc:
    case Opcode::LocalLoad:
    case Opcode::LocalStore:
      return verifyLocal(op);
    case Opcode::Barrier:
      return;
    case Opcode::TmaLoad: {
      Type *map = ops[0]->type();
      if (!map->isPointer() || map->isTensor())
        error(op, fmt::format("takes a tensormap pointer first, got {}", map->str()));
      for (size_t i = 1; i < ops.size(); ++i)
        if (ops[i]->type()->isTensor() || ops[i]->type()->dtype() != DType::I32)
          error(op, fmt::format("coordinate {} must be an i32 scalar, got {}", i - 1,
                                ops[i]->type()->str()));
      if (!op.result()->type()->isTensor() || op.result()->type()->rank() + 1 != ops.size())
        error(op, fmt::format("gives a tensor of one dimension per coordinate, got {}",
                              op.result()->type()->str()));
      return;
    }
    case Opcode::TmaStore: {
      Type *map = ops[0]->type();
      if (!map->isPointer() || map->isTensor())
        error(op, fmt::format("takes a tensormap pointer first, got {}", map->str()));
      if (!ops[1]->type()->isTensor() || ops[1]->type()->rank() + 2 != ops.size())
        error(op, fmt::format("stores a tensor of one dimension per coordinate, got {}",
                              ops[1]->type()->str()));
      for (size_t i = 2; i < ops.size(); ++i)
        if (ops[i]->type()->isTensor() || ops[i]->type()->dtype() != DType::I32)
          error(op, fmt::format("coordinate {} must be an i32 scalar, got {}", i - 2,
                                ops[i]->type()->str()));
      return;
    }
    case Opcode::AsyncCopy: // the cp.async ring: made by --pipeline
    case Opcode::AsyncWait:
    case Opcode::RingView:
      return verifyRing(op);
    case Opcode::Call:
      return verifyCall(op);
    case Opcode::Return:
      if (op.parentOp())
        error(op, "must be in a function body, not in a region");
      else if (typesOf(ops) != fn_->resultTypes())
        error(op, fmt::format("returns {} but the function returns {}", typeListStr(typesOf(ops)),
                              typeListStr(fn_->resultTypes())));
      return;
    case Opcode::Yield:
    case Opcode::Condition:
      return verifyTerminatorParent(op);
    case Opcode::For:
      return verifyFor(op);
    case Opcode::While:
      return verifyWhile(op);
    case Opcode::If:
      return verifyIf(op);
    }
  }

  void verifyConstant(Operation &op) {
    Type *t = op.result()->type();
    const Attribute *v = op.attrs().get("value");
    if (t->isPointerLike())
      error(op, fmt::format("cannot be a pointer ({})", t->str()));
    else if (t->isFloatLike() && !v->isFloat())
      error(op, fmt::format("of type {} needs a float value, got {}", t->str(), v->str()));
    else if (t->isIntLike() && !v->isInt())
      error(op, fmt::format("of type {} needs an integer value, got {}", t->str(), v->str()));
  }

  void verifyCompare(Operation &op) {
    Type *t = op.operand(0)->type();
    std::string pred = *op.attrs().getString("predicate");
    if (op.is(Opcode::CmpI)) {
      if (!t->isIntLike() && !t->isPointerLike())
        return (void)error(op, fmt::format("needs integer or pointer operands, got {}", t->str()));
      if (!oneOf(pred, {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"}))
        return (void)error(op, fmt::format("unknown integer predicate \"{}\"", pred));
    } else {
      if (!t->isFloatLike())
        return (void)error(op, fmt::format("needs float operands, got {}", t->str()));
      if (!oneOf(pred, {"oeq", "one", "olt", "ole", "ogt", "oge", "ord", "ueq", "une", "ult", "ule",
                        "ugt", "uge", "uno"}))
        return (void)error(op, fmt::format("unknown float predicate \"{}\"", pred));
    }
    expectType(op, op.result()->type(), ctx_.withElement(t, ctx_.i1()), "result type");
  }

  void verifyCast(Operation &op) {
    Type *from = op.operand(0)->type(), *to = op.result()->type();
    auto bad = [&](std::string_view why) {
      error(op, fmt::format("cannot cast {} to {}: {}", from->str(), to->str(), why));
    };
    Type *fe = from->elementType(), *te = to->elementType();
    auto bits = [](Type *t) { return dtypeBits(t->dtype()); };
    bool fInt = from->isIntLike(), tInt = to->isIntLike();
    bool fFloat = from->isFloatLike(), tFloat = to->isFloatLike();
    auto isFp8Type = [](Type *t) { return t->isScalar() && isFp8(t->dtype()); };
    // fp8 bitcasts (same width, checked below), or converts with fpext and
    // fptrunc to and from fp16, bf16 and fp32 only.
    if ((isFp8Type(fe) || isFp8Type(te)) && !op.is(Opcode::Bitcast)) {
      auto wide = [](Type *t) {
        return t->isScalar() &&
               (t->dtype() == DType::F16 || t->dtype() == DType::BF16 || t->dtype() == DType::F32);
      };
      if (!op.is(Opcode::FPExt) && !op.is(Opcode::FPTrunc))
        return bad("fp8 converts with fpext and fptrunc only");
      if (!(isFp8Type(fe) ? wide(te) : wide(fe)))
        return bad("fp8 converts only to and from fp16, bf16 and fp32");
    }
    switch (op.opcode()) {
    case Opcode::SExt:
    case Opcode::ZExt:
      if (!fInt || !tInt)
        return bad("needs integers");
      if (bits(te) <= bits(fe))
        return bad("the result must be wider");
      return;
    case Opcode::Trunc:
      if (!fInt || !tInt)
        return bad("needs integers");
      if (bits(te) >= bits(fe))
        return bad("the result must be narrower");
      return;
    case Opcode::FPExt:
      if (!fFloat || !tFloat)
        return bad("needs floats");
      if (bits(te) <= bits(fe))
        return bad("the result must be wider");
      return;
    case Opcode::FPTrunc:
      // fp16 <-> bf16 converts between two 16-bit formats: also a rounding.
      if (!fFloat || !tFloat)
        return bad("needs floats");
      if (bits(te) > bits(fe) || fe == te)
        return bad("the result must be narrower or another 16-bit format");
      return;
    case Opcode::SIToFP:
    case Opcode::UIToFP:
      if (!fInt || !tFloat)
        return bad("needs an integer operand and a float result");
      return;
    case Opcode::FPToSI:
    case Opcode::FPToUI:
      if (!fFloat || !tInt)
        return bad("needs a float operand and an integer result");
      return;
    case Opcode::Bitcast:
      if (fe->isPointer() != te->isPointer())
        return bad("use ptrtoint/inttoptr between pointers and integers");
      if (!fe->isPointer() && bits(fe) != bits(te))
        return bad("the bit widths differ");
      return;
    case Opcode::PtrToInt:
      if (!fe->isPointer() || !tInt)
        return bad("needs a pointer operand and an integer result");
      return;
    case Opcode::IntToPtr:
      if (!fInt || !te->isPointer())
        return bad("needs an integer operand and a pointer result");
      return;
    default:
      return;
    }
  }

  void verifyMinMax(Operation &op) {
    Type *t = op.operand(0)->type();
    std::optional<std::string> nan = op.attrs().getString("nan");
    if (t->isFloatLike()) {
      if (!nan || !oneOf(*nan, {"propagate", "number"}))
        error(op, "on floats needs nan = \"propagate\" or \"number\"");
    } else if (t->isIntLike()) {
      if (op.attrs().has("nan"))
        error(op, "on integers takes no 'nan' attribute");
    } else {
      error(op, fmt::format("needs integer or float operands, got {}", t->str()));
    }
  }

  void verifyMakeRange(Operation &op) {
    int64_t start = *op.attrs().getInt("start"), end = *op.attrs().getInt("end");
    if (end <= start)
      return (void)error(op, fmt::format("end ({}) must be greater than start ({})", end, start));
    if (start < 0 || end > (int64_t(1) << 31))
      return (void)error(op, fmt::format("range [{}, {}) does not fit in i32", start, end));
    if (!isPowerOfTwo(end - start))
      return (void)error(op,
                         fmt::format("size {} (end - start) is not a power of two", end - start));
    expectType(op, withoutLayout(op.result()->type()), ctx_.tensor({end - start}, ctx_.i32()),
               "result type");
  }

  void verifyShapeOp(Operation &op) {
    Type *in = op.operand(0)->type(), *out = op.result()->type();
    if (op.is(Opcode::Splat)) {
      if (in->isTensor())
        return (void)error(op, fmt::format("needs a scalar or pointer operand, got {}", in->str()));
      if (!out->isTensor() || out->elementType() != in)
        error(op, fmt::format("result must be a tensor of {}, got {}", in->str(), out->str()));
      return;
    }
    if (!in->isTensor() || !out->isTensor())
      return (void)error(op, fmt::format("needs tensors, got {} -> {}", in->str(), out->str()));
    if (in->elementType() != out->elementType())
      return (void)error(op,
                         fmt::format("changes the element type: {} -> {}", in->str(), out->str()));
    const auto &is = in->shape();
    const auto &os = out->shape();
    switch (op.opcode()) {
    case Opcode::Broadcast: {
      bool good = is.size() == os.size();
      for (size_t i = 0; good && i < is.size(); ++i)
        good = is[i] == os[i] || is[i] == 1;
      if (!good)
        error(op, fmt::format("cannot broadcast {} to {}", shapeStr(is), shapeStr(os)));
      return;
    }
    case Opcode::ExpandDims: {
      int64_t axis = *op.attrs().getInt("axis");
      if (axis < 0 || axis > int64_t(is.size()))
        return (void)error(op, fmt::format("axis {} is out of range for rank {}", axis, is.size()));
      std::vector<int64_t> want = is;
      want.insert(want.begin() + axis, 1);
      if (want != os)
        error(op, fmt::format("of {} at axis {} gives {}, not {}", shapeStr(is), axis,
                              shapeStr(want), shapeStr(os)));
      return;
    }
    case Opcode::Reshape:
      if (in->numElements() != out->numElements())
        error(op, fmt::format("from {} ({} elements) to {} ({} elements)", shapeStr(is),
                              in->numElements(), shapeStr(os), out->numElements()));
      return;
    case Opcode::Trans: {
      std::vector<int64_t> order = op.attrs().get("order")->getIntArray();
      std::vector<int64_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      bool perm = sorted.size() == is.size();
      for (size_t i = 0; perm && i < sorted.size(); ++i)
        perm = sorted[i] == int64_t(i);
      if (!perm)
        return (void)error(op, fmt::format("order {} is not a permutation of the {} dimensions",
                                           shapeStr(order), is.size()));
      std::vector<int64_t> want;
      for (int64_t o : order)
        want.push_back(is[o]);
      if (want != os)
        error(op, fmt::format("of {} by {} gives {}, not {}", shapeStr(is), shapeStr(order),
                              shapeStr(want), shapeStr(os)));
      return;
    }
    default:
      return;
    }
  }

  // gather src, index {axis}: one rank, index's dimensions equal src's but
  // along axis, integer indices; the result is index's shape of src's
  // element type.
  void verifyGather(Operation &op) {
    Type *src = op.operand(0)->type(), *idx = op.operand(1)->type(), *out = op.result()->type();
    if (!src->isTensor() || !idx->isTensor())
      return (void)error(op, fmt::format("needs a tensor source and a tensor index, got {} and {}",
                                         src->str(), idx->str()));
    if (!idx->elementType()->isScalar() || !isInteger(idx->dtype()) || idx->dtype() == DType::I1)
      return (void)error(op, fmt::format("needs an integer index, got {}", idx->str()));
    const auto &ss = src->shape();
    const auto &is = idx->shape();
    if (ss.size() != is.size())
      return (void)error(op, fmt::format("source and index must have the same rank, got {} and {}",
                                         shapeStr(ss), shapeStr(is)));
    int64_t axis = *op.attrs().getInt("axis");
    if (axis < 0 || axis >= int64_t(ss.size()))
      return (void)error(op, fmt::format("axis {} is out of range for rank {}", axis, ss.size()));
    for (size_t d = 0; d < ss.size(); ++d)
      if (int64_t(d) != axis && ss[d] != is[d])
        return (void)error(op, fmt::format("index {} must match source {} in every dimension but "
                                           "axis {}",
                                           shapeStr(is), shapeStr(ss), axis));
    if (!out->isTensor() || out->shape() != is || out->elementType() != src->elementType())
      error(op, fmt::format("result must be {} of {}, got {}", shapeStr(is),
                            src->elementType()->str(), out->str()));
  }

  void verifyMemory(Operation &op) {
    const auto &ops = op.operands();
    Type *ptr = ops[0]->type();
    Type *pointee = pointeeLike(ptr);
    if (!pointee)
      return (void)error(
          op, fmt::format("needs a pointer or a tensor of pointers, got {}", ptr->str()));
    auto checkMask = [&](unsigned i) {
      if (i >= ops.size())
        return;
      Type *want = ctx_.withElement(ptr, ctx_.i1());
      if (ops[i]->type() != want)
        error(op, fmt::format("mask must be {} (i1 in the pointer's shape), got {}", want->str(),
                              ops[i]->type()->str()));
    };
    if (!op.is(Opcode::Load) && cast<PointerType>(ptr->elementType())->isConst())
      return (void)error(op, fmt::format("Cannot store to a constant pointer: {}", ptr->str()));
    // Cache hints: PTX's cache operators (a load's are not a store's) and
    // Triton's eviction policies.
    if (std::optional<std::string> cache = op.attrs().getString("cache")) {
      bool load = op.is(Opcode::Load);
      if (load ? !oneOf(*cache, {"ca", "cg", "cv"}) : !oneOf(*cache, {"wb", "cg", "cs", "wt"}))
        error(op, fmt::format("cache must be one of {}, got \"{}\"",
                              load ? "\"ca\", \"cg\", \"cv\"" : "\"wb\", \"cg\", \"cs\", \"wt\"",
                              *cache));
    }
    if (std::optional<std::string> evict = op.attrs().getString("evict");
        evict && !oneOf(*evict, {"evict_first", "evict_last"}))
      error(op, fmt::format("evict must be \"evict_first\" or \"evict_last\", got \"{}\"", *evict));
    switch (op.opcode()) {
    case Opcode::Load:
      expectType(op, op.result()->type(), pointee,
                 "result type (the pointee type in the pointer's shape)");
      checkMask(1);
      if (ops.size() > 2)
        expectType(op, ops[2]->type(), pointee, "'other'");
      return;
    case Opcode::Store:
      expectType(op, ops[1]->type(), pointee, "stored value");
      checkMask(2);
      return;
    case Opcode::AtomicRMW: {
      std::string kind = *op.attrs().getString("kind");
      if (!oneOf(kind, {"add", "max", "min", "and", "or", "xor", "xchg"}))
        error(op, fmt::format("unknown kind \"{}\"", kind));
      expectType(op, ops[1]->type(), pointee, "value");
      checkMask(2);
      expectType(op, op.result()->type(), pointee, "result type");
      return;
    }
    case Opcode::AtomicCAS:
      expectType(op, ops[1]->type(), pointee, "compared value");
      expectType(op, ops[2]->type(), pointee, "new value");
      expectType(op, op.result()->type(), pointee, "result type");
      return;
    default:
      return;
    }
  }

  // A shared buffer is a tensor whose layout, when it has one, is shared;
  // the values moving in and out have its shape and element type.
  // The cp.async ring (docs/codegen/pipelining.md): a shared buffer of
  // [stages, tile...]; async_copy fills the stage `index % stages` from
  // pointers in the tile's shape, ring_view reads one as a tensor.
  void verifyRing(Operation &op) {
    if (op.is(Opcode::AsyncWait)) {
      if (*op.attrs().getInt("pending") < 0)
        error(op, fmt::format("pending must be >= 0, got {}", *op.attrs().getInt("pending")));
      return;
    }
    auto *ring = dyn_cast<TensorType>(op.operand(0)->type());
    if (!ring || !isa<SharedLayout>(ring->layout()) || ring->dims().size() < 2)
      return (void)error(op, fmt::format("needs a ring: a local_alloc buffer of [stages, tile...] "
                                         "in a shared layout, got {}",
                                         op.operand(0)->type()->str()));
    Type *index = op.operand(1)->type();
    if (!index->isScalar() || !index->isIntLike())
      return (void)error(
          op, fmt::format("stage index must be an integer scalar, got {}", index->str()));
    std::vector<int64_t> tile(ring->dims().begin() + 1, ring->dims().end());
    Type *tileType = ctx_.tensor(tile, ring->element());
    if (op.is(Opcode::RingView)) {
      auto *view = dyn_cast<TensorType>(op.result()->type());
      if (view && isa<SharedLayout>(view->layout()))
        return (void)error(op, fmt::format("result {} must not have a shared layout", view->str()));
      expectType(op, withoutLayout(op.result()->type()), tileType, "result (one stage)");
      return;
    }
    Type *ptr = op.operand(2)->type();
    if (!ptr->isTensor() || pointeeLike(ptr) == nullptr ||
        withoutLayout(pointeeLike(ptr)) != tileType)
      return (void)error(op, fmt::format("pointers {} must be a tile of pointers to the ring's "
                                         "stage, {}",
                                         ptr->str(), tileType->str()));
    if (op.numOperands() > 3 && op.operand(3)->type() != ctx_.withElement(ptr, ctx_.i1()))
      error(op, fmt::format("mask must be {} (i1 in the pointers' shape), got {}",
                            ctx_.withElement(ptr, ctx_.i1())->str(), op.operand(3)->type()->str()));
  }

  void verifyLocal(Operation &op) {
    Value *buf = op.is(Opcode::LocalAlloc) ? op.result() : op.operand(0);
    auto *t = dyn_cast<TensorType>(buf->type());
    if (!t)
      return (void)error(op, fmt::format("needs a tensor buffer, got {}", buf->type()->str()));
    if (t->layout() && !isa<SharedLayout>(t->layout()))
      return (void)error(op, fmt::format("buffer {} must have a shared layout", t->str()));
    Value *data = op.is(Opcode::LocalAlloc)  ? (op.numOperands() ? op.operand(0) : nullptr)
                  : op.is(Opcode::LocalLoad) ? op.result()
                                             : op.operand(1);
    if (!data)
      return;
    if (withoutLayout(data->type()) != withoutLayout(t))
      return (void)error(op, fmt::format("buffer {} and value {} differ in shape or element type",
                                         t->str(), data->type()->str()));
    if (auto *dt = dyn_cast<TensorType>(data->type()); dt && isa<SharedLayout>(dt->layout()))
      error(op, fmt::format("value {} must not have a shared layout", dt->str()));
  }

  void verifyReduceScan(Operation &op) {
    bool isReduce = op.is(Opcode::Reduce);
    int64_t axis = *op.attrs().getInt("axis");
    Type *in = op.operand(0)->type();
    if (!in->isTensor())
      return (void)error(op, fmt::format("needs a tensor, got {}", in->str()));
    if (axis < 0 || axis >= int64_t(in->rank()))
      return (void)error(op, fmt::format("axis {} is out of range for {}", axis, in->str()));
    for (Value *v : op.operands())
      if (v->type()->shape() != in->shape())
        return (void)error(op, fmt::format("operands have different shapes: {} and {}", in->str(),
                                           v->type()->str()));
    std::vector<int64_t> reduced = in->shape();
    reduced.erase(reduced.begin() + axis);
    std::optional<std::string> kind = op.attrs().getString("kind");
    if (kind) {
      if (op.numRegions() != 0 || op.numOperands() != 1 || op.numResults() != 1)
        return (void)error(op, "with a kind takes one operand, one result and no region");
      Type *elem = in->elementType();
      if (isReduce && !oneOf(*kind, {"sum", "max", "min", "argmax", "argmin"}))
        return (void)error(op, fmt::format("unknown kind \"{}\"", *kind));
      if (!isReduce && !oneOf(*kind, {"cumsum", "cumprod"}))
        return (void)error(op, fmt::format("unknown kind \"{}\"", *kind));
      if (!in->isIntLike() && !in->isFloatLike())
        return (void)error(op, fmt::format("needs integer or float elements, got {}", in->str()));
      if (kind->starts_with("arg"))
        elem = ctx_.i32();
      Type *want = isReduce ? ctx_.withShape(ctx_.withElement(in, elem), reduced) : in;
      expectType(op, isReduce ? withoutLayout(op.result()->type()) : op.result()->type(), want,
                 "result type");
      return;
    }
    if (op.numRegions() != 1)
      return (void)error(op, "without a kind needs a combiner region");
    if (op.numResults() != op.numOperands())
      return (void)error(
          op, fmt::format("has {} operand(s) but {} result(s)", op.numOperands(), op.numResults()));
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      Type *t = op.operand(i)->type();
      Type *want = isReduce ? ctx_.withShape(t, reduced) : t;
      Type *got = isReduce ? withoutLayout(op.result(i)->type()) : op.result(i)->type();
      if (!expectType(op, got, want, fmt::format("result #{}", i)))
        return;
    }
    std::vector<Type *> elems;
    for (Value *v : op.operands())
      elems.push_back(v->type()->elementType());
    std::vector<Type *> args = elems;
    args.insert(args.end(), elems.begin(), elems.end());
    if (typesOf(op.body().arguments()) != args)
      error(op, fmt::format("combiner arguments must be {}, got {}", typeListStr(args),
                            typeListStr(typesOf(op.body().arguments()))));
    checkTerminator(op, op.body(), Opcode::Yield, elems, "combiner");
  }

  // Operands and results of one shape; the body takes each operand's pack
  // elements in turn and yields each result's.
  void verifyMapElementwise(Operation &op) {
    int64_t pack = *op.attrs().getInt("pack");
    std::vector<int64_t> shape = op.operand(0)->type()->shape();
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (pack < 1 || n % pack != 0)
      return (void)error(op, fmt::format("pack {} does not divide the {} elements", pack, n));
    std::vector<Type *> args, yields;
    for (Value *v : op.operands()) {
      if (v->type()->shape() != shape)
        return (void)error(op, fmt::format("operands have different shapes: {} and {}",
                                           op.operand(0)->type()->str(), v->type()->str()));
      args.insert(args.end(), size_t(pack), v->type()->elementType());
    }
    for (Value *r : op.results()) {
      if (r->type()->shape() != shape)
        return (void)error(
            op, fmt::format("result {} is not of the operands' shape", r->type()->str()));
      yields.insert(yields.end(), size_t(pack), r->type()->elementType());
    }
    if (typesOf(op.body().arguments()) != args)
      return (void)error(op, fmt::format("body arguments must be {}, got {}", typeListStr(args),
                                         typeListStr(typesOf(op.body().arguments()))));
    checkTerminator(op, op.body(), Opcode::Yield, yields, "body");
  }

  void verifyDot(Operation &op) {
    Type *a = op.operand(0)->type(), *b = op.operand(1)->type(), *c = op.operand(2)->type();
    if (a->rank() != 2 || b->rank() != 2 || c->rank() != 2)
      return (void)error(
          op, fmt::format("needs 2-D tensors, got {} x {} + {}", a->str(), b->str(), c->str()));
    const auto &as = a->shape(), &bs = b->shape(), &cs = c->shape();
    if (as[1] != bs[0] || cs[0] != as[0] || cs[1] != bs[1])
      return (void)error(op, fmt::format("shapes do not agree: {} x {} + {} (needs [M, K] x [K, "
                                         "N] + [M, N])",
                                         shapeStr(as), shapeStr(bs), shapeStr(cs)));
    bool fp8 = isFp8(a->dtype()) && isFp8(b->dtype()); // the two formats may differ
    if (a->elementType() != b->elementType() && !fp8)
      return (void)error(
          op, fmt::format("operands have different element types: {} and {}", a->str(), b->str()));
    if (!a->isIntLike() && !a->isFloatLike())
      return (void)error(op, fmt::format("needs integer or float elements, got {}", a->str()));
    if (a->isFloatLike() != c->isFloatLike())
      return (void)error(
          op, fmt::format("accumulator {} does not suit operands {}", c->str(), a->str()));
    std::string precision = *op.attrs().getString("input_precision");
    if (!oneOf(precision, {"ieee", "tf32", "tf32x3"}))
      error(op, fmt::format("unknown input_precision \"{}\"", precision));
    expectType(op, op.result()->type(), c, "result type");
  }

  void verifyCall(Operation &op) {
    std::string callee = *op.attrs().getString("callee");
    Function *fn = module_.lookup(callee);
    if (!fn)
      return (void)error(op, fmt::format("calls unknown function '@{}'", callee));
    std::vector<Type *> params;
    for (unsigned i = 0; i < fn->numArguments(); ++i)
      params.push_back(fn->argument(i)->type());
    if (typesOf(op.operands()) != params)
      error(op, fmt::format("passes {} to '@{}', which takes {}",
                            typeListStr(typesOf(op.operands())), callee, typeListStr(params)));
    if (typesOf(op.results()) != fn->resultTypes())
      error(op, fmt::format("expects results {} from '@{}', which returns {}",
                            typeListStr(typesOf(op.results())), callee,
                            typeListStr(fn->resultTypes())));
  }

  // yield and condition must sit in a region of the right kind of op; the
  // types are checked by that op (checkTerminator).
  void verifyTerminatorParent(Operation &op) {
    Operation *parent = op.parentOp();
    if (op.is(Opcode::Condition)) {
      if (!parent || !parent->is(Opcode::While) || op.parentBlock() != &parent->body(0))
        error(op, "must end the 'before' region of a 'while'");
      return;
    }
    if (!parent)
      error(op, "must be in a region of for, if, while, reduce or scan, not a function body");
    else if (parent->is(Opcode::While) && op.parentBlock() == &parent->body(0))
      error(op, "cannot end the 'before' region of a 'while'; use 'condition'");
  }

  /// Checks that `block` ends in `term` with operands of `types`.
  void checkTerminator(Operation &op, Block &block, Opcode term, const std::vector<Type *> &types,
                       std::string_view regionName) {
    Operation *t = block.terminator();
    if (!t || !t->is(term))
      return (void)error(op, fmt::format("{} region must end with '{}'", regionName, opName(term)));
    std::vector<Type *> got = typesOf(t->operands());
    if (term == Opcode::Condition) {
      if (got.empty() || got[0] != ctx_.i1())
        return (void)error(*t, "needs an i1 scalar condition first");
      got.erase(got.begin());
    }
    if (got != types)
      error(*t, fmt::format("passes {} but the {} region of '{}' needs {}", typeListStr(got),
                            regionName, op.name(), typeListStr(types)));
  }

  void verifyFor(Operation &op) {
    Type *iv = op.operand(0)->type();
    if (!iv->isScalar() || !iv->isIntLike() || iv == ctx_.i1())
      return (void)error(op, fmt::format("bounds must be integer scalars, got {}", iv->str()));
    if (op.operand(1)->type() != iv || op.operand(2)->type() != iv)
      return (void)error(op, fmt::format("lower bound, upper bound and step must have one type, "
                                         "got {}, {}, {}",
                                         iv->str(), op.operand(1)->type()->str(),
                                         op.operand(2)->type()->str()));
    std::vector<Value *> inits(op.operands().begin() + 3, op.operands().end());
    std::vector<Type *> carried = typesOf(inits);
    if (typesOf(op.results()) != carried)
      return (void)error(op, fmt::format("results {} do not match the initial values {}",
                                         typeListStr(typesOf(op.results())), typeListStr(carried)));
    std::vector<Type *> args = {iv};
    args.insert(args.end(), carried.begin(), carried.end());
    if (typesOf(op.body().arguments()) != args)
      return (void)error(op, fmt::format("body arguments must be {} (induction variable, then "
                                         "carried values), got {}",
                                         typeListStr(args),
                                         typeListStr(typesOf(op.body().arguments()))));
    checkTerminator(op, op.body(), Opcode::Yield, carried, "body");
  }

  void verifyWhile(Operation &op) {
    std::vector<Type *> inits = typesOf(op.operands());
    std::vector<Type *> results = typesOf(op.results());
    if (typesOf(op.body(0).arguments()) != inits)
      return (void)error(op,
                         fmt::format("'before' arguments must be {}, got {}", typeListStr(inits),
                                     typeListStr(typesOf(op.body(0).arguments()))));
    if (typesOf(op.body(1).arguments()) != results)
      return (void)error(op, fmt::format("'after' arguments must be the result types {}, got {}",
                                         typeListStr(results),
                                         typeListStr(typesOf(op.body(1).arguments()))));
    checkTerminator(op, op.body(0), Opcode::Condition, results, "before");
    checkTerminator(op, op.body(1), Opcode::Yield, inits, "after");
  }

  void verifyIf(Operation &op) {
    if (op.operand(0)->type() != ctx_.i1())
      return (void)error(
          op, fmt::format("condition must be an i1 scalar, got {}", op.operand(0)->type()->str()));
    std::vector<Type *> results = typesOf(op.results());
    for (unsigned r = 0; r < 2; ++r) {
      if (op.body(r).numArguments())
        error(op, fmt::format("{} region takes no arguments", r ? "else" : "then"));
      checkTerminator(op, op.body(r), Opcode::Yield, results, r ? "else" : "then");
    }
  }

  Module &module_;
  IRContext &ctx_;
  DiagnosticEngine &diag_;
  Function *fn_ = nullptr;
  bool ok_ = true;
  // Values defined so far on the path from the function entry to the op being
  // checked; only membership is asked, so the hash order never shows.
  std::unordered_set<Value *> visible_;
  // Types of the function already checked by verifyValueType, and the warps
  // of its first layout (for a function without num_warps).
  std::unordered_set<Type *> checkedTypes_;
  std::optional<std::pair<int64_t, Type *>> layoutWarps_;
};

} // namespace

bool verifyModule(Module &module, DiagnosticEngine &diag) { return Verifier(module, diag).run(); }

} // namespace tk
