// Shared pieces of the benchmarks in bench/: wall and process-CPU clocks, timing of
// repeated calls with medians, and the "ours vs peer, ratio" table every benchmark
// prints at the end.
//
//   std::vector<TimeSample> samples = TimeRepeatedly(/*warmup=*/5, /*repetitions=*/50, [&] { Step(); });
//   RatioTable table({"model", "threads"}, {.ours = "tessera", .peer = "pytorch", .unit = "ms"});
//   table.AddRow({"mlp", "1"}, MedianOf(samples).Scaled(1e3), peer_ms);
//   std::cout << table.ToString();
//
// Both clocks are reported because the machines are shared: wall time is what a user
// waits, process CPU time (all threads of the process) is robust against other
// processes taking the cores, and their quotient shows how many threads really worked.
#ifndef TESSERA_BENCH_BENCH_UTIL_H_
#define TESSERA_BENCH_BENCH_UTIL_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tsr::bench {

// Seconds on a monotonic clock.
double WallSeconds();
// CPU seconds used so far by all threads of this process.
double ProcessCpuSeconds();

// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
double Median(std::vector<double> values);

// One measurement on both clocks, in whatever unit the caller chose.
struct TimeSample {
  double wall = 0;
  double cpu = 0;
  TimeSample Scaled(double factor) const { return {wall * factor, cpu * factor}; }
};

// Calls `fn` untimed at least `warmup` times and for at least `warmup_seconds` of wall
// time (a fast case warmed by a count alone runs a few milliseconds: too short for the
// machine to settle after a peer's process exits or a thread pool wakes), then
// `repetitions` times, timing each call on the wall clock (seconds); each sample's CPU
// time is the mean over all the calls (process CPU time is tick-quantized for threads that
// never yield, so single short calls cannot be read on it).
std::vector<TimeSample> TimeRepeatedly(int warmup, int repetitions, const std::function<void()>& fn,
                                       double warmup_seconds = 0.2);

// The medians of the wall and of the CPU times, taken separately.
TimeSample MedianOf(const std::vector<TimeSample>& samples);

struct RatioTableOptions {
  std::string ours = "tessera";  // column titles
  std::string peer = "peer";
  std::string unit = "ms";  // of the values, shown in the header
  // Says how to read the ratio (ours / peer) in the header: for times lower is better,
  // for rates (GFLOP/s) higher is.
  bool lower_is_better = true;
};

// A text table with key columns, then ours / peer / ratio on the wall clock and again
// on the CPU clock. A row without a peer figure shows "-" for it and its ratios.
class RatioTable {
 public:
  RatioTable(std::vector<std::string> key_titles, RatioTableOptions options);

  // `keys` has one entry per key title.
  void AddRow(std::vector<std::string> keys, TimeSample ours, std::optional<TimeSample> peer);
  std::string ToString() const;

 private:
  struct Row {
    std::vector<std::string> keys;
    TimeSample ours;
    std::optional<TimeSample> peer;
  };
  std::vector<std::string> key_titles_;
  RatioTableOptions options_;
  std::vector<Row> rows_;
};

}  // namespace tsr::bench

#endif  // TESSERA_BENCH_BENCH_UTIL_H_
