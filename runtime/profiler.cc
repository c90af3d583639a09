// Profiler: event collection, Chrome trace JSON and the top-N table.
#include "runtime/profiler.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tsr {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one.
size_t Utf8SequenceLength(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  // Overlong forms, surrogates and code points above U+10FFFF are not UTF-8.
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return len;
}

// Microseconds with nanosecond precision, as Chrome's trace format expects.
std::string Micros(int64_t ns) { return absl::StrFormat("%.3f", static_cast<double>(ns) / 1000.0); }

}  // namespace

std::string JsonQuote(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += absl::StrFormat("\\u%04x", c);
    } else if (c >= 0x80) {
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        out += "\\ufffd";  // not UTF-8: the replacement character
        ++i;
      } else {
        out.append(s, i, len);
        i += len;
      }
      continue;
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  out.push_back('"');
  return out;
}

void Profiler::Record(ProfileEvent event) {
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(event));
}

std::vector<ProfileEvent> Profiler::Events() const {
  absl::MutexLock lock(&mu_);
  return events_;
}

void Profiler::Clear() {
  absl::MutexLock lock(&mu_);
  events_.clear();
}

std::string Profiler::ChromeTraceJson() const {
  std::vector<ProfileEvent> events = Events();
  std::stable_sort(events.begin(), events.end(),
                   [](const ProfileEvent& a, const ProfileEvent& b) { return a.start_ns < b.start_ns; });
  const int64_t origin = events.empty() ? 0 : events.front().start_ns;
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  absl::StrAppend(&out, R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"tessera"}})");
  for (const ProfileEvent& e : events) {
    absl::StrAppend(&out, ",\n{\"name\":", JsonQuote(e.name), ",\"cat\":", JsonQuote(e.category),
                    ",\"ph\":\"X\",\"ts\":", Micros(e.start_ns - origin), ",\"dur\":", Micros(e.duration_ns),
                    ",\"pid\":1,\"tid\":", e.thread, ",\"args\":{\"op\":", JsonQuote(e.category), "}}");
  }
  out += "\n]}\n";
  return out;
}

absl::Status Profiler::WriteChromeTrace(const std::string& path) const {
  const std::string json = ChromeTraceJson();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot open for writing: ", std::error_code(errno, std::generic_category()).message()));
  }
  file.write(json.data(), static_cast<std::streamsize>(json.size()));
  file.close();
  if (!file) return absl::InternalError(absl::StrCat(path, ": cannot write the trace"));
  return absl::OkStatus();
}

std::string Profiler::TopTable(int n) const {
  struct Row {
    std::string op;
    int64_t calls = 0;
    int64_t total_ns = 0;
  };
  std::map<std::string, Row> by_op;
  int64_t all_ns = 0, all_calls = 0;
  for (const ProfileEvent& e : Events()) {
    Row& row = by_op[e.category];
    row.op = e.category;
    ++row.calls;
    row.total_ns += e.duration_ns;
    all_ns += e.duration_ns;
    ++all_calls;
  }
  std::vector<Row> rows;
  for (auto& [op, row] : by_op) rows.push_back(row);
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.total_ns > b.total_ns; });
  if (n >= 0 && rows.size() > static_cast<size_t>(n)) rows.resize(static_cast<size_t>(n));

  size_t width = 5;  // "(all)"
  for (const Row& r : rows) width = std::max(width, r.op.size());
  const auto line = [&](const std::string& op, int64_t calls, int64_t ns) {
    const double ms = static_cast<double>(ns) / 1e6;
    const double mean = calls == 0 ? 0.0 : ms / static_cast<double>(calls);
    const double percent = all_ns == 0 ? 0.0 : 100.0 * static_cast<double>(ns) / static_cast<double>(all_ns);
    return absl::StrFormat("%-*s %8d %12.3f %12.4f %7.1f%%\n", static_cast<int>(width), op, calls, ms, mean, percent);
  };
  std::string out =
      absl::StrFormat("%-*s %8s %12s %12s %8s\n", static_cast<int>(width), "op", "calls", "total ms", "mean ms", "%");
  for (const Row& r : rows) out += line(r.op, r.calls, r.total_ns);
  out += line("(all)", all_calls, all_ns);
  return out;
}

}  // namespace tsr
