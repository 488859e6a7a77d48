// Pointers and memory: addptr, load, store, atomic_rmw, atomic_cas, and the
// checks a GPU cannot make. Every element that is not masked off must lie
// wholly inside one registered buffer and be aligned to its size; reads of a
// tk-allocated buffer must hit bytes that were written. The first element
// that breaks a rule stops the run with an error at the op, naming the
// program, the element, the address and the nearest buffer.
#include "interpreter/InterpreterImpl.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace tk::interp {
namespace {

enum class AccessKind { Load, Store, Atomic };

std::string_view accessName(AccessKind k) {
  return k == AccessKind::Load ? "load" : k == AccessKind::Store ? "store" : "atomic";
}

// Checks one element's access; the last region hit is cached in `cache`,
// since consecutive elements almost always fall in the same buffer.
class AccessChecker {
public:
  AccessChecker(ProgramRunner &r, Operation &op, AccessKind kind, Type *ptrType, unsigned size)
      : r_(r), op_(op), kind_(kind), ptrType_(ptrType), size_(size) {}

  /// The buffer holding the element, or null after reporting an error.
  const MemoryMap::Region *check(uint64_t addr, int64_t elem) {
    const MemoryMap::Region *region = cache_;
    if (!region || addr < region->begin || addr + size_ > region->end || addr + size_ < addr) {
      region = r_.run().memory.find(addr, size_);
      if (!region)
        return outOfBounds(addr, elem), nullptr;
      cache_ = region;
    }
    if ((addr & (size_ - 1)) != 0) { // sizes are powers of two
      r_.fail(op_, fmt::format("misaligned {} in program {}: {} {} bytes at 0x{:x}, which is not "
                               "a multiple of {}",
                               accessName(kind_), r_.programStr(), where(elem), verb(), size_, addr,
                               size_));
      return nullptr;
    }
    if (kind_ != AccessKind::Load && region->buffer->isReadOnly()) {
      r_.fail(op_, fmt::format("{} into a read-only buffer in program {}: {} {} {} bytes at "
                               "0x{:x}, byte {} of buffer '{}', which is not writeable",
                               accessName(kind_), r_.programStr(), where(elem), verb(), size_, addr,
                               addr - region->begin, region->buffer->name()));
      r_.markReadOnlyStore();
      return nullptr;
    }
    if (kind_ != AccessKind::Store && region->buffer->isTracked() &&
        !region->buffer->isWritten(addr - region->begin, size_)) {
      r_.fail(op_,
              fmt::format("{} of never-written memory in program {}: {} reads {} bytes at "
                          "0x{:x}, byte {} of buffer '{}' ({} bytes), which nothing has "
                          "written yet",
                          accessName(kind_), r_.programStr(), where(elem), size_, addr,
                          addr - region->begin, region->buffer->name(), region->buffer->bytes()));
      return nullptr;
    }
    return region;
  }

private:
  std::string verb() const {
    return kind_ == AccessKind::Load ? "reads" : kind_ == AccessKind::Store ? "writes" : "updates";
  }

  // "element 17 of the block (index [0, 17])", or "the scalar pointer".
  std::string where(int64_t elem) const {
    if (!ptrType_->isTensor())
      return "the scalar access";
    return fmt::format("element {} of the block {} (index {})", elem, shapeStr(ptrType_->shape()),
                       indexStr(ptrType_->shape(), elem));
  }

  void outOfBounds(uint64_t addr, int64_t elem) {
    std::string msg =
        fmt::format("out-of-bounds {} in program {}: {} {} {} bytes at 0x{:x}", accessName(kind_),
                    r_.programStr(), where(elem), verb(), size_, addr);
    const MemoryMap::Region *n = r_.run().memory.nearest(addr);
    if (!n) {
      msg += "; no buffer is registered";
    } else {
      std::string rel;
      if (addr < n->begin)
        rel = fmt::format("starts {} bytes before its start", n->begin - addr);
      else if (addr >= n->end)
        rel = fmt::format("starts {} bytes past its end", addr - n->end);
      else
        rel = fmt::format("at byte {}, but {} bytes run past its end", addr - n->begin,
                          addr + size_ - n->end);
      msg += fmt::format("; nearest buffer '{}' (0x{:x}, {} bytes): {}", n->buffer->name(),
                         n->begin, n->buffer->bytes(), rel);
      if (n->buffer->dtype() != DType::U8 && dtypeBytes(n->buffer->dtype()) == size_ &&
          addr >= n->end)
        msg += fmt::format(" (element {} of a {}-element buffer)", (addr - n->begin) / size_,
                           n->buffer->numElements());
    }
    r_.fail(op_, msg);
  }

  ProgramRunner &r_;
  Operation &op_;
  AccessKind kind_;
  Type *ptrType_;
  unsigned size_;
  const MemoryMap::Region *cache_ = nullptr;
};

// The fast path of a block access: when every lane that is not masked off
// falls inside one buffer, aligned, and (for reads of a tracked buffer) on
// written bytes, the per-lane checks can be skipped. One pass finds the
// lowest and highest address and the OR of all addresses (for alignment);
// anything else goes to the per-lane path, which finds and reports the
// first bad lane.
struct BlockSpan {
  bool checked = false; // all lanes are known good
  bool none = false;    // every lane is masked off
  bool dense = false;   // and moreover all lanes are on, at consecutive addresses
  const MemoryMap::Region *region = nullptr;
};

BlockSpan checkBlock(ProgramRunner &r, const uint64_t *addrs, const uint8_t *mask, int64_t n,
                     unsigned size, bool reads) {
  // Dense blocks (every lane on, consecutive addresses) are the common case
  // and need no min/max pass: a cheap, vectorisable test finds them first.
  int64_t active = n;
  if (mask) {
    active = 0;
    for (int64_t i = 0; i < n; ++i)
      active += mask[i] & 1;
  }
  uint64_t off = 0;
  if (active == n)
    for (int64_t i = 0; i < n; ++i)
      off |= addrs[i] ^ (addrs[0] + uint64_t(i) * size);
  uint64_t lo = UINT64_MAX, hi = 0, bits = 0;
  if (active == n && off == 0) {
    lo = addrs[0];
    hi = addrs[n - 1];
    bits = lo;
  } else {
    for (int64_t i = 0; i < n; ++i) {
      uint64_t keep = mask ? uint64_t(0) - (mask[i] & 1) : ~uint64_t(0);
      uint64_t a = addrs[i] & keep;
      lo = std::min(lo, a | ~keep);
      hi = std::max(hi, a);
      bits |= a;
    }
  }
  BlockSpan span;
  if (lo == UINT64_MAX && hi == 0) {
    span.none = span.checked = true;
    return span;
  }
  if (lo > hi || (bits & (size - 1)) != 0 || hi + size < hi)
    return span;
  const MemoryMap::Region *region = r.run().memory.find(lo, hi + size - lo);
  if (!region || (!reads && region->buffer->isReadOnly()))
    return span; // the per-lane path reports it
  if (reads && region->buffer->isTracked() &&
      !region->buffer->isWritten(lo - region->begin, hi + size - lo)) {
    // Some byte in the span is unwritten; whether a lane reads it is for the
    // per-lane path to say.
    return span;
  }
  span.checked = true;
  span.dense = active == n && off == 0;
  span.region = region;
  return span;
}

unsigned pointeeBytes(Type *ptrType) {
  Type *pointee = cast<PointerType>(ptrType->elementType())->pointee();
  return pointee->isPointer() ? 8 : dtypeBytes(pointee->dtype());
}

void noteStored(ProgramRunner &r, HostBuffer *b) {
  auto &list = r.storedBuffers();
  if (std::find(list.begin(), list.end(), b) == list.end())
    list.push_back(b);
}

// InterpretOptions::storeLog: `count` elements from `addr` in `region`.
void logStore(ProgramRunner &r, Operation &op, const MemoryMap::Region &region, uint64_t addr,
              unsigned size, int64_t count, bool atomic) {
  std::vector<StoreRecord> *log = r.run().options.storeLog;
  if (!log)
    return;
  StoreRecord rec;
  rec.buffer = region.buffer;
  rec.offset = addr - region.begin;
  Type *elem = op.operand(op.is(Opcode::AtomicCAS) ? 2 : 1)->type()->elementType();
  rec.dtype = elem->isPointer() ? DType::U64 : elem->dtype();
  rec.elementBytes = size;
  rec.count = count;
  rec.atomic = atomic;
  rec.loc = op.loc();
  rec.program = r.programId();
  std::unique_lock<std::mutex> lock(r.run().atomicMutex, std::defer_lock);
  if (r.run().parallel && !atomic) // atomics hold the lock already
    lock.lock();
  log->push_back(rec);
}

bool addPtr(ProgramRunner &r, Operation &op) {
  const RtValue &p = r.operand(op, 0), &off = r.operand(op, 1);
  RtValue out = makeValue(op.result()->type());
  uint64_t scale = pointeeBytes(p.type);
  const uint64_t *src = p.data<uint64_t>();
  uint64_t *dst = out.data<uint64_t>();
  bool asSigned = isSigned(off.type->dtype());
  // The common offsets (i32, i64) get a loop of their own; others go
  // through readInt.
  if (off.type->dtype() == DType::I32) {
    const int32_t *o = off.data<int32_t>();
    for (int64_t i = 0; i < out.size; ++i)
      dst[i] = src[i] + static_cast<uint64_t>(int64_t(o[i])) * scale;
  } else {
    for (int64_t i = 0; i < out.size; ++i)
      dst[i] = src[i] + static_cast<uint64_t>(readInt(off, i, asSigned)) * scale;
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

bool load(ProgramRunner &r, Operation &op) {
  const RtValue &p = r.operand(op, 0);
  const RtValue *mask = op.numOperands() > 1 ? &r.operand(op, 1) : nullptr;
  const RtValue *other = op.numOperands() > 2 ? &r.operand(op, 2) : nullptr;
  RtValue out = makeValue(op.result()->type());
  if (!loadElements(r, op, p, mask ? mask->data<uint8_t>() : nullptr,
                    other ? other->data<std::byte>() : nullptr, out.data<std::byte>(), out.size,
                    elementBytes(out.type)))
    return false;
  r.setResult(op, 0, std::move(out));
  return true;
}

bool store(ProgramRunner &r, Operation &op) {
  const RtValue &p = r.operand(op, 0), &v = r.operand(op, 1);
  const RtValue *mask = op.numOperands() > 2 ? &r.operand(op, 2) : nullptr;
  unsigned size = elementBytes(v.type);
  AccessChecker checker(r, op, AccessKind::Store, p.type, size);
  const uint64_t *addrs = p.data<uint64_t>();
  const uint8_t *m = mask ? mask->data<uint8_t>() : nullptr;
  // Check every element first, so a failing store writes nothing.
  BlockSpan span = checkBlock(r, addrs, m, v.size, size, /*reads=*/false);
  if (span.none)
    return true;
  if (span.region)
    noteStored(r, span.region->buffer);
  HostBuffer *last = nullptr;
  for (int64_t i = 0; i < v.size && !span.checked; ++i) {
    if (m && !(m[i] & 1))
      continue;
    const MemoryMap::Region *region = checker.check(addrs[i], i);
    if (!region)
      return false;
    if (region->buffer != last)
      noteStored(r, last = region->buffer);
  }
  // Elements are written in block order; when two lanes hit one address
  // the later lane wins (the GPU picks one of them).
  const std::byte *src = v.data<std::byte>();
  const MemoryMap::Region *region = span.region;
  const bool logging = r.run().options.storeLog != nullptr;
  if (span.dense) {
    std::memcpy(reinterpret_cast<void *>(addrs[0]), src, v.size * size);
    region->buffer->markWritten(addrs[0] - region->begin, v.size * size);
    logStore(r, op, *region, addrs[0], size, v.size, false);
    return true;
  }
  if (region) {
    visitBits(size, [&](auto tag) {
      using B = decltype(tag);
      const B *vals = v.data<B>();
      for (int64_t i = 0; i < v.size; ++i)
        if (!m || (m[i] & 1))
          std::memcpy(reinterpret_cast<void *>(addrs[i]), &vals[i], sizeof(B));
    });
    if (region->buffer->isTracked() || logging)
      for (int64_t i = 0; i < v.size; ++i)
        if (!m || (m[i] & 1)) {
          region->buffer->markWritten(addrs[i] - region->begin, size);
          logStore(r, op, *region, addrs[i], size, 1, false);
        }
    return true;
  }
  for (int64_t i = 0; i < v.size; ++i) {
    if (m && !(m[i] & 1))
      continue;
    std::memcpy(reinterpret_cast<void *>(addrs[i]), src + i * size, size);
    if (!region || addrs[i] < region->begin || addrs[i] + size > region->end)
      region = r.run().memory.find(addrs[i], size);
    if (region->buffer->isTracked())
      region->buffer->markWritten(addrs[i] - region->begin, size);
    logStore(r, op, *region, addrs[i], size, 1, false);
  }
  return true;
}

// One read-modify-write of atomic_rmw, on one element, in Num's arithmetic.
template <typename Num>
typename Num::Storage rmw(const std::string &kind, typename Num::Storage old,
                          typename Num::Storage val) {
  using C = typename Num::Compute;
  using S = typename Num::Storage;
  C a = Num::load(old), b = Num::load(val);
  if (kind == "xchg")
    return val;
  if (kind == "add") {
    if constexpr (isFloatNum<Num>)
      return Num::store(a + b);
    else
      return Num::store(static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) +
                                       static_cast<std::make_unsigned_t<C>>(b)));
  }
  if (kind == "max" || kind == "min") {
    bool isMax = kind == "max";
    if constexpr (isFloatNum<Num>) {
      // A NaN operand is ignored, as the GPU's float atomics do.
      if (std::isnan(b))
        return old;
      if (std::isnan(a))
        return val;
    }
    return (isMax ? b > a : b < a) ? val : old;
  }
  if constexpr (!isFloatNum<Num>) {
    if (kind == "and")
      return S(a & b);
    if (kind == "or")
      return S(a | b);
    if (kind == "xor")
      return S(a ^ b);
  }
  return old;
}

bool atomic(ProgramRunner &r, Operation &op) {
  bool isCas = op.is(Opcode::AtomicCAS);
  const RtValue &p = r.operand(op, 0);
  const RtValue &v = r.operand(op, isCas ? 2 : 1);
  const RtValue *cmp = isCas ? &r.operand(op, 1) : nullptr;
  const RtValue *mask = !isCas && op.numOperands() > 2 ? &r.operand(op, 2) : nullptr;
  std::string kind = isCas ? "cas" : *op.attrs().getString("kind");
  Type *elem = v.type->elementType();
  if (!isCas && kind != "xchg" &&
      (elem->isPointer() ||
       (isFloat(elem->dtype()) && kind != "add" && kind != "max" && kind != "min")))
    return r.fail(op, fmt::format("atomic '{}' is not defined on {}", kind, elem->str()));
  RtValue out = makeValue(op.result()->type());
  unsigned size = elementBytes(v.type);
  AccessChecker checker(r, op, AccessKind::Atomic, p.type, size);
  const uint64_t *addrs = p.data<uint64_t>();
  const uint8_t *m = mask ? mask->data<uint8_t>() : nullptr;

  // Under a sequential order each element's update is indivisible; parallel
  // programs serialise their atomics on one lock.
  std::unique_lock<std::mutex> lock(r.run().atomicMutex, std::defer_lock);
  if (r.run().parallel)
    lock.lock();
  std::memset(out.data<std::byte>(), 0, out.size * size); // masked lanes: 0
  for (int64_t i = 0; i < out.size; ++i) {
    if (m && !(m[i] & 1))
      continue;
    const MemoryMap::Region *region = checker.check(addrs[i], i);
    if (!region)
      return false;
    void *addr = reinterpret_cast<void *>(addrs[i]);
    std::byte *oldBytes = out.data<std::byte>() + i * size;
    std::memcpy(oldBytes, addr, size);
    if (isCas || elem->isPointer()) {
      // cas compares bit patterns, as the GPU's atom.cas does; on pointers
      // only xchg is defined.
      visitBits(size, [&](auto tag) {
        using B = decltype(tag);
        B old, val = v.data<B>()[i];
        std::memcpy(&old, oldBytes, sizeof(B));
        B result = !isCas || old == cmp->data<B>()[i] ? val : old;
        std::memcpy(addr, &result, sizeof(B));
      });
    } else {
      visitNumeric(elem->dtype(), [&](auto num) {
        using Num = decltype(num);
        using S = typename Num::Storage;
        S old;
        std::memcpy(&old, oldBytes, sizeof(S));
        S result = rmw<Num>(kind, old, v.data<S>()[i]);
        std::memcpy(addr, &result, sizeof(S));
      });
    }
    if (region->buffer->isTracked())
      region->buffer->markWritten(addrs[i] - region->begin, size);
    noteStored(r, region->buffer);
    logStore(r, op, *region, addrs[i], size, 1, true);
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

} // namespace

bool loadElements(ProgramRunner &r, Operation &op, const RtValue &ptrs, const uint8_t *m,
                  const std::byte *otherBytes, std::byte *dst, int64_t n, unsigned size) {
  AccessChecker checker(r, op, AccessKind::Load, ptrs.type, size);
  const uint64_t *addrs = ptrs.data<uint64_t>();
  BlockSpan span = checkBlock(r, addrs, m, n, size, /*reads=*/true);
  return visitBits(size, [&](auto tag) {
    using B = decltype(tag);
    B *o = reinterpret_cast<B *>(dst);
    // Masked-off lanes take `other`, or 0 when there is none (the GPU leaves
    // them undefined; 0 keeps runs reproducible).
    const B *fill = reinterpret_cast<const B *>(otherBytes);
    if (span.dense) {
      std::memcpy(o, reinterpret_cast<const void *>(addrs[0]), size_t(n) * sizeof(B));
      return true;
    }
    if (span.checked) {
      for (int64_t i = 0; i < n; ++i) {
        if (m && !(m[i] & 1))
          o[i] = fill ? fill[i] : B(0);
        else
          std::memcpy(&o[i], reinterpret_cast<const void *>(addrs[i]), sizeof(B));
      }
      return true;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (m && !(m[i] & 1)) {
        o[i] = fill ? fill[i] : B(0);
        continue;
      }
      if (!checker.check(addrs[i], i))
        return false;
      std::memcpy(&o[i], reinterpret_cast<const void *>(addrs[i]), sizeof(B));
    }
    return true;
  });
}

bool execMemory(ProgramRunner &r, Operation &op) {
  switch (op.opcode()) {
  case Opcode::AddPtr:
    return addPtr(r, op);
  case Opcode::Load:
    return load(r, op);
  case Opcode::Store:
    return store(r, op);
  case Opcode::AtomicRMW:
  case Opcode::AtomicCAS:
    return atomic(r, op);
  default:
    return r.fail(op, "is not a memory op");
  }
}

} // namespace tk::interp
