#include "LaunchCheck.h"

#include "runtime/ResultCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace tk {

std::vector<int64_t> samplePrograms(int64_t numPrograms, size_t limit) {
  std::vector<int64_t> out;
  if (numPrograms <= 0)
    return out;
  if (uint64_t(numPrograms) <= limit) {
    for (int64_t p = 0; p < numPrograms; ++p)
      out.push_back(p);
    return out;
  }
  if (limit < 2)
    return limit ? std::vector<int64_t>{0} : out;
  // k * (N - 1) / (limit - 1) for k = 0 .. limit - 1: distinct, first and
  // last included, in increasing order.
  for (size_t k = 0; k < limit; ++k)
    out.push_back(int64_t((__int128(k) * (numPrograms - 1)) / int64_t(limit - 1)));
  return out;
}

CheckReport compareStores(const std::vector<StoreRecord> &log,
                          const std::vector<CheckBuffer> &buffers, bool allPrograms,
                          const std::string &kernel) {
  CheckReport report;
  std::map<const HostBuffer *, const CheckBuffer *> byBuffer;
  for (const CheckBuffer &b : buffers)
    byBuffer.emplace(b.interp, &b);
  auto compared = [&](const StoreRecord &rec) {
    return byBuffer.count(rec.buffer) && byBuffer.at(rec.buffer)->gpu &&
           (allPrograms || !rec.atomic);
  };
  // The scale of each buffer's absolute tolerance: the largest magnitude
  // the interpreter stored there.
  std::map<const HostBuffer *, double> scale;
  for (const StoreRecord &rec : log)
    if (compared(rec) && isFloat(rec.dtype)) {
      double &s = scale[rec.buffer];
      s = std::max(s,
                   largestMagnitude(rec.buffer->data() + rec.offset, size_t(rec.count), rec.dtype));
    }
  for (size_t r = 0; r < log.size() && !report.mismatch; ++r) {
    const StoreRecord &rec = log[r];
    if (!compared(rec)) {
      report.skippedAtomics += rec.atomic ? uint64_t(rec.count) : 0;
      continue;
    }
    const CheckBuffer &b = *byBuffer.at(rec.buffer);
    const double s = scale[rec.buffer];
    for (int64_t k = 0; k < rec.count; ++k) {
      const uint64_t offset = rec.offset + uint64_t(k) * rec.elementBytes;
      const std::byte *mine = rec.buffer->data() + offset, *gpu = b.gpu + offset;
      ++report.compared;
      if (elementsAgree(gpu, mine, rec.dtype, s))
        continue;
      // The element's last writer in the log is the store to name.
      const StoreRecord *last = &rec;
      for (size_t q = log.size(); q-- > r;)
        if (log[q].buffer == rec.buffer && offset >= log[q].offset &&
            offset < log[q].offset + uint64_t(log[q].count) * log[q].elementBytes) {
          last = &log[q];
          break;
        }
      const int64_t element =
          (int64_t(offset) - b.pointerOffset) / int64_t(std::max(1u, rec.elementBytes));
      report.mismatch = true;
      report.loc = last->loc;
      report.message = fmt::format(
          "TK_CHECK: '{}' stored different values on the GPU and on the interpreter in program "
          "({}, {}, {}): element {} of '{}' (byte {} of its buffer) is {} on the GPU and {} on "
          "the interpreter ({}); the store:",
          kernel, last->program[0], last->program[1], last->program[2], element, b.name, offset,
          elementText(gpu, rec.dtype), elementText(mine, rec.dtype),
          differenceWhy(gpu, mine, rec.dtype, s));
      break;
    }
  }
  return report;
}

} // namespace tk
