// Atomic writes (temp file + fsync + rename + folder fsync) and bounded reads.
#include "platform/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace tsr {

namespace {

// Closes on scope exit unless closed before.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now, reporting close()'s error (which can be a delayed write error).
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

absl::Status WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(ErrnoMessage(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// The folder holding `path` ("." when it has none), for fsync after the rename.
std::string Folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string ErrnoMessage(int error) { return std::error_code(error, std::generic_category()).message(); }

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes) {
  // pid + counter make the name unique between processes and threads; O_EXCL makes
  // sure a stale file of the same name is never written through.
  static std::atomic<uint64_t> counter{0};
  const std::string temp = absl::StrCat(path, ".tmp-", ::getpid(), "-", counter.fetch_add(1));
  FileDescriptor fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (fd.get() < 0) return absl::InternalError(absl::StrCat("cannot create '", temp, "': ", ErrnoMessage(errno)));
  auto fail = [&](absl::string_view what, const std::string& why) {
    ::unlink(temp.c_str());
    return absl::InternalError(absl::StrCat(what, " '", temp, "': ", why));
  };
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode)) {
    if (::fchmod(fd.get(), existing.st_mode & 07777) != 0) return fail("cannot set the mode of", ErrnoMessage(errno));
  }
  if (absl::Status s = WriteAll(fd.get(), bytes); !s.ok()) return fail("cannot write", std::string(s.message()));
  if (::fsync(fd.get()) != 0) return fail("cannot sync", ErrnoMessage(errno));
  if (fd.Close() != 0) return fail("cannot close", ErrnoMessage(errno));
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    return fail(absl::StrCat("cannot rename to '", path, "'"), ErrnoMessage(errno));
  }
  // Make the rename itself durable. Best effort: some file systems cannot sync a
  // folder, and the new file is in place either way.
  FileDescriptor folder(::open(Folder(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() >= 0) ::fsync(folder.get());
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFileBounded(const std::string& path, int64_t max_bytes, absl::string_view limit_name) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    std::string message = absl::StrCat("cannot open: ", ErrnoMessage(error));
    return error == ENOENT ? absl::NotFoundError(message) : absl::InternalError(message);
  }
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) return absl::InternalError(absl::StrCat("cannot stat: ", ErrnoMessage(errno)));
  if (S_ISDIR(info.st_mode)) return absl::InvalidArgumentError("is a directory, not a file");
  auto too_large = [&](int64_t size, absl::string_view at_least) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the file has ", at_least, size, " bytes, above the limit of ", max_bytes, " (", limit_name, ")"));
  };
  std::string bytes;
  if (S_ISREG(info.st_mode)) {
    if (info.st_size > max_bytes) return too_large(info.st_size, "");
    bytes.reserve(static_cast<size_t>(info.st_size));
  }
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("cannot read: ", ErrnoMessage(errno)));
    }
    if (n == 0) break;
    // A pipe, or a regular file that grew since fstat.
    if (static_cast<int64_t>(bytes.size()) + n > max_bytes) return too_large(bytes.size() + n, "at least ");
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return bytes;
}

}  // namespace tsr
