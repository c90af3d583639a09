// TFRecord framing, the container of TensorBoard event files:
//
//   uint64 length (little-endian)
//   uint32 masked CRC32C of the 8 length bytes
//   byte   data[length]
//   uint32 masked CRC32C of the data
//
// (masking: crc32c::Mask in platform/crc32c.h). No compression.
#ifndef TESSERA_RUNTIME_SUMMARY_TFRECORD_H_
#define TESSERA_RUNTIME_SUMMARY_TFRECORD_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

inline constexpr size_t kTfRecordOverheadBytes = 16;

// Appends one framed record holding `data` to `out`.
void AppendTfRecord(absl::string_view data, std::string* out);

// Splits `bytes` into the records' data, checking both checksums of every record and
// that nothing is left over; errors name `source` and the record's index and offset.
absl::StatusOr<std::vector<std::string>> ParseTfRecords(absl::string_view bytes, absl::string_view source);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_SUMMARY_TFRECORD_H_
