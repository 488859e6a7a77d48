// The tensor-core layouts (ir/Layout.h): mma<...>, the accumulator of
// mma.sync, and dot_operand<...>, the registers its A and B operands arrive
// in. Both are distributed layouts, so ThreadMap covers them and every
// lowering that works on blocked layouts (elementwise epilogues, stores,
// convert_layout) works on an mma accumulator unchanged.
//
//   mma<version = 2, warps = [2, 2], instr = [16, 8]> on a 64x64 accumulator:
//   warp (wm, wn) = (warp / 2, warp % 2); lane l's registers k0 = 0..3 (rows)
//   x k1 = 0..7 (columns) sit at row k0 * 16 + wm * 8 + l / 4 and column
//   (k1 / 2) * 16 + wn * 8 + 2 * (l % 4) + k1 % 2: registers (2i, 2i + 1)
//   along k0 are rows r and r + 8 of one 16x8 mma piece.
#include "ir/IRContext.h"
#include "ir/Layout.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>

namespace tk {

const MmaLayout *MmaLayout::get(IRContext &ctx, int64_t version, std::vector<int64_t> warps,
                                std::vector<int64_t> instr) {
  assert(validateMma(version, warps, instr).empty());
  std::unique_ptr<LayoutAttr> l(new MmaLayout(version, std::move(warps), std::move(instr)));
  return cast<MmaLayout>(ctx.layout(std::move(l)));
}

std::string MmaLayout::str() const {
  return fmt::format("mma<version = {}, warps = [{}], instr = [{}]>", version_,
                     fmt::join(warps_, ", "), fmt::join(instr_, ", "));
}

const AMDMmaLayout *AMDMmaLayout::get(IRContext &ctx, bool wmma, std::vector<int64_t> warps,
                                      std::vector<int64_t> instr) {
  assert(validateAMDMma(wmma, warps, instr).empty());
  std::unique_ptr<LayoutAttr> l(new AMDMmaLayout(wmma, std::move(warps), std::move(instr)));
  return cast<AMDMmaLayout>(ctx.layout(std::move(l)));
}

std::string AMDMmaLayout::str() const {
  return fmt::format("{}<warps = [{}], instr = [{}]>", wmma_ ? "wmma" : "mfma",
                     fmt::join(warps_, ", "), fmt::join(instr_, ", "));
}

std::string validateAMDMma(bool wmma, const std::vector<int64_t> &warps,
                           const std::vector<int64_t> &instr) {
  const char *name = wmma ? "wmma" : "mfma";
  if (warps.size() != 2 || instr.size() != 2)
    return fmt::format("an {} layout needs two warps and two instr dimensions, got {} and {}", name,
                       warps.size(), instr.size());
  for (int64_t w : warps)
    if (w < 1 || (w & (w - 1)))
      return fmt::format("{} warps [{}] must be powers of two", name, fmt::join(warps, ", "));
  // A workgroup is at most 1024 threads: 16 wave64 warps.
  if (warps[0] * warps[1] > 16)
    return fmt::format("{} warps [{}] multiply to more than 16", name, fmt::join(warps, ", "));
  bool ok = instr[0] == instr[1] && (instr[0] == 16 || (!wmma && instr[0] == 32));
  if (!ok)
    return fmt::format("{} instr [{}] is not supported ({})", name, fmt::join(instr, ", "),
                       wmma ? "[16, 16]" : "[32, 32] or [16, 16]");
  return {};
}

const DotOperandLayout *DotOperandLayout::get(IRContext &ctx, unsigned opIdx,
                                              const MmaLayout *parent, int64_t kWidth) {
  assert(opIdx < 2 && parent && kWidth >= 1 && kWidth <= 4);
  std::unique_ptr<LayoutAttr> l(new DotOperandLayout(opIdx, parent, kWidth));
  return cast<DotOperandLayout>(ctx.layout(std::move(l)));
}

std::string DotOperandLayout::str() const {
  return fmt::format("dot_operand<op_idx = {}, parent = {}, k_width = {}>", opIdx_, parent_->str(),
                     kWidth_);
}

std::string validateMma(int64_t version, const std::vector<int64_t> &warps,
                        const std::vector<int64_t> &instr) {
  if (version != 2 && version != 3)
    return fmt::format("mma version {} is not supported (2: mma.sync, 3: wgmma)", version);
  if (warps.size() != 2 || instr.size() != 2)
    return fmt::format("an mma layout needs two warps and two instr dimensions, got {} and {}",
                       warps.size(), instr.size());
  for (int64_t w : warps)
    if (w < 1 || (w & (w - 1)))
      return fmt::format("mma warps [{}] must be powers of two", fmt::join(warps, ", "));
  if (warps[0] * warps[1] > 32)
    return fmt::format("mma warps [{}] multiply to more than 32", fmt::join(warps, ", "));
  if (version == 3) {
    // wgmma: warp groups of 4 warps along M, each instruction 64 x N.
    if (warps[0] < 4 || warps[1] != 1)
      return fmt::format("wgmma warps [{}] must be [4 x groups, 1]", fmt::join(warps, ", "));
    if (instr[0] != 64 || instr[1] < 8 || instr[1] > 256 || instr[1] % 8)
      return fmt::format("wgmma instr [{}] must be [64, N] with N a multiple of 8 up to 256",
                         fmt::join(instr, ", "));
    return {};
  }
  if (instr[0] != 16 || instr[1] != 8)
    return fmt::format("mma instr [{}] is not supported ([16, 8])", fmt::join(instr, ", "));
  return {};
}

// ThreadMap dimensions of the dot layouts (Layout.cpp's distribute calls this
// for them). Warp w is (w / wn, w % wn) over [wm, wn].
int64_t wgmmaSharedRowBlock(int64_t block, int64_t numWarps) {
  assert(numWarps >= 4 && numWarps % 4 == 0 && block >= 0);
  int64_t w = block % numWarps, t = block / numWarps;
  int64_t mi = t / 2, h = t % 2, groups = numWarps / 4;
  return 8 * (mi * groups + w / 4) + 2 * (w % 4) + h;
}

uint64_t wgmmaDescriptor(uint64_t address, uint64_t leadingBytes, uint64_t strideBytes,
                         int64_t swizzleBytes) {
  uint64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : swizzleBytes == 32 ? 3 : 0;
  return ((address >> 4) & 0x3FFF) | ((leadingBytes >> 4) & 0x3FFF) << 16 |
         ((strideBytes >> 4) & 0x3FFF) << 32 | mode << 62;
}

void distributeDotLayout(const LayoutAttr *layout, std::vector<ThreadMap::Dim> &dims,
                         std::vector<unsigned> &order, int64_t &numWarps) {
  if (auto *amd = dyn_cast<AMDMmaLayout>(layout)) {
    // See AMDMmaLayout: rows in runs of s over g lane groups (lane stride
    // n), columns over n lanes; rows fastest.
    int64_t wm = amd->warps()[0], wn = amd->warps()[1];
    numWarps = wm * wn;
    dims.assign(2, {});
    dims[0].size = amd->rowRun(), dims[0].threads = amd->laneGroups(), dims[0].warps = wm;
    dims[0].laneStride = amd->n(), dims[0].warpStride = wn;
    dims[1].size = 1, dims[1].threads = amd->n(), dims[1].warps = wn;
    dims[1].laneStride = 1, dims[1].warpStride = 1;
    order = {0, 1};
    return;
  }
  const MmaLayout *mma = nullptr;
  const auto *op = dyn_cast<DotOperandLayout>(layout);
  mma = op ? op->parent() : cast<MmaLayout>(layout);
  int64_t wm = mma->warps()[0], wn = mma->warps()[1];
  numWarps = wm * wn;
  dims.assign(2, {});
  ThreadMap::Dim rows, cols; // of the accumulator
  rows.size = 1, rows.threads = 8, rows.warps = wm, rows.laneStride = 4, rows.warpStride = wn;
  cols.size = 2, cols.threads = 4, cols.warps = wn, cols.laneStride = 1, cols.warpStride = 1;
  order = {1, 0};
  if (!op) {
    dims[0] = rows;
    dims[1] = cols;
    return;
  }
  // Operands: K is spread over the 4 lanes of a quad, k_width per register;
  // the other dimension is the accumulator's.
  ThreadMap::Dim k;
  k.size = op->kWidth(), k.threads = 4, k.warps = 1, k.laneStride = 1, k.warpStride = 1;
  if (op->opIdx() == 0) {
    dims[0] = rows;
    dims[1] = k;
  } else {
    cols.size = 1, cols.threads = 8, cols.laneStride = 4;
    dims[0] = k;
    dims[1] = cols;
    order = {0, 1};
  }
}

// The mma and dot_operand kinds of buildLayout; null with `error` empty when
// `kind` is neither.
const LayoutAttr *buildDotLayout(IRContext &ctx, std::string_view kind,
                                 const std::vector<LayoutParam> &params, std::string &error) {
  auto get = [&](std::string_view key) -> const LayoutParam * {
    for (const LayoutParam &p : params)
      if (p.key == key)
        return &p;
    return nullptr;
  };
  auto expect = [&](std::initializer_list<std::string_view> keys) {
    for (const LayoutParam &p : params)
      if (std::find(keys.begin(), keys.end(), p.key) == keys.end()) {
        error = fmt::format("unknown parameter '{}' of a {} layout", p.key, kind);
        return false;
      }
    for (std::string_view k : keys)
      if (!get(k)) {
        error = fmt::format("{} layout needs '{}'", kind, k);
        return false;
      }
    return true;
  };
  if (kind == "mma") {
    if (!expect({"version", "warps", "instr"}))
      return nullptr;
    const auto *version = std::get_if<int64_t>(&get("version")->value);
    const auto *warps = std::get_if<std::vector<int64_t>>(&get("warps")->value);
    const auto *instr = std::get_if<std::vector<int64_t>>(&get("instr")->value);
    if (!version || !warps || !instr) {
      error = "an mma layout needs an integer 'version' and integer arrays 'warps' and 'instr'";
      return nullptr;
    }
    error = validateMma(*version, *warps, *instr);
    return error.empty() ? MmaLayout::get(ctx, *version, *warps, *instr) : nullptr;
  }
  if (kind == "mfma" || kind == "wmma") {
    if (!expect({"warps", "instr"}))
      return nullptr;
    const auto *warps = std::get_if<std::vector<int64_t>>(&get("warps")->value);
    const auto *instr = std::get_if<std::vector<int64_t>>(&get("instr")->value);
    if (!warps || !instr) {
      error = fmt::format("an {} layout needs integer arrays 'warps' and 'instr'", kind);
      return nullptr;
    }
    error = validateAMDMma(kind == "wmma", *warps, *instr);
    return error.empty() ? AMDMmaLayout::get(ctx, kind == "wmma", *warps, *instr) : nullptr;
  }
  if (kind == "dot_operand") {
    if (!expect({"op_idx", "parent", "k_width"}))
      return nullptr;
    const auto *idx = std::get_if<int64_t>(&get("op_idx")->value);
    const auto *parent = std::get_if<const LayoutAttr *>(&get("parent")->value);
    const auto *kWidth = std::get_if<int64_t>(&get("k_width")->value);
    if (!idx || !parent || !kWidth || !isa<MmaLayout>(*parent)) {
      error = "a dot_operand layout needs an integer 'op_idx', an mma 'parent' and an integer "
              "'k_width'";
      return nullptr;
    }
    if (*idx != 0 && *idx != 1) {
      error = fmt::format("dot_operand op_idx must be 0 or 1, got {}", *idx);
      return nullptr;
    }
    if (*kWidth != 1 && *kWidth != 2 && *kWidth != 4) {
      error = fmt::format("dot_operand k_width must be 1, 2 or 4, got {}", *kWidth);
      return nullptr;
    }
    return DotOperandLayout::get(ctx, static_cast<unsigned>(*idx), cast<MmaLayout>(*parent),
                                 *kWidth);
  }
  return nullptr;
}

} // namespace tk
