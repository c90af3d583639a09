// Numeric CSV files as a Dataset: every column is a number; one optional column is the
// label. Produces "features" f32 [n, columns - 1] and "labels" [n] (i64 class ids or
// f32 targets), or "features" alone when no label column is chosen.
//
// Accepted: an optional header row (detected or forced), a UTF-8 byte-order mark,
// CRLF line ends, blank lines (skipped), spaces around cells, double-quoted cells ("" is
// a quote), a one-character delimiter, gzip-compressed files. Refused, with the file,
// line and column in the message: ragged rows, empty or non-numeric cells, NaN/inf,
// values out of f32 range, non-integer class labels, a label column that does not exist,
// and files without data rows.
#ifndef TESSERA_RUNTIME_DATA_CSV_READER_H_
#define TESSERA_RUNTIME_DATA_CSV_READER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/dtype.h"
#include "runtime/data/data_file.h"
#include "runtime/data/dataset.h"

namespace tsr {

enum class CsvHeader {
  // The first row is a header when none of its cells is a number; a row mixing names and
  // numbers is data (and fails on its first non-number) rather than a silently lost example.
  kAuto,
  kPresent,  // the first row is a header
  kAbsent,   // every row is data
};

struct CsvOptions {
  char delimiter = ',';
  CsvHeader header = CsvHeader::kAuto;
  // The label column, by header name or by 0-based index (negative counts from the
  // end: -1 is the last column). At most one may be set; with neither there are no labels.
  std::string label_name;
  std::optional<int> label_index;
  // kI64: class ids (cells must be integers); kF32: regression targets.
  DType label_dtype = DType::kI64;
  int64_t max_bytes = kDefaultMaxDataBytes;
};

// Parses CSV text; `source` (the file name) starts every error message.
absl::StatusOr<Dataset> ParseCsv(absl::string_view text, const CsvOptions& options, absl::string_view source);

// Reads `path` (plain or gzip) and parses it.
absl::StatusOr<Dataset> ReadCsv(const std::string& path, const CsvOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DATA_CSV_READER_H_
