// FileKeyValueStore: one file per key, published by rename, polled for by Get.
#include "runtime/launch/file_key_value_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace tsr {
namespace {

// File names stay well under the usual 255-byte limit.
constexpr size_t kMaxEscapedKey = 160;

// FNV-1a: stable across processes and runs.
uint64_t HashKey(absl::string_view key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool KeepsItsByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// "k%2Fv" for "k/v". Escaped names never start with '.', so they cannot be "." or ".."
// or collide with the ".tmp-" files; names cut for length end in "~" and the hash,
// which no escaped name contains.
std::string EscapeKey(absl::string_view key) {
  std::string out;
  for (unsigned char c : key) {
    if (KeepsItsByte(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  if (out.size() > kMaxEscapedKey) {
    out = absl::StrCat(out.substr(0, kMaxEscapedKey), absl::StrFormat("~%016x", HashKey(key)));
  }
  return out;
}

absl::Status ErrnoError(int error, absl::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(error), absl::StrCat(what, ": ", std::strerror(error)));
}

// Writes all of `data` to `fd`.
bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

FileKeyValueStore::FileKeyValueStore(std::string directory) : directory_(std::move(directory)) {}

std::string FileKeyValueStore::PathOf(absl::string_view key) const {
  return absl::StrCat(directory_, "/", EscapeKey(key));
}

absl::Status FileKeyValueStore::Set(absl::string_view key, absl::string_view value) {
  if (key.empty()) return absl::InvalidArgumentError("file key-value store: keys must not be empty");
  static std::atomic<uint64_t> counter{0};
  // Unique per process, thread and call: concurrent Sets of one key never share a file.
  const std::string temp = absl::StrCat(directory_, "/.tmp-", ::getpid(), "-",
                                        std::hash<std::thread::id>()(std::this_thread::get_id()), "-", counter++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return ErrnoError(errno, absl::StrCat("file key-value store: cannot write key '", key, "' in ", directory_));
  }
  const bool written = WriteAll(fd, value);
  const int write_error = errno;
  ::close(fd);
  if (!written) {
    ::unlink(temp.c_str());
    return ErrnoError(write_error, absl::StrCat("file key-value store: writing ", temp));
  }
  const std::string path = PathOf(key);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return ErrnoError(error, absl::StrCat("file key-value store: publishing ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> FileKeyValueStore::Get(absl::string_view key, absl::Duration timeout) {
  if (key.empty()) return absl::InvalidArgumentError("file key-value store: keys must not be empty");
  const std::string path = PathOf(key);
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration pause = absl::Microseconds(200);
  while (true) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      std::string value;
      char chunk[65536];
      while (true) {
        const ssize_t n = ::read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          const int error = errno;
          ::close(fd);
          return ErrnoError(error, absl::StrCat("file key-value store: reading ", path));
        }
        if (n == 0) break;
        value.append(chunk, static_cast<size_t>(n));
      }
      ::close(fd);
      return value;
    }
    if (errno != ENOENT) return ErrnoError(errno, absl::StrCat("file key-value store: reading ", path));
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("key '", key, "' was not set in ", directory_, " within ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(std::min(pause, deadline - now));
    pause = std::min(pause * 2, absl::Milliseconds(10));
  }
}

}  // namespace tsr
