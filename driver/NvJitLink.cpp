#include "driver/NvJitLink.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <utility>
#include <vector>

namespace tk {
namespace {

// From nvJitLink.h, fixed by the library's ABI: NVJITLINK_INPUT_PTX.
constexpr int kInputPtx = 2;

using Handle = void *;
struct Functions {
  int (*create)(Handle *, uint32_t, const char **);
  int (*destroy)(Handle *);
  int (*addData)(Handle, int, const void *, size_t, const char *);
  int (*complete)(Handle);
  int (*cubinSize)(Handle, size_t *);
  int (*cubin)(Handle, void *);
  int (*errorLogSize)(Handle, size_t *);
  int (*errorLog)(Handle, char *);
};

struct Library {
  bool loaded = false;
  std::string error; // why it is not loaded
  Functions fn{};
};

template <class F> void **slotOf(F &fn) { return reinterpret_cast<void **>(&fn); }

Library loadLibrary() {
  Library l;
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    dirs.push_back(std::string(home) + "/lib64/");
  dirs.push_back("/usr/local/cuda/lib64/");
  dirs.push_back(""); // the loader's own search path
  const char *names[] = {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"};
  void *lib = nullptr;
  std::string looked;
  for (const std::string &dir : dirs) {
    for (const char *name : names) {
      std::string path = dir + name;
      lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib)
        break;
    }
    if (lib)
      break;
    looked +=
        fmt::format("{}{}", looked.empty() ? "" : ", ", dir.empty() ? "the loader path" : dir);
  }
  if (!lib) {
    l.error = fmt::format("nvJitLink not found (looked for libnvJitLink.so.13, .so.12, .so in {})",
                          looked);
    return l;
  }
  Functions &f = l.fn;
  const std::pair<void **, const char *> symbols[] = {
      {slotOf(f.create), "nvJitLinkCreate"},
      {slotOf(f.destroy), "nvJitLinkDestroy"},
      {slotOf(f.addData), "nvJitLinkAddData"},
      {slotOf(f.complete), "nvJitLinkComplete"},
      {slotOf(f.cubinSize), "nvJitLinkGetLinkedCubinSize"},
      {slotOf(f.cubin), "nvJitLinkGetLinkedCubin"},
      {slotOf(f.errorLogSize), "nvJitLinkGetErrorLogSize"},
      {slotOf(f.errorLog), "nvJitLinkGetErrorLog"},
  };
  for (const auto &[slot, name] : symbols) {
    *slot = dlsym(lib, name);
    if (!*slot) {
      // Keep the library open: unloading a half-bound library buys nothing.
      l.error = fmt::format("libnvJitLink has no symbol {}", name);
      return l;
    }
  }
  l.loaded = true;
  return l;
}

const Library &library() {
  static std::once_flag once;
  static Library lib;
  std::call_once(once, [] { lib = loadLibrary(); });
  return lib;
}

} // namespace

bool nvJitLinkAvailable(std::string &error) {
  const Library &l = library();
  if (!l.loaded)
    error = l.error;
  return l.loaded;
}

bool linkWithNvJitLink(const std::string &ptx, const std::string &arch, int optLevel,
                       std::string &cubin, std::string &error) {
  if (!nvJitLinkAvailable(error))
    return false;
  const Functions &f = library().fn;
  std::string archFlag = "-arch=" + arch;
  std::string optFlag = fmt::format("-O{}", optLevel < 0 ? 3 : std::min(optLevel, 3));
  const char *options[] = {archFlag.c_str(), optFlag.c_str()};
  Handle h = nullptr;
  int r = f.create(&h, 2, options);
  if (r != 0) {
    error = fmt::format("nvJitLinkCreate({} {}) failed (error {})", archFlag, optFlag, r);
    if (h)
      f.destroy(&h);
    return false;
  }
  const char *what = "nvJitLinkAddData";
  // The size counts the terminating NUL, as for the driver.
  r = f.addData(h, kInputPtx, ptx.c_str(), ptx.size() + 1, "kernel.ptx");
  if (r == 0) {
    what = "nvJitLinkComplete";
    r = f.complete(h);
  }
  size_t size = 0;
  if (r == 0) {
    what = "nvJitLinkGetLinkedCubinSize";
    r = f.cubinSize(h, &size);
  }
  if (r == 0) {
    what = "nvJitLinkGetLinkedCubin";
    cubin.assign(size, '\0');
    r = f.cubin(h, cubin.data());
  }
  if (r != 0) {
    error = fmt::format("{} ({} {}) failed (error {})", what, archFlag, optFlag, r);
    size_t logSize = 0;
    if (f.errorLogSize(h, &logSize) == 0 && logSize > 1) {
      std::string log(logSize, '\0');
      if (f.errorLog(h, log.data()) == 0) {
        log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
        error += ":\n" + log;
      }
    }
    cubin.clear();
  }
  f.destroy(&h);
  return r == 0;
}

} // namespace tk
