// Shared helpers of the interpreter's unit tests: parse and verify text IR,
// run a kernel, fill buffers with random (never zero) numbers.
#pragma once

#include "interpreter/HostBuffer.h"
#include "interpreter/Interpreter.h"
#include "ir/IRParser.h"
#include "ir/Verifier.h"
#include "lang/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace tk::test {

class InterpFixture : public ::testing::Test {
protected:
  /// Parses and verifies `text` as the module under test.
  Module &parse(const std::string &text) {
    BufferId id = sm.addBuffer("test.tkir", text);
    module = parseIR(ctx, id, diag);
    EXPECT_TRUE(module) << diag.renderAll();
    if (module) {
      EXPECT_TRUE(verifyModule(*module, diag)) << diag.renderAll();
    }
    return *module;
  }

  /// Runs function `name` of the parsed module.
  bool run(const std::string &name, const std::vector<InterpArg> &args,
           InterpretOptions opts = {}) {
    Function *fn = module->lookup(name);
    EXPECT_TRUE(fn) << "no function " << name;
    if (!fn)
      return false;
    diag.clear();
    return interpret(*module, *fn, args, opts, diag, &stats);
  }

  std::string errors() const { return diag.renderAll(); }

  /// A buffer of n random numbers in [lo, hi], none of them zero, rounded
  /// to the dtype (integers truncated).
  HostBuffer random(const std::string &name, DType d, int64_t n, double lo = -4, double hi = 4) {
    HostBuffer b = HostBuffer::allocate(name, d, n);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < n; ++i) {
      double v;
      do {
        v = dist(rng);
        if (isInteger(d))
          v = std::trunc(v);
      } while (v == 0);
      b.set(i, v);
    }
    return b;
  }

  SourceManager sm;
  IRContext ctx{sm};
  DiagnosticEngine diag{sm};
  std::unique_ptr<Module> module;
  InterpretStats stats;
  std::mt19937 rng{12345};
};

/// Text IR pieces: `tensor<NxT>`, and the lines that load a whole block of n
/// elements from argument `arg` into `%name`.
inline std::string tensorOf(int64_t n, const std::string &t) {
  return "tensor<" + std::to_string(n) + "x" + t + ">";
}

inline std::string loadBlock(const std::string &name, const std::string &arg, int64_t n,
                             const std::string &t) {
  std::string tp = tensorOf(n, "ptr<" + t + ">");
  return "  %" + name + "_p = splat %" + arg + " : " + tp + "\n  %" + name + "_q = addptr %" +
         name + "_p, %range : " + tp + "\n  %" + name + " = load %" + name +
         "_q : " + tensorOf(n, t) + "\n";
}

inline std::string storeBlock(const std::string &value, const std::string &arg, int64_t n,
                              const std::string &t) {
  std::string tp = tensorOf(n, "ptr<" + t + ">");
  return "  %" + value + "_sp = splat %" + arg + " : " + tp + "\n  %" + value + "_sq = addptr %" +
         value + "_sp, %range : " + tp + "\n  store %" + value + "_sq, %" + value + "\n";
}

inline std::string rangeLine(int64_t n) {
  return "  %range = make_range {end = " + std::to_string(n) +
         ", start = 0} : " + tensorOf(n, "i32") + "\n";
}

/// Units in the last place of fp16 / bf16 / fp32 around x, for tolerances.
inline double ulpOf(DType d, double x) {
  int mant = d == DType::F16 ? 10 : d == DType::BF16 ? 7 : d == DType::F32 ? 23 : 52;
  int e;
  std::frexp(x == 0 ? 1e-30 : x, &e);
  int minE = d == DType::F16 ? -13 : d == DType::BF16 ? -125 : d == DType::F32 ? -125 : -1021;
  return std::ldexp(1.0, std::max(e, minE) - 1 - mant);
}

} // namespace tk::test
