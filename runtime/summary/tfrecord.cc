// TFRecord framing: writing and checked parsing.
#include "runtime/summary/tfrecord.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "platform/crc32c.h"

namespace tsr {
namespace {

void PutLE(uint64_t v, int n, std::string* out) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint64_t GetLE(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

}  // namespace

void AppendTfRecord(absl::string_view data, std::string* out) {
  const size_t start = out->size();
  PutLE(data.size(), 8, out);
  PutLE(crc32c::Mask(crc32c::Value(out->data() + start, 8)), 4, out);
  out->append(data.data(), data.size());
  PutLE(crc32c::Mask(crc32c::Value(data)), 4, out);
}

absl::StatusOr<std::vector<std::string>> ParseTfRecords(absl::string_view bytes, absl::string_view source) {
  std::vector<std::string> records;
  size_t pos = 0;
  while (pos < bytes.size()) {
    auto error = [&](absl::string_view what) {
      return absl::DataLossError(
          absl::StrCat("TFRecord file '", source, "': record ", records.size(), " at byte ", pos, ": ", what));
    };
    const size_t left = bytes.size() - pos;
    if (left < 12) return error("truncated length header");
    const char* p = bytes.data() + pos;
    if (crc32c::Unmask(static_cast<uint32_t>(GetLE(p + 8, 4))) != crc32c::Value(p, 8)) {
      return error("length checksum mismatch");
    }
    const uint64_t length = GetLE(p, 8);
    if (left < kTfRecordOverheadBytes || length > left - kTfRecordOverheadBytes) {
      return error(absl::StrCat("truncated: length ", length, " but ", left, " bytes left"));
    }
    const absl::string_view data = bytes.substr(pos + 12, length);
    if (crc32c::Unmask(static_cast<uint32_t>(GetLE(p + 12 + length, 4))) != crc32c::Value(data)) {
      return error("data checksum mismatch");
    }
    records.emplace_back(data);
    pos += kTfRecordOverheadBytes + length;
  }
  return records;
}

}  // namespace tsr
