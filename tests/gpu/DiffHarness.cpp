#include "DiffHarness.h"

#include "driver/CudaDriver.h"
#include "interpreter/HostBuffer.h"
#include "interpreter/Interpreter.h"
#include "ir/ASTToIR.h"
#include "lang/Float16.h"
#include "parser/Frontend.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace tk::difftest {

//===----------------------------------------------------------------------===//
// Elements
//===----------------------------------------------------------------------===//

namespace {

template <typename T> T load(const std::byte *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> void put(std::byte *p, T v) { std::memcpy(p, &v, sizeof v); }

} // namespace

Elem readElem(const std::byte *p, DType d) {
  switch (d) {
  case DType::I1:
  case DType::U8:
    return Elem::ofInt(load<uint8_t>(p) & (d == DType::I1 ? 1 : 0xff));
  case DType::I8:
    return Elem::ofInt(load<int8_t>(p));
  case DType::I16:
    return Elem::ofInt(load<int16_t>(p));
  case DType::U16:
    return Elem::ofInt(load<uint16_t>(p));
  case DType::I32:
    return Elem::ofInt(load<int32_t>(p));
  case DType::U32:
    return Elem::ofInt(load<uint32_t>(p));
  case DType::I64:
    return Elem::ofInt(load<int64_t>(p));
  case DType::U64: {
    uint64_t u = load<uint64_t>(p);
    return {int64_t(u), double(u)};
  }
  case DType::F16:
    return Elem::ofFloat(halfToFloat(load<uint16_t>(p)));
  case DType::BF16:
    return Elem::ofFloat(bf16ToFloat(load<uint16_t>(p)));
  case DType::F32:
    return Elem::ofFloat(load<float>(p));
  case DType::F64:
    return Elem::ofFloat(load<double>(p));
  case DType::F8E4NV:
  case DType::F8E5:
  case DType::F8E4B15:
    return Elem::ofFloat(fp8ToFloat(load<uint8_t>(p), d));
  }
  return {};
}

void writeElem(std::byte *p, DType d, Elem v) {
  switch (d) {
  case DType::I1:
    put<uint8_t>(p, v.i != 0);
    break;
  case DType::I8:
  case DType::U8:
    put<uint8_t>(p, uint8_t(v.i));
    break;
  case DType::I16:
  case DType::U16:
    put<uint16_t>(p, uint16_t(v.i));
    break;
  case DType::I32:
  case DType::U32:
    put<uint32_t>(p, uint32_t(v.i));
    break;
  case DType::I64:
  case DType::U64:
    put<uint64_t>(p, uint64_t(v.i));
    break;
  case DType::F16:
    put<uint16_t>(p, doubleToHalf(v.f));
    break;
  case DType::BF16:
    put<uint16_t>(p, doubleToBF16(v.f));
    break;
  case DType::F32:
    put<float>(p, float(v.f));
    break;
  case DType::F64:
    put<double>(p, v.f);
    break;
  case DType::F8E4NV:
  case DType::F8E5:
  case DType::F8E4B15:
    put<uint8_t>(p, doubleToFp8(v.f, d));
    break;
  }
}

//===----------------------------------------------------------------------===//
// Runs
//===----------------------------------------------------------------------===//

namespace {

std::vector<size_t> outputIndices(const CaseRun &run) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < run.buffers.size(); ++i)
    if (run.buffers[i].output)
      idx.push_back(i);
  return idx;
}

// A scalar of the case's dtype as the launch kind the compiled kernel
// expects (unsigned integers travel as their signed kind of the same width).
GpuArg typedArg(GpuArg::Kind kind, const CaseArg &a) {
  switch (kind) {
  case GpuArg::Kind::I1:
    return GpuArg::ofI1(a.scalar.i != 0);
  case GpuArg::Kind::I8:
    return GpuArg::ofI8(int8_t(a.scalar.i));
  case GpuArg::Kind::I16:
    return GpuArg::ofI16(int16_t(a.scalar.i));
  case GpuArg::Kind::I64:
    return GpuArg::ofI64(a.scalar.i);
  case GpuArg::Kind::F16:
    return GpuArg::ofF16Bits(doubleToHalf(a.scalar.f));
  case GpuArg::Kind::BF16:
    return GpuArg::ofBF16Bits(doubleToBF16(a.scalar.f));
  case GpuArg::Kind::F32:
    return GpuArg::ofF32(float(a.scalar.f));
  case GpuArg::Kind::F64:
    return GpuArg::ofF64(a.scalar.f);
  default:
    return GpuArg::ofI32(int32_t(a.scalar.i));
  }
}

} // namespace

bool runInterpreter(const CaseRun &run, RunOutputs &out, std::string &error) {
  SourceManager sm;
  DiagnosticEngine diag(sm);
  ast::Context actx;
  ast::Module *m = parseAndCheck(sm, sm.addBuffer("case.tk", run.source), actx, diag);
  if (!m || diag.hasErrors()) {
    error = diag.renderAll();
    return false;
  }
  IRContext ctx(sm);
  Module module(ctx);
  KernelSpec spec;
  spec.kernel = run.opts.kernel;
  spec.signature = run.opts.signature;
  spec.constants = run.opts.constants;
  Function *fn = lowerKernel(*m, spec, ctx, module, diag);
  if (!fn) {
    error = diag.renderAll();
    return false;
  }
  std::vector<HostBuffer> host;
  host.reserve(run.buffers.size());
  for (const CaseBuffer &b : run.buffers) {
    host.push_back(HostBuffer::allocate(b.name, b.dtype, b.size));
    if (b.preset) {
      std::memcpy(host.back().data(), b.bytes.data(), host.back().bytes());
      host.back().markAllWritten();
    }
  }
  std::vector<InterpArg> args;
  for (const CaseArg &a : run.args)
    args.push_back(a.isBuffer                    ? InterpArg::pointer(host[a.buffer])
                   : a.typed && isFloat(a.dtype) ? InterpArg::real(a.scalar.f)
                                                 : InterpArg::integer(a.value));
  InterpretOptions io;
  io.grid = {run.grid[0], run.grid[1], run.grid[2]};
  if (!interpret(module, *fn, args, io, diag)) {
    error = diag.renderAll();
    return false;
  }
  out = {};
  for (size_t i : outputIndices(run)) {
    const HostBuffer &h = host[i];
    out.bytes.emplace_back(h.data(), h.data() + h.bytes());
    size_t eb = dtypeBytes(h.dtype());
    std::vector<bool> w(size_t(h.numElements()));
    for (size_t e = 0; e < w.size(); ++e)
      w[e] = h.isWritten(e * eb, eb);
    out.written.push_back(std::move(w));
  }
  return true;
}

bool runOnGpu(const CaseRun &run, const GpuKernel &kernel, RunOutputs &out, std::string &error) {
  CudaDriver *cuda = CudaDriver::get(error);
  if (!cuda)
    return false;
  std::vector<DeviceBuffer> device(run.buffers.size());
  for (size_t i = 0; i < run.buffers.size(); ++i) {
    const CaseBuffer &b = run.buffers[i];
    size_t bytes = size_t(b.size) * dtypeBytes(b.dtype);
    if (!device[i].allocate(bytes, error))
      return false;
    bool ok = b.preset ? device[i].upload(b.bytes.data(), bytes, error)
                       : cuda->fill(device[i].ptr(), 0xff, bytes, error);
    if (!ok)
      return false;
  }
  if (kernel.params().size() != run.args.size()) {
    error = fmt::format("the kernel takes {} arguments, the case passes {}", kernel.params().size(),
                        run.args.size());
    return false;
  }
  std::vector<GpuArg> args;
  for (size_t i = 0; i < run.args.size(); ++i) {
    const CaseArg &a = run.args[i];
    if (a.isBuffer)
      args.push_back(device[a.buffer].arg());
    else if (a.typed)
      args.push_back(typedArg(kernel.params()[i].kind, a));
    else if (kernel.params()[i].kind == GpuArg::Kind::I64)
      args.push_back(GpuArg::ofI64(a.value));
    else
      args.push_back(GpuArg::ofI32(int32_t(a.value)));
  }
  if (!kernel.launch(run.grid, args, nullptr, error) || !cuda->synchronize(error))
    return false;
  out = {};
  for (size_t i : outputIndices(run)) {
    const CaseBuffer &b = run.buffers[i];
    std::vector<std::byte> bytes(size_t(b.size) * dtypeBytes(b.dtype));
    if (!device[i].download(bytes.data(), bytes.size(), error))
      return false;
    out.bytes.push_back(std::move(bytes));
  }
  return true;
}

RunOutputs referenceOutputs(const CaseRun &run) {
  RunOutputs out;
  for (Expected &e : run.reference(run.buffers)) {
    out.bytes.push_back(std::move(e.bytes));
    out.written.push_back(std::move(e.written));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

namespace {

// One unit in the last place of `d` at magnitude |x| (the subnormal step
// below the normal range).
double ulpOf(DType d, double x) {
  int mant = d == DType::F16 ? 10 : d == DType::BF16 ? 7 : d == DType::F32 ? 23 : 52;
  int minE = d == DType::F16 ? -13 : d == DType::BF16 ? -125 : d == DType::F32 ? -125 : -1021;
  int e = 0;
  std::frexp(x == 0 || !std::isfinite(x) ? 1e-300 : x, &e);
  return std::ldexp(1.0, std::max(e, minE) - 1 - mant);
}

bool closeEnough(DType d, const Elem &want, const Elem &got, const Tol &tol) {
  if (!isFloat(d))
    return want.i == got.i;
  double w = want.f, g = got.f;
  if (std::isnan(w) || std::isnan(g))
    return std::isnan(w) && std::isnan(g);
  if (w == g)
    return std::signbit(w) == std::signbit(g) || tol.ulps > 0 || tol.abs > 0;
  if (!std::isfinite(w) || !std::isfinite(g))
    return false;
  return std::fabs(g - w) <= tol.ulps * ulpOf(d, w) + tol.abs;
}

bool allOnes(const std::byte *p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != std::byte{0xff})
      return false;
  return true;
}

std::string show(DType d, const Elem &e) {
  if (isFloat(d))
    return fmt::format("{:.9g}", e.f);
  if (d == DType::U64)
    return std::to_string(uint64_t(e.i));
  return std::to_string(e.i);
}

std::string indexText(const CaseBuffer &b, int64_t i) {
  if (b.shape.size() == 2)
    return fmt::format("[{}, {}]", i / b.shape[1], i % b.shape[1]);
  return fmt::format("[{}]", i);
}

} // namespace

std::string compareOutput(const CaseRun &run, size_t k, const RunOutputs &want,
                          const RunOutputs &got) {
  std::vector<size_t> outs = outputIndices(run);
  const CaseBuffer &spec = run.buffers[outs[k]];
  const size_t eb = dtypeBytes(spec.dtype);
  const std::byte *w = want.bytes[k].data();
  const std::byte *g = got.bytes[k].data();
  std::string detail;
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < spec.size; ++i) {
    bool wantWritten = want.written.empty() ? !allOnes(w + i * eb, eb) : want.written[k][i];
    bool gotWritten = got.written.empty() ? !allOnes(g + i * eb, eb) : got.written[k][i];
    Elem we = readElem(w + i * eb, spec.dtype), ge = readElem(g + i * eb, spec.dtype);
    std::string why;
    if (!wantWritten && gotWritten)
      why = fmt::format("written ({}) where it must not be", show(spec.dtype, ge));
    else if (wantWritten && !gotWritten && !(got.written.empty() && allOnes(w + i * eb, eb)))
      why = fmt::format("not written, expected {}", show(spec.dtype, we));
    else if (wantWritten && !closeEnough(spec.dtype, we, ge, spec.tol))
      why = fmt::format("got {}, expected {}", show(spec.dtype, ge), show(spec.dtype, we));
    if (why.empty())
      continue;
    if (isFloat(spec.dtype) && std::isfinite(we.f) && std::isfinite(ge.f))
      worst = std::max(worst, std::fabs(we.f - ge.f));
    if (bad++ >= 6)
      continue;
    detail += fmt::format("\n  {}{}: {}", spec.name, indexText(spec, i), why);
    // The inputs at the same index, for elementwise cases.
    std::string ins;
    for (const CaseBuffer &b : run.buffers)
      if (!b.output && b.preset && b.size == spec.size)
        ins +=
            fmt::format("{}{}={}", ins.empty() ? "" : ", ", b.name,
                        show(b.dtype, readElem(b.bytes.data() + i * dtypeBytes(b.dtype), b.dtype)));
    if (!ins.empty())
      detail += "  (inputs " + ins + ")";
  }
  if (bad == 0)
    return "";
  return fmt::format("{} of {} elements of {} ({}) differ{}; tolerance {} ulp + {}{}", bad,
                     spec.size, spec.name, dtypeName(spec.dtype),
                     worst > 0 ? fmt::format(" (largest difference {:.3g})", worst) : "",
                     spec.tol.ulps, spec.tol.abs, detail);
}

//===----------------------------------------------------------------------===//
// Compile errors and ptxas
//===----------------------------------------------------------------------===//

bool isNotSupportedYet(const std::string &error) {
  size_t p = error.find("not supported");
  return p != std::string::npos && error.find("yet", p) != std::string::npos;
}

std::optional<std::string> findPtxas() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char *env = std::getenv("TK_PTXAS_PATH"); env && *env) {
    fs::path p(env);
    if (fs::is_directory(p, ec))
      p /= "ptxas";
    if (fs::exists(p, ec))
      return p.string();
  }
  if (fs::exists("/usr/local/cuda/bin/ptxas", ec))
    return std::string("/usr/local/cuda/bin/ptxas");
  if (const char *path = std::getenv("PATH")) {
    std::string all(path);
    size_t start = 0;
    while (start <= all.size()) {
      size_t end = all.find(':', start);
      if (end == std::string::npos)
        end = all.size();
      fs::path p = fs::path(all.substr(start, end - start)) / "ptxas";
      if (end > start && fs::exists(p, ec))
        return p.string();
      start = end + 1;
    }
  }
  return std::nullopt;
}

bool assemblePTX(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                 std::string &log) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string tmpl = (fs::temp_directory_path(ec) / "tk-difftest-XXXXXX").string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) {
    log = "cannot create a temporary file for ptxas";
    return false;
  }
  close(fd);
  std::string ptxPath = tmpl + ".ptx";
  fs::rename(tmpl, ptxPath, ec);
  {
    std::ofstream f(ptxPath);
    f << ptx;
  }
  std::string cmd = fmt::format("'{}' -arch={} -o /dev/null '{}' 2>&1", ptxas, arch, ptxPath);
  log.clear();
  FILE *pipe = popen(cmd.c_str(), "r");
  int status = -1;
  if (pipe) {
    char buf[512];
    while (size_t n = fread(buf, 1, sizeof buf, pipe))
      log.append(buf, n);
    status = pclose(pipe);
  }
  fs::remove(ptxPath, ec);
  if (status != 0 && log.empty())
    log = fmt::format("ptxas exited with status {}", status);
  return status == 0;
}

} // namespace tk::difftest
