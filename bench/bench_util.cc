// Clocks, repeated timing with medians and RatioTable.
#include "bench/bench_util.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tsr::bench {

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  // The lower middle value is the largest of the lower half.
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + values[mid]);
}

std::vector<TimeSample> TimeRepeatedly(int warmup, int repetitions, const std::function<void()>& fn,
                                       double warmup_seconds) {
  const double warmup_end = WallSeconds() + warmup_seconds;
  for (int i = 0; i < warmup || WallSeconds() < warmup_end; ++i) fn();
  std::vector<TimeSample> samples;
  samples.reserve(static_cast<size_t>(std::max(repetitions, 0)));
  // The process CPU clock counts a thread that runs without yielding (a spinning worker)
  // only at scheduler ticks, so one call's reading can be 0 or a whole tick: every sample
  // gets the mean over all the calls instead.
  const double cpu_start = ProcessCpuSeconds();
  for (int i = 0; i < repetitions; ++i) {
    const double wall0 = WallSeconds();
    fn();
    samples.push_back({WallSeconds() - wall0, 0.0});
  }
  const double cpu_mean = repetitions > 0 ? (ProcessCpuSeconds() - cpu_start) / repetitions : 0.0;
  for (TimeSample& s : samples) s.cpu = cpu_mean;
  return samples;
}

TimeSample MedianOf(const std::vector<TimeSample>& samples) {
  std::vector<double> wall, cpu;
  for (const TimeSample& s : samples) {
    wall.push_back(s.wall);
    cpu.push_back(s.cpu);
  }
  return {Median(std::move(wall)), Median(std::move(cpu))};
}

RatioTable::RatioTable(std::vector<std::string> key_titles, RatioTableOptions options)
    : key_titles_(std::move(key_titles)), options_(std::move(options)) {}

void RatioTable::AddRow(std::vector<std::string> keys, TimeSample ours, std::optional<TimeSample> peer) {
  keys.resize(key_titles_.size());
  rows_.push_back({std::move(keys), ours, peer});
}

namespace {

// Three significant digits or so, without an exponent.
std::string FormatValue(double v) {
  if (v >= 100) return absl::StrFormat("%.1f", v);
  if (v >= 1) return absl::StrFormat("%.2f", v);
  return absl::StrFormat("%.3f", v);
}

std::string FormatRatio(double ours, std::optional<double> peer) {
  if (!peer.has_value() || *peer <= 0) return "-";
  return absl::StrFormat("%.2fx", ours / *peer);
}

}  // namespace

std::string RatioTable::ToString() const {
  // cells[r][c]: row 0 is the header.
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header = key_titles_;
  for (const char* clock : {"", " cpu"}) {
    header.push_back(absl::StrCat(options_.ours, clock, " ", options_.unit));
    header.push_back(absl::StrCat(options_.peer, clock, " ", options_.unit));
    header.push_back("ratio");
  }
  cells.push_back(std::move(header));
  for (const Row& row : rows_) {
    std::vector<std::string> line = row.keys;
    const std::optional<double> peer_wall = row.peer.has_value() ? std::optional<double>(row.peer->wall) : std::nullopt;
    const std::optional<double> peer_cpu = row.peer.has_value() ? std::optional<double>(row.peer->cpu) : std::nullopt;
    line.push_back(FormatValue(row.ours.wall));
    line.push_back(peer_wall.has_value() ? FormatValue(*peer_wall) : "-");
    line.push_back(FormatRatio(row.ours.wall, peer_wall));
    line.push_back(FormatValue(row.ours.cpu));
    line.push_back(peer_cpu.has_value() ? FormatValue(*peer_cpu) : "-");
    line.push_back(FormatRatio(row.ours.cpu, peer_cpu));
    cells.push_back(std::move(line));
  }
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& line : cells) {
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  }
  // Keys left-aligned, figures right-aligned; a bar before each clock's group of three.
  std::string out =
      absl::StrCat("ratio = ", options_.ours, " / ", options_.peer, " (", options_.lower_is_better ? "lower" : "higher",
                   " is better for ", options_.ours, "); cpu = process CPU time, all threads\n");
  const size_t keys = key_titles_.size();
  for (const auto& line : cells) {
    for (size_t c = 0; c < line.size(); ++c) {
      if (c > 0) absl::StrAppend(&out, c >= keys && (c - keys) % 3 == 0 ? " | " : "  ");
      const std::string pad(width[c] - line[c].size(), ' ');
      absl::StrAppend(&out, c < keys ? line[c] + pad : pad + line[c]);
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace tsr::bench
