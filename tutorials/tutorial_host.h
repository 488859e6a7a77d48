// Host helpers of the C++ tutorials (05-host-autotune.cpp,
// 06-fused-attention.cpp, 12-llama-block.cpp, 13-conv2d-bias-relu.cpp): fp16
// bit patterns to and from float, timing, and the frame of a tutorial's
// main(). Only the standard library and <tk/tk.h>.
#pragma once

#include <tk/tk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tutorial {

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Median time of `launch` over `reps` runs, with events replaced by a
// synchronize (the host view a user sees).
template <class F> double timeMs(F &&launch, int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto start = Clock::now();
    launch();
    tk::synchronize();
    t.push_back(msSince(start));
  }
  std::nth_element(t.begin(), t.begin() + ptrdiff_t(t.size() / 2), t.end());
  return t[t.size() / 2];
}

// The smallest power of two >= n (Triton's next_power_of_2).
inline unsigned nextPowerOfTwo(unsigned n) {
  unsigned p = 1;
  while (p < n)
    p *= 2;
  return p;
}

// float -> fp16, rounded to nearest even (inputs here are not subnormal).
inline uint16_t toHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int exp = int((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (exp <= 0) // subnormal or zero: flushed
    return uint16_t(sign);
  if (exp >= 31)
    return uint16_t(sign | 0x7c00u);
  uint32_t h = sign | uint32_t(exp) << 10 | mant >> 13;
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
    ++h;
  return uint16_t(h);
}

inline float fromHalf(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  float v;
  if (exp == 0)
    v = std::ldexp(float(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(float(mant | 0x400u), exp - 25);
  return sign ? -v : v;
}

// main() of a tutorial taking `[--tutorials DIR] [--small]` (DIR defaults
// to `dir`): without a GPU it prints `name: skipped: no GPU (why)` and
// returns 0; otherwise it runs `body(dir, small)`, which checks its results
// and returns whether they all matched, and says so. A tk::Error is printed
// as `name: error: ...` (status 1); bad usage is status 2.
template <class Body>
int runMain(const char *name, std::string dir, int argc, char **argv, Body &&body) {
  bool small = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tutorials" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--small")
      small = true;
    else {
      std::fprintf(stderr, "usage: %s [--tutorials DIR] [--small]\n", argv[0]);
      return 2;
    }
  }
  std::string why;
  if (!tk::deviceAvailable(&why)) {
    std::printf("%s: skipped: no GPU (%s)\n", name, why.c_str());
    return 0;
  }
  try {
    bool ok = body(dir, small);
    std::printf("%s\n", ok ? "all results match the CPU reference" : "MISMATCHES (see above)");
    return ok ? 0 : 1;
  } catch (const tk::Error &e) {
    std::fprintf(stderr, "%s: error: %s%s%s\n", name, e.what(), e.cudaError().empty() ? "" : " ",
                 e.cudaError().c_str());
    return 1;
  }
}

} // namespace tutorial
