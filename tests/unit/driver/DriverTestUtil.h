// What the driver layer's tests share: an environment variable set for one
// scope, and the stand-in HIP runtime's own functions (HipDriverFake.c's
// fake_hip_*), read back after a launch:
//
//   ScopedEnv env("FAKE_HIP_LAUNCH_ERROR", "719");   // restored at scope end
//   HipFake fake{dlopen(TK_FAKE_HIP, RTLD_NOW | RTLD_NOLOAD)};
//   fake.setLayout({0, 8, 16, 24}, {8, 8, 8, 4});    // the explicit .args
//   ... launch ...
//   fake.kernarg(), fake.grid(0), fake.block(0), fake.count("fake_hip_launch_count")
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace tk::test {

// Sets an environment variable for one scope, restoring the old value.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    const char *old = std::getenv(name);
    had_ = old != nullptr;
    if (old)
      old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name_;
  std::string old_;
  bool had_ = false;
};

// The stand-in HIP runtime's functions, through the handle of the copy tk
// loaded (dlopen of the same path again, or with RTLD_GLOBAL first).
struct HipFake {
  void *lib = nullptr;

  template <class F> F fn(const char *name) const { return reinterpret_cast<F>(dlsym(lib, name)); }
  /// A counter: fake_hip_launch_count, fake_hip_loaded_modules, ...
  int count(const char *name) const { return fn<int (*)()>(name)(); }
  /// The explicit arguments' offsets and sizes a kernelParams launch copies.
  void setLayout(const std::vector<unsigned> &offsets, const std::vector<unsigned> &sizes) const {
    fn<void (*)(const unsigned *, const unsigned *, int)>("fake_hip_set_kernarg_layout")(
        offsets.data(), sizes.data(), int(offsets.size()));
  }
  /// The last launch's kernarg bytes (explicit arguments), grid and block.
  std::string kernarg() const {
    unsigned char bytes[4096];
    size_t n = fn<size_t (*)(unsigned char *, size_t)>("fake_hip_last_kernarg")(bytes, 4096);
    return std::string(reinterpret_cast<const char *>(bytes), n);
  }
  unsigned grid(int i) const { return fn<unsigned (*)(int)>("fake_hip_last_grid")(i); }
  unsigned block(int i) const { return fn<unsigned (*)(int)>("fake_hip_last_block")(i); }
  uint64_t stream() const { return fn<uint64_t (*)()>("fake_hip_last_stream")(); }
};

} // namespace tk::test
