// Data movement of reshape, trans, scan and atomics (see DataMovement.h).
#include "analysis/DataMovement.h"

#include "ir/Layout.h"

#include <algorithm>

namespace tk {
namespace {

const LayoutAttr *layoutOf(const Value *v) {
  auto *t = dyn_cast<TensorType>(v->type());
  return t ? t->layout() : nullptr;
}

int64_t slotBytes(Type *t) {
  Type *e = t->elementType();
  return e->isPointer() ? 8 : std::max<int64_t>(1, dtypeBytes(e->dtype()));
}

int64_t partBytes(Type *t) {
  int64_t numel = t->isTensor() ? t->numElements() : 1;
  return ((numel + 1) * slotBytes(t) + 15) / 16 * 16;
}

std::vector<int64_t> unravel(int64_t linear, const std::vector<int64_t> &shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = linear % shape[d];
    linear /= shape[d];
  }
  return c;
}

int64_t ravel(const std::vector<int64_t> &c, const std::vector<int64_t> &shape) {
  int64_t lin = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    lin = lin * shape[d] + c[d];
  return lin;
}

// Whether every element each thread needs under `outL` (of `outShape`) is
// one it holds under `inL` (of `inShape`), in the same operand register on
// every thread; `source` maps a result element's row-major index to the
// operand's. `pick` receives per result register that operand register.
template <class Source>
bool sameThreadPick(const LayoutAttr *inL, const std::vector<int64_t> &inShape,
                    const LayoutAttr *outL, const std::vector<int64_t> &outShape, Source source,
                    std::vector<int64_t> *pick) {
  ThreadMap inMap(inL, inShape), outMap(outL, outShape);
  if (inMap.numThreads() != outMap.numThreads())
    return false;
  std::vector<std::vector<int64_t>> inElems = inMap.elementsPerThread(),
                                    outElems = outMap.elementsPerThread();
  std::vector<int64_t> chosen(static_cast<size_t>(outMap.numRegisters()), -1);
  std::vector<std::pair<int64_t, int64_t>> held; // (element, first register), sorted
  for (size_t t = 0; t < outElems.size(); ++t) {
    held.clear();
    for (size_t r = 0; r < inElems[t].size(); ++r)
      held.push_back({inElems[t][r], static_cast<int64_t>(r)});
    std::stable_sort(held.begin(), held.end(),
                     [](const auto &x, const auto &y) { return x.first < y.first; });
    for (size_t j = 0; j < outElems[t].size(); ++j) {
      int64_t want = source(outElems[t][j]);
      auto it = std::lower_bound(held.begin(), held.end(), std::make_pair(want, int64_t(-1)));
      if (it == held.end() || it->first != want)
        return false;
      // A thread holding the element in several registers (copies) may use
      // any of them: prefer the one already chosen.
      int64_t reg = it->second;
      for (auto c = it; c != held.end() && c->first == want; ++c)
        if (c->second == chosen[j])
          reg = c->second;
      if (chosen[j] >= 0 && chosen[j] != reg)
        return false;
      chosen[j] = reg;
    }
  }
  if (pick)
    *pick = std::move(chosen);
  return true;
}

} // namespace

bool reshapeTransIsLocal(const Operation &op, std::vector<int64_t> *pick) {
  Value *in = op.operand(0), *res = op.result();
  const LayoutAttr *inL = layoutOf(in), *outL = layoutOf(res);
  if (!inL || !outL)
    return false;
  const std::vector<int64_t> &inShape = in->type()->shape(), &outShape = res->type()->shape();
  std::vector<int64_t> order;
  if (op.is(Opcode::Trans)) {
    order = op.attrs().get("order")->getIntArray();
    if (order.size() != outShape.size())
      return false;
  }
  // The operand's row-major index of the result element with row-major
  // index `lin`.
  auto source = [&](int64_t lin) {
    if (order.empty())
      return lin;
    std::vector<int64_t> c = unravel(lin, outShape), ic(inShape.size());
    for (size_t i = 0; i < order.size(); ++i)
      ic[static_cast<size_t>(order[i])] = c[i];
    return ravel(ic, inShape);
  };
  return sameThreadPick(inL, inShape, outL, outShape, source, pick);
}

bool layoutsHoldSameElements(const LayoutAttr *from, const LayoutAttr *to,
                             const std::vector<int64_t> &shape, std::vector<int64_t> *pick) {
  if (!from || !to || isa<SharedLayout>(from) || isa<SharedLayout>(to))
    return false;
  return sameThreadPick(
      from, shape, to, shape, [](int64_t lin) { return lin; }, pick);
}

bool convertIsLocal(const Operation &op, std::vector<int64_t> *pick) {
  if (!op.is(Opcode::ConvertLayout))
    return false;
  return layoutsHoldSameElements(layoutOf(op.operand(0)), layoutOf(op.result()),
                                 op.result()->type()->shape(), pick);
}

bool scanIsInThread(const Operation &op) {
  const LayoutAttr *l = layoutOf(op.operand(0));
  if (!l)
    return false;
  ThreadMap map(l, op.operand(0)->type()->shape());
  const ThreadMap::Dim &d = map.dim(static_cast<unsigned>(*op.attrs().getInt("axis")));
  int64_t lanes = std::clamp<int64_t>(d.extent / d.size, 1, d.threads);
  int64_t warps = std::clamp<int64_t>(d.extent / (d.size * d.threads), 1, d.warps);
  return lanes == 1 && warps == 1;
}

bool scanIsParallel(const Operation &op) {
  std::optional<std::string> kind = op.attrs().getString("kind");
  const LayoutAttr *l = layoutOf(op.operand(0));
  Type *t = op.operand(0)->type();
  if (!kind || (*kind != "cumsum" && *kind != "cumprod") || !l || scanIsInThread(op) ||
      (!t->elementType()->isPointer() && t->elementType()->dtype() == DType::I1))
    return false;
  ThreadMap map(l, t->shape());
  const ThreadMap::Dim &d = map.dim(static_cast<unsigned>(*op.attrs().getInt("axis")));
  return d.tile() <= d.extent;
}

// Warps along the axis x tile repetitions x lines: the partials a parallel
// scan exchanges (0 when one warp covers the axis).
int64_t parallelScanSlots(const Operation &op) {
  Type *t = op.operand(0)->type();
  ThreadMap map(layoutOf(op.operand(0)), t->shape());
  const ThreadMap::Dim &d = map.dim(static_cast<unsigned>(*op.attrs().getInt("axis")));
  if (d.warps == 1)
    return 0;
  return t->numElements() / d.extent * (d.extent / d.tile()) * d.warps;
}

bool atomicSharesResult(const Operation &op) {
  Value *res = op.result();
  if (!res->hasUses())
    return false;
  const LayoutAttr *l = layoutOf(res);
  if (!l)
    return !res->type()->isTensor(); // a scalar: thread 0 issues it
  ThreadMap map(l, res->type()->shape());
  for (unsigned d = 0; d < map.rank(); ++d)
    if (map.dim(d).tile() > map.dim(d).extent)
      return true;
  return false;
}

int64_t scanScratchPart(const Operation &op, unsigned i) {
  int64_t offset = 0;
  for (unsigned k = 0; k < i; ++k)
    offset += partBytes(op.operand(k)->type());
  return offset;
}

int64_t movementScratchBytes(const Operation &op) {
  switch (op.opcode()) {
  case Opcode::Reshape:
  case Opcode::Trans:
    return reshapeTransIsLocal(op) ? 0 : partBytes(op.result()->type());
  case Opcode::Gather:
    // The source is staged whole, row-major (codegen/ShapeToLLVM.cpp).
    return partBytes(op.operand(0)->type());
  case Opcode::AtomicRMW:
  case Opcode::AtomicCAS:
    return atomicSharesResult(op) ? partBytes(op.result()->type()) : 0;
  case Opcode::Scan:
    if (scanIsInThread(op))
      return 0;
    if (scanIsParallel(op)) {
      int64_t slots = parallelScanSlots(op);
      return slots ? (slots * slotBytes(op.operand(0)->type()) + 15) / 16 * 16 : 0;
    }
    return scanScratchPart(op, op.numOperands());
  default:
    return 0;
  }
}

} // namespace tk
