// The one compile pipeline (compiler/Compiler.h): its stages in order, the
// hooks at each stage, and that every knob which changes code reaches the
// cache keys through CompileOptions.
#include "compiler/Compiler.h"

#include "ir/IRPrinter.h"
#include "lowering/LLVMTarget.h"
#include "support/Knobs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

using namespace tk;

namespace {

std::string tutorial(const char *name) {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/tutorials/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

KernelSpec vectorAdd() {
  KernelSpec spec;
  spec.kernel = "add_kernel";
  spec.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
  spec.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
  return spec;
}

struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char *value) : name(std::move(n)) {
    if (const char *v = std::getenv(name.c_str()))
      old = v;
    setenv(name.c_str(), value, 1);
  }
  ~ScopedEnv() {
    if (old)
      setenv(name.c_str(), old->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

// A value of `k` other than its default that it accepts.
std::string otherValue(const KnobInfo &k) {
  switch (k.type) {
  case KnobType::Bool:
    return parseBoolKnob(k, "").value ? "0" : "1";
  case KnobType::Int:
    return "7";
  case KnobType::Choice: {
    std::string_view rest = k.choices;
    while (!rest.empty()) {
      std::string_view choice = rest.substr(0, rest.find('|'));
      if (choice != k.defaultValue)
        return std::string(choice);
      rest.remove_prefix(std::min(rest.size(), choice.size() + 1));
    }
    return "";
  }
  case KnobType::String:
  case KnobType::Path:
    return "/nonexistent/knob-value";
  }
  return "";
}

} // namespace

// Each stage runs once and in order; a later step runs the ones before it.
TEST(Compiler, StagesRunInOrder) {
  Compilation c(CompileOptions{});
  SourceText text{"01-vector-add.tk", tutorial("01-vector-add.tk")};
  EXPECT_EQ(c.reached(), Stage::None);
  ASSERT_TRUE(c.parse(std::span(&text, 1))) << c.diag().renderAll();
  EXPECT_EQ(c.reached(), Stage::Parse);
  KernelSpec spec = vectorAdd();
  ASSERT_TRUE(c.lowerToIR(std::span(&spec, 1))) << c.diag().renderAll();
  EXPECT_EQ(c.reached(), Stage::AstToIR);
  std::vector<KernelParam> params = c.kernelParams("add_kernel");
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[0].name, "x_ptr");
  EXPECT_TRUE(params[0].isPointer);
  EXPECT_EQ(params[3].name, "n_elements");
  EXPECT_EQ(params[3].typeName, "i32");
  if (!hasNVPTXTarget())
    GTEST_SKIP() << "built without LLVM";
  std::string ptx;
  ASSERT_TRUE(c.emitPTX(ptx)) << c.diag().renderAll();
  EXPECT_EQ(c.reached(), Stage::PTX);
  EXPECT_NE(ptx.find(".entry add_kernel"), std::string::npos);
  std::set<std::string> stages;
  for (const StageTime &t : c.times())
    stages.insert(t.name);
  for (const char *s : {"parse", "ast-to-ir", "block", "gpu", "llvm", "ptx", "gpu/coalesce"})
    EXPECT_TRUE(stages.count(s)) << s;
}

// Diagnostics stop the pipeline: no later stage runs on a failed one.
TEST(Compiler, ErrorsStopThePipeline) {
  Compilation c(CompileOptions{});
  SourceText text{"bad.tk", "import tk\n@tk.jit\ndef k(x):\n    y = undefined_name + 1\n"};
  EXPECT_FALSE(c.parse(std::span(&text, 1)));
  KernelSpec spec{"k", "i32", {}, {}};
  EXPECT_FALSE(c.lowerToIR(std::span(&spec, 1)));
  std::string ptx;
  EXPECT_FALSE(c.emitPTX(ptx));
  EXPECT_TRUE(ptx.empty());
  EXPECT_NE(c.diag().renderAll().find("bad.tk:4:9: error"), std::string::npos)
      << c.diag().renderAll();
}

TEST(Compiler, AMissingKernelNamesTheOnesThereAre) {
  CompiledKernel out;
  std::string error;
  KernelSpec spec = vectorAdd();
  spec.kernel = "add";
  EXPECT_FALSE(compileKernel({"01-vector-add.tk", tutorial("01-vector-add.tk")}, spec,
                             CompileOptions{}, {}, out, error));
  EXPECT_NE(error.find("no kernel named 'add' in '01-vector-add.tk'; it defines: add_kernel"),
            std::string::npos)
      << error;
}

// TK_DUMP_IR names passes and stages; the text goes to the hooks' sink only.
TEST(Compiler, DumpsAtEachNamedStage) {
  if (!hasNVPTXTarget())
    GTEST_SKIP() << "built without LLVM";
  std::string log;
  CompileHooks hooks;
  hooks.dumpIR = "ast-to-ir,coalesce,llvm,ptx";
  hooks.timePasses = true;
  hooks.sink = [&](std::string_view s) { log += s; };
  CompiledKernel out;
  std::string error;
  ASSERT_TRUE(compileKernel({"01-vector-add.tk", tutorial("01-vector-add.tk")}, vectorAdd(),
                            CompileOptions{}, hooks, out, error))
      << error;
  for (const char *stage : {"ast-to-ir", "coalesce", "llvm", "ptx"})
    EXPECT_NE(log.find(std::string("// -----// IR after ") + stage + " //"), std::string::npos)
        << stage;
  EXPECT_EQ(log.find("IR after canonicalize"), std::string::npos);
  EXPECT_NE(log.find("define void @add_kernel("), std::string::npos);
  EXPECT_NE(log.find("// compile timing (wall clock)"), std::string::npos);
  EXPECT_EQ(out.params.size(), 4u);
  EXPECT_EQ(out.numWarps, 4);
}

// Every knob whose Effect is Code and which the compiler reads changes
// CompileOptions::keyText(), so no compile cache can hand back PTX made
// with another value. (TK_ARCH, TK_TARGET and TK_DEFAULT_FP_FUSION are
// Python's: they set the arch and fpFusion options, which keyText covers;
// tests/python checks them.)
TEST(Compiler, EveryCodeKnobIsInTheKey) {
  CompileOptions defaults;
  std::string error;
  ASSERT_TRUE(defaults.readKnobs(error)) << error;
  int checked = 0;
  for (const KnobInfo &k : allKnobs()) {
    if (k.effect != KnobEffect::Code || k.id == Knob::Arch || k.id == Knob::Target ||
        k.id == Knob::DefaultFpFusion)
      continue;
    std::string value = otherValue(k);
    ScopedEnv env(std::string(k.name), value.c_str());
    CompileOptions o;
    ASSERT_TRUE(o.readKnobs(error)) << k.name << "=" << value << ": " << error;
    EXPECT_NE(o.keyText(), defaults.keyText()) << k.name << "=" << value << " is not in the key";
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

// The switches reach the pass as function attributes, recorded only when off.
TEST(Compiler, CodeKnobsReachThePassesAsAttributes) {
  for (bool native : {true, false}) {
    CompileOptions options;
    options.arch = "sm_90a";
    options.wgmmaNative = native;
    Compilation c(options);
    SourceText text{"01-vector-add.tk", tutorial("01-vector-add.tk")};
    KernelSpec spec = vectorAdd();
    ASSERT_TRUE(c.parse(std::span(&text, 1)) && c.lowerToIR(std::span(&spec, 1)) &&
                c.runGpuPasses())
        << c.diag().renderAll();
    std::string ir = printModule(c.module());
    EXPECT_EQ(ir.find("wgmma_native = false") != std::string::npos, !native) << ir;
  }
}

TEST(Compiler, ABadKnobFailsWithItsName) {
  ScopedEnv env("TK_WGMMA_INFLIGHT", "sometimes");
  CompileOptions o;
  std::string error;
  EXPECT_FALSE(o.readKnobs(error));
  EXPECT_NE(error.find("TK_WGMMA_INFLIGHT=\"sometimes\""), std::string::npos) << error;
}

namespace {

// A kernel `many` with the given parameter types ("*fp32", "i32", ...),
// which stores through its first: its source, its signature, and the GPU
// stage's verdict with the diagnostics it left.
struct ParamSpaceRun {
  bool ok;
  std::string diagnostics;
};
ParamSpaceRun compileParams(const std::vector<std::string> &types) {
  std::string params, signature;
  for (size_t i = 0; i < types.size(); ++i) {
    params += fmt::format("{}p{}", i ? ", " : "", i);
    signature += fmt::format("{}{}", i ? ", " : "", types[i]);
  }
  SourceText text{"many.tk", fmt::format("import tk\n\n\n@tk.jit\ndef many({}):\n"
                                         "    tk.store(p0 + tk.arange(0, 16), 1.0)\n",
                                         params)};
  Compilation c(CompileOptions{});
  KernelSpec spec{"many", signature, {}, {}};
  bool ok = c.parse(std::span(&text, 1)) && c.lowerToIR(std::span(&spec, 1)) && c.runGpuPasses();
  return {ok, c.diag().renderAll()};
}

} // namespace

// PTX's parameter space holds 4,352 bytes: 544 pointers fit, 545 are a
// located error with the numbers (ptxas would refuse them after codegen).
TEST(Compiler, TheParameterSpaceLimitIsALocatedError) {
  std::vector<std::string> types(544, "*fp32");
  ParamSpaceRun fits = compileParams(types);
  EXPECT_TRUE(fits.ok) << fits.diagnostics;

  types.push_back("*fp32");
  ParamSpaceRun over = compileParams(types);
  EXPECT_FALSE(over.ok);
  EXPECT_NE(over.diagnostics.find("many.tk:5:5: error: kernel 'many': its 545 runtime parameters "
                                  "take 4360 bytes of parameter space, over PTX's limit of 4352 "
                                  "bytes (from parameter 544, 'p544', at offset 4352)"),
            std::string::npos)
      << over.diagnostics;

  // The padding counts: 543 pointers and an i32 end at byte 4348; an i64
  // after them starts at 4352, not 4348, and ends past the limit.
  std::vector<std::string> padded(543, "*fp32");
  padded.push_back("i32");
  EXPECT_TRUE(compileParams(padded).ok);
  padded.push_back("i64");
  ParamSpaceRun aligned = compileParams(padded);
  EXPECT_FALSE(aligned.ok);
  EXPECT_NE(aligned.diagnostics.find("take 4360 bytes of parameter space, over PTX's limit of "
                                     "4352 bytes (from parameter 544, 'p544', at offset 4352)"),
            std::string::npos)
      << aligned.diagnostics;
}
