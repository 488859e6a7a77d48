// The amdgcn target's choices that need no AMD GPU to check:
//  - the cross-lane instructions of an xor shuffle (AMDGPUShuffle.h), against
//    each instruction's lane semantics, for every mask below the wavefront
//    of every arch (masks 32..63 included: 64-lane warps on gfx9 need them);
//  - the table of libdevice functions ROCm's device libraries have
//    (ROCmLibdevice.def) against libdevice's own (lang/Libdevice.def);
//  - the control constants the device libraries read, per arch.
// tests/filecheck/amdgpu/ checks the assembly these become and the bitcode
// the table names.
#include "lang/Libdevice.h"
#include "lowering/codegen/AMDGPUShuffle.h"
#include "lowering/codegen/ROCmDeviceLibs.h"
#include "lowering/codegen/TargetOptions.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace tk;

namespace {

// The lane whose value lane `lane` holds after `plan` (each op gives lane i
// the value its source lane held before it).
unsigned sourceAfter(const std::vector<LaneOp> &plan, unsigned lane) {
  for (auto it = plan.rbegin(); it != plan.rend(); ++it)
    lane = laneOpSource(*it, lane);
  return lane;
}

TEST(AMDGPUShuffle, EveryMaskIsAnXorOnEveryArch) {
  for (std::string_view arch : kAMDGPUArchs) {
    unsigned wave = static_cast<unsigned>(amdgpuWavefrontSize(arch));
    bool gfx9 = arch.starts_with("gfx9");
    for (unsigned mask = 1; mask < wave; ++mask) {
      std::vector<LaneOp> plan = xorShufflePlan(arch, mask);
      ASSERT_FALSE(plan.empty()) << arch << " mask " << mask;
      EXPECT_LE(plan.size(), 2u) << arch << " mask " << mask;
      for (unsigned lane = 0; lane < wave; ++lane)
        ASSERT_EQ(sourceAfter(plan, lane), lane ^ mask) << arch << " mask " << mask;
      for (const LaneOp &op : plan) {
        // What each arch has: row_xmask and v_permlanex16 are gfx10+ only;
        // ds_bpermute only where no cheaper instruction reaches the lane.
        if (gfx9) {
          EXPECT_NE(op.kind, LaneOpKind::RowXmask) << arch;
          EXPECT_NE(op.kind, LaneOpKind::PermlaneX16) << arch;
        } else {
          EXPECT_NE(op.kind, LaneOpKind::Swizzle) << arch;
          EXPECT_NE(op.kind, LaneOpKind::Bpermute) << arch;
        }
        EXPECT_EQ(op.kind == LaneOpKind::Bpermute, mask >= 32) << arch << " mask " << mask;
      }
    }
    EXPECT_TRUE(xorShufflePlan(arch, 0).empty());
    EXPECT_TRUE(xorShufflePlan(arch, wave).empty()) << arch;
  }
}

TEST(AMDGPUShuffle, ButterflyMasks) {
  using K = LaneOpKind;
  // The masks of a reduction over a 32-lane warp (and a 64-lane one).
  std::map<unsigned, std::vector<LaneOp>> gfx942 = {
      {1, {{K::QuadPerm, 1}}},
      {2, {{K::QuadPerm, 2}}},
      {4, {{K::RowHalfMirror, 0}, {K::QuadPerm, 3}}},
      {8, {{K::RowRor, 8}}},
      {16, {{K::Swizzle, 16}}},
      {32, {{K::Bpermute, 32}}},
  };
  for (const auto &[mask, plan] : gfx942) {
    EXPECT_EQ(xorShufflePlan("gfx942", mask), plan) << mask;
    EXPECT_EQ(xorShufflePlan("gfx90a", mask), plan) << mask;
  }
  std::map<unsigned, std::vector<LaneOp>> gfx1100 = {
      {1, {{K::QuadPerm, 1}}}, {2, {{K::QuadPerm, 2}}},     {4, {{K::RowXmask, 4}}},
      {8, {{K::RowXmask, 8}}}, {16, {{K::PermlaneX16, 0}}}, {21, {{K::PermlaneX16, 5}}},
  };
  for (const auto &[mask, plan] : gfx1100)
    EXPECT_EQ(xorShufflePlan("gfx1100", mask), plan) << mask;
  EXPECT_TRUE(xorShufflePlan("gfx1100", 32).empty()); // wave32
}

TEST(AMDGPUShuffle, Encodings) {
  using K = LaneOpKind;
  EXPECT_EQ(dppControl({K::QuadPerm, 1}), 0xb1u); // quad_perm:[1,0,3,2]
  EXPECT_EQ(dppControl({K::QuadPerm, 2}), 0x4eu); // quad_perm:[2,3,0,1]
  EXPECT_EQ(dppControl({K::QuadPerm, 3}), 0x1bu); // quad_perm:[3,2,1,0]
  EXPECT_EQ(dppControl({K::RowMirror, 0}), 0x140u);
  EXPECT_EQ(dppControl({K::RowHalfMirror, 0}), 0x141u);
  EXPECT_EQ(dppControl({K::RowRor, 8}), 0x128u);
  EXPECT_EQ(dppControl({K::RowXmask, 4}), 0x164u);
  EXPECT_EQ(swizzleOffset({K::Swizzle, 16}), 0x401fu); // and 31, or 0, xor 16
  EXPECT_EQ(permlaneSelects({K::PermlaneX16, 0}), std::make_pair(0x76543210u, 0xfedcba98u));
  EXPECT_EQ(permlaneSelects({K::PermlaneX16, 1}), std::make_pair(0x67452301u, 0xefcdab89u));
  EXPECT_EQ(laneOpName({K::QuadPerm, 1}), "quad_perm:[1,0,3,2]");
  EXPECT_EQ(laneOpName({K::RowRor, 8}), "row_ror:8");
}

// Every row names a libdevice function with ROCm's function's result: the
// same dtype, or a 64-bit integer where libdevice's count is 32 bits.
TEST(ROCmDeviceLibs, TableMatchesLibdevice) {
  std::set<std::string_view> seen;
  for (const ROCmFunction &f : allROCmEquivalents()) {
    EXPECT_TRUE(seen.insert(f.libdevice).second) << f.libdevice << " is listed twice";
    const LibdeviceOverload *o = findLibdeviceOverload(f.libdevice);
    ASSERT_NE(o, nullptr) << f.libdevice << " is not a libdevice function (lang/Libdevice.def)";
    bool widened = o->result == DType::I32 && f.result == DType::I64;
    bool sameWidth = f.result == o->result || (f.result == DType::U32 && o->result == DType::I32) ||
                     (f.result == DType::U64 && o->result == DType::I64);
    EXPECT_TRUE(sameWidth || widened) << f.libdevice << " -> " << f.symbol;
    EXPECT_FALSE(rocmLibraryOf(f.symbol).empty()) << f.symbol;
    EXPECT_EQ(rocmEquivalent(f.libdevice), &f);
  }
  // fp64 math (tk.exp and friends on fp64) needs all of these.
  for (std::string_view s : {"__nv_exp", "__nv_exp2", "__nv_log", "__nv_log2", "__nv_sin",
                             "__nv_cos", "__nv_rsqrt", "__nv_erf"})
    EXPECT_NE(rocmEquivalent(s), nullptr) << s;
  // Look-alikes that differ (ROCmLibdevice.def says why), and what ocml 5.2
  // lacks: located errors on amdgcn.
  for (std::string_view s : {"__nv_usad", "__nv_mul24", "__nv_frsqrt_rn", "__nv_fmaf_rz",
                             "__nv_int2float_rz", "__nv_float_as_int", "__nv_jnf"})
    EXPECT_EQ(rocmEquivalent(s), nullptr) << s;
  EXPECT_EQ(rocmLibraryOf("__ocml_exp_f64"), "ocml.bc");
  EXPECT_EQ(rocmLibraryOf("__ockl_clz_u32"), "ockl.bc");
  EXPECT_EQ(rocmLibraryOf("__nv_exp"), "");
}

TEST(ROCmDeviceLibs, ControlConstantsPerArch) {
  auto value = [](std::string_view arch, std::string_view name) -> int64_t {
    for (const OclcControl &c : oclcControls(arch))
      if (c.name == name)
        return c.value;
    return -1;
  };
  EXPECT_EQ(value("gfx90a", "__oclc_ISA_version"), 9010);
  EXPECT_EQ(value("gfx942", "__oclc_ISA_version"), 9402);
  EXPECT_EQ(value("gfx1100", "__oclc_ISA_version"), 11000);
  EXPECT_EQ(value("gfx942", "__oclc_wavefrontsize64"), 1);
  EXPECT_EQ(value("gfx90a", "__oclc_wavefrontsize64"), 1);
  EXPECT_EQ(value("gfx1100", "__oclc_wavefrontsize64"), 0);
  for (std::string_view arch : kAMDGPUArchs) {
    EXPECT_EQ(value(arch, "__oclc_ABI_version"), 500);
    EXPECT_EQ(value(arch, "__oclc_finite_only_opt"), 0);
    EXPECT_EQ(value(arch, "__oclc_unsafe_math_opt"), 0);
    EXPECT_EQ(value(arch, "__oclc_daz_opt"), 0);
    EXPECT_EQ(value(arch, "__oclc_correctly_rounded_sqrt32"), 1);
  }
  EXPECT_EQ(oclcControls("gfx90a")[0].library, "oclc_isa_version_90a.bc");
}

TEST(ROCmDeviceLibs, ExplicitFolderIsTheOnlyOneTried) {
  EXPECT_EQ(rocmDeviceLibCandidates("/x/bitcode"), std::vector<std::string>{"/x/bitcode"});
  EXPECT_EQ(findROCmDeviceLib("/nonexistent/bitcode", "ocml.bc"), "");
  std::string message = missingROCmDeviceLibMessage("/nonexistent/bitcode", "ocml.bc");
  EXPECT_NE(message.find("ocml.bc was not found (tried /nonexistent/bitcode)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("apt-get install rocm-device-libs"), std::string::npos) << message;
  EXPECT_NE(message.find("TK_ROCM_DEVICE_LIBS"), std::string::npos) << message;
}

} // namespace
