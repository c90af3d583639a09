// Whole-file reads with gzip inflation through zlib, bounded in and out.
#include "runtime/data/data_file.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "platform/file.h"

namespace tsr {

namespace {

// zlib counts in uInt; feed and drain it in pieces no larger than this.
constexpr size_t kMaxZlibChunk = size_t{1} << 30;

// Frees the inflate state on every return path.
class Inflater {
 public:
  Inflater() = default;
  ~Inflater() {
    if (initialized_) inflateEnd(&stream_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  absl::Status Init() {
    // 15 + 16: a 32 KiB window and a gzip (not raw zlib) wrapper, whose CRC-32 and
    // length trailer inflate checks.
    if (inflateInit2(&stream_, 15 + 16) != Z_OK) return absl::InternalError("gzip: cannot initialize zlib");
    initialized_ = true;
    return absl::OkStatus();
  }
  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
  bool initialized_ = false;
};

absl::Status TooLarge(uint64_t limit) {
  return absl::ResourceExhaustedError(
      absl::StrCat("gzip: the data inflates to more than ", limit, " bytes (the max_bytes limit)"));
}

}  // namespace

bool IsGzip(absl::string_view bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f && static_cast<uint8_t>(bytes[1]) == 0x8b;
}

absl::StatusOr<std::string> Gunzip(absl::string_view compressed, int64_t max_bytes) {
  if (!IsGzip(compressed)) return absl::InvalidArgumentError("gzip: not a gzip stream (no 1f 8b magic)");
  Inflater inflater;
  if (absl::Status s = inflater.Init(); !s.ok()) return s;
  z_stream& zs = inflater.stream();

  const uint64_t limit = static_cast<uint64_t>(std::max<int64_t>(max_bytes, 0));
  std::string out;
  size_t produced = 0;
  size_t consumed = 0;
  int members = 0;
  while (true) {
    // Grow the output geometrically, but never past limit + 1: one byte over the limit
    // is enough to know the data is too large.
    if (produced == out.size()) {
      if (produced > limit) return TooLarge(limit);
      const uint64_t grown = std::max<uint64_t>(uint64_t{64} << 10, uint64_t{2} * out.size());
      out.resize(static_cast<size_t>(std::min<uint64_t>(grown, limit + 1)));
    }
    const size_t in_chunk = std::min(compressed.size() - consumed, kMaxZlibChunk);
    const size_t out_chunk = std::min(out.size() - produced, kMaxZlibChunk);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + consumed));
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    consumed += in_chunk - zs.avail_in;
    produced += out_chunk - zs.avail_out;
    if (rc == Z_STREAM_END) {
      ++members;
      if (consumed == compressed.size()) break;
      // Another member follows (concatenated .gz files are one valid gzip file).
      if (!IsGzip(compressed.substr(consumed))) {
        return absl::InvalidArgumentError(absl::StrCat("gzip: ", compressed.size() - consumed,
                                                       " bytes of trailing garbage after gzip member ", members));
      }
      if (inflateReset(&zs) != Z_OK) return absl::InternalError("gzip: cannot reset zlib");
      continue;
    }
    if (rc == Z_DATA_ERROR) {
      return absl::DataLossError(absl::StrCat("gzip: corrupt data at compressed byte ~", consumed, ": ",
                                              zs.msg != nullptr ? zs.msg : "invalid stream"));
    }
    if (rc == Z_MEM_ERROR) return absl::ResourceExhaustedError("gzip: zlib is out of memory");
    if (rc == Z_NEED_DICT) return absl::InvalidArgumentError("gzip: the stream needs a preset dictionary");
    // Z_OK or Z_BUF_ERROR: no progress is possible only when all input is consumed
    // and there was room for output — the stream ends before its trailer.
    if (consumed == compressed.size() && zs.avail_out != 0) {
      return absl::DataLossError(absl::StrCat("gzip: truncated: the compressed data ends (after ", consumed, " bytes, ",
                                              produced, " inflated) before the end of the gzip stream"));
    }
  }
  // The last call may have filled the one byte past the limit and ended the stream.
  if (produced > limit) return TooLarge(limit);
  out.resize(produced);
  return out;
}

absl::StatusOr<std::string> ReadDataFile(const std::string& path, int64_t max_bytes) {
  absl::StatusOr<std::string> bytes = ReadFileBounded(path, max_bytes, "the max_bytes option");
  if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrCat(path, ": ", bytes.status().message()));
  if (!IsGzip(*bytes)) return bytes;
  absl::StatusOr<std::string> inflated = Gunzip(*bytes, max_bytes);
  if (!inflated.ok()) {
    return absl::Status(inflated.status().code(), absl::StrCat(path, ": ", inflated.status().message()));
  }
  return inflated;
}

}  // namespace tsr
