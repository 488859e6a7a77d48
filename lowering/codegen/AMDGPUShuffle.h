// AMDGPUShuffle: which cross-lane instructions give every lane of an AMD GPU
// wavefront the 32-bit value of lane `lane ^ mask` (tk's butterfly shuffle,
// TargetInfo::shuffleXor), per arch and per mask. AMDGPUTarget.cpp emits the
// plan; this file only chooses it, free of LLVM, so a test can check it
// against the lane semantics of each instruction.
//
//   xorShufflePlan("gfx942", 1)  == {QuadPerm 1}          v_mov_b32_dpp quad_perm:[1,0,3,2]
//   xorShufflePlan("gfx942", 4)  == {RowHalfMirror, QuadPerm 3}      two DPP moves
//   xorShufflePlan("gfx942", 16) == {Swizzle 16}          ds_swizzle_b32 offset:swizzle(SWAP,16)
//   xorShufflePlan("gfx942", 32) == {Bpermute 32}         ds_bpermute_b32 (wave64 only)
//   xorShufflePlan("gfx1100", 4) == {RowXmask 4}          v_mov_b32_dpp row_xmask:4
//   xorShufflePlan("gfx1100", 16) == {PermlaneX16 0}      v_permlanex16_b32
//
// The instructions (AMD's GCN/CDNA3 and RDNA3 ISA manuals; LLVM's
// AMDGPUUsage and SIDefines.h DppCtrl):
//   DPP (a modifier of a VALU move; rows are 16 lanes, quads 4):
//     quad_perm:[a,b,c,d]  lane 4q+j reads lane 4q+sel[j]            gfx9, gfx10+
//     row_mirror           lane 16r+j reads lane 16r+15-j             gfx9, gfx10+
//     row_half_mirror      lane 8h+j reads lane 8h+7-j                gfx9, gfx10+
//     row_ror:n            lane 16r+j reads lane 16r+(j-n)%16         gfx9, gfx10+
//     row_xmask:m          lane 16r+j reads lane 16r+(j^m)            gfx10+ only
//     (gfx9 also has row_bcast:15/31 and wave_shr/ror, gfx10+ row_share:
//     broadcasts and shifts, none an xor; no DPP control crosses a row
//     except those.)
//   ds_swizzle_b32, bit-mask mode (offset bit 15 clear): lane 32g+j reads
//     lane 32g+(((j & and) | or) ^ xor); and = 31, or = 0 gives any xor
//     below 32. Through the LDS unit, without touching LDS: no address,
//     but an lgkmcnt wait.                                            gfx9, gfx10+
//   v_permlanex16_b32 with lane selects: lane 32g+16r+j reads lane
//     32g+16(1-r)+sel[j] (the other row of its 32 lanes).              gfx10+ only
//   ds_bpermute_b32: lane i reads the lane its byte address names, any
//     lane of the wavefront: the general case (and an index computation).
//
// The choice, per arch (one VALU DPP move costs a cycle or two, where the
// LDS unit's swizzle and bpermute wait tens of cycles):
//
//   mask       gfx90a, gfx942 (wave64)              gfx1100 (wave32)
//   1..3       quad_perm                            quad_perm
//   8          row_ror:8                            row_xmask:8
//   7, 15      row_half_mirror, row_mirror          row_xmask
//   4..15      a row op and a quad_perm (two DPP    row_xmask:m
//              moves: 4 = row_half_mirror ^ 3)
//   16..31     ds_swizzle_b32 (xor mask)            v_permlanex16_b32
//   32..63     ds_bpermute_b32 (across the halves   - (no such lane)
//              of the wavefront: 64-lane warps)
//
// A value wider than 32 bits moves as 32-bit pieces, each through the plan.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

enum class LaneOpKind {
  QuadPerm,
  RowMirror,
  RowHalfMirror,
  RowRor,
  RowXmask,
  Swizzle,
  PermlaneX16,
  Bpermute
};

/// One cross-lane instruction. `arg`: QuadPerm the xor of each quad's
/// selector (1..3), RowRor the rotation, RowXmask and Swizzle and Bpermute
/// the xor mask, PermlaneX16 the xor applied to the lane within the row.
struct LaneOp {
  LaneOpKind kind;
  unsigned arg = 0;
  bool operator==(const LaneOp &) const = default;
};

/// The instructions, applied in order to a 32-bit value, that give every
/// lane the value of lane `lane ^ laneMask` of its wavefront on `arch` (one
/// of kAMDGPUArchs); laneMask from 1 to below the arch's wavefront
/// (amdgpuWavefrontSize). Empty for any other mask.
std::vector<LaneOp> xorShufflePlan(std::string_view arch, unsigned laneMask);

/// The lane whose value `op` gives lane `lane` (the ISA's definition above).
unsigned laneOpSource(const LaneOp &op, unsigned lane);

/// The dpp_ctrl operand of a DPP op (QuadPerm, RowMirror, RowHalfMirror,
/// RowRor, RowXmask): quad_perm:[1,0,3,2] is 0xb1, row_ror:8 0x128.
unsigned dppControl(const LaneOp &op);
/// The offset of ds_swizzle_b32 in bit-mask mode for a Swizzle op.
unsigned swizzleOffset(const LaneOp &op);
/// The two lane-select operands of v_permlanex16_b32 (lanes 0..7, 8..15 of
/// a row, four bits each) for a PermlaneX16 op.
std::pair<uint32_t, uint32_t> permlaneSelects(const LaneOp &op);

/// How the assembly spells `op`: "quad_perm:[1,0,3,2]", "row_ror:8",
/// "ds_swizzle_b32", ... (docs and tests).
std::string laneOpName(const LaneOp &op);

} // namespace tk
