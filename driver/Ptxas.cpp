#include "driver/Ptxas.h"

#include "driver/CompileCache.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tk {
namespace {

bool isExecutable(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

} // namespace

std::string findPtxas(std::string &searched) {
  std::vector<std::string> candidates;
  // An explicit TK_PTXAS_PATH is the only candidate: a wrong one is an
  // error, not a reason to run some other ptxas.
  if (const char *p = std::getenv("TK_PTXAS_PATH"); p && *p) {
    searched = fmt::format("TK_PTXAS_PATH={}", p);
    return isExecutable(p) ? std::string(p) : "";
  }
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    candidates.push_back(std::string(home) + "/bin/ptxas");
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  if (const char *path = std::getenv("PATH")) {
    std::string dirs = path;
    for (size_t start = 0; start <= dirs.size();) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos)
        end = dirs.size();
      if (end > start)
        candidates.push_back(dirs.substr(start, end - start) + "/ptxas");
      start = end + 1;
    }
  }
  searched.clear();
  for (const std::string &c : candidates) {
    if (isExecutable(c))
      return c;
    searched += (searched.empty() ? "" : ", ") + c;
  }
  return "";
}

bool assembleWithPtxas(const std::string &ptx, const std::string &arch, std::string &cubin,
                       std::string &error) {
  std::string searched;
  std::string ptxas = findPtxas(searched);
  if (ptxas.empty()) {
    error = fmt::format("ptxas not found: set TK_PTXAS_PATH to it, or CUDA_HOME, or put it on "
                        "PATH (looked at: {})",
                        searched);
    return false;
  }
  char tmpl[] = "/tmp/tk-ptxas-XXXXXX";
  if (!mkdtemp(tmpl)) {
    error = fmt::format("cannot create a temporary directory: {}", std::strerror(errno));
    return false;
  }
  std::string dir = tmpl;
  std::string in = dir + "/kernel.ptx", out = dir + "/kernel.cubin", log = dir + "/ptxas.log";
  auto cleanup = [&] {
    for (const std::string &f : {in, out, log})
      unlink(f.c_str());
    rmdir(dir.c_str());
  };
  if (!writeFileAtomic(in, ptx, error)) {
    cleanup();
    return false;
  }
  std::string archFlag = "-arch=" + arch;
  pid_t pid = fork();
  if (pid == 0) {
    // The child: messages to the log file, then ptxas.
    FILE *f = std::freopen(log.c_str(), "w", stderr);
    if (f)
      dup2(fileno(stderr), STDOUT_FILENO);
    execl(ptxas.c_str(), ptxas.c_str(), archFlag.c_str(), in.c_str(), "-o", out.c_str(),
          static_cast<char *>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) {
    error = fmt::format("cannot run '{}': {}", ptxas, std::strerror(errno));
    cleanup();
    return false;
  }
  std::string messages, ignored;
  readWholeFile(log, messages, ignored);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && readWholeFile(out, cubin, ignored);
  if (!ok)
    error = fmt::format("{} {} failed (exit status {}):\n{}", ptxas, archFlag,
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1, messages);
  cleanup();
  return ok;
}

} // namespace tk
