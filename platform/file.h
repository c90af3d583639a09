// Whole-file I/O with the guarantees saved models, tensors and checkpoints need:
// atomic replacement (readers see the old file or the whole new one, never a torn
// one, even across a crash) and size-bounded reads (a hostile or mistaken path — a
// huge file, a pipe, /dev/zero — costs at most the limit).
#ifndef TESSERA_PLATFORM_FILE_H_
#define TESSERA_PLATFORM_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

// Writes `bytes` to a new file next to `path`, syncs it, renames it over `path` and
// syncs the folder. The new file keeps the permissions of the file it replaces. On
// failure the temporary file is removed and `path` is untouched.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes);

// Reads the whole of `path`. More than `max_bytes` is ResourceExhausted (found before
// reading when the size is known), naming `limit_name` — the option a user raises;
// a missing file is NotFound, a folder InvalidArgument.
absl::StatusOr<std::string> ReadFileBounded(const std::string& path, int64_t max_bytes, absl::string_view limit_name);

// strerror-style text for an errno value, thread-safe.
std::string ErrnoMessage(int error);

}  // namespace tsr

#endif  // TESSERA_PLATFORM_FILE_H_
