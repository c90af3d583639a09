// The .tsrx file: an Executable on disk.
//
// Layout (integers little-endian):
//   [0, 64)   header: "TSRX", u32 format version, u32 flags (none defined: must be 0),
//             u32 header bytes (64), u64 file bytes, u64 metadata offset, u64 metadata
//             bytes, u32 metadata CRC32C, 16 reserved zero bytes, u32 CRC32C of bytes
//             [0, 60).
//   sections  raw bytes, each at a multiple of 64 (so constants can be mapped in place),
//             zero padding between them: one per constant, then one per object file.
//   metadata  an ExecutableProto (executable.proto), last, up to the end of the file; it
//             holds each section's offset, size and CRC32C.
// Every byte but the padding is covered by a CRC32C.
//
// Reading treats the bytes as hostile: wrong magic, another format version, truncation,
// checksum mismatches, sections outside the file or overlapping, and inconsistent
// metadata (ValidateExecutable) are errors naming the file and the part; nothing larger
// than the file is allocated (the arena is the loader's to allocate).
#ifndef TESSERA_COMPILER_EXECUTABLE_EXECUTABLE_FILE_H_
#define TESSERA_COMPILER_EXECUTABLE_EXECUTABLE_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/executable/executable.h"

namespace tsr {

inline constexpr char kTsrxMagic[4] = {'T', 'S', 'R', 'X'};
inline constexpr uint32_t kTsrxFormatVersion = 1;
inline constexpr int64_t kTsrxHeaderBytes = 64;

// Validates, then encodes. Fails on an invalid executable or one protobuf cannot encode
// (metadata over 2 GiB).
absl::StatusOr<std::string> SerializeExecutable(const Executable& executable);

// Decodes and validates. `source` names the bytes in errors (a path, "<memory>").
absl::StatusOr<Executable> ParseExecutable(absl::string_view bytes, absl::string_view source = "<memory>");

// Serializes and writes atomically (platform/file.h): a failure leaves any old file.
absl::Status WriteExecutable(const Executable& executable, const std::string& path);

struct ExecutableReadOptions {
  int64_t max_bytes = int64_t{16} << 30;  // larger files are refused before reading
  // When set and the executable holds machine code, CheckTargetRuns against it.
  const HostTarget* host = nullptr;
};
absl::StatusOr<Executable> ReadExecutable(const std::string& path, const ExecutableReadOptions& options = {});

// For fuzzers: parses `size` bytes and drops the result. Never crashes.
void ParseExecutableForFuzzing(const uint8_t* data, size_t size);

}  // namespace tsr

#endif  // TESSERA_COMPILER_EXECUTABLE_EXECUTABLE_FILE_H_
