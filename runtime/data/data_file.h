// Reading a whole data file that may be gzip-compressed (MNIST ships as .gz, CSVs often
// do too). Compression is recognised by the gzip magic bytes, not by the file name, so a
// renamed file still reads correctly.
//
// Input is hostile: the compressed size is bounded before it is read, the decompressed
// size is bounded while inflating (a small "gzip bomb" costs at most the limit), and a
// truncated stream, a bad CRC/length trailer or bytes after the last gzip member are
// errors rather than silently short data.
#ifndef TESSERA_RUNTIME_DATA_DATA_FILE_H_
#define TESSERA_RUNTIME_DATA_DATA_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

// Default bound on the bytes of one data file, after decompression.
inline constexpr int64_t kDefaultMaxDataBytes = int64_t{4} << 30;

// True when `bytes` starts with the gzip magic 1f 8b.
bool IsGzip(absl::string_view bytes);

// Inflates one or more concatenated gzip members (as `cat a.gz b.gz` or `gzip -c` of
// several files produce). More than `max_bytes` of output is ResourceExhausted. Errors
// do not name a file; ReadDataFile prefixes the path.
absl::StatusOr<std::string> Gunzip(absl::string_view compressed, int64_t max_bytes);

// The contents of `path`, inflated when it is gzip. Errors start with the path.
absl::StatusOr<std::string> ReadDataFile(const std::string& path, int64_t max_bytes = kDefaultMaxDataBytes);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DATA_DATA_FILE_H_
