// Ops that make or rearrange blocks without computing on elements:
// program_id, num_programs, special_register, make_range, splat, broadcast, expand_dims,
// reshape, trans, gather. Values are row-major, so expand_dims and reshape
// only change the type; broadcast and trans are one strided gather.
#include "interpreter/InterpreterImpl.h"

#include <fmt/format.h>

#include <chrono>

namespace tk::interp {
namespace {

// Out element at multi-index idx reads in element sum(idx[d] * inStrides[d]):
// a stride of 0 repeats (broadcast), a permuted stride transposes.
RtValue gather(const RtValue &in, Type *outType, const std::vector<int64_t> &inStrides) {
  RtValue out = makeValue(outType);
  const std::vector<int64_t> &shape = outType->shape();
  size_t rank = shape.size();
  visitBits(elementBytes(in.type), [&](auto tag) {
    using B = decltype(tag);
    const B *src = in.data<B>();
    B *dst = out.data<B>();
    std::vector<int64_t> idx(rank, 0);
    int64_t inner = shape[rank - 1], innerStride = inStrides[rank - 1];
    for (int64_t o = 0; o < out.size; o += inner) {
      int64_t base = 0;
      for (size_t d = 0; d + 1 < rank; ++d)
        base += idx[d] * inStrides[d];
      for (int64_t j = 0; j < inner; ++j)
        dst[o + j] = src[base + j * innerStride];
      // Advance the odometer over the outer dimensions.
      for (size_t d = rank - 1; d-- > 0;) {
        if (++idx[d] < shape[d])
          break;
        idx[d] = 0;
      }
    }
  });
  return out;
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

RtValue scalarI32(ProgramRunner &r, int32_t v) {
  RtValue out = makeValue(r.context().i32());
  out.data<int32_t>()[0] = v;
  return out;
}

} // namespace

bool execShape(ProgramRunner &r, Operation &op) {
  Type *t = op.numResults() ? op.result()->type() : nullptr;
  switch (op.opcode()) {
  case Opcode::ProgramId:
  case Opcode::NumPrograms: {
    int64_t axis = *op.attrs().getInt("axis");
    if (axis < 0 || axis > 2)
      return r.fail(op, fmt::format("axis must be 0, 1 or 2, got {}", axis));
    int32_t v = op.is(Opcode::ProgramId) ? r.programId()[axis]
                                         : static_cast<int32_t>(r.run().options.grid[axis]);
    r.setResult(op, 0, scalarI32(r, v));
    return true;
  }
  case Opcode::SpecialRegister: {
    // The host's answers (docs/python.md): globaltimer a monotonic
    // nanosecond clock, smid 0 (one host runs the programs).
    RtValue out = makeValue(t);
    if (*op.attrs().getString("name") == "globaltimer")
      out.data<int64_t>()[0] = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count();
    else
      out.data<int32_t>()[0] = 0;
    r.setResult(op, 0, std::move(out));
    return true;
  }
  case Opcode::MakeRange: {
    int64_t start = *op.attrs().getInt("start");
    RtValue out = makeValue(t);
    int32_t *o = out.data<int32_t>();
    for (int64_t i = 0; i < out.size; ++i)
      o[i] = static_cast<int32_t>(start + i);
    r.setResult(op, 0, std::move(out));
    return true;
  }
  case Opcode::Splat: {
    const RtValue &in = r.operand(op, 0);
    RtValue out = makeValue(t);
    visitBits(elementBytes(t), [&](auto tag) {
      using B = decltype(tag);
      B v = in.data<B>()[0];
      B *o = out.data<B>();
      for (int64_t i = 0; i < out.size; ++i)
        o[i] = v;
    });
    r.setResult(op, 0, std::move(out));
    return true;
  }
  case Opcode::Broadcast: {
    const RtValue &in = r.operand(op, 0);
    std::vector<int64_t> strides = rowMajorStrides(in.type->shape());
    for (size_t d = 0; d < strides.size(); ++d)
      if (in.type->shape()[d] == 1)
        strides[d] = 0;
    r.setResult(op, 0, gather(in, t, strides));
    return true;
  }
  case Opcode::ExpandDims:
  case Opcode::Reshape:
    r.setResult(op, 0, retype(r.operand(op, 0), t));
    return true;
  case Opcode::Trans: {
    const RtValue &in = r.operand(op, 0);
    std::vector<int64_t> inStrides = rowMajorStrides(in.type->shape());
    std::vector<int64_t> strides;
    for (int64_t o : op.attrs().get("order")->getIntArray())
      strides.push_back(inStrides[o]);
    r.setResult(op, 0, gather(in, t, strides));
    return true;
  }
  case Opcode::Gather: {
    // Triton leaves an index outside [0, extent) undefined; here it is an
    // error at the gather, naming the element, rather than a read of
    // another element.
    const RtValue &src = r.operand(op, 0), &index = r.operand(op, 1);
    const std::vector<int64_t> &ss = src.type->shape(), &shape = t->shape();
    int64_t axis = *op.attrs().getInt("axis");
    std::vector<int64_t> srcStrides = rowMajorStrides(ss);
    bool asSigned = !isUnsigned(index.type->dtype());
    RtValue out = makeValue(t);
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t o = 0; o < out.size; ++o) {
      int64_t at = readInt(index, o, asSigned);
      if (at < 0 || at >= ss[axis])
        return r.fail(
            op, fmt::format("index {} of tk.gather at position {} is out of range for axis {} "
                            "of the source {} (valid: 0 to {})",
                            at, shapeStr(idx), axis, shapeStr(ss), ss[axis] - 1));
      int64_t from = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        from += (int64_t(d) == axis ? at : idx[d]) * srcStrides[d];
      std::memcpy(out.storage.get() + o * elementBytes(t),
                  src.storage.get() + from * elementBytes(t), elementBytes(t));
      for (size_t d = shape.size(); d-- > 0;) {
        if (++idx[d] < shape[d])
          break;
        idx[d] = 0;
      }
    }
    r.setResult(op, 0, std::move(out));
    return true;
  }
  default:
    return r.fail(op, "is not a shape op");
  }
}

} // namespace tk::interp
