// The choice of cross-lane instructions for an xor shuffle (see
// AMDGPUShuffle.h).
#include "lowering/codegen/AMDGPUShuffle.h"

#include "lowering/codegen/TargetOptions.h"

#include <fmt/format.h>

namespace tk {

std::vector<LaneOp> xorShufflePlan(std::string_view arch, unsigned laneMask) {
  unsigned wave = static_cast<unsigned>(amdgpuWavefrontSize(arch));
  if (laneMask == 0 || laneMask >= wave)
    return {};
  // gfx10 and newer: DPP16's row_xmask and v_permlanex16 make every mask
  // one instruction.
  bool gfx10Plus = !arch.starts_with("gfx9");
  if (laneMask < 4)
    return {{LaneOpKind::QuadPerm, laneMask}};
  if (laneMask < 16) {
    if (gfx10Plus)
      return {{LaneOpKind::RowXmask, laneMask}};
    // gfx9: the row ops that are xors within a row are row_half_mirror
    // (^7), row_ror:8 (^8) and row_mirror (^15); the one of them that
    // matches the mask's bits 2 and 3 leaves an xor below 4 for a quad_perm.
    LaneOp row = (laneMask & 12) == 4   ? LaneOp{LaneOpKind::RowHalfMirror, 0}
                 : (laneMask & 12) == 8 ? LaneOp{LaneOpKind::RowRor, 8}
                                        : LaneOp{LaneOpKind::RowMirror, 0};
    unsigned rest = laneMask ^ (row.kind == LaneOpKind::RowHalfMirror ? 7u
                                : row.kind == LaneOpKind::RowRor      ? 8u
                                                                      : 15u);
    if (rest == 0)
      return {row};
    return {row, {LaneOpKind::QuadPerm, rest}};
  }
  if (laneMask < 32)
    return {gfx10Plus ? LaneOp{LaneOpKind::PermlaneX16, laneMask & 15}
                      : LaneOp{LaneOpKind::Swizzle, laneMask}};
  // Across the two halves of a wave64 wavefront (gfx9): no DPP control,
  // swizzle or permlane reaches there; ds_bpermute reads any lane.
  return {{LaneOpKind::Bpermute, laneMask}};
}

unsigned laneOpSource(const LaneOp &op, unsigned lane) {
  unsigned row = lane & ~15u, j = lane & 15u;
  switch (op.kind) {
  case LaneOpKind::QuadPerm:
    return (lane & ~3u) | ((lane & 3u) ^ op.arg);
  case LaneOpKind::RowMirror:
    return row | (15u - j);
  case LaneOpKind::RowHalfMirror:
    return (lane & ~7u) | (7u - (lane & 7u));
  case LaneOpKind::RowRor:
    return row | ((j + 16u - op.arg) & 15u);
  case LaneOpKind::RowXmask:
    return row | (j ^ op.arg);
  case LaneOpKind::Swizzle: {
    // Bit-mask mode: and_mask 31, or_mask 0, xor_mask arg (swizzleOffset).
    unsigned offset = swizzleOffset(op);
    unsigned andMask = offset & 31u, orMask = (offset >> 5) & 31u, xorMask = (offset >> 10) & 31u;
    return (lane & ~31u) | ((((lane & 31u) & andMask) | orMask) ^ xorMask);
  }
  case LaneOpKind::PermlaneX16: {
    auto [lo, hi] = permlaneSelects(op);
    unsigned sel = ((j < 8 ? lo >> (4 * j) : hi >> (4 * (j - 8))) & 15u);
    return (lane & ~31u) | ((lane & 16u) ^ 16u) | sel;
  }
  case LaneOpKind::Bpermute:
    return lane ^ op.arg;
  }
  return lane;
}

unsigned dppControl(const LaneOp &op) {
  switch (op.kind) {
  case LaneOpKind::QuadPerm: {
    unsigned ctrl = 0;
    for (unsigned j = 0; j < 4; ++j)
      ctrl |= (j ^ op.arg) << (2 * j);
    return ctrl;
  }
  case LaneOpKind::RowMirror:
    return 0x140;
  case LaneOpKind::RowHalfMirror:
    return 0x141;
  case LaneOpKind::RowRor:
    return 0x120 + op.arg;
  case LaneOpKind::RowXmask:
    return 0x160 + op.arg;
  default:
    return 0;
  }
}

unsigned swizzleOffset(const LaneOp &op) { return 31u | (op.arg << 10); }

std::pair<uint32_t, uint32_t> permlaneSelects(const LaneOp &op) {
  uint32_t lo = 0, hi = 0;
  for (unsigned j = 0; j < 8; ++j) {
    lo |= ((j ^ op.arg) & 15u) << (4 * j);
    hi |= (((j + 8) ^ op.arg) & 15u) << (4 * j);
  }
  return {lo, hi};
}

std::string laneOpName(const LaneOp &op) {
  switch (op.kind) {
  case LaneOpKind::QuadPerm:
    return fmt::format("quad_perm:[{},{},{},{}]", 0 ^ op.arg, 1 ^ op.arg, 2 ^ op.arg, 3 ^ op.arg);
  case LaneOpKind::RowMirror:
    return "row_mirror";
  case LaneOpKind::RowHalfMirror:
    return "row_half_mirror";
  case LaneOpKind::RowRor:
    return fmt::format("row_ror:{}", op.arg);
  case LaneOpKind::RowXmask:
    return fmt::format("row_xmask:{}", op.arg);
  case LaneOpKind::Swizzle:
    return "ds_swizzle_b32";
  case LaneOpKind::PermlaneX16:
    return "v_permlanex16_b32";
  case LaneOpKind::Bpermute:
    return "ds_bpermute_b32";
  }
  return "";
}

} // namespace tk
