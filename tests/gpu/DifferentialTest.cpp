// The randomized differential test of issue 5: every IR op family in every
// dtype the language allows for it, as a small generated kernel
// (DiffCases.cpp, DiffCasesStructured.cpp), run two ways:
//
//   Ci/<case>   everywhere (ctest gpu_difftest_ci_0/1): compile to PTX through tk,
//               assemble with `ptxas -arch=sm_90` when ptxas is found
//               (TK_PTXAS_PATH, /usr/local/cuda/bin, PATH), run in the
//               interpreter and compare with the host reference where the
//               case has one. A case whose code generation is broken fails
//               here already, without a GPU. In a tree built without LLVM (the
//               sanitizer tree) only the interpreter half runs.
//   Gpu/<case>  on a GPU (ctest gpu_difftest, label gpu; skipped with the
//               reason elsewhere): the kernel on the GPU and in the
//               interpreter on the same random inputs, every output element
//               compared exactly or within the case's tolerance.
//
// A failure names the case and its seed and shows the kernel source, the
// sizes, and the first differing elements with their inputs. Re-run one case:
//
//   gpu_difftest --gtest_filter='Gpu/*cast_fp32_to_i8*'
//
//   gpu_difftest --dump-cases DIR   # every case's kernel, for
//                                   # scripts/amdgpu_kernels.py (amdgcn)
//
// Ops the GPU back end does not support yet are listed, visibly, in
// kNotYetOnGpu below (printed at start-up). A listed case is skipped on the
// GPU with its reason and, in Ci, still runs in the interpreter; an unlisted
// case that hits "not supported yet" fails, and so does a listed one that
// now compiles: the list only shrinks.
#include "DiffHarness.h"

#include "driver/CudaDriver.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace tk::difftest {

// The ops the code generator reports as not supported yet
// (docs/codegen/lowering.md), by case family (DiffCase.h) and dtypes ("" =
// every dtype). Remove a line when its op lands: the Ci cases of a listed
// family that compiles fail.
const std::vector<NotYet> &notYetOnGpu() {
  static const std::vector<NotYet> table = {};
  return table;
}

const NotYet *findNotYet(const CaseDef &c) {
  for (const NotYet &n : notYetOnGpu()) {
    if (c.family != n.family)
      continue;
    if (!*n.dtypes)
      return &n;
    std::stringstream list(n.dtypes);
    for (std::string d; std::getline(list, d, ',');)
      if (d == c.dtype)
        return &n;
  }
  return nullptr;
}

namespace {

std::string testName(const CaseDef &c) {
  std::string s;
  for (size_t i = 0; i < c.name.size(); ++i) {
    char ch = c.name[i];
    if (c.name.compare(i, 2, "->") == 0) {
      s += "_to_";
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(ch))) {
      s += ch;
    } else if (ch == '+') {
      s += "plus";
    } else if (!s.empty() && s.back() != '_') {
      s += '_';
    }
  }
  return s;
}

/// Builds the case from its seed; the trace names the case, the seed, the
/// sizes and the source on any failure below.
CaseRun build(const CaseDef &def) {
  std::mt19937_64 rng(caseSeed(def.name));
  return def.build(rng);
}

std::string trace(const CaseDef &def, const CaseRun &run) {
  return fmt::format("case {} (seed {}; re-run: --gtest_filter='*{}*'): {}\n--- kernel "
                     "(signature \"{}\") ---\n{}",
                     def.name, caseSeed(def.name), testName(def), run.shapeNote, run.opts.signature,
                     run.source);
}

/// The outcome of compiling a case for the GPU against kNotYetOnGpu: true
/// when it compiled and is not listed; a listed "not supported yet" is
/// returned in `notYet`; everything else is a test failure.
bool checkCompile(const CaseDef &def, bool compiled, const std::string &error,
                  const NotYet *&notYet) {
  const NotYet *listed = findNotYet(def);
  notYet = nullptr;
  if (compiled && listed) {
    ADD_FAILURE() << def.name << " compiles for the GPU now: remove {\"" << listed->family
                  << "\", \"" << listed->dtypes << "\"} from kNotYetOnGpu";
    return false;
  }
  if (compiled)
    return true;
  if (listed && isNotSupportedYet(error)) {
    notYet = listed;
    return false;
  }
  ADD_FAILURE() << "compiling for the GPU failed"
                << (isNotSupportedYet(error) ? " (not listed in kNotYetOnGpu)" : "") << ":\n"
                << error;
  return false;
}

/// A kernel that faults (an illegal address, a trap) leaves the CUDA
/// context unusable for the rest of the process: the cases after it are
/// skipped naming the one that faulted, rather than all failing. (The
/// bundle's run.sh runs the cases in 16 processes, so a fault costs one
/// shard.)
std::string gFaultedCase;

bool isStickyCudaError(const std::string &error) {
  for (const char *e : {"CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                        "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED",
                        "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ASSERT",
                        "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_LAUNCH_TIMEOUT"})
    if (error.find(e) != std::string::npos)
      return true;
  return false;
}

class Diff : public ::testing::TestWithParam<size_t> {};
using Ci = Diff;
using Gpu = Diff;

TEST_P(Ci, Case) {
  const CaseDef &def = allCases()[GetParam()];
  CaseRun run = build(def);
  SCOPED_TRACE(trace(def, run));

  std::string ptx, error;
  std::vector<GpuParam> params;
  int warps = 0;
  bool compiled = compileToPTX(run.source, "case.tk", run.opts, ptx, params, warps, error);
  const NotYet *notYet = nullptr;
  if (!compiled && error.find("TK_WITH_LLVM=OFF") != std::string::npos) {
    // The sanitizer tree has no code generator: the interpreter half runs.
    RecordProperty("codegen", "built without LLVM: interpreter and reference only");
  } else if (checkCompile(def, compiled, error, notYet)) {
    static const std::optional<std::string> ptxas = findPtxas();
    std::string log;
    if (ptxas)
      EXPECT_TRUE(assemblePTX(*ptxas, ptx, run.opts.arch, log))
          << "ptxas -arch=" << run.opts.arch << " rejected the PTX:\n"
          << log;
    else
      RecordProperty("ptxas", "not found: PTX not assembled");
  } else if (notYet) {
    RecordProperty("not_yet_on_gpu", notYet->why);
  }

  RunOutputs interp;
  ASSERT_TRUE(runInterpreter(run, interp, error)) << "the interpreter failed:\n" << error;
  if (!run.reference)
    return;
  RunOutputs want = referenceOutputs(run);
  for (size_t k = 0; k < want.bytes.size(); ++k) {
    std::string diff = compareOutput(run, k, want, interp);
    EXPECT_TRUE(diff.empty()) << "the interpreter (got) against the host reference (expected): "
                              << diff;
  }
}

TEST_P(Gpu, Case) {
  std::string why;
  if (!CudaDriver::get(why))
    GTEST_SKIP() << "no GPU: " << why;
  if (!gFaultedCase.empty())
    GTEST_SKIP() << "the CUDA context is unusable: case " << gFaultedCase << " faulted";
  const CaseDef &def = allCases()[GetParam()];
  CaseRun run = build(def);
  SCOPED_TRACE(trace(def, run));

  std::string error;
  GpuKernel *kernel = GpuKernel::compile(run.source, "case.tk", run.opts, error);
  const NotYet *notYet = nullptr;
  if (!checkCompile(def, kernel != nullptr, error, notYet)) {
    if (notYet)
      GTEST_SKIP() << "not yet on the GPU (kNotYetOnGpu): " << notYet->why;
    return;
  }
  RunOutputs gpu, interp;
  if (!runOnGpu(run, *kernel, gpu, error)) {
    if (isStickyCudaError(error))
      gFaultedCase = def.name;
    FAIL() << "the GPU run failed: " << error;
  }
  ASSERT_TRUE(runInterpreter(run, interp, error)) << "the interpreter failed:\n" << error;
  for (size_t k = 0; k < interp.bytes.size(); ++k) {
    std::string diff = compareOutput(run, k, interp, gpu);
    EXPECT_TRUE(diff.empty()) << "the GPU (got) against the interpreter (expected): " << diff;
  }
}

// The comparison itself, on hand-made outputs: it must see a value off by
// more than the tolerance, an element written where the reference leaves it
// unwritten (and the reverse, also when "unwritten" means 0xff bytes, as on
// the GPU), and NaN, infinities and signed zeros.
TEST(CiHarness, CompareOutputCatchesEveryKindOfDifference) {
  CaseRun run;
  CaseBuffer out;
  out.name = "out";
  out.dtype = DType::F32;
  out.size = 5;
  out.output = true;
  out.preset = false;
  out.tol = {2, 0};
  run.buffers.push_back(out);
  auto outputs = [](std::vector<float> v, std::vector<bool> written) {
    RunOutputs o;
    o.bytes.emplace_back(v.size() * 4);
    std::memcpy(o.bytes[0].data(), v.data(), v.size() * 4);
    if (!written.empty())
      o.written.push_back(written);
    return o;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  float oneUlp = std::nextafter(1.0f, 2.0f), threeUlps = 1.0f + 3 * (oneUlp - 1.0f);
  RunOutputs want = outputs({1.0f, nan, 0.0f, inf, -0.0f}, {true, true, false, true, true});
  EXPECT_EQ(compareOutput(run, 0, want, want), "");
  EXPECT_EQ(
      compareOutput(run, 0, want,
                    outputs({oneUlp, nan, 7.0f, inf, -0.0f}, {true, true, false, true, true})),
      "");
  std::string d = compareOutput(
      run, 0, want, outputs({threeUlps, nan, 0.0f, inf, -0.0f}, {true, true, false, true, true}));
  EXPECT_NE(d.find("1 of 5 elements of out (fp32) differ"), std::string::npos) << d;
  d = compareOutput(run, 0, want,
                    outputs({1.0f, nan, 0.0f, inf, -0.0f}, {true, true, true, true, true}));
  EXPECT_NE(d.find("out[2]: written (0) where it must not be"), std::string::npos) << d;
  d = compareOutput(run, 0, want,
                    outputs({1.0f, 1.0f, 0.0f, -inf, -0.0f}, {true, true, false, true, true}));
  EXPECT_NE(d.find("2 of 5 elements"), std::string::npos) << d;
  // GPU-style: 0xff bytes (a NaN) mean unwritten.
  float unwritten;
  std::memset(&unwritten, 0xff, 4);
  EXPECT_EQ(compareOutput(run, 0, want, outputs({1.0f, nan, unwritten, inf, -0.0f}, {})), "");
  d = compareOutput(run, 0, want, outputs({1.0f, nan, unwritten, unwritten, -0.0f}, {}));
  EXPECT_NE(d.find("out[3]: not written, expected inf"), std::string::npos) << d;
  // Exact outputs tell -0 from +0.
  run.buffers[0].tol = {};
  d = compareOutput(run, 0, want,
                    outputs({1.0f, nan, 0.0f, inf, 0.0f}, {true, true, false, true, true}));
  EXPECT_NE(d.find("out[4]: got 0, expected -0"), std::string::npos) << d;
}

// Every libdevice function has cases (a domain and a tolerance).
TEST(CiHarness, EveryLibdeviceFunctionHasCases) {
  std::vector<std::string> missing = libdeviceFunctionsWithoutCases();
  std::string list;
  for (const std::string &m : missing)
    list += " " + m;
  EXPECT_TRUE(missing.empty()) << "no cases for:" << list;
}

std::vector<size_t> caseIndices() {
  std::vector<size_t> v(allCases().size());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i;
  return v;
}

std::string paramName(const ::testing::TestParamInfo<size_t> &info) {
  return testName(allCases()[info.param]);
}

INSTANTIATE_TEST_SUITE_P(Ci, Ci, ::testing::ValuesIn(caseIndices()), paramName);
INSTANTIATE_TEST_SUITE_P(Gpu, Gpu, ::testing::ValuesIn(caseIndices()), paramName);

std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

} // namespace

// Every case's kernel as scripts/amdgpu_kernels.py compiles it for AMD GPUs:
// DIR/<test name>.tk and DIR/kernels.json, whose entries have the fields of
// tutorials/kernels.json (file, kernel, signature, constants as their -D
// text, options) and `flags` (tkc's --no-fp-fusion, ...). The NVIDIA arch a
// case sets is left out.
int dumpCases(const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream manifest(std::filesystem::path(dir) / "kernels.json");
  if (ec || !manifest) {
    std::fprintf(stderr, "cannot write to %s\n", dir.c_str());
    return 1;
  }
  manifest << "{\"kernels\": [\n";
  const std::vector<CaseDef> &cases = allCases();
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseRun run = build(cases[i]);
    std::string file = testName(cases[i]) + ".tk";
    std::ofstream(std::filesystem::path(dir) / file) << run.source;
    std::string constants;
    for (const auto &[name, value] : run.opts.constants)
      constants += fmt::format("{}{}: {}", constants.empty() ? "" : ", ", jsonString(name),
                               jsonString(value.str()));
    std::string flags;
    for (auto [on, flag] : {std::pair{!run.opts.fpFusion, "--no-fp-fusion"},
                            std::pair{!run.opts.reflectFtz, "--no-reflect-ftz"},
                            std::pair{run.opts.debug, "--debug"}})
      if (on)
        flags += fmt::format("{}\"{}\"", flags.empty() ? "" : ", ", flag);
    manifest << fmt::format("  {{\"file\": {}, \"case\": {}, \"kernel\": {}, \"signature\": {}, "
                            "\"constants\": {{{}}}, \"options\": {{\"num_warps\": {}, "
                            "\"num_stages\": {}}}, \"flags\": [{}]}}{}\n",
                            jsonString(file), jsonString(cases[i].name),
                            jsonString(run.opts.kernel), jsonString(run.opts.signature), constants,
                            run.opts.numWarps, run.opts.numStages, flags,
                            i + 1 < cases.size() ? "," : "");
  }
  manifest << "]}\n";
  std::printf("%zu cases written to %s\n", cases.size(), dir.c_str());
  return manifest ? 0 : 1;
}

} // namespace tk::difftest

int main(int argc, char **argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--dump-cases")
    return tk::difftest::dumpCases(argv[2]);
  ::testing::InitGoogleTest(&argc, argv);
  const auto &table = tk::difftest::notYetOnGpu();
  std::printf("kNotYetOnGpu: %zu entr%s (skipped on the GPU, interpreter only in Ci)\n",
              table.size(), table.size() == 1 ? "y" : "ies");
  for (const tk::difftest::NotYet &n : table)
    std::printf("  %-16s %-12s %s\n", n.family, *n.dtypes ? n.dtypes : "(all)", n.why);
  std::printf("%zu cases\n", tk::difftest::allCases().size());
  std::fflush(stdout);
  return RUN_ALL_TESTS();
}
