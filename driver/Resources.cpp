#include "driver/Resources.h"

#include "driver/Ptxas.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace tk {
namespace {

// The number just before `suffix` in `line`, or -1.
int64_t numberBefore(std::string_view line, std::string_view suffix) {
  size_t at = line.find(suffix);
  if (at == std::string_view::npos)
    return -1;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ')
    --end;
  size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9')
    --begin;
  if (begin == end)
    return -1;
  return std::strtoll(std::string(line.substr(begin, end - begin)).c_str(), nullptr, 10);
}

// The text between the first pair of quotes after `marker`, or "".
std::string_view quotedAfter(std::string_view line, std::string_view marker) {
  size_t at = line.find(marker);
  if (at == std::string_view::npos)
    return {};
  size_t open = line.find('\'', at);
  size_t close = open == std::string_view::npos ? open : line.find('\'', open + 1);
  if (close == std::string_view::npos)
    return {};
  return line.substr(open + 1, close - open - 1);
}

struct SmLimits {
  int64_t registers = 64 * 1024;
  int64_t maxThreads = 2048;
  int64_t maxBlocks = 32;
  int64_t sharedBytes = 228 * 1024;
};

SmLimits limitsFor(std::string_view arch) {
  SmLimits l;
  if (arch.starts_with("sm_90"))
    return l;
  if (arch == "sm_80" || arch == "sm_87") {
    l.sharedBytes = 164 * 1024;
    return l;
  }
  // sm_86, sm_89
  l.maxThreads = 1536;
  l.maxBlocks = arch == "sm_89" ? 24 : 16;
  l.sharedBytes = 100 * 1024;
  return l;
}

} // namespace

std::vector<PtxasUsage> parsePtxasReport(std::string_view report) {
  std::vector<PtxasUsage> out;
  auto current = [&](std::string_view name) -> PtxasUsage & {
    for (PtxasUsage &k : out)
      if (k.name == name)
        return k;
    out.push_back({std::string(name)});
    return out.back();
  };
  std::string name;
  while (!report.empty()) {
    size_t nl = report.find('\n');
    std::string_view line = report.substr(0, nl);
    report = nl == std::string_view::npos ? "" : report.substr(nl + 1);
    if (std::string_view n = quotedAfter(line, "Compiling entry function"); !n.empty()) {
      name = std::string(n);
      current(name);
      continue;
    }
    if (size_t at = line.find("Function properties for "); at != std::string_view::npos) {
      name = std::string(line.substr(at + 24));
      while (!name.empty() && (name.back() == ' ' || name.back() == '\r' || name.back() == ':'))
        name.pop_back();
      continue;
    }
    if (name.empty())
      continue;
    PtxasUsage &k = current(name);
    if (int64_t v = numberBefore(line, "bytes stack frame"); v >= 0)
      k.stackBytes = v;
    if (int64_t v = numberBefore(line, "bytes spill stores"); v >= 0)
      k.spillStores = v;
    if (int64_t v = numberBefore(line, "bytes spill loads"); v >= 0)
      k.spillLoads = v;
    if (size_t at = line.find("Used "); at != std::string_view::npos)
      if (int64_t v = numberBefore(line.substr(at), "registers"); v >= 0)
        k.registers = v;
  }
  return out;
}

bool ptxasResources(const std::string &ptx, const std::string &arch, std::vector<PtxasUsage> &out,
                    std::string &error, std::string *cubin) {
  std::string assembled, report;
  if (!assembleWithPtxas(ptx, arch, assembled, error, -1, &report))
    return false;
  if (cubin)
    *cubin = std::move(assembled);
  out = parsePtxasReport(report);
  return true;
}

Occupancy occupancy(std::string_view arch, int64_t registers, int64_t sharedBytes,
                    int64_t threads) {
  SmLimits l = limitsFor(arch);
  Occupancy o;
  int64_t warps = std::max<int64_t>(1, (threads + 31) / 32);
  o.maxWarpsPerSm = l.maxThreads / 32;
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  // Registers are allocated per warp, in units of 256.
  int64_t perWarp = (std::max<int64_t>(1, registers) * 32 + 255) / 256 * 256;
  o.byRegisters = registers > 0 ? (l.registers / perWarp) / warps : kNone;
  // Every block reserves 1 KiB of the SM's shared memory; allocations are in
  // units of 128 bytes.
  int64_t perBlock = (sharedBytes + 1024 + 127) / 128 * 128;
  o.bySharedMemory = l.sharedBytes / perBlock;
  o.byThreads = o.maxWarpsPerSm / warps;
  o.byBlocks = l.maxBlocks;
  o.blocksPerSm = o.byBlocks;
  o.limit = "blocks";
  // Ties go to the first of blocks, threads, shared memory, registers: a
  // kernel at the SM's thread limit is not said to be held back by its
  // registers.
  for (auto [n, what] : {std::pair{o.byThreads, "threads"},
                         {o.bySharedMemory, "shared memory"},
                         {o.byRegisters, "registers"}})
    if (n < o.blocksPerSm) {
      o.blocksPerSm = n;
      o.limit = what;
    }
  o.warpsPerSm = o.blocksPerSm * warps;
  o.percent = o.maxWarpsPerSm ? 100 * o.warpsPerSm / o.maxWarpsPerSm : 0;
  return o;
}

} // namespace tk
