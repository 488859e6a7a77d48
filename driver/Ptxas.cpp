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
  for (std::string &c : onPath("ptxas"))
    candidates.push_back(std::move(c));
  return firstExecutable(candidates, searched);
}

std::vector<std::string> onPath(const char *name) {
  std::vector<std::string> found;
  if (const char *path = std::getenv("PATH")) {
    std::string dirs = path;
    for (size_t start = 0; start <= dirs.size();) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos)
        end = dirs.size();
      if (end > start)
        found.push_back(dirs.substr(start, end - start) + "/" + name);
      start = end + 1;
    }
  }
  return found;
}

std::string firstExecutable(const std::vector<std::string> &candidates, std::string &searched) {
  searched.clear();
  for (const std::string &c : candidates) {
    if (isExecutable(c))
      return c;
    searched += (searched.empty() ? "" : ", ") + c;
  }
  return "";
}

bool runOnFile(std::vector<std::string> args, const std::string &input, const std::string &inName,
               const std::string &outName, std::string &output, std::string &messages,
               std::string &error) {
  char tmpl[] = "/tmp/tk-tool-XXXXXX";
  if (!mkdtemp(tmpl)) {
    error = fmt::format("cannot create a temporary directory: {}", std::strerror(errno));
    return false;
  }
  std::string dir = tmpl;
  std::string in = dir + "/" + inName, out = dir + "/" + outName, log = dir + "/messages.log";
  auto cleanup = [&] {
    for (const std::string &f : {in, out, log})
      unlink(f.c_str());
    rmdir(dir.c_str());
  };
  if (!writeFileAtomic(in, input, error)) {
    cleanup();
    return false;
  }
  std::vector<char *> argv;
  for (std::string &a : args) {
    if (a == "{in}")
      a = in;
    else if (a == "{out}")
      a = out;
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  // posix_spawn, not fork: the caller may be a large process (LLVM, a CUDA
  // context) whose page tables fork would copy; the program's messages go
  // to the log file.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned != 0 || waitpid(pid, &status, 0) != pid) {
    error = fmt::format("cannot run '{}': {}", args[0], std::strerror(spawned ? spawned : errno));
    cleanup();
    return false;
  }
  std::string ignored;
  readWholeFile(log, messages, ignored);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && readWholeFile(out, output, ignored);
  if (!ok)
    error =
        fmt::format("{} {} failed (exit status {}):\n{}", args[0], args.size() > 1 ? args[1] : "",
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1, messages);
  cleanup();
  return ok;
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
  std::vector<std::string> args = {ptxas, "-arch=" + arch};
  if (optLevel >= 0)
    args.push_back(fmt::format("-O{}", std::min(optLevel, 3)));
  if (verbose)
    args.push_back("-v");
  for (const char *a : {"{in}", "-o", "{out}"})
    args.push_back(a);
  std::string messages;
  bool ok = runOnFile(args, ptx, "kernel.ptx", "kernel.cubin", cubin, messages, error);
  if (verbose)
    *verbose = messages;
  return ok;
}

} // namespace tk
