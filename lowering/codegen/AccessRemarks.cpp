// The remarks of global loads and stores (docs/remarks.md): `vectorize`, the
// width of each access and, below 16 bytes, the fact that limited it and
// what would lift it; `coalesce`, the layout and how a warp's accesses fall
// into 32-byte sectors. Made where the width is decided for good (the
// lowering, LoadStoreToLLVM.cpp), from the same numbers: the layout's
// elements per thread, the pointers' contiguity and divisibility and the
// mask's constancy (analysis/AxisInfo.h).
#include "analysis/AxisInfo.h"
#include "lang/Remarks.h"
#include "lowering/codegen/FunctionLowering.h"

#include <fmt/format.h>

#include <algorithm>

namespace tk {
namespace {

int64_t at(const std::vector<int64_t> &v, unsigned d) {
  return v.empty() ? 1 : v[std::min<size_t>(d, v.size() - 1)];
}

// The pointer an addptr chain starts from (its first operands, through
// splats): the kernel's base pointer.
Value *rootPointer(Value *p) {
  for (int depth = 0; depth < 32; ++depth) {
    Operation *def = p->definingOp();
    if (!def || !(def->is(Opcode::AddPtr) || def->is(Opcode::Splat) || def->is(Opcode::Broadcast) ||
                  def->is(Opcode::ExpandDims) || def->is(Opcode::ConvertLayout)))
      return p;
    p = def->operand(0);
  }
  return p;
}

} // namespace

void FunctionLowering::remarkAccess(Operation &op, const ThreadMap &map, int64_t vec, int64_t eb) {
  // load(ptr, mask?, other?), store(ptr, value, mask?), and the pipeliner's
  // async_copy(ring, slot, ptr, mask?): a load issued ahead with cp.async.
  Value *ptr = nullptr, *mask = nullptr;
  const char *kind = "load";
  if (op.is(Opcode::AsyncCopy)) {
    ptr = op.operand(2);
    mask = op.numOperands() > 3 ? op.operand(3) : nullptr;
    kind = "cp.async load";
  } else if (op.is(Opcode::Load)) {
    ptr = op.operand(0);
    mask = op.numOperands() > 1 ? op.operand(1) : nullptr;
  } else {
    ptr = op.operand(0);
    mask = op.numOperands() > 2 ? op.operand(2) : nullptr;
    kind = "store";
  }
  Type *tile = ptr->type();
  std::string elem = cast<PointerType>(tile->elementType())->pointee()->str();
  std::string what = fmt::format("{} of {}", kind, elem);
  unsigned fast = map.order()[0];
  const ThreadMap::Dim &d = map.dim(fast);
  const AxisInfo &info = axis_.get(ptr);
  int64_t contiguity = at(info.contiguity, fast);
  int64_t divisibility = at(info.divisibility, fast); // bytes, of the pointers
  int64_t maskRun = mask ? axis_.maskAlignment(mask, fast) : 0;
  int64_t perThread = std::min(d.size, d.extent);
  int64_t bytes = vec * eb, maxBytes = std::max<int64_t>(16, eb);
  auto numbers = [&](Remark &r) {
    r.with("vector_bytes", bytes)
        .with("elem_bytes", eb)
        .with("axis", fast)
        .with("contiguity", contiguity)
        .with("divisibility", divisibility)
        .with("per_thread", perThread);
    if (mask)
      r.with("mask_constancy", maskRun);
  };

  // vectorize
  if (bytes >= maxBytes) {
    numbers(remarks_->add(op.loc(), "vectorize", RemarkStatus::Passed, fn_.name(),
                          fmt::format("{}: {}-byte vector accesses ({} elements) along axis {}",
                                      what, bytes, vec, fast)));
  } else {
    // The smallest of the limits, in elements; ties go to the first, the
    // most actionable.
    int64_t aligned = std::max<int64_t>(1, divisibility / eb);
    struct Limit {
      int64_t elems;
      std::string why;
    };
    std::vector<Limit> limits;
    if (contiguity < 16 / eb) {
      std::string fix =
          map.rank() > 1
              ? fmt::format("axis {} is the most contiguous one: make the stride its offsets are "
                            "multiplied by a tk.constexpr or 1 (an integer argument equal to 1 "
                            "is specialised), or transpose the access so that axis {} has "
                            "stride 1",
                            fast, fast)
              : "the offsets are not known to be consecutive: use a stride that is a tk.constexpr "
                "or 1, or state runs the compiler cannot see with tk.max_contiguous(offs, N)";
      limits.push_back(
          {contiguity, fmt::format("the pointers are consecutive in runs of {} "
                                   "element{} along axis {}; {}",
                                   contiguity, contiguity == 1 ? "" : "s", fast, fix)});
    }
    if (aligned * eb < 16) {
      Value *root = rootPointer(ptr);
      int64_t rootDiv = at(axis_.get(root).divisibility, fast);
      std::string why;
      if (rootDiv < 16)
        why = fmt::format("the base pointer is known aligned to {} byte{} only: declare it "
                          "16-byte aligned (`*{}:16` in the signature; Python does it for aligned "
                          "tensors) or tk.multiple_of(ptr, 16)",
                          rootDiv, rootDiv == 1 ? "" : "s", elem);
      else
        why = fmt::format("the offsets are multiples of {} element{} only (pointers aligned to {} "
                          "bytes): make the row stride a multiple of {} elements "
                          "(tk.multiple_of(stride, {}), or an integer argument divisible by 16, "
                          "which is specialised; a constexpr stride)",
                          aligned, aligned == 1 ? "" : "s", divisibility, 16 / eb, 16 / eb);
      limits.push_back({aligned, why});
    }
    if (mask && maskRun * eb < 16)
      limits.push_back(
          {maskRun, fmt::format("the mask is uniform on runs of {} element{} only along axis {}: "
                                "make its bound a multiple of {} (an integer argument divisible "
                                "by 16 is specialised; tk.multiple_of(n, 16)), or drop the mask "
                                "where the tile is known in bounds",
                                maskRun, maskRun == 1 ? "" : "s", fast, 16 / eb)});
    bool mma = isa<MmaLayout>(layoutOf(ptr));
    if (perThread * eb < 16 && !mma)
      limits.push_back(
          {perThread, fmt::format("each thread holds {} element{} along axis {} (a {}-element "
                                  "tile over {} warps): a larger tile or fewer warps",
                                  perThread, perThread == 1 ? "" : "s", fast, tile->numElements(),
                                  map.numWarps())});
    if (perThread * eb < 16 && mma) {
      // The epilogue stores straight from the accumulator's registers
      // (AccelerateDot.cpp): no shared-memory round trip, at the mma
      // layout's width. A fact of the dot, not something to change here.
      numbers(remarks_->add(op.loc(), "vectorize", RemarkStatus::Analysis, fn_.name(),
                            fmt::format("{}: {}-byte accesses from the dot's accumulator "
                                        "registers (its mma layout holds {} consecutive "
                                        "elements per thread along axis {}); no conversion "
                                        "through shared memory",
                                        what, bytes, perThread, fast)));
      limits.clear();
    }
    if (!limits.empty()) {
      const Limit &limit =
          *std::min_element(limits.begin(), limits.end(),
                            [](const Limit &a, const Limit &b) { return a.elems < b.elems; });
      numbers(
          remarks_->add(op.loc(), "vectorize", RemarkStatus::Missed, fn_.name(),
                        fmt::format("{}: {}-byte accesses, not 16: {}", what, bytes, limit.why)));
    }
  }

  // coalesce: one warp-wide access is warpSize lanes x `bytes`; lanes that are
  // consecutive along `fast` cover runs of consecutive addresses, each run
  // at least one 32-byte sector.
  int64_t lanes =
      std::min<int64_t>(map.warpSize(), std::max<int64_t>(1, tile->numElements() / vec));
  int64_t warpBytes = lanes * bytes;
  int64_t runBytes = std::min({warpBytes, std::min(d.threads * vec, contiguity) * eb});
  runBytes = std::max(runBytes, bytes);
  int64_t runs = std::max<int64_t>(1, warpBytes / runBytes);
  int64_t sectors = runs * ((runBytes + 31) / 32);
  int64_t efficiency = 100 * warpBytes / (sectors * 32);
  std::string layout = layoutOf(ptr)->str();
  Remark &c =
      efficiency >= 100
          ? remarks_->add(op.loc(), "coalesce", RemarkStatus::Analysis, fn_.name(),
                          fmt::format("{}: {}; a warp accesses {} bytes in {} 32-byte sectors",
                                      what, layout, warpBytes, sectors))
          : remarks_->add(op.loc(), "coalesce", RemarkStatus::Missed, fn_.name(),
                          fmt::format("{}: {}; a warp accesses {} bytes in {} 32-byte sectors "
                                      "({}% of the bytes moved are used): consecutive lanes "
                                      "cover runs of {} bytes only; make the addresses "
                                      "consecutive along the fastest axis",
                                      what, layout, warpBytes, sectors, efficiency, runBytes));
  c.with("warp_bytes", warpBytes).with("sectors", sectors).with("efficiency", efficiency);
}

} // namespace tk
