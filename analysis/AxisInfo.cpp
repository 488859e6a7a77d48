#include "analysis/AxisInfo.h"
#include "analysis/AxisInfoRules.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>
#include <numeric>

namespace tk {

namespace {

using namespace axisinfo;

// A loop whose carried facts have not settled after this many rounds gets
// "nothing known" for them, which is always a fixpoint. The lattice is
// shallow (powers of two), so real loops settle in two or three rounds.
constexpr int kMaxLoopRounds = 16;

std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

} // namespace

int64_t powerOfTwoDivisor(int64_t v) {
  if (v == 0)
    return kMaxDiv;
  uint64_t u = static_cast<uint64_t>(v);
  uint64_t low = u & (~u + 1);
  return low >= static_cast<uint64_t>(kMaxDiv) ? kMaxDiv : static_cast<int64_t>(low);
}

AxisInfo AxisInfo::unknown(unsigned rank) {
  rank = std::max(rank, 1u);
  AxisInfo info;
  info.contiguity.assign(rank, 1);
  info.divisibility.assign(rank, 1);
  info.constancy.assign(rank, 1);
  return info;
}

AxisInfo AxisInfo::uniform(const std::vector<int64_t> &shape, int64_t divisibility) {
  AxisInfo info = unknown(static_cast<unsigned>(shape.size()));
  for (unsigned d = 0; d < shape.size(); ++d) {
    info.divisibility[d] = divisibility;
    info.constancy[d] = shape[d];
  }
  if (shape.empty())
    info.divisibility[0] = divisibility;
  return info;
}

AxisInfo AxisInfo::ofConstant(int64_t value, const std::vector<int64_t> &shape) {
  AxisInfo info = uniform(shape, powerOfTwoDivisor(value));
  info.constant = value;
  return info;
}

int64_t AxisInfo::divisibilityAt(unsigned dim, int64_t length) const {
  // A block at least as long as a run starts where a run starts; a shorter
  // one may start inside a run, `length` past an aligned start.
  if (length >= contiguity[dim])
    return divisibility[dim];
  return std::min(divisibility[dim], length);
}

AxisInfo AxisInfo::join(const AxisInfo &a, const AxisInfo &b) {
  if (a.rank() != b.rank())
    return unknown(a.rank());
  AxisInfo r = unknown(a.rank());
  for (unsigned d = 0; d < a.rank(); ++d) {
    r.contiguity[d] = std::gcd(a.contiguity[d], b.contiguity[d]);
    r.divisibility[d] = std::gcd(a.divisibility[d], b.divisibility[d]);
    r.constancy[d] = std::gcd(a.constancy[d], b.constancy[d]);
  }
  if (a.constant && a.constant == b.constant)
    r.constant = a.constant;
  return r;
}

std::string AxisInfo::str() const {
  std::string s = fmt::format("contiguity = {}, divisibility = {}, constancy = {}",
                              list(contiguity), list(divisibility), list(constancy));
  if (constant)
    s += fmt::format(", constant = {}", *constant);
  return s;
}

namespace {

// The solver walks the function once in text order (values are defined before
// they are used), re-walking loop bodies until their carried facts settle.
// Ops without regions go to the rules of AxisInfoRules.cpp.
class AxisInfoSolver {
public:
  explicit AxisInfoSolver(std::map<Value *, AxisInfo> &infos)
      : infos_(infos), lookup_([this](Value *v) -> const AxisInfo & { return info(v); }) {}

  void seedArgument(Function &fn, unsigned i) {
    Value *arg = fn.argument(i);
    AxisInfo info = AxisInfo::unknown(1);
    if (std::optional<int64_t> div = fn.argAttrs(i).getInt("divisibility"); div && *div > 0)
      info.divisibility[0] = powerOfTwoDivisor(*div);
    infos_[arg] = info;
  }

  void visitBlock(Block &block) {
    for (Operation &op : block)
      visitOp(op);
  }

private:
  const AxisInfo &info(Value *v) {
    auto it = infos_.find(v);
    if (it != infos_.end())
      return it->second;
    // Only reachable on IR the verifier would reject (a use before its
    // definition); answer "nothing known" rather than fail.
    return infos_[v] = AxisInfo::unknown(dimsOf(v->type()).size());
  }
  void set(Value *v, AxisInfo info) { infos_[v] = std::move(info); }

  void visitOp(Operation &op) {
    switch (op.opcode()) {
    case Opcode::For:
      return visitFor(op);
    case Opcode::While:
      return visitWhile(op);
    case Opcode::If:
      return visitIf(op);
    default:
      break;
    }
    // Reduce and scan combiners (and anything else with regions): their block
    // arguments stand for arbitrary elements, so nothing is known of them.
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (unsigned b = 0; b < op.region(r).numBlocks(); ++b) {
        Block &block = op.region(r).block(b);
        for (Value *arg : block.arguments())
          set(arg, AxisInfo::unknown(dimsOf(arg->type()).size()));
        visitBlock(block);
      }
    for (Value *res : op.results()) {
      AxisInfo info = op.numResults() == 1 ? transfer(op, lookup_) : AxisInfo::unknown(0);
      if (info.rank() != dimsOf(res->type()).size())
        info = AxisInfo::unknown(dimsOf(res->type()).size());
      applyHints(op, info, dimsOf(res->type()));
      set(res, std::move(info));
    }
  }

  // --- structured control flow

  std::vector<AxisInfo> yielded(Block &block, size_t count, size_t first = 0) {
    std::vector<AxisInfo> out;
    Operation *term = block.terminator();
    for (size_t i = 0; i < count; ++i) {
      if (term && first + i < term->numOperands())
        out.push_back(info(term->operand(first + i)));
      else
        out.push_back(AxisInfo::unknown(0));
    }
    return out;
  }

  static std::vector<AxisInfo> joinAll(const std::vector<AxisInfo> &a,
                                       const std::vector<AxisInfo> &b) {
    std::vector<AxisInfo> r;
    for (size_t i = 0; i < a.size(); ++i)
      r.push_back(AxisInfo::join(a[i], b[i]));
    return r;
  }

  static std::vector<AxisInfo> unknowns(const std::vector<AxisInfo> &like) {
    std::vector<AxisInfo> r;
    for (const AxisInfo &i : like)
      r.push_back(AxisInfo::unknown(i.rank()));
    return r;
  }

  // Runs `round(carried)` (which walks the loop and returns what flows back
  // to the carried arguments) until the joined facts stop changing.
  template <typename Round>
  std::vector<AxisInfo> fixpoint(std::vector<AxisInfo> carried, Round round) {
    for (int i = 0; i < kMaxLoopRounds; ++i) {
      std::vector<AxisInfo> next = joinAll(carried, round(carried));
      if (next == carried)
        return carried;
      carried = std::move(next);
    }
    carried = unknowns(carried);
    round(carried);
    return carried;
  }

  void visitFor(Operation &op) {
    if (op.numOperands() < 3 || op.numRegions() != 1 || op.region(0).empty())
      return setUnknownResults(op);
    Block &body = op.body();
    size_t n = op.numOperands() - 3;
    if (body.numArguments() != n + 1 || op.numResults() != n)
      return setUnknownResults(op);
    // iv = lower + k * step: a multiple of whatever divides both.
    AxisInfo iv = AxisInfo::unknown(1);
    iv.divisibility[0] =
        std::min(info(op.operand(0)).divisibility[0], info(op.operand(2)).divisibility[0]);
    set(body.argument(0), iv);
    std::vector<AxisInfo> inits;
    for (size_t i = 0; i < n; ++i)
      inits.push_back(info(op.operand(3 + i)));
    std::vector<AxisInfo> carried = fixpoint(inits, [&](const std::vector<AxisInfo> &c) {
      for (size_t i = 0; i < n; ++i)
        set(body.argument(1 + i), c[i]);
      visitBlock(body);
      return yielded(body, n);
    });
    // A result is an init (no iteration) or a yield: the joined facts hold.
    for (size_t i = 0; i < n; ++i)
      set(op.result(i), carried[i]);
  }

  void visitWhile(Operation &op) {
    if (op.numRegions() != 2 || op.region(0).empty() || op.region(1).empty())
      return setUnknownResults(op);
    Block &before = op.body(0), &after = op.body(1);
    size_t n = op.numOperands(), m = op.numResults();
    if (before.numArguments() != n || after.numArguments() != m)
      return setUnknownResults(op);
    std::vector<AxisInfo> inits;
    for (size_t i = 0; i < n; ++i)
      inits.push_back(info(op.operand(i)));
    std::vector<AxisInfo> passed;
    fixpoint(inits, [&](const std::vector<AxisInfo> &c) {
      for (size_t i = 0; i < n; ++i)
        set(before.argument(i), c[i]);
      visitBlock(before);
      // condition %cond, values...: the values go to `after` and out.
      passed = yielded(before, m, 1);
      for (size_t i = 0; i < m; ++i)
        set(after.argument(i), passed[i]);
      visitBlock(after);
      return yielded(after, n);
    });
    for (size_t i = 0; i < m; ++i)
      set(op.result(i), passed[i]);
  }

  void visitIf(Operation &op) {
    if (op.numRegions() != 2 || op.region(0).empty() || op.region(1).empty())
      return setUnknownResults(op);
    visitBlock(op.body(0));
    visitBlock(op.body(1));
    std::vector<AxisInfo> joined =
        joinAll(yielded(op.body(0), op.numResults()), yielded(op.body(1), op.numResults()));
    for (unsigned i = 0; i < op.numResults(); ++i)
      set(op.result(i), joined[i]);
  }

  void setUnknownResults(Operation &op) {
    for (Value *r : op.results())
      set(r, AxisInfo::unknown(dimsOf(r->type()).size()));
  }

  // --- hints

  // Each hint is the author's promise; the computed facts are also true, so
  // the stronger of the two holds.
  static void applyHints(Operation &op, AxisInfo &info, const std::vector<int64_t> &dims) {
    // The agreed names are `tk.multiple_of`, ...; the AST -> IR lowering
    // writes them without the `tk.` prefix for now, so both are read.
    auto hint = [&](std::string_view name, std::vector<int64_t> &field, bool isDivisibility) {
      const Attribute *a = op.attrs().get(name);
      if (!a)
        a = op.attrs().get(name.substr(3));
      if (!a || !a->isIntArray())
        return;
      const std::vector<int64_t> &v = a->getIntArray();
      for (size_t d = 0; d < std::min(v.size(), field.size()); ++d) {
        if (v[d] <= 0)
          continue;
        // Runs are powers of two dividing the dimension; a divisibility is a
        // power of two.
        int64_t h = isDivisibility ? powerOfTwoDivisor(v[d]) : std::gcd(v[d], dims[d]);
        if (!isDivisibility && !isPowerOfTwo(h))
          h = powerOfTwoDivisor(h);
        field[d] = std::max(field[d], h);
      }
    };
    hint("tk.multiple_of", info.divisibility, true);
    hint("tk.max_contiguous", info.contiguity, false);
    hint("tk.max_constancy", info.constancy, false);
  }

  std::map<Value *, AxisInfo> &infos_;
  Lookup lookup_;
};

} // namespace

AxisInfoAnalysis::AxisInfoAnalysis(Function &fn) {
  AxisInfoSolver solver(infos_);
  for (unsigned i = 0; i < fn.numArguments(); ++i)
    solver.seedArgument(fn, i);
  solver.visitBlock(fn.body());
}

const AxisInfo &AxisInfoAnalysis::get(Value *v) const {
  auto it = infos_.find(v);
  assert(it != infos_.end() && "value is not in the analysed function");
  return it->second;
}

unsigned AxisInfoAnalysis::mostContiguousDim(Value *v) const {
  const AxisInfo &info = get(v);
  unsigned best = info.rank() - 1;
  for (unsigned d = info.rank(); d-- > 0;)
    if (info.contiguity[d] > info.contiguity[best])
      best = d;
  return best;
}

int64_t AxisInfoAnalysis::alignment(Value *ptr) const {
  Type *elem = ptr->type()->elementType();
  assert(elem->isPointer() && "alignment of a non-pointer");
  Type *pointee = cast<PointerType>(elem)->pointee();
  int64_t bytes = pointee->isPointer() ? 8 : dtypeBytes(pointee->dtype());
  unsigned d = mostContiguousDim(ptr);
  const AxisInfo &info = get(ptr);
  return std::min(info.divisibility[d], satMul(info.contiguity[d], bytes));
}

int64_t AxisInfoAnalysis::maskAlignment(Value *mask, unsigned dim) const {
  return get(mask).constancy[dim];
}

} // namespace tk
