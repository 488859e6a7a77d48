// Structured control flow and the ops with effects other than memory:
// for, while, if, call, assert, print. Regions run through
// ProgramRunner::runBlock, which hands back the terminator's values; loops
// carry those values into the next iteration.
#include "interpreter/InterpreterImpl.h"

#include <fmt/format.h>

namespace tk::interp {
namespace {

RtValue scalarOfInt(Type *t, int64_t v) {
  RtValue out = makeValue(t);
  visitBits(elementBytes(t), [&](auto tag) {
    using B = decltype(tag);
    out.data<B>()[0] = static_cast<B>(static_cast<uint64_t>(v));
  });
  return out;
}

// for %lo, %hi, %step, inits: the induction variable runs as Python's range
// does, upward for a positive step and downward for a negative one. Bounds
// are read in 64 bits, so the variable cannot wrap in its own type.
bool runFor(ProgramRunner &r, Operation &op) {
  Type *ivType = op.operand(0)->type();
  bool asSigned = isSigned(ivType->dtype());
  int64_t lo = readInt(r.operand(op, 0), 0, asSigned);
  int64_t hi = readInt(r.operand(op, 1), 0, asSigned);
  int64_t step = readInt(r.operand(op, 2), 0, asSigned);
  if (step == 0)
    return r.fail(
        op, fmt::format("loop step is 0 in program {} (the loop would never end)", r.programStr()));
  std::vector<RtValue> carried;
  for (unsigned i = 3; i < op.numOperands(); ++i)
    carried.push_back(r.operand(op, i));
  std::vector<RtValue> args, yielded;
  for (int64_t iv = lo; step > 0 ? iv < hi : iv > hi; iv += step) {
    args.clear();
    args.push_back(scalarOfInt(ivType, iv));
    args.insert(args.end(), carried.begin(), carried.end());
    if (!r.runBlock(op.body(), args, yielded))
      return false;
    carried.swap(yielded);
    if ((step > 0 && iv > INT64_MAX - step) || (step < 0 && iv < INT64_MIN - step))
      break;
  }
  for (unsigned i = 0; i < op.numResults(); ++i)
    r.setResult(op, i, std::move(carried[i]));
  return true;
}

bool runWhile(ProgramRunner &r, Operation &op) {
  std::vector<RtValue> carried;
  for (Value *v : op.operands())
    carried.push_back(r.get(v));
  std::vector<RtValue> cond;
  // The step budget (counted per op) stops a loop that never ends.
  for (;;) {
    if (!r.runBlock(op.body(0), carried, cond))
      return false;
    bool go = cond[0].data<uint8_t>()[0] & 1;
    cond.erase(cond.begin());
    if (!go) {
      for (unsigned i = 0; i < op.numResults(); ++i)
        r.setResult(op, i, std::move(cond[i]));
      return true;
    }
    if (!r.runBlock(op.body(1), cond, carried))
      return false;
  }
}

bool runIf(ProgramRunner &r, Operation &op) {
  bool cond = r.operand(op, 0).data<uint8_t>()[0] & 1;
  std::vector<RtValue> results;
  if (!r.runBlock(op.body(cond ? 0 : 1), {}, results))
    return false;
  for (unsigned i = 0; i < op.numResults(); ++i)
    r.setResult(op, i, std::move(results[i]));
  return true;
}

bool runCall(ProgramRunner &r, Operation &op) {
  std::string callee = *op.attrs().getString("callee");
  Function *fn = r.run().module.lookup(callee);
  if (!fn)
    return r.fail(op, fmt::format("calls unknown function '@{}'", callee));
  std::vector<RtValue> args, results;
  for (Value *v : op.operands())
    args.push_back(r.get(v));
  if (!r.callFunction(op, *fn, std::move(args), results))
    return false;
  for (unsigned i = 0; i < op.numResults(); ++i)
    r.setResult(op, i, std::move(results[i]));
  return true;
}

// Stops the run at the first false element.
bool runAssert(ProgramRunner &r, Operation &op) {
  const RtValue &c = r.operand(op, 0);
  const uint8_t *v = c.data<uint8_t>();
  for (int64_t i = 0; i < c.size; ++i)
    if (!(v[i] & 1)) {
      std::string where = c.type->isTensor() ? fmt::format(", element {} (index {})", i,
                                                           indexStr(c.type->shape(), i))
                                             : "";
      return r.fail(op, fmt::format("assertion failed in program {}{}: {}", r.programStr(), where,
                                    *op.attrs().getString("message")));
    }
  return true;
}

// One line per element, as Triton's device_print writes them:
//   pid (0, 0, 0) idx (3) x: 1.5
bool runPrint(ProgramRunner &r, Operation &op) {
  std::string prefix = *op.attrs().getString("prefix");
  bool hex = op.attrs().getBool("hex").value_or(false);
  auto pid = r.programId();
  std::string head = fmt::format("pid ({}, {}, {})", pid[0], pid[1], pid[2]);
  std::string &out = r.printOutput();
  if (op.numOperands() == 0) {
    out += fmt::format("{} {}\n", head, prefix);
    return true;
  }
  for (unsigned k = 0; k < op.numOperands(); ++k) {
    const RtValue &v = r.operand(op, k);
    std::string which = op.numOperands() > 1 ? fmt::format("(operand {}) ", k) : "";
    for (int64_t i = 0; i < v.size; ++i) {
      std::string idx;
      if (v.type->isTensor()) {
        idx = indexStr(v.type->shape(), i); // "[0, 3]" -> "(0, 3)"
        idx = " idx (" + idx.substr(1, idx.size() - 2) + ")";
      }
      out += fmt::format("{}{} {}{}{}\n", head, idx, prefix, which, elementStr(v, i, hex));
    }
  }
  return true;
}

} // namespace

bool execControlFlow(ProgramRunner &r, Operation &op) {
  switch (op.opcode()) {
  case Opcode::For:
    return runFor(r, op);
  case Opcode::While:
    return runWhile(r, op);
  case Opcode::If:
    return runIf(r, op);
  case Opcode::Call:
    return runCall(r, op);
  case Opcode::Assert:
    return runAssert(r, op);
  case Opcode::Print:
    return runPrint(r, op);
  default:
    return r.fail(op, "is not a control-flow op");
  }
}

} // namespace tk::interp
