#include "ir/Layout.h"

#include "ir/IRContext.h"
#include "ir/Module.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>

namespace tk {

// ir/DotLayout.cpp: the mma and dot_operand kinds.
void distributeDotLayout(const LayoutAttr *layout, std::vector<ThreadMap::Dim> &dims,
                         std::vector<unsigned> &order, int64_t &numWarps);
const LayoutAttr *buildDotLayout(IRContext &ctx, std::string_view kind,
                                 const std::vector<LayoutParam> &params, std::string &error);

namespace {

bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t x : v)
    p *= x;
  return p;
}

std::string arrayStr(const std::vector<int64_t> &v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

// The per-dimension distribution of a layout, without the tensor's extents.
// A slice is its parent with one dimension dropped: the lane and warp strides
// of the kept dimensions stay those of the parent, which is what makes threads
// that differ only along the dropped dimension hold the same elements.
void distribute(const LayoutAttr *layout, std::vector<ThreadMap::Dim> &dims,
                std::vector<unsigned> &order, int64_t &numWarps) {
  if (auto *b = dyn_cast<BlockedLayout>(layout)) {
    unsigned rank = b->rank();
    dims.assign(rank, {});
    order.clear();
    int64_t laneStride = 1, warpStride = 1;
    for (int64_t o : b->order()) {
      unsigned d = static_cast<unsigned>(o);
      order.push_back(d);
      dims[d].size = b->sizePerThread()[d];
      dims[d].threads = b->threadsPerWarp()[d];
      dims[d].warps = b->warpsPerCTA()[d];
      dims[d].laneStride = laneStride;
      dims[d].warpStride = warpStride;
      laneStride *= dims[d].threads;
      warpStride *= dims[d].warps;
    }
    numWarps = product(b->warpsPerCTA());
    return;
  }
  if (isa<MmaLayout>(layout) || isa<DotOperandLayout>(layout) || isa<AMDMmaLayout>(layout))
    return distributeDotLayout(layout, dims, order, numWarps);
  assert(isa<SliceLayout>(layout) && "a shared layout is not distributed over threads");
  auto *s = cast<SliceLayout>(layout);
  distribute(s->parent(), dims, order, numWarps);
  dims.erase(dims.begin() + s->dim());
  std::vector<unsigned> kept;
  for (unsigned d : order)
    if (d != s->dim())
      kept.push_back(d > s->dim() ? d - 1 : d);
  order = std::move(kept);
}

} // namespace

//===----------------------------------------------------------------------===//
// The layout attributes
//===----------------------------------------------------------------------===//

const BlockedLayout *BlockedLayout::get(IRContext &ctx, std::vector<int64_t> sizePerThread,
                                        std::vector<int64_t> threadsPerWarp,
                                        std::vector<int64_t> warpsPerCTA,
                                        std::vector<int64_t> order) {
  assert(validateBlocked(sizePerThread, threadsPerWarp, warpsPerCTA, order).empty());
  std::unique_ptr<LayoutAttr> l(new BlockedLayout(std::move(sizePerThread),
                                                  std::move(threadsPerWarp), std::move(warpsPerCTA),
                                                  std::move(order)));
  return cast<BlockedLayout>(ctx.layout(std::move(l)));
}

std::string BlockedLayout::str() const {
  return fmt::format("blocked<size = {}, threads = {}, warps = {}, order = {}>",
                     arrayStr(sizePerThread_), arrayStr(threadsPerWarp_), arrayStr(warpsPerCTA_),
                     arrayStr(order_));
}

const SliceLayout *SliceLayout::get(IRContext &ctx, unsigned dim, const LayoutAttr *parent) {
  assert(layoutRank(parent) >= 2 && dim < layoutRank(parent));
  std::unique_ptr<LayoutAttr> l(new SliceLayout(dim, parent));
  return cast<SliceLayout>(ctx.layout(std::move(l)));
}

std::string SliceLayout::str() const {
  return fmt::format("slice<dim = {}, parent = {}>", dim_, parent_->str());
}

const SharedLayout *SharedLayout::get(IRContext &ctx, int64_t vec, int64_t perPhase,
                                      int64_t maxPhase, std::vector<int64_t> order) {
  assert(validateShared(vec, perPhase, maxPhase, order).empty());
  std::unique_ptr<LayoutAttr> l(new SharedLayout(vec, perPhase, maxPhase, std::move(order)));
  return cast<SharedLayout>(ctx.layout(std::move(l)));
}

std::string SharedLayout::str() const {
  return fmt::format("shared<vec = {}, per_phase = {}, max_phase = {}, order = {}>", vec_,
                     perPhase_, maxPhase_, arrayStr(order_));
}

int64_t SharedLayout::offset(const std::vector<int64_t> &shape,
                             const std::vector<int64_t> &coords) const {
  assert(shape.size() == rank() && coords.size() == rank());
  size_t fast = static_cast<size_t>(order_[0]);
  int64_t col = coords[fast], rowLength = shape[fast];
  if (rank() == 1)
    return col;
  // The slower dimensions, slowest first, make the row index.
  int64_t row = 0;
  for (size_t i = rank(); i-- > 1;) {
    size_t d = static_cast<size_t>(order_[i]);
    row = row * shape[d] + coords[d];
  }
  // The phase only flips column-group bits that stay inside the row: the
  // number of phases is the largest power of two dividing the row's groups,
  // at most max_phase (a short row is swizzled less, never out of bounds).
  int64_t groups = std::max<int64_t>(1, rowLength / vec_);
  int64_t phases = std::min(maxPhase_, groups & -groups);
  int64_t phase = (row / perPhase_) % phases;
  int64_t swizzled = col < groups * vec_ ? ((col / vec_) ^ phase) * vec_ + col % vec_ : col;
  return row * rowLength + swizzled;
}

std::string validateShared(int64_t vec, int64_t perPhase, int64_t maxPhase,
                           const std::vector<int64_t> &order) {
  const char *names[3] = {"vec", "per_phase", "max_phase"};
  int64_t values[3] = {vec, perPhase, maxPhase};
  for (int i = 0; i < 3; ++i)
    if (!isPowerOfTwo(values[i]))
      return fmt::format("{} = {} is not a positive power of two", names[i], values[i]);
  if (order.empty())
    return "a shared layout needs at least one dimension";
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != int64_t(i))
      return fmt::format("order {} is not a permutation of the {} dimensions", arrayStr(order),
                         order.size());
  return {};
}

unsigned layoutRank(const LayoutAttr *layout) {
  if (auto *b = dyn_cast<BlockedLayout>(layout))
    return b->rank();
  if (auto *sh = dyn_cast<SharedLayout>(layout))
    return sh->rank();
  if (isa<MmaLayout>(layout) || isa<DotOperandLayout>(layout) || isa<AMDMmaLayout>(layout))
    return 2;
  return layoutRank(cast<SliceLayout>(layout)->parent()) - 1;
}

int64_t functionWarpSize(Function &fn) {
  return fn.attrs().getInt("threads_per_warp").value_or(kWarpSize);
}

int64_t layoutWarpSize(const LayoutAttr *layout) {
  if (auto *b = dyn_cast<BlockedLayout>(layout))
    return product(b->threadsPerWarp());
  if (auto *s = dyn_cast<SliceLayout>(layout))
    return layoutWarpSize(s->parent());
  if (auto *op = dyn_cast<DotOperandLayout>(layout))
    return layoutWarpSize(op->parent());
  if (auto *amd = dyn_cast<AMDMmaLayout>(layout))
    return amd->warpSize();
  return kWarpSize; // NVIDIA's mma layouts
}

int64_t layoutNumWarps(const LayoutAttr *layout) {
  if (auto *b = dyn_cast<BlockedLayout>(layout))
    return product(b->warpsPerCTA());
  if (isa<SharedLayout>(layout))
    return 1;
  if (auto *op = dyn_cast<DotOperandLayout>(layout))
    layout = op->parent();
  if (auto *mma = dyn_cast<MmaLayout>(layout))
    return mma->warps()[0] * mma->warps()[1];
  if (auto *amd = dyn_cast<AMDMmaLayout>(layout))
    return amd->warps()[0] * amd->warps()[1];
  return layoutNumWarps(cast<SliceLayout>(layout)->parent());
}

std::string validateBlocked(const std::vector<int64_t> &spt, const std::vector<int64_t> &tpw,
                            const std::vector<int64_t> &wpc, const std::vector<int64_t> &order) {
  size_t rank = spt.size();
  if (rank == 0)
    return "a blocked layout needs at least one dimension";
  if (tpw.size() != rank || wpc.size() != rank || order.size() != rank)
    return fmt::format("size, threads, warps and order must have one length, got {}, {}, {}, {}",
                       rank, tpw.size(), wpc.size(), order.size());
  for (const auto *v : {&spt, &tpw, &wpc})
    for (int64_t x : *v)
      if (!isPowerOfTwo(x))
        return fmt::format("{} has {}, not a positive power of two", arrayStr(*v), x);
  if (!isWarpSize(product(tpw)))
    return fmt::format("threads {} multiply to {}, not a warp size (32, or 64 on AMD's wave64)",
                       arrayStr(tpw), product(tpw));
  if (product(wpc) > 32)
    return fmt::format("warps {} multiply to {}, more than 32", arrayStr(wpc), product(wpc));
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < rank; ++i)
    if (sorted[i] != int64_t(i))
      return fmt::format("order {} is not a permutation of the {} dimensions", arrayStr(order),
                         rank);
  return {};
}

const BlockedLayout *makeBlockedLayout(IRContext &ctx, const std::vector<int64_t> &shape,
                                       const std::vector<int64_t> &order, int64_t vec,
                                       int64_t numWarps, int64_t warpSize) {
  size_t rank = shape.size();
  assert(rank > 0 && order.size() == rank && "order must list every dimension");
  size_t fast = static_cast<size_t>(order.front());
  std::vector<int64_t> spt, tpw, wpc;
  for (size_t d = 0; d < rank; ++d) {
    spt.push_back(d == fast ? std::max<int64_t>(1, std::min(vec, shape[d])) : 1);
    tpw.push_back(1);
    wpc.push_back(1);
  }
  // Lanes first along the fastest dimension, as many as the shape has room
  // for; then the warps over what the lanes leave. Leftovers wrap on order[0].
  int64_t lanes = warpSize, warps = numWarps;
  for (int64_t d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
    tpw[d] = std::min(lanes, room);
    lanes /= tpw[d];
  }
  tpw[fast] *= lanes;
  for (int64_t d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / (spt[d] * tpw[d]));
    wpc[d] = std::min(warps, room);
    warps /= wpc[d];
  }
  wpc[fast] *= warps;
  return BlockedLayout::get(ctx, spt, tpw, wpc, order);
}

const BlockedLayout *defaultBlockedLayout(IRContext &ctx, const std::vector<int64_t> &shape,
                                          int64_t numWarps, int64_t warpSize) {
  std::vector<int64_t> order;
  for (size_t d = shape.size(); d-- > 0;)
    order.push_back(static_cast<int64_t>(d));
  return makeBlockedLayout(ctx, shape, order, 1, numWarps, warpSize);
}

const LayoutAttr *expandLayout(IRContext &ctx, const LayoutAttr *layout, unsigned axis) {
  if (auto *s = dyn_cast<SliceLayout>(layout); s && s->dim() == axis)
    return s->parent();
  std::vector<ThreadMap::Dim> dims;
  std::vector<unsigned> order;
  int64_t numWarps = 1;
  distribute(layout, dims, order, numWarps);
  // A slice of another dimension has no blocked form that keeps its exact
  // lanes; the result then is the default layout of the new rank, and the
  // lowering converts.
  if (!isa<BlockedLayout>(layout)) {
    std::vector<int64_t> shape(dims.size() + 1, 1);
    return defaultBlockedLayout(ctx, shape, numWarps, layoutWarpSize(layout));
  }
  auto *b = cast<BlockedLayout>(layout);
  std::vector<int64_t> spt = b->sizePerThread(), tpw = b->threadsPerWarp(), wpc = b->warpsPerCTA(),
                       order2;
  spt.insert(spt.begin() + axis, 1);
  tpw.insert(tpw.begin() + axis, 1);
  wpc.insert(wpc.begin() + axis, 1);
  for (int64_t o : b->order())
    order2.push_back(o >= int64_t(axis) ? o + 1 : o);
  // The new dimension has one element, so its place in the order does not
  // matter; it goes last.
  order2.push_back(axis);
  return BlockedLayout::get(ctx, spt, tpw, wpc, order2);
}

const LayoutAttr *buildLayout(IRContext &ctx, std::string_view kind,
                              const std::vector<LayoutParam> &params, std::string &error) {
  auto find = [&](std::string_view key) -> const LayoutParam * {
    for (const LayoutParam &p : params)
      if (p.key == key)
        return &p;
    return nullptr;
  };
  auto checkKeys = [&](std::initializer_list<std::string_view> keys) {
    for (const LayoutParam &p : params)
      if (std::find(keys.begin(), keys.end(), p.key) == keys.end()) {
        error = fmt::format("unknown parameter '{}' of a {} layout", p.key, kind);
        return false;
      }
    for (std::string_view k : keys)
      if (!find(k)) {
        error = fmt::format("{} layout needs '{}'", kind, k);
        return false;
      }
    return true;
  };
  if (kind == "blocked") {
    if (!checkKeys({"size", "threads", "warps", "order"}))
      return nullptr;
    std::vector<int64_t> arrays[4];
    const char *keys[4] = {"size", "threads", "warps", "order"};
    for (int i = 0; i < 4; ++i) {
      const auto *a = std::get_if<std::vector<int64_t>>(&find(keys[i])->value);
      if (!a) {
        error = fmt::format("'{}' of a blocked layout must be an integer array", keys[i]);
        return nullptr;
      }
      arrays[i] = *a;
    }
    error = validateBlocked(arrays[0], arrays[1], arrays[2], arrays[3]);
    if (!error.empty())
      return nullptr;
    return BlockedLayout::get(ctx, arrays[0], arrays[1], arrays[2], arrays[3]);
  }
  if (kind == "slice") {
    if (!checkKeys({"dim", "parent"}))
      return nullptr;
    const auto *dim = std::get_if<int64_t>(&find("dim")->value);
    const auto *parent = std::get_if<const LayoutAttr *>(&find("parent")->value);
    if (!dim || !parent) {
      error = "a slice layout needs an integer 'dim' and a layout 'parent'";
      return nullptr;
    }
    if (isa<SharedLayout>(*parent)) {
      error = "the parent of a slice layout must be distributed, not shared";
      return nullptr;
    }
    unsigned rank = layoutRank(*parent);
    if (rank < 2 || *dim < 0 || *dim >= int64_t(rank)) {
      error = fmt::format("slice dim {} is out of range for a parent of rank {} (a slice needs a "
                          "parent of rank 2 or more)",
                          *dim, rank);
      return nullptr;
    }
    return SliceLayout::get(ctx, static_cast<unsigned>(*dim), *parent);
  }
  if (kind == "shared") {
    if (!checkKeys({"vec", "per_phase", "max_phase", "order"}))
      return nullptr;
    int64_t ints[3];
    const char *keys[3] = {"vec", "per_phase", "max_phase"};
    for (int i = 0; i < 3; ++i) {
      const auto *v = std::get_if<int64_t>(&find(keys[i])->value);
      if (!v) {
        error = fmt::format("'{}' of a shared layout must be an integer", keys[i]);
        return nullptr;
      }
      ints[i] = *v;
    }
    const auto *order = std::get_if<std::vector<int64_t>>(&find("order")->value);
    if (!order) {
      error = "'order' of a shared layout must be an integer array";
      return nullptr;
    }
    error = validateShared(ints[0], ints[1], ints[2], *order);
    if (!error.empty())
      return nullptr;
    return SharedLayout::get(ctx, ints[0], ints[1], ints[2], *order);
  }
  if (const LayoutAttr *dot = buildDotLayout(ctx, kind, params, error); dot || !error.empty())
    return dot;
  error = fmt::format("unknown layout '{}' (blocked, slice, shared, mma, dot_operand, mfma, wmma)",
                      kind);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// ThreadMap
//===----------------------------------------------------------------------===//

ThreadMap::ThreadMap(const LayoutAttr *layout, const std::vector<int64_t> &shape)
    : warpSize_(layoutWarpSize(layout)) {
  distribute(layout, dims_, order_, numWarps_);
  assert(dims_.size() == shape.size() && "layout rank differs from the tensor rank");
  for (unsigned d = 0; d < rank(); ++d) {
    Dim &dim = dims_[d];
    dim.extent = shape[d];
    dim.perThread = dim.size * std::max<int64_t>(1, dim.extent / dim.tile());
    numRegisters_ *= dim.perThread;
  }
}

std::vector<int64_t> ThreadMap::registerIndex(int64_t reg) const {
  std::vector<int64_t> k(rank(), 0);
  for (unsigned d : order_) {
    k[d] = reg % dims_[d].perThread;
    reg /= dims_[d].perThread;
  }
  return k;
}

int64_t ThreadMap::registerOf(const std::vector<int64_t> &k) const {
  int64_t reg = 0;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it)
    reg = reg * dims_[*it].perThread + k[*it];
  return reg;
}

int64_t ThreadMap::registerOffset(int64_t reg, unsigned d) const {
  int64_t k = registerIndex(reg)[d];
  const Dim &dim = dims_[d];
  return (k / dim.size) * dim.tile() + k % dim.size;
}

int64_t ThreadMap::threadOffset(unsigned d, int64_t lane, int64_t warp) const {
  const Dim &dim = dims_[d];
  int64_t l = (lane / dim.laneStride) % dim.threads;
  int64_t w = (warp / dim.warpStride) % dim.warps;
  return (w * dim.threads + l) * dim.size;
}

std::vector<int64_t> ThreadMap::coords(int64_t reg, int64_t lane, int64_t warp) const {
  std::vector<int64_t> c(rank());
  for (unsigned d = 0; d < rank(); ++d)
    c[d] = (registerOffset(reg, d) + threadOffset(d, lane, warp)) % dims_[d].extent;
  return c;
}

std::vector<std::vector<int64_t>> ThreadMap::elementsPerThread() const {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(numThreads()));
  for (int64_t t = 0; t < numThreads(); ++t)
    for (int64_t r = 0; r < numRegisters_; ++r) {
      std::vector<int64_t> c = coords(r, t % warpSize_, t / warpSize_);
      int64_t linear = 0;
      for (unsigned d = 0; d < rank(); ++d)
        linear = linear * dims_[d].extent + c[d];
      out[t].push_back(linear);
    }
  return out;
}

std::vector<int64_t> constancyLeaders(const ThreadMap &map, const std::vector<int64_t> &constancy) {
  int64_t n = map.numRegisters();
  std::vector<int64_t> leader(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r)
    leader[static_cast<size_t>(r)] = r;
  if (constancy.size() != map.rank())
    return leader;
  bool any = false;
  for (int64_t k : constancy) {
    if (k < 1)
      return leader;
    any |= k > 1;
  }
  if (!any || n == 1)
    return leader;
  // Registers share when, along every dimension and for every thread, their
  // elements lie in the same block. Along dimension d an element's
  // coordinate is (register offset + thread offset) mod extent, so per
  // distinct register offset the blocks it gives under every distinct
  // thread offset (its signature along d) decide; the per-dimension
  // signatures together say whether two registers share. (Coordinates wrap
  // where the layout covers more than the shape, as in ThreadMap::coords.)
  std::vector<std::vector<int64_t>> dimSignature(static_cast<size_t>(n),
                                                 std::vector<int64_t>(map.rank()));
  for (unsigned d = 0; d < map.rank(); ++d) {
    std::vector<int64_t> threadOffsets;
    for (int64_t t = 0; t < map.numThreads(); ++t)
      threadOffsets.push_back(map.threadOffset(d, t % map.warpSize(), t / map.warpSize()));
    std::sort(threadOffsets.begin(), threadOffsets.end());
    threadOffsets.erase(std::unique(threadOffsets.begin(), threadOffsets.end()),
                        threadOffsets.end());
    int64_t extent = map.dim(d).extent;
    std::map<int64_t, int64_t> idOfOffset;
    std::map<std::vector<int64_t>, int64_t> idOfBlocks;
    for (int64_t r = 0; r < n; ++r) {
      int64_t offset = map.registerOffset(r, d);
      auto it = idOfOffset.find(offset);
      if (it == idOfOffset.end()) {
        std::vector<int64_t> blocks;
        for (int64_t t : threadOffsets)
          blocks.push_back((offset + t) % extent / constancy[d]);
        int64_t id =
            idOfBlocks.emplace(std::move(blocks), int64_t(idOfBlocks.size())).first->second;
        it = idOfOffset.emplace(offset, id).first;
      }
      dimSignature[static_cast<size_t>(r)][d] = it->second;
    }
  }
  std::map<std::vector<int64_t>, int64_t> first;
  for (int64_t r = 0; r < n; ++r)
    leader[static_cast<size_t>(r)] =
        first.emplace(dimSignature[static_cast<size_t>(r)], r).first->second;
  return leader;
}

} // namespace tk
