// tkc --aot: see AotCommand.h. The generated code uses only the public API
// (include/tk/): tk::Kernel::fromImage loads the embedded cubin when it was
// built for the device at hand and the PTX otherwise, and tk::Autotuner
// ::fromImages is the dispatcher.
#include "tools/tkc/AotCommand.h"

#include "driver/Ptxas.h"
#include "runtime/Autotuner.h"
#include "runtime/GpuKernel.h"
#include "support/FileIO.h"
#include "support/Quote.h"
#include "tools/tkc/OptionArgs.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace tk::tkc {

namespace {

constexpr int kOk = 0, kFailed = 1, kUsage = 2;

struct AotOptions {
  std::string input, kernel, signature, output, name, ns = "tk_aot", arch = "sm_90";
  std::string cubin = "auto"; // auto | yes | no
  std::map<std::string, ConstValue> constants;
  std::vector<tune::Config> configs;
  std::vector<std::string> key, resetToZero, restoreValue;
};

const char *kUsageText = R"(usage: tkc --aot FILE.tk --kernel NAME -o OUT [options]
Writes OUT.h and OUT.cpp: the kernel's PTX (and cubin) for each config, a
typed launch function per config and an autotuning dispatcher.
  --kernel NAME          the @tk.jit function
  --signature "SIG"      runtime parameter types, Triton-style ("*fp32:16, i32")
  -D NAME=VALUE          a constexpr shared by every config
  --config "SPEC"        one config: "BLOCK=128,num_warps=4,num_stages=3" (repeat;
                         default: one config with num_warps=4)
  --key NAME             a runtime parameter whose value selects the config (repeat)
  --reset-to-zero NAME   a pointer parameter zeroed before each timed launch
  --restore-value NAME   a pointer parameter restored after each config
  --name IDENT           the generated struct's name (default: the kernel's)
  --namespace NS         its namespace (default: tk_aot)
  --arch sm_XX           target (default: sm_90)
  --cubin auto|yes|no    embed a cubin made by ptxas (auto: when ptxas is found)
  -o OUT                 output path without extension
)";

int usage(const std::string &message) {
  std::cerr << "tkc --aot: error: " << message << "\n" << kUsageText;
  return kUsage;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

// "BLOCK=128,num_warps=4" -> a config; false with `error`.
bool parseConfig(std::string_view spec, tune::Config &out, std::string &error) {
  out = tune::Config();
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      error = fmt::format("config entry '{}' is not NAME=VALUE", item);
      return false;
    }
    std::string name(item.substr(0, eq));
    ConstValue v = parseConstValue(item.substr(eq + 1));
    if (name == "num_warps" || name == "num_stages") {
      if (v.kind != ConstValue::Kind::Int || v.intValue < 1 || v.intValue > 64) {
        error =
            fmt::format("{} must be an integer from 1 to 64, not '{}'", name, item.substr(eq + 1));
        return false;
      }
      (name == "num_warps" ? out.numWarps : out.numStages) = int(v.intValue);
    } else {
      out.meta.emplace_back(name, v);
    }
  }
  return true;
}

int parseArgs(int argc, char **argv, AotOptions &o) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    OptionArg a = splitOption(args[i]);
    auto value = [&]() -> std::optional<std::string> {
      auto v = optionValue(a, args, i);
      if (!v)
        return std::nullopt;
      return std::string(*v);
    };
    if (a.name == "--aot")
      continue;
    if (a.name == "--help" || a.name == "-h") {
      std::cout << kUsageText;
      return -1;
    }
    if (a.name.size() > 2 && a.name.substr(0, 2) == "-D") {
      std::string_view def = a.name.substr(2);
      size_t eq = def.find('=');
      if (eq == std::string_view::npos || eq == 0)
        return usage(fmt::format("-D wants NAME=VALUE, not '{}'", def));
      o.constants[std::string(def.substr(0, eq))] = parseConstValue(def.substr(eq + 1));
      continue;
    }
    std::optional<std::string> v;
    static const char *const withValue[] = {
        "--kernel",        "--signature", "-o",          "--config", "--key",   "--reset-to-zero",
        "--restore-value", "--name",      "--namespace", "--arch",   "--cubin", "-D"};
    bool takesValue = false;
    for (const char *w : withValue)
      takesValue = takesValue || a.name == w;
    if (!takesValue) {
      if (!a.name.empty() && a.name[0] == '-')
        return usage(fmt::format("unknown option '{}'", a.name));
      if (!o.input.empty())
        return usage("one input file at a time");
      o.input = std::string(a.name);
      continue;
    }
    if (!(v = value()))
      return usage(fmt::format("{} needs a value", a.name));
    if (a.name == "-D") {
      size_t eq = v->find('=');
      if (eq == std::string::npos || eq == 0)
        return usage(fmt::format("-D wants NAME=VALUE, not '{}'", *v));
      o.constants[v->substr(0, eq)] = parseConstValue(std::string_view(*v).substr(eq + 1));
    } else if (a.name == "--kernel") {
      o.kernel = *v;
    } else if (a.name == "--signature") {
      o.signature = *v;
    } else if (a.name == "-o") {
      o.output = *v;
    } else if (a.name == "--config") {
      tune::Config c;
      std::string error;
      if (!parseConfig(*v, c, error))
        return usage(error);
      o.configs.push_back(std::move(c));
    } else if (a.name == "--key") {
      o.key.push_back(*v);
    } else if (a.name == "--reset-to-zero") {
      o.resetToZero.push_back(*v);
    } else if (a.name == "--restore-value") {
      o.restoreValue.push_back(*v);
    } else if (a.name == "--name") {
      o.name = *v;
    } else if (a.name == "--namespace") {
      o.ns = *v;
    } else if (a.name == "--arch") {
      o.arch = *v;
    } else if (a.name == "--cubin") {
      if (*v != "auto" && *v != "yes" && *v != "no")
        return usage(fmt::format("--cubin takes auto, yes or no, not '{}'", *v));
      o.cubin = *v;
    }
  }
  if (o.input.empty())
    return usage("no input file");
  if (o.kernel.empty())
    return usage("--kernel is required");
  if (o.output.empty())
    return usage("-o is required");
  if (o.name.empty())
    o.name = o.kernel;
  if (!isIdentifier(o.name))
    return usage(fmt::format("'{}' is not a C++ identifier (give --name)", o.name));
  if (!isIdentifier(o.ns))
    return usage(fmt::format("'{}' is not a C++ identifier", o.ns));
  if (o.configs.empty())
    o.configs.push_back(tune::Config());
  return kOk;
}

// PTX as adjacent C++ string literals, one per PTX line. quoteString's
// escapes are valid C++ for PTX, which is printable ASCII plus tabs and
// newlines (its \xNN form, greedy in C++, would only appear for other
// control bytes).
std::string cString(const std::string &text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    out += (start ? "\n    " : "") + quoteString(std::string_view(text).substr(start, end - start));
    start = end;
  }
  return out.empty() ? "\"\"" : out;
}

std::string byteArray(const std::string &bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i)
    out += fmt::format("{}0x{:02x},", i % 16 == 0 ? "\n    " : "",
                       static_cast<unsigned char>(bytes[i]));
  return out;
}

// The C++ type of a runtime parameter in the typed launch functions and its
// tk::Arg::Kind. fp16 and bf16 take a float, rounded at launch.
void cppType(const GpuParam &p, std::string &type, std::string &kind) {
  bool isUnsigned = !p.typeName.empty() && p.typeName[0] == 'u';
  switch (p.kind) {
  case GpuArg::Kind::Pointer:
    type = "const tk::Arg &";
    kind = "Pointer";
    return;
  case GpuArg::Kind::I1:
    type = "bool ";
    kind = "I1";
    return;
  case GpuArg::Kind::I8:
    type = isUnsigned ? "uint8_t " : "int8_t ";
    kind = "I8";
    return;
  case GpuArg::Kind::I16:
    type = isUnsigned ? "uint16_t " : "int16_t ";
    kind = "I16";
    return;
  case GpuArg::Kind::I32:
    type = isUnsigned ? "uint32_t " : "int32_t ";
    kind = "I32";
    return;
  case GpuArg::Kind::I64:
    type = isUnsigned ? "uint64_t " : "int64_t ";
    kind = "I64";
    return;
  case GpuArg::Kind::F16:
    type = "float ";
    kind = "F16";
    return;
  case GpuArg::Kind::BF16:
    type = "float ";
    kind = "BF16";
    return;
  case GpuArg::Kind::F32:
    type = "float ";
    kind = "F32";
    return;
  case GpuArg::Kind::F64:
    type = "double ";
    kind = "F64";
    return;
  }
  type = "const tk::Arg &";
  kind = "Pointer";
}

std::string constLiteral(const ConstValue &v) {
  switch (v.kind) {
  case ConstValue::Kind::Int:
    return fmt::format("int64_t({})", v.intValue);
  case ConstValue::Kind::Float:
    return fmt::format("{:.17g}", v.floatValue);
  case ConstValue::Kind::Bool:
    return v.boolValue ? "true" : "false";
  default:
    // A string meta-parameter; any other kind (a dtype, None) is shown by
    // its Python spelling (tk::Constant has no such kinds).
    return fmt::format("std::string({})",
                       quoteString(v.kind == ConstValue::Kind::String ? v.stringValue : v.str()));
  }
}

} // namespace

bool wantsAot(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--aot")
      return true;
  return false;
}

int aotCommand(int argc, char **argv) {
  AotOptions o;
  if (int r = parseArgs(argc, argv, o); r != kOk)
    return r < 0 ? kOk : r;
  std::string source, readError;
  if (!readInputFile(o.input, source, readError)) {
    std::cerr << fmt::format("tkc --aot: error: {}\n", readError);
    return kFailed;
  }

  // Compile every config; the parameters must agree (they come from the
  // signature, so they do unless a config turns a parameter constexpr).
  std::vector<CompiledPTX> compiled(o.configs.size());
  std::vector<std::string> cubins(o.configs.size());
  bool wantCubin = o.cubin != "no";
  if (o.cubin == "auto") {
    std::string searched;
    wantCubin = !findPtxas(searched).empty();
  }
  for (size_t i = 0; i < o.configs.size(); ++i) {
    GpuCompileOptions opts;
    opts.kernel = o.kernel;
    opts.signature = o.signature;
    opts.constants = o.constants;
    for (const auto &[name, value] : o.configs[i].meta)
      opts.constants[name] = value;
    opts.numWarps = o.configs[i].numWarps;
    opts.numStages = o.configs[i].numStages;
    opts.arch = o.arch;
    std::string error;
    if (!compileToPTX(source, o.input, opts, compiled[i], error)) {
      std::cerr << error;
      if (o.configs.size() > 1)
        std::cerr << fmt::format("tkc --aot: in config [{}] {}\n", i, o.configs[i].str());
      return kFailed;
    }
    if (wantCubin && !assembleWithPtxas(compiled[i].ptx, o.arch, cubins[i], error)) {
      std::cerr << "tkc --aot: error: " << error << "\n";
      return kFailed;
    }
  }
  const std::vector<GpuParam> &params = compiled[0].params;
  for (size_t i = 1; i < compiled.size(); ++i)
    if (compiled[i].params.size() != params.size()) {
      std::cerr << fmt::format("tkc --aot: error: config [{}] {} gives the kernel {} runtime "
                               "parameters, config [0] gives it {}\n",
                               i, o.configs[i].str(), compiled[i].params.size(), params.size());
      return kFailed;
    }
  std::vector<std::string> types, kinds;
  for (const GpuParam &p : params) {
    std::string type, kind;
    cppType(p, type, kind);
    types.push_back(type);
    kinds.push_back(kind);
  }
  for (const auto *names : {&o.key, &o.resetToZero, &o.restoreValue})
    for (const std::string &n : *names) {
      bool found = false;
      for (const GpuParam &p : params)
        found = found || p.name == n;
      if (!found) {
        std::cerr << fmt::format("tkc --aot: error: '{}' is not a runtime parameter of '{}'\n", n,
                                 o.kernel);
        return kFailed;
      }
    }

  // The identity of what was compiled: the disk cache of tuning results
  // is keyed by it, so a rebuilt kernel is tuned again.
  std::string identityText = source + "\n" + o.kernel + "\n" + o.signature + "\n" + o.arch;
  for (const auto &[name, value] : o.constants)
    identityText += "\n" + name + "=" + value.str();
  for (const tune::Config &c : o.configs)
    identityText += "\n" + c.str();
  std::string identity = tune::hashText(identityText);

  std::string headerName = std::filesystem::path(o.output + ".h").filename().string();
  std::string paramList, argList, argsArray;
  for (size_t i = 0; i < params.size(); ++i) {
    paramList += fmt::format(", {}{}", types[i], params[i].name);
    argList += fmt::format("{}{}", i ? ", " : "", params[i].name);
  }
  std::string configLines;
  for (size_t i = 0; i < o.configs.size(); ++i)
    configLines += fmt::format("  //   [{}] {}\n", i, o.configs[i].str());

  std::string h = fmt::format(
      R"(// Generated by tkc --aot from {input} (kernel {kernel}); do not edit.
//
// {count} config(s), compiled for {arch}{cubinNote}:
{configLines}//
// Runtime parameters: {argList}.
// Launch one config with launch_config(i, grid, stream, args...), or let
// launch(grid, stream, args...) pick the fastest config for the key
// ({keyText}): it autotunes on the first launch of each key and remembers the
// choice (in memory, and on disk under $TK_CACHE_DIR/autotune/).
#pragma once

#include <tk/tk.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {ns} {{

struct {name} {{
  static constexpr size_t kNumConfigs = {count};
  static const std::vector<tk::Config> &configs();
  /// Config i's kernel, loaded on first use.
  static const tk::Kernel &kernel(size_t config);
  /// Launches config i.
  static void launch_config(size_t config, tk::Grid grid, const tk::Stream &stream{paramList});
  /// Launches the best config for the key, tuning first if the key is new.
  static void launch(const tk::GridFn &grid, const tk::Stream &stream{paramList});
  /// The dispatcher behind launch(); its options can be changed before the
  /// first launch (progress callback, cache directory, warm-up/rep times).
  static tk::AutotuneOptions &options();
  static tk::Autotuner &autotuner();
}};

}} // namespace {ns}
)",
      fmt::arg("input", std::filesystem::path(o.input).filename().string()),
      fmt::arg("kernel", o.kernel), fmt::arg("count", o.configs.size()), fmt::arg("arch", o.arch),
      fmt::arg("cubinNote", wantCubin ? " (PTX and cubin)" : " (PTX)"),
      fmt::arg("configLines", configLines), fmt::arg("argList", argList),
      fmt::arg("keyText",
               o.key.empty() ? "no key parameters" : fmt::format("{}", fmt::join(o.key, ", "))),
      fmt::arg("ns", o.ns), fmt::arg("name", o.name), fmt::arg("paramList", paramList));

  std::string data;
  for (size_t i = 0; i < compiled.size(); ++i) {
    data += fmt::format("const char kPtx{}[] =\n    {};\n", i, cString(compiled[i].ptx));
    if (!cubins[i].empty())
      data += fmt::format("const unsigned char kCubin{}[] = {{{}\n}};\n", i, byteArray(cubins[i]));
  }
  std::string configsInit, imagesInit, names, kindList;
  for (size_t i = 0; i < params.size(); ++i) {
    names += fmt::format("{}\"{}\"", i ? ", " : "", params[i].name);
    kindList += fmt::format("{}tk::Arg::Kind::{}", i ? ", " : "", kinds[i]);
  }
  int archNumber = std::atoi(o.arch.c_str() + (o.arch.rfind("sm_", 0) == 0 ? 3 : 0));
  for (size_t i = 0; i < o.configs.size(); ++i) {
    std::string meta;
    for (const auto &[name, value] : o.configs[i].meta)
      meta += fmt::format("{}{{\"{}\", {}}}", meta.empty() ? "" : ", ", name, constLiteral(value));
    configsInit += fmt::format("      tk::Config({{{}}}, {}, {}),\n", meta, o.configs[i].numWarps,
                               o.configs[i].numStages);
    const CompiledPTX &c = compiled[i];
    imagesInit += fmt::format(
        "  {{\n    tk::Kernel::Image im;\n    im.name = \"{}\";\n    im.ptx = kPtx{};\n", o.kernel,
        i);
    if (!cubins[i].empty())
      imagesInit +=
          fmt::format("    im.cubin = kCubin{0};\n    im.cubinBytes = sizeof(kCubin{0});\n"
                      "    im.cubinArch = {1};\n",
                      i, archNumber);
    imagesInit += fmt::format("    im.params = {{{}}};\n    im.paramNames = {{{}}};\n"
                              "    im.numWarps = {};\n    im.dynamicSharedBytes = {};\n"
                              "    out.push_back(std::move(im));\n  }}\n",
                              kindList, names, c.numWarps, c.dynamicShared ? c.sharedBytes : 0);
  }
  auto quoted = [](const std::vector<std::string> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
      s += fmt::format("{}\"{}\"", i ? ", " : "", v[i]);
    return s;
  };

  std::string cpp = fmt::format(
      R"(// Generated by tkc --aot from {input} (kernel {kernel}); do not edit.
#include "{header}"

#include <mutex>
#include <string>

namespace {ns} {{

namespace {{

{data}
std::vector<tk::Kernel::Image> images() {{
  std::vector<tk::Kernel::Image> out;
{imagesInit}  return out;
}}

}} // namespace

const std::vector<tk::Config> &{name}::configs() {{
  static const std::vector<tk::Config> all = {{
{configsInit}  }};
  return all;
}}

const tk::Kernel &{name}::kernel(size_t config) {{
  static std::once_flag once[kNumConfigs];
  static tk::Kernel kernels[kNumConfigs];
  if (config >= kNumConfigs)
    throw tk::Error("{name}::kernel: config " + std::to_string(config) + " of {count}");
  std::call_once(once[config], [&] {{ kernels[config] = tk::Kernel::fromImage(images()[config]); }});
  return kernels[config];
}}

void {name}::launch_config(size_t config, tk::Grid grid, const tk::Stream &stream{paramList}) {{
  kernel(config).launch(grid, stream{argCall});
}}

tk::AutotuneOptions &{name}::options() {{
  static tk::AutotuneOptions o = [] {{
    tk::AutotuneOptions d;
    d.key = {{{key}}};
    d.resetToZero = {{{reset}}};
    d.restoreValue = {{{restore}}};
    return d;
  }}();
  return o;
}}

tk::Autotuner &{name}::autotuner() {{
  static tk::Autotuner tuner =
      tk::Autotuner::fromImages("{identity}", configs(), images(), options());
  return tuner;
}}

void {name}::launch(const tk::GridFn &grid, const tk::Stream &stream{paramList}) {{
  autotuner().launch(grid, stream{argCall});
}}

}} // namespace {ns}
)",
      fmt::arg("input", std::filesystem::path(o.input).filename().string()),
      fmt::arg("kernel", o.kernel), fmt::arg("header", headerName), fmt::arg("ns", o.ns),
      fmt::arg("data", data), fmt::arg("imagesInit", imagesInit), fmt::arg("name", o.name),
      fmt::arg("configsInit", configsInit), fmt::arg("count", o.configs.size()),
      fmt::arg("paramList", paramList), fmt::arg("argCall", argList.empty() ? "" : ", " + argList),
      fmt::arg("key", quoted(o.key)), fmt::arg("reset", quoted(o.resetToZero)),
      fmt::arg("restore", quoted(o.restoreValue)), fmt::arg("identity", identity));

  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(o.output).parent_path();
  if (!parent.empty())
    std::filesystem::create_directories(parent, ec);
  std::string writeError;
  if (!writeOutput(o.output + ".h", h, writeError) ||
      !writeOutput(o.output + ".cpp", cpp, writeError)) {
    std::cerr << fmt::format("tkc --aot: error: {}\n", writeError);
    return kFailed;
  }
  return kOk;
}

} // namespace tk::tkc
