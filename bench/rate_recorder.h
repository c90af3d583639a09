// `RateRecorder`: the console reporter of the Google Benchmark programs in bench/
// (gemm_bench, conv_bench, memory_bench) that also keeps each run's two rate counters
// (per wall second and per process-CPU second) by (case index, threads, label), for the
// summary table of medians and ratios each prints at the end. Benchmarks are named
// "BM_Name/<case index>/<threads>/..." and label their runs with the library they time.
//
// With --benchmark_report_aggregates_only or --benchmark_display_aggregates_only the
// reporter sees no single repetition, only the aggregates: the "median" aggregate then
// stands for the repetitions. (The programs that use it link bench_util.cc.)
#ifndef TESSERA_BENCH_RATE_RECORDER_H_
#define TESSERA_BENCH_RATE_RECORDER_H_

#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "benchmark/benchmark.h"

namespace tsr::bench {

// {wall rate, cpu rate} of each repetition.
using Rates = std::vector<std::pair<double, double>>;

class RateRecorder : public benchmark::ConsoleReporter {
 public:
  // The names of the counters holding the rates, e.g. "GFLOP/s" and "GFLOP/cpu_s".
  RateRecorder(std::string wall_counter, std::string cpu_counter)
      : wall_counter_(std::move(wall_counter)), cpu_counter_(std::move(cpu_counter)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool repetition = run.run_type == Run::RT_Iteration;
      if (!repetition && !(run.run_type == Run::RT_Aggregate && run.aggregate_name == "median")) continue;
      int index = 0, threads = 0;
      const std::string name = run.run_name.str();
      const size_t slash = name.find('/');
      if (slash == std::string::npos || std::sscanf(name.c_str() + slash, "/%d/%d", &index, &threads) != 2) continue;
      const auto wall = run.counters.find(wall_counter_);
      const auto cpu = run.counters.find(cpu_counter_);
      if (wall == run.counters.end() || cpu == run.counters.end()) continue;
      (repetition ? repetitions_ : medians_)[{index, threads, run.report_label}].push_back(
          {wall->second.value, cpu->second.value});
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // The rates of (index, threads, label): every repetition, or the median aggregate when
  // only aggregates were reported; null when it did not run.
  const Rates* Find(int index, int threads, const std::string& label) const {
    const Key key{index, threads, label};
    if (const auto it = repetitions_.find(key); it != repetitions_.end()) return &it->second;
    if (const auto it = medians_.find(key); it != medians_.end()) return &it->second;
    return nullptr;
  }

 private:
  using Key = std::tuple<int, int, std::string>;
  const std::string wall_counter_, cpu_counter_;
  std::map<Key, Rates> repetitions_, medians_;
};

// The median of the wall (or cpu) rates; 0 for none.
inline double MedianRate(const Rates* rates, bool cpu) {
  if (rates == nullptr) return 0;
  std::vector<double> v;
  for (const auto& [wall_rate, cpu_rate] : *rates) v.push_back(cpu ? cpu_rate : wall_rate);
  return Median(std::move(v));
}

}  // namespace tsr::bench

#endif  // TESSERA_BENCH_RATE_RECORDER_H_
