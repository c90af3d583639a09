// ReadExternalData: external tensor data confined to the model's folder.
#include "graph/onnx/onnx_external_data.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/file.h"

namespace tsr {

namespace {

// Closes a descriptor on every return path.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The location's syntax: relative, no "."/".." or empty segments, no backslash (a
// Windows separator some writers use, so "..\\x" means an escape there) and no NUL.
absl::Status CheckLocationSyntax(absl::string_view location) {
  if (location.empty()) return absl::InvalidArgumentError("the location is empty");
  if (location.front() == '/') {
    return absl::InvalidArgumentError("the location is an absolute path; it must be relative to the model's folder");
  }
  if (location.find('\\') != absl::string_view::npos) {
    return absl::InvalidArgumentError("the location contains a backslash");
  }
  if (location.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("the location contains a NUL byte");
  }
  for (absl::string_view segment : absl::StrSplit(location, '/')) {
    if (segment == "..") {
      return absl::InvalidArgumentError("the location has a '..' segment; it must stay inside the model's folder");
    }
    if (segment.empty() || segment == ".") {
      return absl::InvalidArgumentError("the location has an empty or '.' segment");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) == nullptr) {
    const int error = errno;
    return absl::NotFoundError(absl::StrCat("cannot resolve '", path, "': ", ErrnoMessage(error)));
  }
  return std::string(buffer);
}

// The path the kernel opened `fd` as (symlinks resolved at open time).
absl::StatusOr<std::string> OpenedPath(int fd, const std::string& fallback) {
  const std::string link = absl::StrCat("/proc/self/fd/", fd);
  std::vector<char> buffer(PATH_MAX + 1);
  const ssize_t n = readlink(link.c_str(), buffer.data(), buffer.size() - 1);
  if (n <= 0) return RealPath(fallback);  // no /proc: the check before opening stands
  return std::string(buffer.data(), static_cast<size_t>(n));
}

bool IsInside(const std::string& path, const std::string& folder) {
  const std::string prefix = folder == "/" ? folder : absl::StrCat(folder, "/");
  return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

absl::StatusOr<std::string> ReadExternalData(absl::string_view model_dir, const ExternalDataRef& ref,
                                             int64_t expected_bytes, int64_t max_bytes, absl::string_view tensor_name) {
  const std::string where = absl::StrCat("tensor '", tensor_name, "': external data '", ref.location, "'");
  auto error = [&](absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", message));
  };
  if (model_dir.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        where, ": the model was not loaded from a file, so there is no folder to read external data from"));
  }
  if (absl::Status s = CheckLocationSyntax(ref.location); !s.ok()) return error(s.message());
  if (ref.offset < 0) return error(absl::StrCat("offset ", ref.offset, " is negative"));
  if (ref.length.has_value() && *ref.length < 0) return error(absl::StrCat("length ", *ref.length, " is negative"));
  if (expected_bytes > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(where, ": the tensor needs ", expected_bytes,
                                                     " bytes, above the limit max_tensor_bytes=", max_bytes));
  }
  if (ref.length.has_value() && *ref.length != expected_bytes) {
    return error(
        absl::StrCat("length ", *ref.length, " but the tensor's type and dims need ", expected_bytes, " bytes"));
  }

  absl::StatusOr<std::string> folder = RealPath(std::string(model_dir));
  if (!folder.ok()) return absl::NotFoundError(absl::StrCat(where, ": ", folder.status().message()));
  const std::string candidate = absl::StrCat(*folder, "/", ref.location);
  // Resolve before opening, so that a symlink to a device or FIFO outside is refused
  // without being opened at all.
  absl::StatusOr<std::string> resolved = RealPath(candidate);
  if (!resolved.ok()) return absl::NotFoundError(absl::StrCat(where, ": ", resolved.status().message()));
  if (!IsInside(*resolved, *folder)) {
    return error(absl::StrCat("resolves to '", *resolved, "', outside the model's folder '", *folder, "'"));
  }
  // O_NONBLOCK: opening a FIFO swapped in after the check must not hang.
  FileDescriptor fd(open(resolved->c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) {
    const int e = errno;
    return absl::NotFoundError(absl::StrCat(where, ": cannot open '", *resolved, "': ", ErrnoMessage(e)));
  }
  absl::StatusOr<std::string> opened = OpenedPath(fd.get(), *resolved);
  if (!opened.ok() || !IsInside(*opened, *folder)) {
    return error(absl::StrCat("the opened file is outside the model's folder '", *folder, "'"));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return error("is not a regular file");
  const int64_t file_size = static_cast<int64_t>(st.st_size);
  if (ref.offset > file_size) {
    return error(absl::StrCat("offset ", ref.offset, " is past the end of the file (", file_size, " bytes)"));
  }
  const int64_t available = file_size - ref.offset;
  const int64_t length = ref.length.value_or(available);
  if (length > available) {
    return error(absl::StrCat("offset ", ref.offset, " + length ", length, " is past the end of the file (", file_size,
                              " bytes)"));
  }
  if (length != expected_bytes) {
    return error(absl::StrCat("holds ", length, " bytes from offset ", ref.offset,
                              " but the tensor's type and dims need ", expected_bytes));
  }

  std::string bytes(static_cast<size_t>(length), '\0');
  int64_t done = 0;
  while (done < length) {
    const ssize_t n = pread(fd.get(), bytes.data() + done, static_cast<size_t>(length - done), ref.offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      return absl::DataLossError(absl::StrCat(where, ": read failed: ", ErrnoMessage(e)));
    }
    if (n == 0) return absl::DataLossError(absl::StrCat(where, ": the file shrank while it was read"));
    done += n;
  }
  return bytes;
}

}  // namespace tsr
