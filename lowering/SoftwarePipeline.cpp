// --pipeline: in a `for` loop whose loads feed a dot, the loads of later
// iterations are issued before the dot of the current one, so global-memory
// latency overlaps the tensor-core work instead of stalling every iteration.
// Runs after --accelerate-dot (layouts are final). Two forms:
//
// The cp.async ring (S = the loop's num_stages, from tk.range(...,
// num_stages=S), else the function's num_stages attribute, default 3; >= 2),
// when every such load is a 16-bit operand (fp16/bf16) of dots on the tensor
// cores, an fp32 operand of tf32 dots on mma.sync (when S rings of them
// fit the target's shared memory, tf32RingFits), or a K-major fp8 operand of
// fp8 wgmma dots, taken directly, with no `other`
// or other = 0: each load gets a shared-memory ring of S tiles,
// filled with cp.async (global -> shared, no registers) S - 1 iterations
// ahead; the dot reads its stage with ldmatrix (an MN-major fp32 stage one
// element per lane) and rounds tf32 operands after the read.
//
//   ring = local_alloc : tensor<S x 128 x 32 x fp16, shared<...>>
//   async_wait {pending = 0}                      (earlier users of the bytes are done)
//   async_copy ring, s, ptr(s), mask(s) & (lb + s step < ub)        s = 0 .. S-2
//   for k ... iter_args(acc, pa) {
//     i = (k - lb) / step
//     async_wait {pending = (S-2) * loads}        (stage i landed; stage i-1 read by all)
//     a = ring_view ring, i
//     async_copy ring, i + S-1, ptr(i + S-1), mask(i + S-1) & (k + (S-1) step < ub)
//     acc = dot a, ..., acc
//     yield acc, pa + d }
//   async_wait {pending = 0}                      (nothing in flight after the loop)
//
// Each async_copy is one commit group, so the wait allows (S - 2) stages of
// groups in flight; one barrier per iteration (inside async_wait) both
// publishes stage i and frees the slot the next copy overwrites.
//
// When the two loads are the A and B of one dot and the body has no other
// shared-memory traffic or control flow, the dot owns that wait instead: the
// body's async_wait is dropped, stage 0's goes before the loop, and the dot
// gets ring_wait = (S-2) * 2. Its lowering (MmaDotToLLVM.cpp) issues the wait
// for stage i + 1 after its last read of stage i, before its last k step's
// mma, then reads stage i + 1's first k step into registers carried to the
// next iteration: the barrier and the ldmatrix latency overlap tensor-core
// work instead of opening each iteration.
//
//   async_wait {pending = (S-2) * 2}              (stage 0 landed)
//   for k ... { a = ring_view ra, i; b = ring_view rb, i; async_copy ... (stage i + S-1)
//               acc = dot a, b, acc {ring_wait = (S-2) * 2}; yield ... }
//
// A ring that feeds a wgmma dot (mma version 3) is aligned to 1024 bytes
// (align attribute; wgmma's swizzle repeats every 1 KiB of address), the
// body's wait gets fence_async, and the wait stays at the top of the body.
// When the dot's accumulator is only carried by the loop (with S >= 3) the
// dot keeps its group in flight (wgmma_pending = 1), so iteration i may only
// refill the slot of iteration i - 2 (whose wgmma all warp groups have
// waited for before the barrier of iteration i): the ring gets S + 1 slots
// and the copies stay S - 1 stages ahead when that fits in shared memory,
// else S slots and S - 2 ahead; the async_wait after the loop drains the
// last group (wgmma_drain). With S + 1 slots:
//
//   async_wait {fence_async, pending = (S-2) * 2}; a = ring_view ...
//   async_copy ... (stage i + S-1); acc = dot a, b, acc {wgmma_pending = 1}
//   ... after the loop: async_wait {pending = 0, wgmma_drain}
//
// With `wgmma_ring = "late"` (or "auto", the default, where the extra slot
// fits but would cost a program per SM by shared memory) such a loop keeps
// S slots and S - 1 ahead instead: its copies move after the dot's
// wait_group 1 and a barrier, and refill the slot of iteration i - 1 (with
// a waiter, after the waiter's wait_group 0, which retires the previous
// group):
//
//   async_wait {fence_async, pending = (S-2) * 2}; a = ring_view ...
//   acc = dot a, b, acc {wgmma_pending = 1}; barrier; async_copy ... (stage i + S-1)
//
// Such a dot whose A is M-major (a transposed A) on 8+ warps with a constant
// accumulator init also gets wgmma_native (nativeOrder): A's ring is not
// permuted, the accumulator is in wgmma's row order inside the loop, and a
// second async_wait {wgmma_native_bytes} after the drain reorders its rows
// through shared memory (WgmmaDotToLLVM.cpp's wgmmaRowsInOrder).
//
// Otherwise the register form: the loads of iteration i + 1 are issued before
// the dot of iteration i and carried to the next iteration in registers:
//
//   for k ... iter_args(acc, pa) {              a0 = load pa0, mask(lb) & (lb < ub)
//     a = load pa, mask(k)               ->      for k ... iter_args(acc, pa, a = a0) {
//     acc = dot a, ..., acc                       an = load next(pa), mask(k + step) & (k + step <
//     ub) yield acc, pa + d                           acc = dot a, ..., acc
//   }                                             yield acc, pa + d, an }
//
// next(v) re-computes v for the following iteration: the induction variable
// becomes k + step, a carried value the value the body yields for it (its pure
// computation cloned before the load), other body ops are cloned on next()
// of their operands, values from outside the loop stay. The extra condition
// (k + step < ub) keeps the last iteration's prefetch from touching memory
// (masked lanes do not access it); the ring's copies past the end are masked
// off the same way (they write zeros into a slot nobody reads again). With a
// step only known at run time, "< ub" becomes "step > 0 ? < ub : > ub"
// (inRange), as the loop's own condition does for a negative step.
//
// A load qualifies when it sits directly in the loop body, feeds a dot
// (possibly through casts) and nothing else, and every value its operands
// depend on can be re-computed: body ops that are pure, without regions and
// not loads.
#include "analysis/SharedMemory.h"
#include "ir/Builder.h"
#include "ir/IRContext.h"
#include "ir/Layout.h"
#include "lang/Remarks.h"
#include "lowering/Pass.h"
#include "lowering/codegen/TargetOptions.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <set>
#include <string_view>

namespace tk {
namespace {

// How a ring feeding wgmma dots that keep a group in flight gets the slot
// its copies refill (`wgmma_ring`, TK_WGMMA_RING; see the header): `extra`,
// S + 1 slots where they fit; `late`, S slots refilled after the wait that
// retires the previous iteration's groups and a barrier; `auto` (the
// default), late where the extra slot fits but would cost a program per SM
// (by shared memory), else extra.
enum class WgmmaRing { Extra, Late, Auto };

// Two of the pass's optimisations, on unless a function's attributes turn
// them off (`wgmma_inflight = false`, `wgmma_native = false`: what
// TK_WGMMA_INFLIGHT=0 / TK_WGMMA_NATIVE=0 record through the compile
// options), for measuring against them; and the ring's order.
struct Switches {
  bool wgmmaInflight = true;
  bool wgmmaNative = true;
  WgmmaRing wgmmaRing = WgmmaRing::Auto;
  int64_t numWarps = 4; // the kernel's
};

bool isCast(const Operation *op) {
  return op && op->hasTrait(OpTrait::Elementwise) && op->numOperands() == 1 &&
         op->numResults() == 1;
}

// `def` (a one-result op) re-created at `b`'s point with each operand mapped
// through `map`: how the pipeliner copies a load's address computation into
// another iteration.
template <class Map> Value *cloneMapped(Builder &b, Operation *def, Map map) {
  std::vector<Value *> ops;
  for (Value *o : def->operands())
    ops.push_back(map(o));
  return b.create(def->opcode(), def->loc(), ops, {def->result()->type()}, def->attrs())->result();
}

class LoopPipeliner {
public:
  LoopPipeliner(IRContext &ctx, Operation &loop, Switches switches)
      : ctx_(ctx), loop_(loop), body_(&loop.body()), switches_(switches) {
    unsigned i = 0;
    for (Operation &op : *body_)
      order_[&op] = i++;
  }

  // What the pipeline remark says about the loop, read before it changes.
  struct Facts {
    SourceLoc loc;
    bool hasDot = false;
    std::vector<std::pair<SourceLoc, std::string>> left; // loads left out, and why
    std::vector<SourceLoc> taken;                        // candidates()
  };
  Facts remarkFacts() {
    Facts f;
    f.loc = loop_.loc();
    for (Operation &op : *body_) {
      f.hasDot |= op.is(Opcode::Dot);
      if (!op.is(Opcode::Load) || !op.result()->type()->isTensor())
        continue;
      if (op.attrs().getBool("volatile").value_or(false))
        f.left.push_back({op.loc(), "it is volatile"});
      else if (!feedsOnlyDots(op.result()))
        f.left.push_back({op.loc(), "its tile is used by something other than a tk.dot (only "
                                    "tiles that feed dots alone, through casts, are loaded "
                                    "ahead)"});
      else if (!computable(op))
        f.left.push_back({op.loc(), "its address or mask depends on a value loaded in the loop "
                                    "(or made by control flow in it), which cannot be computed "
                                    "an iteration ahead: compute the offsets from the loop "
                                    "index and values carried by the loop"});
      else
        f.taken.push_back(op.loc());
    }
    return f;
  }

  // The loads of the body that feed only dots (through casts).
  std::vector<Operation *> candidates() {
    std::vector<Operation *> out;
    for (Operation &op : *body_) {
      if (!op.is(Opcode::Load) || !op.result()->type()->isTensor() ||
          op.attrs().getBool("volatile").value_or(false))
        continue;
      if (feedsOnlyDots(op.result()) && computable(op))
        out.push_back(&op);
    }
    return out;
  }

  void run(const std::vector<Operation *> &loads) {
    Builder b(ctx_);
    Value *lb = loop_.operand(0), *ub = loop_.operand(1), *step = loop_.operand(2);
    // Iteration 0's tiles, before the loop: iv = lb, carried values = inits.
    std::vector<Value *> firsts;
    for (Operation *load : loads) {
      std::map<Value *, Value *> subst;
      subst[body_->argument(0)] = lb;
      for (unsigned j = 1; j < body_->numArguments(); ++j)
        subst[body_->argument(j)] = loop_.operand(2 + j);
      b.setInsertionPoint(&loop_);
      Value *guard = inRange(b, load->loc(), lb);
      firsts.push_back(cloneLoad(b, *load, subst, guard));
    }
    // The new loop: old carried values, then the tiles.
    std::vector<Value *> inits;
    for (unsigned j = 3; j < loop_.numOperands(); ++j)
      inits.push_back(loop_.operand(j));
    inits.insert(inits.end(), firsts.begin(), firsts.end());
    b.setInsertionPoint(&loop_);
    Operation *loop2 = b.createFor(loop_.loc(), lb, ub, step, inits);
    loop2->attrs() = loop_.attrs();
    Block &body2 = loop2->body();
    Operation *oldYield = body_->terminator();
    std::vector<Value *> yields = oldYield->operands();
    b.setInsertionPointToEnd(&body2);
    Operation *yield2 = b.yield(oldYield->loc(), yields);
    for (Operation *op : body_->opsVector())
      if (op != oldYield)
        op->moveBefore(yield2);
    for (unsigned j = 0; j < body_->numArguments(); ++j)
      body_->argument(j)->replaceAllUsesWith(body2.argument(j));
    Block *oldBody = body_;
    body_ = &body2;
    // Each load now prefetches the next iteration; the dot takes the carried
    // tile.
    unsigned base = oldBody->numArguments();
    for (size_t i = 0; i < loads.size(); ++i) {
      Operation *load = loads[i];
      Value *tile = body2.argument(base + static_cast<unsigned>(i));
      load->result()->replaceAllUsesWith(tile);
      std::map<Value *, Value *> subst;
      b.setInsertionPoint(load);
      Value *iv = body2.argument(0);
      Value *nextIv = b.add(load->loc(), iv, step);
      subst[iv] = nextIv;
      for (unsigned j = 1; j < base; ++j)
        subst[body2.argument(j)] = current(b, yield2->operand(j - 1), load);
      Value *guard = inRange(b, load->loc(), nextIv);
      Value *next = cloneLoad(b, *load, subst, guard);
      yield2->addOperand(next);
    }
    for (unsigned r = 0; r < loop_.numResults(); ++r)
      loop_.result(r)->replaceAllUsesWith(loop2->result(r));
    for (Operation *load : loads)
      load->erase();
    loop_.erase();
  }

  // Loads before the loop (in its block) whose 16-bit tile only dots read,
  // directly or through the dot_operand conversion of
  // --propagate-dot-layouts (a loop-invariant A in registers), each dot in
  // the body of this loop or of a later loop of the same block (causal
  // attention walks two): attention's Q, the backward's K and V. Each may
  // take a one-slot ring filled once before the loop (stageInvariants).
  std::vector<Operation *> invariantOperands() const {
    std::vector<Operation *> out;
    for (Operation *op = loop_.prevNode(); op; op = op->prevNode()) {
      if (!op->is(Opcode::Load) || !op->result()->type()->isTensor() ||
          op->attrs().getBool("volatile").value_or(false))
        continue;
      Type *t = op->result()->type();
      if (t->rank() != 2 || (t->dtype() != DType::F16 && t->dtype() != DType::BF16) ||
          (op->numOperands() > 2 && !isZero(op->operand(2))) || !op->result()->hasUses())
        continue;
      bool ok = true, here = false;
      for (Operation *u : op->result()->users()) {
        if (u->is(Opcode::ConvertLayout) && isa<DotOperandLayout>(valueLayoutOf(u->result()))) {
          ok &= !u->result()->users().empty();
          for (Operation *d : u->result()->users())
            ok &= readByLoopDot(u->result(), d, op->parentBlock(), here);
          continue;
        }
        ok &= readByLoopDot(op->result(), u, op->parentBlock(), here);
      }
      if (ok && here && ringEligible({op}, /*throughConversions=*/true))
        out.push_back(op);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

  // Gives each of `loads` (invariantOperands) a one-slot ring filled by one
  // async_copy, the dots reading its ring_view (a ring of 1 slot, laid out
  // for its readers as any ring; one view at the top of each body), its
  // conversions to dot_operand dropped. The copy is older than any copy the
  // loop's own ring issues, so the body's first wait covers it. With the
  // loop's ring (`ringWait`: the async_wait that frees the ring's bytes
  // before its prologue) the copy goes right after that wait, ahead of the
  // prologue's copies, and the ring's wait after the loop ends the one-slot
  // ring's life too (analysis/Liveness.h); without, the copy goes where the
  // load was, after a wait of its own, a wait goes before the loop and one
  // after it.
  void stageInvariants(const std::vector<Operation *> &loads, Operation *ringWait) {
    if (loads.empty())
      return;
    Builder b(ctx_);
    SourceLoc loc = loop_.loc();
    bool wgmma = feedsWgmma(loads, /*throughConversions=*/true);
    auto wait = [&](Operation *before, bool fence) {
      AttrDict attrs;
      attrs.set("pending", Attribute(int64_t(0)));
      if (fence)
        attrs.set("fence_async", true);
      b.setInsertionPoint(before);
      b.create(Opcode::AsyncWait, loc, {}, {}, attrs);
    };
    for (Operation *load : loads) {
      Type *t = load->result()->type();
      if (ringWait)
        b.setInsertionPoint(ringWait);
      else
        b.setInsertionPointAfter(load);
      const SharedLayout *l = SharedLayout::get(ctx_, 8, 1, 1, {2, 1, 0});
      Operation *alloc =
          b.create(Opcode::LocalAlloc, load->loc(), {},
                   {ctx_.tensor({1, t->shape()[0], t->shape()[1]}, t->elementType(), l)});
      if (wgmma)
        alloc->setAttr("align", int64_t(1024));
      if (ringWait) {
        b.setInsertionPointAfter(ringWait);
      } else {
        AttrDict none;
        none.set("pending", Attribute(int64_t(0)));
        b.create(Opcode::AsyncWait, load->loc(), {}, {}, none); // the bytes' earlier users done
      }
      Value *zero = b.constantInt(load->loc(), 0, ctx_.i32());
      std::vector<Value *> ops = {alloc->result(), zero, load->operand(0)};
      if (load->numOperands() > 1)
        ops.push_back(load->operand(1));
      b.create(Opcode::AsyncCopy, load->loc(), ops, {});
      std::map<Block *, Value *> views;
      for (auto [d, v] : dotReaders(load->result(), /*throughConversions=*/true)) {
        Value *&view = views[d->parentBlock()];
        if (!view) {
          b.setInsertionPoint(d->parentBlock()->front());
          view = b.create(Opcode::RingView, load->loc(), {alloc->result(), zero}, {t})->result();
        }
        for (unsigned i = 0; i < 2; ++i)
          if (d->operand(i) == v)
            d->setOperand(i, view);
      }
      std::vector<Operation *> conversions = load->result()->users();
      for (Operation *u : conversions)
        if (u->is(Opcode::ConvertLayout) && !u->result()->hasUses())
          u->erase();
      load->erase();
    }
    if (!ringWait) {
      wait(&loop_, wgmma);
      b.setInsertionPointAfter(&loop_);
      AttrDict attrs;
      attrs.set("pending", Attribute(int64_t(0)));
      b.create(Opcode::AsyncWait, loc, {}, {}, attrs);
    }
    unsigned i = 0;
    for (Operation &op : *body_)
      order_[&op] = i++;
  }

  // Bytes of the one-slot rings stageInvariants would make for `loads`.
  static int64_t invariantBytes(const std::vector<Operation *> &loads) {
    int64_t bytes = 0;
    for (Operation *load : loads)
      bytes += load->result()->type()->numElements() * dtypeBytes(load->result()->type()->dtype());
    return bytes;
  }

  // Whether the ring form applies to `loads` (see the header); when not,
  // `why` (if given) says which load and why, for the pipeline remark.
  bool ringEligible(const std::vector<Operation *> &loads, bool throughConversions = false,
                    std::pair<SourceLoc, std::string> *why = nullptr) const {
    auto no = [&](Operation *load, std::string reason) {
      if (why)
        *why = {load->loc(), std::move(reason)};
      return false;
    };
    for (Operation *load : loads) {
      Type *t = load->result()->type();
      // fp32 tiles of tf32 dots (mma.sync m16n8k8; the dot rounds what it
      // reads) ride the ring too; int8 keeps the register form.
      bool tf32 = t->dtype() == DType::F32;
      // fp8 tiles of fp8 wgmma dots when K-major (wgmma reads 8-bit
      // operands only so: A's registers along K, B's along K).
      bool fp8 = t->dtype() == DType::F8E4NV || t->dtype() == DType::F8E5;
      if (t->rank() != 2 ||
          (t->dtype() != DType::F16 && t->dtype() != DType::BF16 && !tf32 && !fp8))
        return no(load, fmt::format("is a {}-D tile of {} (the ring takes 2-D fp16, bf16, "
                                    "K-major fp8 or tf32 fp32 tiles)",
                                    t->rank(), t->elementType()->str()));
      if (load->numOperands() > 2 && !isZero(load->operand(2)))
        return no(load, "has `other` that is not 0 (cp.async fills masked elements with 0)");
      // The ring's layout is its readers': wgmma's (column blocks, A's rows
      // permuted) or ldmatrix's, so every dot reading one ring is of one
      // kind and, on wgmma, takes it as the same operand.
      std::set<std::pair<int64_t, bool>> kinds; // (mma version, as A)
      for (auto [u, v] : dotReaders(load->result(), throughConversions)) {
        const MmaLayout *mma = u->numResults() ? mmaLayoutOf(u->result()->type()) : nullptr;
        if (!u->is(Opcode::Dot) || u->operand(2) == v || !mma)
          return no(load, "feeds a dot that is not on the tensor cores (or through a cast)");
        int64_t version = mma->version();
        if (tf32 && version != 2)
          return no(load, "is fp32 read by a wgmma dot");
        auto *tt = dyn_cast<TensorType>(v->type());
        if (fp8 && (version != 3 || !tt || !tt->layout() || isa<SharedLayout>(tt->layout()) ||
                    ThreadMap(tt->layout(), t->shape()).order()[0] != (u->operand(0) == v ? 1 : 0)))
          return no(load, "is an fp8 tile not read K-major by a wgmma dot");
        if (version == 3 && u->operand(0) == u->operand(1))
          return no(load, "is both operands of one wgmma dot (a @ a)");
        kinds.insert({version, version == 3 && u->operand(0) == v});
      }
      if (kinds.size() > 1)
        return no(load, "is read by dots of different kinds");
    }
    return true;
  }

  // Whether a ring of fp32 (tf32) tiles fits in the target's shared memory
  // (`limit`: the function's max_shared_bytes, set by setKernelOptions for
  // arches below sm_90; else sm_90's) with the usual spare: they take twice
  // the bytes of fp16 ones, and a config that compiled with the register
  // form (whose dot stages one k step, 96 KiB for 128x256x64) should not
  // start failing the limit (3 stages of 128x256x64 fp32: 288 KiB; on
  // sm_86's 99 KiB already 3 stages of 128x128x32). 16-bit rings are what
  // was asked for.
  bool tf32RingFits(const std::vector<Operation *> &loads, int64_t stages, int64_t limit) const {
    int64_t slotBytes = 0;
    for (Operation *load : loads) {
      Type *t = load->result()->type();
      if (t->dtype() != DType::F32)
        return true;
      slotBytes += t->numElements() * 4;
    }
    return stages * slotBytes + kSpareSharedBytes <= limit;
  }

  // sm_90a's shared memory per program (wgmma needs sm_90a; the limit
  // --allocate-shared's callers enforce, maxSharedBytesFor),
  // and what the extra ring slot of a wgmma loop leaves for other scratch.
  static constexpr int64_t kWgmmaMaxSharedBytes = maxSharedBytesFor("sm_90a");
  static constexpr int64_t kSpareSharedBytes = 8 * 1024;

  // Programs of `slots` ring slots (and `reservedBytes` more) that fit in
  // one sm_90a SM's shared memory (the per-program maximum plus the 1 KiB
  // reserved per program).
  static int64_t programsPerSm(int64_t slots, int64_t slotBytes, int64_t reservedBytes) {
    return (kWgmmaMaxSharedBytes + 1024) / (slots * slotBytes + reservedBytes + 1024);
  }

  void runRing(const std::vector<Operation *> &loads, int64_t stages, int64_t reservedBytes = 0) {
    Builder b(ctx_);
    SourceLoc loc = loop_.loc();
    Value *lb = loop_.operand(0), *step = loop_.operand(2);
    Value *iv = body_->argument(0);
    Type *ivType = lb->type();
    auto ivPlus = [&](Value *base, int64_t k) {
      return k == 0 ? base : b.add(loc, base, b.mul(loc, b.constantInt(loc, k, ivType), step));
    };
    auto wait = [&](int64_t pending) {
      AttrDict attrs;
      attrs.set("pending", Attribute(pending));
      b.create(Opcode::AsyncWait, loc, {}, {}, attrs);
    };
    // The rings and the prologue: stages 0 .. S-2 of iterations lb, lb + step, ...
    b.setInsertionPoint(&loop_);
    std::vector<Value *> rings;
    bool wgmma = feedsWgmma(loads);
    // wgmma dots whose group may stay in flight across the back edge
    // (wgmma_pending = 1); `wgmma_inflight = false` keeps the simple form
    // (wait_group 0 in each iteration), for comparisons.
    bool keepInFlight = wgmma && stages >= 3 && switches_.wgmmaInflight;
    std::vector<std::pair<Operation *, int64_t>> waiters;
    std::vector<Operation *> inFlight =
        keepInFlight ? carriedWgmmaDots(loads, waiters) : std::vector<Operation *>{};
    std::vector<Operation *> native;
    for (Operation *d : inFlight)
      if (nativeOrder(d, loads))
        native.push_back(d);
    // With a group in flight, iteration i's copies may only refill the slot
    // iteration i - 2 read. A ring of S + 1 slots keeps them S - 1 stages
    // ahead (what num_stages asks for, as on mma.sync) when the extra slot
    // fits in sm_90a's shared memory with room to spare; else the ring keeps
    // S slots and the copies run S - 2 ahead.
    int64_t slots = stages, distance = stages - 1;
    int64_t slotBytes = 0;
    for (Operation *load : loads)
      slotBytes +=
          load->result()->type()->numElements() * dtypeBytes(load->result()->type()->dtype());
    // A group kept in flight by a waiter (attention's P V) gets its extra
    // slot only where that costs no program per SM (by shared memory). Where
    // it would, the default (auto) refills the ring late; with `extra`,
    // programs of two or more warp groups keep the group in flight with S
    // slots filled S - 2 ahead, and programs of one warp group keep the
    // simple form. Measured on the H100 (fp16 and bf16, seq 1024 and
    // 4096, head dim 64; bench/results/notes/attention-inflight.md,
    // "2026-12-07"), S slots in flight against the simple form: 128 x 64
    // tiles on 8 warps 1.09x causal and 1.00x not, on 4 warps 0.92x not
    // causal; 64 x 64 tiles on 4 warps 1.01-1.02x. The extra slot itself,
    // halving the programs per SM (64 x 64 on 4 warps at head dim 128: 144
    // KiB), ran at 311 against 366 TFLOP/s (H200).
    bool extraFits =
        (stages + 1) * slotBytes + reservedBytes + kSpareSharedBytes <= kWgmmaMaxSharedBytes;
    bool extraCosts = programsPerSm(stages + 1, slotBytes, reservedBytes) <
                      programsPerSm(stages, slotBytes, reservedBytes);
    bool extraSlotCostsPrograms = !waiters.empty() && extraCosts;
    // `late` (TK_WGMMA_RING; `auto` where the extra slot fits but would cost
    // a program per SM) refills, after the barrier that follows the last
    // dot whose wait retires every group of iteration i - 1 (the in-flight
    // dot's wait_group 1; with waiters, the waiter's wait_group 0), the slot
    // iteration i - 1 read: S slots keep the copies S - 1 ahead.
    bool late =
        !inFlight.empty() && (switches_.wgmmaRing == WgmmaRing::Late ||
                              (switches_.wgmmaRing == WgmmaRing::Auto && extraCosts && extraFits));
    if (!late && extraSlotCostsPrograms && switches_.numWarps < 8) {
      inFlight.clear();
      waiters.clear();
    }
    if (!inFlight.empty() && !late) {
      if (!extraSlotCostsPrograms && extraFits)
        slots = stages + 1;
      else
        distance = stages - 2;
    }
    for (Operation *load : loads) {
      Type *t = load->result()->type();
      std::vector<int64_t> shape = {slots, t->shape()[0], t->shape()[1]};
      const SharedLayout *l = SharedLayout::get(ctx_, 8, 1, 1, {2, 1, 0});
      Operation *alloc =
          b.create(Opcode::LocalAlloc, loc, {}, {ctx_.tensor(shape, t->elementType(), l)});
      // wgmma reads its stages through descriptors whose swizzle repeats
      // every 1024 bytes of address: each stage starts on such a boundary.
      if (wgmma)
        alloc->setAttr("align", int64_t(1024));
      rings.push_back(alloc->result());
    }
    wait(0);
    prologueWait_ = loop_.prevNode();
    std::vector<std::unique_ptr<Level>> pro;
    for (int64_t s = 0; s < distance; ++s) {
      pro.push_back(std::make_unique<Level>());
      Level &lv = *pro.back();
      lv.prev = s ? pro[static_cast<size_t>(s - 1)].get() : nullptr;
      Value *ivS = ivPlus(lb, s);
      lv.memo[iv] = ivS;
      if (!s)
        for (unsigned j = 1; j < body_->numArguments(); ++j)
          lv.memo[body_->argument(j)] = loop_.operand(2 + j);
      Value *guard = inRange(b, loc, ivS);
      Value *idx = b.constantInt(loc, s, ivType);
      for (size_t i = 0; i < loads.size(); ++i)
        copyInto(b, *loads[i], rings[i], idx, lv, guard, nullptr);
    }
    // The body: wait for stage i, view it, refill the slot of stage i - 1.
    // When one dot reads both rings, the wait moves into it (ring_wait, see
    // the header) and stage 0's wait goes before the loop.
    int64_t pending = (distance - 1) * static_cast<int64_t>(loads.size());
    // A wgmma dot reads the stage after the body's wait, which also makes
    // the cp.async writes visible to the async proxy (fence_async); it
    // finishes its reads (wgmma.wait_group 0) before the next iteration's
    // barrier, so the slot the body's copy refills is free.
    Operation *dot = wgmma ? nullptr : soleDot(loads);
    if (dot)
      wait(pending);
    Operation *first = body_->front();
    b.setInsertionPoint(first);
    Value *idx = b.div(loc, b.sub(loc, iv, lb), step);
    if (!dot) {
      wait(pending);
      if (wgmma)
        first->prevNode()->setAttr("fence_async", true);
    } else
      dot->attrs().set("ring_wait", Attribute(pending));
    std::vector<Value *> views;
    for (size_t i = 0; i < loads.size(); ++i)
      views.push_back(
          b.create(Opcode::RingView, loc, {rings[i], idx}, {loads[i]->result()->type()})->result());
    std::vector<std::unique_ptr<Level>> ahead;
    for (int64_t k = 1; k <= distance; ++k) {
      ahead.push_back(std::make_unique<Level>());
      ahead.back()->prev = k > 1 ? ahead[static_cast<size_t>(k - 2)].get() : nullptr;
      ahead.back()->memo[iv] = ivPlus(iv, k);
    }
    Level &last = *ahead.back();
    // Late copies follow the last dot whose wait retires iteration i - 1's
    // groups (a waiter's, else an in-flight dot's), and a barrier.
    Operation *copyAt = first;
    if (late) {
      std::vector<Operation *> retiring;
      for (const auto &w : waiters)
        retiring.push_back(w.first);
      if (retiring.empty())
        retiring = inFlight;
      Operation *retired =
          *std::max_element(retiring.begin(), retiring.end(), [&](Operation *x, Operation *y) {
            return order_.at(x) < order_.at(y);
          });
      copyAt = retired->nextNode();
      b.setInsertionPoint(copyAt);
      b.create(Opcode::Barrier, loc, {}, {})->setAttr("wgmma_ring_late", true);
    }
    Value *guard = inRange(b, loc, last.memo[iv]);
    Value *nextIdx = b.add(loc, idx, b.constantInt(loc, distance, ivType));
    for (size_t i = 0; i < loads.size(); ++i)
      copyInto(b, *loads[i], rings[i], nextIdx, last, guard, copyAt);
    for (size_t i = 0; i < loads.size(); ++i) {
      loads[i]->result()->replaceAllUsesWith(views[i]);
      loads[i]->erase();
    }
    b.setInsertionPointAfter(&loop_);
    wait(0);
    // After the loop the last wgmma group is drained (wgmma.wait_group 0)
    // before anything reads the loop's accumulators.
    for (Operation *d : inFlight)
      d->setAttr("wgmma_pending", int64_t(1));
    for (const auto &w : waiters)
      w.first->setAttr("wgmma_wait_carried", w.second);
    if (!inFlight.empty())
      loop_.nextNode()->setAttr("wgmma_drain", true);
    // The rows of a wgmma_native accumulator go to the mma layout's order
    // after the drain's barrier (the ring's bytes are free then), through
    // shared memory: the second wait holds that scratch (wgmma_native_bytes,
    // the largest such accumulator).
    int64_t nativeBytes = 0;
    for (Operation *d : native) {
      d->setAttr("wgmma_native", true);
      nativeBytes = std::max(nativeBytes, wgmmaNativeScratchBytes(d->result()->type()));
    }
    if (nativeBytes) {
      b.setInsertionPointAfter(loop_.nextNode());
      AttrDict attrs;
      attrs.set("pending", Attribute(int64_t(0)));
      attrs.set("wgmma_native_bytes", Attribute(nativeBytes));
      b.create(Opcode::AsyncWait, loc, {}, {}, attrs);
    }
  }

private:
  // The wgmma dots reading `loads` whose group may stay in flight across the
  // back edge, in two forms:
  // - the accumulator is carried by the loop and read by nothing else (its
  //   acc the body's argument, its result only yielded): a matmul's loop;
  //   its own wait of the next iteration (wait_group 1) retires it.
  // - the result is only yielded, and every reader of the body's argument it
  //   feeds comes after another wgmma dot of the body (attention's P V, whose
  //   accumulator the next iteration rescales after its Q K^T): that dot's
  //   wait_group 0 retires the group and passes the argument's registers
  //   through, so that nothing reads them before (`waiters` gets the dot and
  //   the argument's index, its wgmma_wait_carried).
  // Empty when any wgmma dot is neither, nor such a waiter.
  std::vector<Operation *>
  carriedWgmmaDots(const std::vector<Operation *> &loads,
                   std::vector<std::pair<Operation *, int64_t>> &waiters) const {
    std::vector<Operation *> dots, others;
    for (Operation *load : loads)
      for (Operation *u : load->result()->users()) {
        if (!isWgmmaLayout(u->result()->type()) ||
            std::find(dots.begin(), dots.end(), u) != dots.end() ||
            std::find(others.begin(), others.end(), u) != others.end())
          continue;
        Value *acc = u->operand(2);
        const std::vector<Operation *> &users = u->result()->users();
        bool yieldedOnly = users.size() == 1 && users[0]->is(Opcode::Yield);
        if (u->parentBlock() == body_ && acc->isBlockArgument() && acc->ownerBlock() == body_ &&
            acc->users().size() == 1 && yieldedOnly)
          dots.push_back(u);
        else
          others.push_back(u);
      }
    for (Operation *u : std::vector<Operation *>(others)) {
      const std::vector<Operation *> &users = u->result()->users();
      if (u->parentBlock() != body_ || users.size() != 1 || !users[0]->is(Opcode::Yield))
        continue;
      int64_t arg = carriedArgument(u->result());
      Operation *waiter = arg < 0 ? nullptr : earlierWaiter(u, body_->argument(unsigned(arg)));
      if (!waiter || std::find(others.begin(), others.end(), waiter) == others.end())
        return {};
      waiters.emplace_back(waiter, arg);
      dots.push_back(u);
      others.erase(std::find(others.begin(), others.end(), u));
    }
    for (Operation *u : others) {
      bool isWaiter = false;
      for (const auto &w : waiters)
        isWaiter = isWaiter || w.first == u;
      if (!isWaiter)
        return {};
    }
    return dots;
  }

  // The body's argument that `v` (yielded once) becomes in the next
  // iteration; -1 when it is yielded twice or not at all.
  int64_t carriedArgument(Value *v) const {
    Operation *yield = body_->terminator();
    int64_t found = -1;
    for (unsigned i = 0; yield && i < yield->numOperands(); ++i)
      if (yield->operand(i) == v) {
        if (found >= 0)
          return -1;
        found = int64_t(i) + 1;
      }
    return found;
  }

  // The latest wgmma dot of the body before `dot` that every reader of
  // `arg` follows (in the body's order, nested readers by their op in the
  // body), or null when a reader comes first or there is none.
  Operation *earlierWaiter(Operation *dot, Value *arg) const {
    std::vector<Operation *> readers;
    for (Operation *r : arg->users()) {
      while (r && r->parentBlock() != body_)
        r = r->parentOp();
      if (!r)
        return nullptr;
      readers.push_back(r);
    }
    Operation *waiter = nullptr;
    for (Operation *op = body_->front(); op && op != dot; op = op->nextNode()) {
      if (std::find(readers.begin(), readers.end(), op) != readers.end())
        return waiter;
      if (op->is(Opcode::Dot) && isWgmmaLayout(op->result()->type()))
        waiter = op;
    }
    return waiter;
  }

  // Whether in-flight wgmma dot `dot` computes in wgmma's own row order
  // (wgmma_native): its A is one of `loads` with registers along M (a
  // transposed A, MN-major in shared memory), on 8 or more warps, and its
  // accumulator starts as a constant (the same in any row order). The mma
  // layout's ThreadMap needs A's M permuted in 8-row blocks
  // (wgmmaSharedRowBlock); for an M-major A that scatters the 8 chunks of
  // each 128-byte global line over two column blocks, and the copies ran at
  // 390 instead of 515 TFLOP/s (fp16 4096^3, 128x256x64, 8 warps; H200,
  // bench/results/notes/novel-matmul.md). Unpermuted, the
  // rows are put in order once after the loop instead. `wgmma_native =
  // false` keeps the permutation, for comparisons.
  bool nativeOrder(Operation *dot, const std::vector<Operation *> &loads) const {
    if (!switches_.wgmmaNative)
      return false;
    Value *a = dot->operand(0);
    Operation *load = a->definingOp();
    auto *tt = dyn_cast<TensorType>(a->type());
    const LayoutAttr *layout = tt ? tt->layout() : nullptr;
    // (A read by this dot alone: the ring has one layout for all its readers.)
    if (!load || std::find(loads.begin(), loads.end(), load) == loads.end() ||
        a->users().size() != 1 || !layout || isa<SharedLayout>(layout) || a->type()->rank() != 2 ||
        ThreadMap(layout, a->type()->shape()).order()[0] != 0 ||
        mmaLayoutOf(dot->result()->type())->warps()[0] < 8 ||
        wgmmaNativeScratchBytes(dot->result()->type()) + kSpareSharedBytes >
            kWgmmaMaxSharedBytes) // the reordering's scratch must fit (256x256: not)
      return false;
    for (unsigned j = 1; j < body_->numArguments(); ++j)
      if (body_->argument(j) == dot->operand(2)) {
        Operation *init = loop_.operand(2 + j)->definingOp();
        return init && init->is(Opcode::Constant);
      }
    return false;
  }

  // Whether a dot on wgmma (mma version 3) reads one of `loads`.
  static bool feedsWgmma(const std::vector<Operation *> &loads, bool throughConversions = false) {
    for (Operation *load : loads)
      for (auto [u, v] : dotReaders(load->result(), throughConversions))
        if (u->numResults() && isWgmmaLayout(u->result()->type()))
          return true;
    return false;
  }

  // The users of `v` with the value they read: `v`'s own users, and with
  // `throughConversions` the users of its convert_layouts instead of those.
  static std::vector<std::pair<Operation *, Value *>> dotReaders(Value *v,
                                                                 bool throughConversions) {
    std::vector<std::pair<Operation *, Value *>> out;
    for (Operation *u : v->users()) {
      if (throughConversions && u->is(Opcode::ConvertLayout)) {
        for (Operation *d : u->result()->users())
          out.push_back({d, u->result()});
        continue;
      }
      out.push_back({u, v});
    }
    return out;
  }

  // Whether `u` is a tensor-core dot reading `v` as A or B directly in the
  // body of a `for` of `block`; `here` is set when that is this loop.
  bool readByLoopDot(Value *v, Operation *u, Block *block, bool &here) const {
    Operation *loop = u->parentBlock()->parentOp();
    if (!u->is(Opcode::Dot) || u->operand(2) == v || !mmaLayoutOf(u->result()->type()) || !loop ||
        !loop->is(Opcode::For) || loop->parentBlock() != block)
      return false;
    here |= loop == &loop_;
    return true;
  }

  static const LayoutAttr *valueLayoutOf(Value *v) {
    auto *t = dyn_cast<TensorType>(v->type());
    return t ? t->layout() : nullptr;
  }

  // The dot that takes `loads` (two of them) directly as its A and B, when it
  // is their only user and the body has no other shared-memory traffic or
  // control flow (ops with regions, atomics, scans): it may then own the
  // ring's wait (ring_wait). Null otherwise.
  Operation *soleDot(const std::vector<Operation *> &loads) const {
    if (loads.size() != 2 || loads[0]->result()->users().size() != 1 ||
        loads[1]->result()->users().size() != 1)
      return nullptr;
    Operation *dot = loads[0]->result()->users().front();
    if (dot != loads[1]->result()->users().front() || dot->operand(0) != loads[0]->result() ||
        dot->operand(1) != loads[1]->result())
      return nullptr;
    for (Operation &op : *body_)
      if (&op != dot && !op.is(Opcode::Load) && !op.is(Opcode::Yield) &&
          (op.numRegions() || !op.hasTrait(OpTrait::Pure) || op.is(Opcode::Scan)))
        return nullptr;
    return dot;
  }

  // The values of one later iteration (ring form): `memo` maps body values
  // to their values there (seeded with the induction variable; for the
  // prologue's first stage, the carried values too); `prev` is the iteration
  // before (null: the current one, in the body).
  struct Level {
    Level *prev = nullptr;
    std::map<Value *, Value *> memo;
  };

  Value *valueAt(Builder &b, Value *v, Level &lv, Operation *at) {
    if (auto it = lv.memo.find(v); it != lv.memo.end())
      return it->second;
    if (!inBody(v))
      return v;
    Value *out;
    if (v->isBlockArgument()) {
      Value *y = body_->terminator()->operand(v->index() - 1);
      out = lv.prev ? valueAt(b, y, *lv.prev, at) : current(b, y, at);
    } else {
      out = cloneMapped(b, v->definingOp(), [&](Value *o) { return valueAt(b, o, lv, at); });
    }
    lv.memo[v] = out;
    return out;
  }

  // async_copy of `load`'s tile at iteration `lv` into `ring` stage `idx`,
  // its mask and-ed with `guard`.
  void copyInto(Builder &b, Operation &load, Value *ring, Value *idx, Level &lv, Value *guard,
                Operation *at) {
    Value *ptr = valueAt(b, load.operand(0), lv, at);
    Type *maskType = ctx_.tensor(ptr->type()->shape(), ctx_.scalar(DType::I1),
                                 cast<TensorType>(ptr->type())->layout());
    Value *mask = b.create(Opcode::Splat, load.loc(), {guard}, {maskType})->result();
    if (load.numOperands() > 1)
      mask =
          b.create(Opcode::And, load.loc(), {valueAt(b, load.operand(1), lv, at), mask}, {maskType})
              ->result();
    b.create(Opcode::AsyncCopy, load.loc(), {ring, idx, ptr, mask}, {});
  }

  // Whether the iteration with induction value x runs: x < ub, or, for a
  // signed step that is not a constant, x > ub when the step is negative at
  // run time (the loop condition ControlFlowToLLVM.cpp emits; the front end
  // turns constant negative steps into count-up loops). A prefetch guarded
  // with x < ub alone would skip every tile of a count-down loop.
  Value *inRange(Builder &b, SourceLoc loc, Value *x) const {
    Value *ub = loop_.operand(1), *step = loop_.operand(2);
    if (ub->type()->isIntLike() && !isSigned(ub->type()->dtype()))
      return b.cmpi(loc, "ult", x, ub);
    Value *below = b.cmpi(loc, "slt", x, ub);
    Operation *def = step->definingOp();
    if (def && def->is(Opcode::Constant))
      return below;
    Value *up = b.cmpi(loc, "sgt", step, b.constantInt(loc, 0, step->type()));
    return b.select(loc, up, below, b.cmpi(loc, "sgt", x, ub));
  }

  static bool isZero(Value *v) {
    Operation *def = v->definingOp();
    if (def && def->is(Opcode::Splat))
      def = def->operand(0)->definingOp();
    if (!def || !def->is(Opcode::Constant))
      return false;
    if (std::optional<int64_t> i = def->attrs().getInt("value"))
      return *i == 0;
    std::optional<double> f = def->attrs().getFloat("value");
    return f && *f == 0.0 && !std::signbit(*f);
  }

  bool inBody(Value *v) const {
    if (v->isBlockArgument())
      return v->ownerBlock() == body_;
    Operation *def = v->definingOp();
    return def && def->parentBlock() == body_;
  }

  bool feedsOnlyDots(Value *v, int depth = 0) const {
    if (!v->hasUses() || depth > 4)
      return false;
    for (Operation *u : v->users()) {
      if (u->is(Opcode::Dot) && u->parentBlock() == body_ && u->operand(2) != v)
        continue;
      if (isCast(u) && u->parentBlock() == body_ && feedsOnlyDots(u->result(), depth + 1))
        continue;
      return false;
    }
    return true;
  }

  // Whether next() can re-compute every operand of `op`.
  bool computable(Operation &op) {
    std::set<Value *> seen;
    for (Value *v : op.operands())
      if (!computableValue(v, seen, 0))
        return false;
    return true;
  }

  bool computableValue(Value *v, std::set<Value *> &seen, int depth) {
    if (!inBody(v) || !seen.insert(v).second)
      return true;
    if (depth > 64)
      return false;
    if (v->isBlockArgument()) {
      if (v->index() == 0)
        return true;
      return computableValue(body_->terminator()->operand(v->index() - 1), seen, depth + 1);
    }
    Operation *def = v->definingOp();
    if (!def->hasTrait(OpTrait::Pure) || def->numRegions() || def->is(Opcode::Load))
      return false;
    for (Value *o : def->operands())
      if (!computableValue(o, seen, depth + 1))
        return false;
    return true;
  }

  // `v` (a value of the current iteration) available before `at`: itself when
  // it is defined before `at`, else its pure computation cloned there.
  Value *current(Builder &b, Value *v, Operation *at) {
    if (!inBody(v) || v->isBlockArgument())
      return v;
    Operation *def = v->definingOp();
    if (order_.at(def) < order_.at(at))
      return v;
    if (auto it = current_.find(v); it != current_.end())
      return it->second;
    Value *out = cloneMapped(b, def, [&](Value *o) { return current(b, o, at); });
    current_[v] = out;
    return out;
  }

  // `v` with `subst` applied: body ops cloned on substituted operands.
  Value *substitute(Builder &b, Value *v, std::map<Value *, Value *> &subst) {
    if (auto it = subst.find(v); it != subst.end())
      return it->second;
    if (!inBody(v))
      return v;
    Value *out = cloneMapped(b, v->definingOp(), [&](Value *o) { return substitute(b, o, subst); });
    subst[v] = out;
    return out;
  }

  // The load re-created with `subst`, its mask and-ed with `guard` (a scalar
  // i1).
  Value *cloneLoad(Builder &b, Operation &load, std::map<Value *, Value *> &subst, Value *guard) {
    Value *ptr = substitute(b, load.operand(0), subst);
    Type *maskType = ctx_.tensor(ptr->type()->shape(), ctx_.scalar(DType::I1),
                                 cast<TensorType>(ptr->type())->layout());
    Value *g = b.create(Opcode::Splat, load.loc(), {guard}, {maskType})->result();
    Value *mask = g;
    if (load.numOperands() > 1)
      mask =
          b.create(Opcode::And, load.loc(), {substitute(b, load.operand(1), subst), g}, {maskType})
              ->result();
    std::vector<Value *> ops = {ptr, mask};
    if (load.numOperands() > 2)
      ops.push_back(substitute(b, load.operand(2), subst));
    return b.create(Opcode::Load, load.loc(), ops, {load.result()->type()}, load.attrs())->result();
  }

  IRContext &ctx_;
  Operation &loop_;
  Block *body_;
  std::map<Operation *, unsigned> order_;
  std::map<Value *, Value *> current_;
  Switches switches_;
  // runRing's async_wait {pending = 0} before its prologue.
  Operation *prologueWait_ = nullptr;

public:
  Operation *prologueWait() const { return prologueWait_; }
};

// Bytes of the buffers (rings) already made in `fn`, live or not: what a new
// ring is counted beside.
int64_t allocatedBytes(Function &fn) {
  int64_t bytes = 0;
  fn.walk([&](Operation *op) {
    if (op->is(Opcode::LocalAlloc))
      bytes += bufferBytes(*op);
  });
  return bytes;
}

std::string lineList(const RemarkSink &rs, const std::vector<SourceLoc> &locs) {
  std::string out;
  for (const SourceLoc &l : locs)
    out += fmt::format("{}{}", out.empty() ? "" : ", ", rs.line(l));
  return out;
}

// The pipeline remarks of one loop with a dot: which loads went ahead, in
// which form, and the loads left out with the reason.
void remarkLoop(RemarkSink &rs, Function &fn, const LoopPipeliner::Facts &f, bool ring,
                int64_t stages, const std::string &notRing, int64_t ringBytes) {
  if (!f.hasDot)
    return;
  for (const auto &[loc, why] : f.left)
    rs.add(loc, "pipeline", RemarkStatus::Missed, fn.name(),
           fmt::format("load not pipelined: {}", why))
        .with("num_stages", stages);
  int64_t n = static_cast<int64_t>(f.taken.size());
  if (f.taken.empty()) {
    if (!f.left.empty())
      rs.add(f.loc, "pipeline", RemarkStatus::Missed, fn.name(),
             "loop not pipelined: none of its loads can be loaded ahead (see the loads' "
             "remarks)")
          .with("num_stages", stages);
    return;
  }
  std::string loads = fmt::format("{} load{} (line{} {})", n, n == 1 ? "" : "s", n == 1 ? "" : "s",
                                  lineList(rs, f.taken));
  if (ring) {
    rs.add(f.loc, "pipeline", RemarkStatus::Passed, fn.name(),
           fmt::format("loop pipelined: {} on a {}-stage cp.async ring, {} bytes of shared "
                       "memory",
                       loads, stages, ringBytes))
        .with("loads", n)
        .with("num_stages", stages)
        .with("ring_bytes", ringBytes);
    return;
  }
  rs.add(f.loc, "pipeline", RemarkStatus::Missed, fn.name(),
         fmt::format("loop pipelined in registers only: {} issued one iteration ahead, not on "
                     "the cp.async ring: {}",
                     loads, notRing.empty() ? "the ring does not apply" : notRing))
      .with("loads", n)
      .with("num_stages", stages)
      .with("ring_bytes", 0);
}

void remarkUnpipelined(RemarkSink &rs, Function &fn, const LoopPipeliner::Facts &f,
                       int64_t stages) {
  if (!f.hasDot)
    return;
  rs.add(f.loc, "pipeline", RemarkStatus::Missed, fn.name(),
         fmt::format("loop not pipelined: num_stages = {}; 2 or more (tk.range(..., "
                     "num_stages=3), or the launch's num_stages) loads its dot operands ahead",
                     stages))
      .with("num_stages", stages);
}

class SoftwarePipelinePass : public Pass {
public:
  SoftwarePipelinePass() : Pass(PassId::SoftwarePipeline) {}

  bool run(Module &module, DiagnosticEngine &) override {
    bool changed = false;
    for (auto &fn : module.functions()) {
      int64_t kernelStages = fn->attrs().getInt("num_stages").value_or(3);
      int64_t sharedLimit =
          fn->attrs().getInt("max_shared_bytes").value_or(LoopPipeliner::kWgmmaMaxSharedBytes);
      Switches switches;
      switches.wgmmaInflight = fn->attrs().getBool("wgmma_inflight").value_or(true);
      switches.wgmmaNative = fn->attrs().getBool("wgmma_native").value_or(true);
      std::string ring = fn->attrs().getString("wgmma_ring").value_or("auto");
      switches.wgmmaRing = ring == "late"    ? WgmmaRing::Late
                           : ring == "extra" ? WgmmaRing::Extra
                                             : WgmmaRing::Auto;
      switches.numWarps = fn->attrs().getInt("num_warps").value_or(4);
      std::vector<Operation *> loops;
      fn->walk([&](Operation *op) {
        if (op->is(Opcode::For))
          loops.push_back(op);
      });
      for (Operation *loop : loops) {
        // tk.range(..., num_stages=N) puts N on its loop, over the kernel's.
        int64_t stages = loop->attrs().getInt("num_stages").value_or(kernelStages);
        if (stages < 2) {
          if (RemarkSink *rs = module.remarks())
            remarkUnpipelined(
                *rs, *fn, LoopPipeliner(module.context(), *loop, switches).remarkFacts(), stages);
          continue;
        }
        LoopPipeliner p(module.context(), *loop, switches);
        LoopPipeliner::Facts facts;
        if (module.remarks())
          facts = p.remarkFacts();
        std::vector<Operation *> loads = p.candidates();
        std::pair<SourceLoc, std::string> refusal;
        bool ring =
            !loads.empty() && p.ringEligible(loads, false, module.remarks() ? &refusal : nullptr);
        std::string notRing;
        if (RemarkSink *rs = module.remarks(); rs && !refusal.second.empty())
          notRing = fmt::format("the load at line {} {}", rs->line(refusal.first), refusal.second);
        if (ring && !p.tf32RingFits(loads, stages, sharedLimit)) {
          ring = false;
          notRing = fmt::format("{} stages of its fp32 tiles do not fit in {} bytes of shared "
                                "memory",
                                stages, sharedLimit);
        }
        int64_t bytesBefore = module.remarks() ? allocatedBytes(*fn) : 0;
        // Loop-invariant operand tiles go to shared memory once, when they
        // fit beside the loop's ring and the rings made so far; else they
        // stay where they are (in registers, or staged by their dot).
        std::vector<Operation *> invariant = p.invariantOperands();
        int64_t ringBytes = ring ? stages * LoopPipeliner::invariantBytes(loads) : 0;
        int64_t staged = LoopPipeliner::invariantBytes(invariant);
        if (invariant.empty() ||
            allocatedBytes(*fn) + ringBytes + staged + LoopPipeliner::kSpareSharedBytes >
                sharedLimit) {
          invariant.clear();
          staged = 0;
        }
        // The loop's own ring first: the invariant copies go after the wait
        // that frees its bytes. The register form replaces the loop, so the
        // invariants are staged before it.
        if (ring) {
          p.runRing(loads, stages, staged);
          if (!invariant.empty())
            p.stageInvariants(invariant, p.prologueWait());
        } else {
          if (!invariant.empty())
            p.stageInvariants(invariant, nullptr);
          if (!loads.empty())
            p.run(loads);
        }
        changed |= ring || !loads.empty() || !invariant.empty();
        if (RemarkSink *rs = module.remarks())
          remarkLoop(*rs, *fn, facts, ring, stages, notRing, allocatedBytes(*fn) - bytesBefore);
      }
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createSoftwarePipelinePass() {
  return std::make_unique<SoftwarePipelinePass>();
}

} // namespace tk
