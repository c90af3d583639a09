// One checkpoint as one file: a fixed header, a protobuf manifest
// (runtime/proto/checkpoint.proto) and the raw tensor bytes.
//
//   offset  size  field
//   0       8     magic "TSRCKPT\n"
//   8       4     format version (1), little-endian like every integer here
//   12      4     manifest length M
//   16      8     data section length D
//   24      4     CRC32C of the manifest
//   28      4     CRC32C of bytes [0, 28) of the header
//   32      M     CheckpointManifest (binary protobuf)
//   32+M    D     data: the tensors back to back in manifest order, each with its CRC32C
//                 in the manifest; the file ends exactly at 32+M+D.
//
// Every byte is covered by a checksum and the tensors must tile the data section with
// no gap, so any bit flip or truncation is detected. Decoding checks everything before
// returning anything. Writing goes through WriteFileAtomically: a reader sees the old
// file or the complete new one.
#ifndef TESSERA_RUNTIME_CHECKPOINT_CHECKPOINT_FILE_H_
#define TESSERA_RUNTIME_CHECKPOINT_CHECKPOINT_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/tensor.h"

namespace tsr {

inline constexpr char kCheckpointMagic[8] = {'T', 'S', 'R', 'C', 'K', 'P', 'T', '\n'};
inline constexpr uint32_t kCheckpointVersion = 1;
inline constexpr size_t kCheckpointHeaderBytes = 32;
// Default bound on the size of a checkpoint file read back.
inline constexpr int64_t kDefaultMaxCheckpointBytes = int64_t{64} << 30;

// What a checkpoint holds: named tensors (a Session's variables, optimizer slots and
// the step counter included) and string metadata (epoch, input position, options).
struct Checkpoint {
  int64_t step = 0;
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::map<std::string, std::string> metadata;

  // The tensor called `name`, or null.
  const Tensor* Find(absl::string_view name) const;
};

// The file's bytes. Names must be non-empty and unique, tensors valid.
absl::StatusOr<std::string> EncodeCheckpoint(const Checkpoint& checkpoint);
// Verifies magic, version, header and manifest checksums, sizes, names, dtypes, shapes
// and every tensor's checksum; errors name `source` (the file) and the tensor.
absl::StatusOr<Checkpoint> DecodeCheckpoint(absl::string_view bytes, absl::string_view source);

absl::Status WriteCheckpointFile(const std::string& path, const Checkpoint& checkpoint);
absl::StatusOr<Checkpoint> ReadCheckpointFile(const std::string& path, int64_t max_bytes = kDefaultMaxCheckpointBytes);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_CHECKPOINT_CHECKPOINT_FILE_H_
