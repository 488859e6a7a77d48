// print and assert -> the target's printf and assertion failure
// (TargetInfo::printf, assertFail: CUDA's `vprintf` and `__assertfail`;
// on amdgcn ROCm's ockl hostcall printf and a trap).
//
//   print %x {prefix = "x: "} : tensor<4xfp32, L>
//   -> per element the thread owns:
//        if (owner) printf("pid (%d, %d, %d) idx (%d) x: %.9g\n", pid0, pid1, pid2, i,
//        (double)x)
//
// The lines follow the interpreter's: "pid (x, y, z) idx (i, j)
// <prefix><value>", "(operand k) " before the value when several are
// printed, hex values zero-padded to the element's width; floats are
// promoted to double, as C varargs do. Floats print with
// %.9g (fp32; fp64 %.17g, fp16/bf16 %.5g/%.4g): enough digits to round-trip,
// not the interpreter's shortest form. Copies (threads holding an element
// another thread owns) stay silent, so each element prints once; the order of
// lines across threads is the GPU's.
//
// assert reports its message, file, line and function on an owner whose
// element is false; the kernel stops with an error the driver reports
// (CUDA_ERROR_ASSERT; on AMD GPUs a trap). The IR has no debug option, so
// asserts are always compiled in, as the interpreter always checks them.
#include "lowering/codegen/FunctionLowering.h"

#include <fmt/format.h>
#include <llvm/IR/Module.h>

#include <map>

namespace tk {
namespace {

std::string escapePercent(std::string_view s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%')
      out += '%';
  }
  return out;
}

// The conversion and value of one printed element: the printf argument (i64
// or double) and its format.
std::pair<std::string, llvm::Value *> printArg(llvm::IRBuilderBase &b, Type *t, llvm::Value *v,
                                               bool hex) {
  Type *e = t->elementType();
  llvm::Type *i64 = b.getInt64Ty();
  if (e->isPointer())
    return {"0x%llx", b.CreatePtrToInt(v, i64)};
  DType d = e->dtype();
  if (hex) {
    unsigned bits = dtypeBits(d);
    llvm::Value *asInt = v->getType()->isIntegerTy() ? v : b.CreateBitCast(v, b.getIntNTy(bits));
    return {fmt::format("0x%0{}llx", std::max(1u, dtypeBytes(d)) * 2), b.CreateZExt(asInt, i64)};
  }
  if (isFp8(d)) // the pattern: fp8 has no printf conversion
    return {"0x%02llx", b.CreateZExt(v, i64)};
  if (isFloat(d)) {
    const char *f = d == DType::F64   ? "%.17g"
                    : d == DType::F32 ? "%.9g"
                    : d == DType::F16 ? "%.5g"
                                      : "%.4g";
    return {f, b.CreateFPExt(v, b.getDoubleTy())};
  }
  if (isSigned(d) && d != DType::I1)
    return {"%lld", b.CreateSExt(v, i64)};
  return {"%llu", b.CreateZExt(v, i64)};
}

} // namespace

bool FunctionLowering::lowerDebug(Operation &op) {
  llvm::LLVMContext &ctx = b_.getContext();
  llvm::Function *fn = b_.GetInsertBlock()->getParent();
  // Runs `body` on the threads where `pred` (null: all) holds.
  auto guarded = [&](llvm::Value *pred, auto body) {
    if (!pred) {
      body();
      return;
    }
    auto *then = llvm::BasicBlock::Create(ctx, "dbg.then", fn);
    auto *cont = llvm::BasicBlock::Create(ctx, "dbg.cont", fn);
    b_.CreateCondBr(pred, then, cont);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
  };

  if (op.is(Opcode::Assert)) {
    Value *cond = op.operand(0);
    std::string message = op.attrs().getString("message").value_or("");
    const SourceManager &sm = diag_.sourceManager();
    SourceLoc loc = op.loc();
    bool known = loc.isValid() && loc.buffer < sm.numBuffers();
    std::string file = known ? sm.fileName(loc.buffer) : "<unknown>";
    unsigned line = known ? sm.displayLine(loc) : 0;
    std::vector<llvm::Value *> owners = ownerPredicates(cond);
    const Regs &regs = get(cond);
    for (size_t r = 0; r < regs.size(); ++r) {
      llvm::Value *bad = b_.CreateNot(regs[r]);
      if (owners[r])
        bad = b_.CreateAnd(bad, owners[r]);
      guarded(bad, [&] { target_.assertFail(b_, message, file, line, fn->getName().str()); });
    }
    return true;
  }

  std::string prefix = escapePercent(op.attrs().getString("prefix").value_or(""));
  bool hex = op.attrs().getBool("hex").value_or(false);
  std::vector<llvm::Value *> pid = {target_.programId(b_, 0), target_.programId(b_, 1),
                                    target_.programId(b_, 2)};
  // One global per distinct format (a tensor's registers share theirs).
  std::map<std::string, llvm::Value *> formats;
  auto formatString = [&](const std::string &format) {
    llvm::Value *&g = formats[format];
    if (!g)
      g = genericString(b_, format, "printf.fmt");
    return g;
  };
  // One call: the format and its arguments (the pid first).
  auto emit = [&](const std::string &format, std::vector<llvm::Value *> args) {
    std::vector<llvm::Value *> all = pid;
    all.insert(all.end(), args.begin(), args.end());
    target_.printf(b_, formatString(format), format.size() + 1, all);
  };
  std::string head = "pid (%d, %d, %d)";
  if (op.numOperands() == 0) {
    // A message: once per program (thread 0).
    llvm::Value *t0 = b_.CreateICmpEQ(
        b_.CreateAdd(b_.CreateMul(warp_, b_.getInt32(warpSize_)), lane_), b_.getInt32(0));
    guarded(t0, [&] { emit(head + " " + prefix + "\n", {}); });
    return true;
  }
  for (unsigned k = 0; k < op.numOperands(); ++k) {
    Value *v = op.operand(k);
    std::string which = op.numOperands() > 1 ? fmt::format("(operand {}) ", k) : "";
    std::vector<llvm::Value *> owners = ownerPredicates(v);
    const Regs &regs = get(v);
    std::vector<std::vector<llvm::Value *>> coords;
    if (v->type()->isTensor())
      coords = coordinates(v);
    for (size_t r = 0; r < regs.size(); ++r) {
      auto [valueFormat, value] = printArg(b_, v->type(), regs[r], hex);
      std::string idx;
      std::vector<llvm::Value *> args;
      if (!coords.empty()) {
        idx = " idx (";
        for (size_t d = 0; d < coords[r].size(); ++d) {
          idx += d ? ", %d" : "%d";
          args.push_back(coords[r][d]);
        }
        idx += ")";
      }
      args.push_back(value);
      guarded(owners[r],
              [&] { emit(head + idx + " " + prefix + which + valueFormat + "\n", args); });
    }
  }
  return true;
}

} // namespace tk
