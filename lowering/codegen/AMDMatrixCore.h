// AMDMatrixCore: the matrix-core instructions of the AMD GPU archs tk
// targets, for tk.dot: which instruction computes an n x n piece of a dot
// with given operands on an arch (--accelerate-dot asks when it chooses the
// layout, the lowering when it emits the instruction), and its shape. Free
// of LLVM; AMDGPUTarget.cpp maps each instruction to its LLVM intrinsic.
//
//   amdMatrixInstr("gfx942", DType::F16, 32)
//     -> {"v_mfma_f32_32x32x8_f16", n 32, k 8, kWidth 4}
//   amdMatrixInstr("gfx942", DType::I8, 16)
//     -> {"v_mfma_i32_16x16x32_i8", n 16, k 32, kWidth 8}
//   amdMatrixInstr("gfx1100", DType::F16, 16)
//     -> {"v_wmma_f32_16x16x16_f16", n 16, k 16, kWidth 16, wmma}
//
// The shapes (AMD's CDNA2/CDNA3/RDNA3 ISA and its matrix instruction
// calculator): each lane of a warp holds kWidth consecutive K elements of
// one A row (lane n (k / kWidth) + i holds A[i][k]) and of one B column, so
// one instruction covers K = k in k / kWidth lane groups; the accumulator
// is fp32 for float operands, int32 for int8 (ir/Layout.h AMDMmaLayout has
// its layout). gfx942 has the int8 forms of twice the K (x16 / x32, 8 bytes
// per lane) where gfx90a has x8 / x16; gfx1100's WMMA (wave32) repeats A
// and B in lanes l and l + 16 and takes all 16 K elements in every lane.
#pragma once

#include "lang/DType.h"

#include <cstdint>
#include <string_view>

namespace tk {

struct AMDMatrixInstr {
  std::string_view name; // the assembly mnemonic on that arch
  int64_t n = 0;         // the piece is n x n
  int64_t k = 0;         // K per instruction
  int64_t kWidth = 0;    // consecutive K elements per lane and operand
  bool wmma = false;     // RDNA3's WMMA (wave32), else CDNA's MFMA (wave64)
};

/// The instruction for an n x n piece of `operands` x `operands` on `arch`
/// (an AMD GPU arch), accumulating in fp32 (int32 for int8); null where the
/// arch has none. fp32 operands take the fp32 MFMA (the dot rounds them to
/// tf32 first for input_precision "tf32").
inline const AMDMatrixInstr *amdMatrixInstr(std::string_view arch, DType operands, int64_t n) {
  struct Row {
    std::string_view arch;
    DType operands;
    AMDMatrixInstr instr;
  };
  static constexpr Row kTable[] = {
      {"gfx90a", DType::F16, {"v_mfma_f32_32x32x8f16", 32, 8, 4}},
      {"gfx90a", DType::F16, {"v_mfma_f32_16x16x16f16", 16, 16, 4}},
      {"gfx90a", DType::BF16, {"v_mfma_f32_32x32x8bf16_1k", 32, 8, 4}},
      {"gfx90a", DType::BF16, {"v_mfma_f32_16x16x16bf16_1k", 16, 16, 4}},
      {"gfx90a", DType::I8, {"v_mfma_i32_32x32x8i8", 32, 8, 4}},
      {"gfx90a", DType::I8, {"v_mfma_i32_16x16x16i8", 16, 16, 4}},
      {"gfx90a", DType::F32, {"v_mfma_f32_32x32x2f32", 32, 2, 1}},
      {"gfx90a", DType::F32, {"v_mfma_f32_16x16x4f32", 16, 4, 1}},
      {"gfx942", DType::F16, {"v_mfma_f32_32x32x8_f16", 32, 8, 4}},
      {"gfx942", DType::F16, {"v_mfma_f32_16x16x16_f16", 16, 16, 4}},
      {"gfx942", DType::BF16, {"v_mfma_f32_32x32x8_bf16", 32, 8, 4}},
      {"gfx942", DType::BF16, {"v_mfma_f32_16x16x16_bf16", 16, 16, 4}},
      {"gfx942", DType::I8, {"v_mfma_i32_32x32x16_i8", 32, 16, 8}},
      {"gfx942", DType::I8, {"v_mfma_i32_16x16x32_i8", 16, 32, 8}},
      {"gfx942", DType::F32, {"v_mfma_f32_32x32x2_f32", 32, 2, 1}},
      {"gfx942", DType::F32, {"v_mfma_f32_16x16x4_f32", 16, 4, 1}},
      {"gfx1100", DType::F16, {"v_wmma_f32_16x16x16_f16", 16, 16, 16, true}},
      {"gfx1100", DType::BF16, {"v_wmma_f32_16x16x16_bf16", 16, 16, 16, true}},
      {"gfx1100", DType::I8, {"v_wmma_i32_16x16x16_iu8", 16, 16, 16, true}},
  };
  for (const Row &r : kTable)
    if (r.arch == arch && r.operands == operands && r.instr.n == n)
      return &r.instr;
  return nullptr;
}

} // namespace tk
