#include "driver/Files.h"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace tk {
namespace {

const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "a special file";
}

} // namespace

bool createDirectories(const std::string &dir, std::string &error) {
  if (dir.empty()) {
    error = "empty directory name";
    return false;
  }
  // mkdir each prefix; EEXIST is fine as long as the last one is a directory.
  for (size_t pos = 1;; ++pos) {
    pos = dir.find('/', pos);
    std::string prefix = dir.substr(0, pos);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      error = fmt::format("cannot create '{}': {}", prefix, std::strerror(errno));
      return false;
    }
    if (pos == std::string::npos)
      break;
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = fmt::format("'{}' is not a directory", dir);
    return false;
  }
  return true;
}

bool writeFileAtomic(const std::string &path, std::string_view bytes, std::string &error) {
  // The temporary name is unique per process, thread and call, so concurrent
  // writers never share one; rename() then replaces the entry atomically.
  static std::atomic<uint64_t> counter{0};
  std::string tmp =
      fmt::format("{}.tmp.{}.{}.{}", path, int(getpid()),
                  std::hash<std::thread::id>()(std::this_thread::get_id()), counter++);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = fmt::format("cannot create '{}': {}", tmp, std::strerror(errno));
    return false;
  }
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = fmt::format("cannot write '{}': {}", tmp, std::strerror(errno));
      close(fd);
      unlink(tmp.c_str());
      return false;
    }
    p += n;
    left -= size_t(n);
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    error = fmt::format("cannot write '{}': {}", path, std::strerror(errno));
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool readWholeFile(const std::string &path, std::string &bytes, std::string &error,
                   size_t maxBytes) {
  // O_NONBLOCK: opening a FIFO (or a device) where a file should be must not
  // wait for a writer; only a regular file is read, and on one the flag
  // changes nothing.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    error = fmt::format("cannot open '{}': {}", path, std::strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    error = fmt::format("cannot stat '{}': {}", path, std::strerror(errno));
    close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode) || uint64_t(st.st_size) > maxBytes) {
    error = fmt::format("'{}' is not a regular file of at most {} bytes (it is {})", path, maxBytes,
                        S_ISREG(st.st_mode) ? fmt::format("{} bytes", uint64_t(st.st_size))
                                            : std::string(fileKind(st.st_mode)));
    close(fd);
    return false;
  }
  bytes.resize(size_t(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += size_t(n);
  }
  close(fd);
  if (got != bytes.size()) {
    error = fmt::format("short read of '{}': {} of {} bytes", path, got, bytes.size());
    return false;
  }
  return true;
}

} // namespace tk
