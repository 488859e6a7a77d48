#include "driver/Ptxas.h"

#include "driver/Files.h"
#include "support/Knobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
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
  if (std::string p = readRaw(Knob::PtxasPath).value_or(""); !p.empty()) {
    searched = fmt::format("TK_PTXAS_PATH={}", p);
    return isExecutable(p) ? p : "";
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
                       std::string &error, int optLevel, std::string *verbose) {
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
  std::string optFlag = optLevel < 0 ? "" : fmt::format("-O{}", std::min(optLevel, 3));
  std::string verboseFlag = verbose ? "-v" : "";
  std::vector<char *> argv;
  for (const std::string *a : {&ptxas, &archFlag, &optFlag, &verboseFlag, &in})
    if (!a->empty())
      argv.push_back(const_cast<char *>(a->c_str()));
  std::string dashO = "-o";
  argv.push_back(dashO.data());
  argv.push_back(out.data());
  argv.push_back(nullptr);
  // posix_spawn, not fork: the caller may be a large process (LLVM, a CUDA
  // context) whose page tables fork would copy; ptxas's messages go to the
  // log file.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, ptxas.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned != 0 || waitpid(pid, &status, 0) != pid) {
    error = fmt::format("cannot run '{}': {}", ptxas, std::strerror(spawned ? spawned : errno));
    cleanup();
    return false;
  }
  std::string messages, ignored;
  readWholeFile(log, messages, ignored);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && readWholeFile(out, cubin, ignored);
  if (verbose)
    *verbose = messages;
  if (!ok)
    error = fmt::format("{} {} failed (exit status {}):\n{}", ptxas, archFlag,
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1, messages);
  cleanup();
  return ok;
}

} // namespace tk
