// local_alloc, local_load, local_store and barrier -> shared-memory accesses.
//
// A buffer (a tensor with a shared layout) lowers to one register: its base
// address in the kernel's shared array (its `scratch_offset`). Each element
// of a distributed value moves with one st.shared / ld.shared at the
// element's swizzled offset (SharedLayout: the column group XOR the row's
// phase), computed from the thread's coordinates:
//
//   %b = local_alloc %x : tensor<32x64xfp16, shared<vec = 8, per_phase = 1, max_phase = 8, ...>>
//   -> every thread stores its registers of %x at
//      row * 64 + ((col / 8) ^ (row % 8)) * 8 + col % 8      (fp16 elements)
//
// Threads holding copies of an element store the same value to the same
// place. The ordering of these accesses against other threads' is the
// `barrier` ops' business (--insert-barriers); barrier lowers to bar.sync.
#include "lowering/codegen/FunctionLowering.h"

namespace tk {
namespace {

// SharedLayout::offset with the coordinates as i32 values.
llvm::Value *sharedOffset(llvm::IRBuilderBase &b, const SharedLayout &layout,
                          const std::vector<int64_t> &shape,
                          const std::vector<llvm::Value *> &coords) {
  size_t fast = static_cast<size_t>(layout.order()[0]);
  llvm::Value *col = coords[fast];
  int64_t rowLength = shape[fast];
  if (layout.rank() == 1)
    return col;
  llvm::Value *row = b.getInt32(0);
  for (size_t i = layout.rank(); i-- > 1;) {
    size_t d = static_cast<size_t>(layout.order()[i]);
    row = b.CreateAdd(b.CreateMul(row, b.getInt32(shape[d])), coords[d]);
  }
  int64_t vec = layout.vec();
  int64_t groups = std::max<int64_t>(1, rowLength / vec);
  int64_t phases = std::min(layout.maxPhase(), groups & -groups);
  llvm::Value *swizzled = col;
  if (phases > 1) {
    llvm::Value *phase =
        b.CreateURem(b.CreateUDiv(row, b.getInt32(layout.perPhase())), b.getInt32(phases));
    llvm::Value *group = b.CreateXor(b.CreateUDiv(col, b.getInt32(vec)), phase);
    swizzled = b.CreateAdd(b.CreateMul(group, b.getInt32(vec)), b.CreateURem(col, b.getInt32(vec)));
    if (rowLength % vec) // the ragged tail of a row stays in place
      swizzled = b.CreateSelect(b.CreateICmpULT(col, b.getInt32(groups * vec)), swizzled, col);
  }
  return b.CreateAdd(b.CreateMul(row, b.getInt32(rowLength)), swizzled);
}

} // namespace

bool FunctionLowering::lowerSharedBuffer(Operation &op) {
  if (op.is(Opcode::Barrier)) {
    target_.barrier(b_);
    return true;
  }
  Value *buf = op.is(Opcode::LocalAlloc) ? op.result() : op.operand(0);
  auto *layout = dyn_cast<SharedLayout>(dyn_cast<TensorType>(buf->type())->layout());
  if (!layout)
    return unsupported(op, "on a buffer without a shared layout");
  if (op.is(Opcode::LocalAlloc)) {
    if (!op.attrs().getInt("scratch_offset"))
      return unsupported(op, "without a shared-memory offset (run --allocate-shared)");
    set(buf, {smem_});
  }
  llvm::Value *base = get(buf)[0];
  llvm::Type *storage = elementType(buf->type());
  bool isBool = storage->isIntegerTy(1);
  if (isBool)
    storage = b_.getInt8Ty();
  const std::vector<int64_t> &shape = buf->type()->shape();
  auto address = [&](const std::vector<llvm::Value *> &c) {
    return b_.CreateGEP(storage, base, sharedOffset(b_, *layout, shape, c));
  };

  Value *data = op.is(Opcode::LocalAlloc)   ? (op.numOperands() ? op.operand(0) : nullptr)
                : op.is(Opcode::LocalStore) ? op.operand(1)
                                            : op.result();
  if (!data)
    return true;
  if (isa<SharedLayout>(layoutOf(data)))
    return unsupported(op, "of a value in a shared layout");
  std::vector<std::vector<llvm::Value *>> coords = coordinates(data);
  if (op.is(Opcode::LocalLoad)) {
    Regs out;
    for (const auto &c : coords) {
      llvm::Value *v = b_.CreateLoad(storage, address(c));
      out.push_back(isBool ? b_.CreateTrunc(v, b_.getInt1Ty()) : v);
    }
    set(data, std::move(out));
    return true;
  }
  const Regs &src = get(data);
  for (size_t r = 0; r < src.size(); ++r)
    b_.CreateStore(isBool ? b_.CreateZExt(src[r], storage) : src[r], address(coords[r]));
  return true;
}

} // namespace tk
