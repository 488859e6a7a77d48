// FileIO: see FileIO.h. POSIX descriptors rather than streams: a stream
// hides why a read failed (std::ifstream opens a directory and then reads
// nothing) and buffers a write's failure past the point where it can be
// reported.
#include "support/FileIO.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tk {
namespace {

std::string displayName(const std::string &path) { return path == "-" ? "<stdin>" : path; }

std::string sizeText(size_t bytes) {
  if (bytes % (size_t(1) << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

// read() until `want` bytes or the end; EINTR is retried.
bool readSome(int fd, std::string &text, size_t want, int &err) {
  char chunk[65536];
  while (text.size() < want) {
    size_t n = std::min(sizeof chunk, want - text.size());
    ssize_t got = ::read(fd, chunk, n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      err = errno;
      return false;
    }
    if (got == 0)
      break;
    text.append(chunk, size_t(got));
  }
  return true;
}

bool writeAll(int fd, std::string_view data, int &err) {
  while (!data.empty()) {
    ssize_t put = ::write(fd, data.data(), data.size());
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0) {
      err = errno;
      return false;
    }
    data.remove_prefix(size_t(put));
  }
  return true;
}

} // namespace

bool readInputFile(const std::string &path, std::string &text, std::string &error,
                   size_t maxBytes) {
  bool isStdin = path == "-";
  int fd = isStdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = fmt::format("cannot read '{}': {}", path, std::strerror(errno));
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (!isStdin)
      ::close(fd);
    error = fmt::format("'{}' is a directory, not a source file", displayName(path));
    return false;
  }
  text.clear();
  // A regular file says its size up front; anything else is read up to one
  // byte past the limit, which tells a file at the limit from one beyond it.
  bool tooLarge = S_ISREG(st.st_mode) && size_t(st.st_size) > maxBytes;
  int err = 0;
  bool ok = tooLarge || readSome(fd, text, maxBytes + 1, err);
  if (!isStdin)
    ::close(fd);
  if (!ok) {
    error = fmt::format("cannot read '{}': {}", displayName(path), std::strerror(err));
    return false;
  }
  if (tooLarge || text.size() > maxBytes) {
    text.clear();
    error = fmt::format("'{}' is larger than {} (the limit on an input file)", displayName(path),
                        sizeText(maxBytes));
    return false;
  }
  return true;
}

bool writeOutput(const std::string &path, std::string_view data, std::string &error) {
  int err = 0;
  if (path.empty() || path == "-") {
    // Whatever the program wrote to stdout through stdio goes first.
    bool ok = std::fflush(stdout) == 0 || ((err = errno), false);
    ok = ok && writeAll(STDOUT_FILENO, data, err);
    if (!ok)
      error = fmt::format("cannot write to standard output: {}", std::strerror(err));
    return ok;
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = fmt::format("cannot write '{}': {}", path, std::strerror(errno));
    return false;
  }
  bool ok = writeAll(fd, data, err);
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok)
    error = fmt::format("cannot write '{}': {}", path, std::strerror(err));
  return ok;
}

} // namespace tk
