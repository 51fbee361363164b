// An exclusive lock on a file beside the store (flock), held while the
// process runs: a second server on the same store refuses to start instead
// of writing into a file another one writes. The kernel drops the lock when
// the process dies, kill -9 included.
#pragma once

#include <string>

#include "common/expected.h"

namespace kibitz::server::store {

class FileLock {
 public:
  // Locks `path` (created if missing) and writes our pid into it; the error
  // names the pid that holds it.
  static Expected<FileLock, std::string> acquire(const std::string& path);
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kibitz::server::store
