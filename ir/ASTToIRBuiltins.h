// BuiltinCall: one call of a tk.* or Python builtin being lowered to IR, its
// arguments bound to the builtin's signature (ASTToIRCalls.cpp). Private to
// ir/. lowerBuiltin (ASTToIRArgs.h) hands it to each family in turn, one
// member function per family, until one lowers it (a family answers nullopt
// for the builtins it does not have):
//
//   lowerCreation     program_id, num_programs, arange, zeros, zeros_like, full
//   lowerCompileTime  constexpr, pointer_type, next_power_of_2; Python's min,
//                     max, int, float, bool, len
//   lowerDebug        static_assert, static_print, device_print, print,
//                     device_assert, debug_barrier, assume, multiple_of,
//                     max_contiguous, max_constancy    (these three: ASTToIRBuiltins.cpp)
//   lowerMemory       load, store, atomic_*            ASTToIRBuiltinsMemory.cpp
//   lowerMath         cast, where, maximum, minimum, clamp, exp ... erf, abs,
//                     fma, sigmoid, softmax, cdiv, umulhi, div_rn, fdiv
//                                                      ASTToIRBuiltinsMath.cpp
//   lowerReduction    sum, max, min, argmax, argmin, xor_sum, reduce, cumsum,
//                     cumprod, associative_scan        ASTToIRBuiltinsReduce.cpp
//   lowerDot          dot (2-D, and batched 3-D),      ASTToIRBuiltinsDot.cpp
//                     dot_scaled (emulated)
//   lowerShape        broadcast, broadcast_to, expand_dims, reshape, view,
//                     ravel, permute, trans, flip, join, split, interleave,
//                     cat                              ASTToIRBuiltinsShape.cpp
//   lowerSort         sort, topk (Triton's bitonic network)
//                                                      ASTToIRBuiltinsSort.cpp
//   lowerRandom       randint4x, randint, rand, rand4x, randn, randn4x
//                     (Philox 4x32 / 4x64)             ASTToIRBuiltinsRandom.cpp
//   lowerLibdevice    libdevice.NAME (lang/Libdevice.def)
//                                                      ASTToIRBuiltinsLibdevice.cpp
//   lowerDescriptor   make_block_ptr, advance, make_tensor_descriptor,
//                     load/store_tensor_descriptor     ASTToIRBuiltinsDescriptor.cpp
//   lowerInlineAsm    inline_asm_elementwise           ASTToIRBuiltinsInlineAsm.cpp
//
// For `tk.load(x_ptr + offs, mask=offs < n)` args has pointer = the tensor
// of pointers and mask = the comparison; lowerMemory broadcasts the two to
// one shape (memoryOperands) and builds `load %ptr, %mask`. A family reports
// bad arguments as located errors (Val::error()); a tensor method reaches
// the same family with the receiver as its first argument (x.to is tk.cast).
#pragma once

#include "ir/ASTToIRArgs.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tk::astir {

bool isPowerOfTwo(int64_t v);
/// A dimension list: an int, or a tuple of ints (tk.zeros([M, N]),
/// reshape(x, M, N)); with `powerOfTwo` each a power of two.
std::optional<std::vector<int64_t>> shapeOf(Lowerer &L, const Val &v, SourceLoc loc,
                                            bool powerOfTwo = true);
/// A compile-time integer (or bool) argument; `what` names it in the error.
std::optional<int64_t> constInt(Lowerer &L, const Val &v, SourceLoc loc, const char *what);
/// Normalises a possibly negative axis for a rank; reports one out of range.
std::optional<int> axisFor(Lowerer &L, int64_t axis, unsigned rank, SourceLoc loc, Type *t);

/// desc.load(offsets), desc.store(offsets, value), desc.atomic_KIND(offsets,
/// value) and tk.load/store_tensor_descriptor (`method` is "load", "store"
/// or "atomic_add" ...) on a tensor descriptor (ASTToIRBuiltinsDescriptor.cpp).
Val descriptorAccess(Lowerer &L, const Val &desc, SourceLoc descLoc, const std::string &method,
                     const Val &offsets, SourceLoc offsetsLoc, const Val &value, SourceLoc loc);
/// tk.load / tk.store whose pointer is a block pointer.
Val blockPointerAccess(Lowerer &L, Args &args, bool store, SourceLoc loc);

class BuiltinCall {
public:
  BuiltinCall(Lowerer &l, const BuiltinInfo &builtin, Args &a, SourceLoc at)
      : L(l), b(l.builder()), ctx(l.ctx()), info(builtin), args(a), loc(at),
        name(qualifiedName(builtin)) {}

  Lowerer &L;
  Builder &b;
  IRContext &ctx;
  const BuiltinInfo &info;
  Args &args;
  SourceLoc loc;
  std::string name; // "tk.load", for messages

  // The families (see above): the lowered value, or nullopt when the
  // builtin is not one of the family's.
  std::optional<Val> lowerCreation();
  std::optional<Val> lowerCompileTime();
  std::optional<Val> lowerDebug();
  std::optional<Val> lowerMemory();
  std::optional<Val> lowerMath();
  std::optional<Val> lowerReduction();
  std::optional<Val> lowerDot();
  std::optional<Val> lowerShape();
  std::optional<Val> lowerSort();
  std::optional<Val> lowerRandom();
  std::optional<Val> lowerLibdevice();
  std::optional<Val> lowerDescriptor();
  std::optional<Val> lowerInlineAsm();

  // Shared by the families.
  Val fail(std::string msg) { return L.fail(loc, std::move(msg)); }
  /// "not supported yet: tk.NAME", for a builtin no family lowers.
  Val notSupported();
  /// A tensor (or scalar) IR operand named `param`.
  Value *tensor(std::string_view param) { return L.materialize(args.get(param), args.loc(param)); }
  /// The elementwise maximum (or minimum) of two operands made one type and
  /// shape (lowerMath; Python's max and min of dynamic values too); `nan`
  /// is the op's NaN rule for floats ("number" or "propagate").
  Val minMax(bool isMax, const Val &x, const Val &y, const char *nan = "number");
  /// propagate_nan as a max/min op's `nan`: "number" for
  /// tk.PropagateNan.NONE (the default), "propagate" for .ALL; null after
  /// reporting anything else.
  const char *nanMode();
  /// The high half of the unsigned product of two 32- or 64-bit integer
  /// operands of one type (tk.umulhi; Philox).
  Value *umulhi(Value *x, Value *y);

private:
  // Helpers of one family, defined beside it.
  Val elementwiseMath(Opcode op, bool floatsOnly);
  Val reduce(const std::string &kind);
  Val histogram();
  Val combine(bool isScan);
  Val mapElementwise();
  /// `vals` materialized (a Python number as Triton's to_tensor dtype) and
  /// broadcast to one shape, which `shape` gets; `check` may refuse value i
  /// with a located error first. False after an error (at `at`).
  bool broadcastValues(const std::vector<Val> &vals, SourceLoc at, std::vector<Value *> &xs,
                       std::vector<int64_t> &shape,
                       const std::function<bool(size_t, Value *)> &check = nullptr);
  bool memoryOperands(Value *&ptr, Value *&mask, Value *&value, const char *valueParam);
  bool cacheAttrs(Operation *op);
  Val atomic(const std::string &kind);
  bool memoryOrder(Operation *op);
  Val hint(const char *attr);
};

} // namespace tk::astir
