// CSV parsing: line and cell splitting with quotes, strict number parsing, the header
// decision and the label column.
#include "runtime/data/csv_reader.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

absl::string_view Trim(absl::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

class CsvParser {
 public:
  CsvParser(const CsvOptions& options, absl::string_view source) : options_(options), source_(source) {}

  absl::Status Error(int64_t line, int column, absl::string_view what) const {
    return absl::InvalidArgumentError(column > 0 ? absl::StrCat(source_, ":", line, ": column ", column, ": ", what)
                                                 : absl::StrCat(source_, ":", line, ": ", what));
  }

  // Splits one line (without its line end) into cells, unquoting quoted ones.
  absl::Status Split(absl::string_view line, int64_t line_number, std::vector<std::string>& cells) const {
    cells.clear();
    size_t pos = 0;
    while (true) {
      const int column = static_cast<int>(cells.size()) + 1;
      while (pos < line.size() && IsSpace(line[pos]) && line[pos] != options_.delimiter) ++pos;
      std::string cell;
      if (pos < line.size() && line[pos] == '"') {
        ++pos;
        while (true) {
          if (pos >= line.size()) return Error(line_number, column, "unterminated quoted cell");
          if (line[pos] == '"') {
            if (pos + 1 < line.size() && line[pos + 1] == '"') {
              cell.push_back('"');
              pos += 2;
              continue;
            }
            ++pos;
            break;
          }
          cell.push_back(line[pos++]);
        }
        while (pos < line.size() && IsSpace(line[pos]) && line[pos] != options_.delimiter) ++pos;
        if (pos < line.size() && line[pos] != options_.delimiter) {
          return Error(line_number, column, "unexpected text after a closing quote");
        }
      } else {
        const size_t end = line.find(options_.delimiter, pos);
        const size_t stop = end == absl::string_view::npos ? line.size() : end;
        cell = std::string(Trim(line.substr(pos, stop - pos)));
        pos = stop;
      }
      cells.push_back(std::move(cell));
      if (pos >= line.size()) return absl::OkStatus();
      ++pos;  // the delimiter; a line ending in one has an empty last cell
      if (pos == line.size()) {
        cells.emplace_back();
        return absl::OkStatus();
      }
    }
  }

  // The whole cell as a finite double, or nullopt.
  static std::optional<double> ParseNumber(absl::string_view cell) {
    if (cell.empty()) return std::nullopt;
    if (cell.front() == '+') cell.remove_prefix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
    if (ec != std::errc() || end != cell.data() + cell.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  }

  // Why `cell` is not a usable number (for the error message).
  static std::string Describe(absl::string_view cell) {
    if (cell.empty()) return "is empty (missing values are not supported)";
    if (cell.front() == '+') cell.remove_prefix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
    if (ec == std::errc::result_out_of_range) return "is out of range for a double";
    if (ec == std::errc() && end == cell.data() + cell.size()) return "is not finite (NaN and infinity are refused)";
    return "is not a number";
  }

  absl::StatusOr<Dataset> Parse(absl::string_view text) {
    if (!options_.label_name.empty() && options_.label_index.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": choose the label column by name or by index, not both"));
    }
    if (options_.label_dtype != DType::kI64 && options_.label_dtype != DType::kF32) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": the label type must be i64 or f32, not ", DTypeName(options_.label_dtype)));
    }
    if (options_.delimiter == '"' || options_.delimiter == '\n' || options_.delimiter == '\r') {
      return absl::InvalidArgumentError(absl::StrCat(source_, ": invalid delimiter"));
    }
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);

    std::vector<std::string> cells;
    std::vector<float> features;
    std::vector<int64_t> int_labels;
    std::vector<float> float_labels;
    int columns = -1;
    int64_t first_row_line = 0;
    int label = -1;  // 0-based label column, or -1
    int64_t rows = 0;
    int64_t line_number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t nl = text.find('\n', pos);
      absl::string_view line = text.substr(pos, nl == absl::string_view::npos ? absl::string_view::npos : nl - pos);
      pos = nl == absl::string_view::npos ? text.size() : nl + 1;
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (Trim(line).empty()) continue;
      TSR_RETURN_IF_ERROR(Split(line, line_number, cells));

      if (columns < 0) {
        if (cells.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
          return Error(line_number, 0, "too many columns");
        }
        columns = static_cast<int>(cells.size());
        first_row_line = line_number;
        bool has_header = options_.header == CsvHeader::kPresent;
        if (options_.header == CsvHeader::kAuto) {
          has_header = true;
          for (const std::string& cell : cells) has_header &= !ParseNumber(cell).has_value();
        }
        TSR_ASSIGN_OR_RETURN(label, ResolveLabel(has_header ? &cells : nullptr, columns, line_number));
        if (columns - (label >= 0 ? 1 : 0) == 0) {
          return Error(line_number, 0, "no feature columns (the only column is the label)");
        }
        if (has_header) continue;
      } else if (static_cast<int>(cells.size()) != columns) {
        return Error(line_number, 0,
                     absl::StrCat("has ", cells.size(), " cells but line ", first_row_line, " has ", columns));
      }

      for (int c = 0; c < columns; ++c) {
        std::optional<double> v = ParseNumber(cells[c]);
        if (!v.has_value()) return Error(line_number, c + 1, absl::StrCat("'", cells[c], "' ", Describe(cells[c])));
        if (c == label && options_.label_dtype == DType::kI64) {
          if (*v != std::floor(*v) || std::fabs(*v) > 9007199254740992.0) {
            return Error(line_number, c + 1, absl::StrCat("the class label '", cells[c], "' is not an integer"));
          }
          int_labels.push_back(static_cast<int64_t>(*v));
          continue;
        }
        if (std::fabs(*v) > std::numeric_limits<float>::max()) {
          return Error(line_number, c + 1, absl::StrCat("'", cells[c], "' is out of range for f32"));
        }
        if (c == label) {
          float_labels.push_back(static_cast<float>(*v));
        } else {
          features.push_back(static_cast<float>(*v));
        }
      }
      ++rows;
    }
    if (rows == 0) return absl::InvalidArgumentError(absl::StrCat(source_, ": no data rows"));

    const int64_t feature_columns = columns - (label >= 0 ? 1 : 0);
    Batch out;
    out.emplace_back(std::string(kFeaturesFeature), Tensor::FromVector(Shape({rows, feature_columns}), features));
    if (label >= 0) {
      out.emplace_back(std::string(kLabelsFeature), options_.label_dtype == DType::kI64
                                                        ? Tensor::FromVector(Shape({rows}), int_labels)
                                                        : Tensor::FromVector(Shape({rows}), float_labels));
    }
    return Dataset::Create(std::move(out), source_);
  }

 private:
  // The 0-based label column (-1 for none) given the header cells (null when absent).
  absl::StatusOr<int> ResolveLabel(const std::vector<std::string>* header, int columns, int64_t line_number) const {
    if (!options_.label_name.empty()) {
      if (header == nullptr) {
        return Error(line_number, 0,
                     absl::StrCat("the label column is chosen by name ('", options_.label_name,
                                  "') but the file has no header row"));
      }
      int found = -1;
      for (int c = 0; c < columns; ++c) {
        if ((*header)[c] != options_.label_name) continue;
        if (found >= 0) {
          return Error(line_number, 0,
                       absl::StrCat("the header names '", options_.label_name, "' twice (columns ", found + 1, " and ",
                                    c + 1, ")"));
        }
        found = c;
      }
      if (found < 0) {
        return Error(line_number, 0, absl::StrCat("the header has no column named '", options_.label_name, "'"));
      }
      return found;
    }
    if (options_.label_index.has_value()) {
      const int64_t index =
          *options_.label_index < 0 ? int64_t{*options_.label_index} + columns : *options_.label_index;
      if (index < 0 || index >= columns) {
        return Error(
            line_number, 0,
            absl::StrCat("label column index ", *options_.label_index, " is out of range for ", columns, " columns"));
      }
      return static_cast<int>(index);
    }
    return -1;
  }

  const CsvOptions& options_;
  std::string source_;
};

}  // namespace

absl::StatusOr<Dataset> ParseCsv(absl::string_view text, const CsvOptions& options, absl::string_view source) {
  return CsvParser(options, source).Parse(text);
}

absl::StatusOr<Dataset> ReadCsv(const std::string& path, const CsvOptions& options) {
  TSR_ASSIGN_OR_RETURN(std::string text, ReadDataFile(path, options.max_bytes));
  return ParseCsv(text, options, path);
}

}  // namespace tsr
