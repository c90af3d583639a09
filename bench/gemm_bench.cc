// f32 GEMM throughput: Tessera's Sgemm (kernels/cpu/gemm.h) against OpenBLAS
// cblas_sgemm in the same run, at 1 and 2 threads, on square, transformer, one-row and
// few-column shapes.
// Each benchmark reports GFLOP/s over wall time and GFLOP per process CPU-second
// ("GFLOP/cpu_s": robust on a shared, oversubscribed machine, where wall time
// mostly measures the other tenants); after the run a table of medians over the
// repetitions gives both Tessera / OpenBLAS ratios.
//
//   gemm_bench --benchmark_min_time=0.2 --benchmark_repetitions=3
#include <cblas.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench/bench_util.h"
#include "bench/rate_recorder.h"
#include "benchmark/benchmark.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm.h"
#include "runtime/thread_pool.h"

namespace tsr {
namespace {

struct GemmShape {
  int64_t m, n, k;
};
// Square, transformer, the one-row (a batch-1 classifier head and MLP layer: the GEMV),
// few-column (a 10-class head at batch 64) and the example MLP's hidden layers at batch 64.
const GemmShape kShapes[] = {{256, 256, 256},  {512, 512, 512},  {1024, 1024, 1024}, {2048, 2048, 2048},
                             {128, 768, 3072}, {128, 3072, 768}, {2048, 768, 768},   {1, 1000, 1280},
                             {1, 3072, 768},   {64, 10, 256},    {64, 256, 784},     {64, 256, 256}};

struct Operands {
  std::vector<float> a, b, c;
  explicit Operands(const GemmShape& s) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    a.resize(s.m * s.k);
    b.resize(s.k * s.n);
    c.assign(s.m * s.n, 0.0f);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
  }
};

// Times the benchmark loop around `gemm` and reports both rates.
template <typename Fn>
void TimeGemm(benchmark::State& state, int shape, const std::string& library, Fn gemm) {
  const GemmShape& s = kShapes[shape];
  const double flops = 2.0 * s.m * s.n * s.k;
  gemm();  // warm-up: packing buffers, thread start-up
  const double wall0 = bench::WallSeconds(), cpu0 = bench::ProcessCpuSeconds();
  for (auto _ : state) {
    gemm();
    benchmark::ClobberMemory();
  }
  const double wall = bench::WallSeconds() - wall0, cpu = bench::ProcessCpuSeconds() - cpu0;
  const double gflop = flops * 1e-9 * static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] = gflop / wall;
  state.counters["GFLOP/cpu_s"] = gflop / cpu;
  state.SetLabel(library);
}

void BM_Tessera(benchmark::State& state) {
  const int shape = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const GemmShape& s = kShapes[shape];
  Operands ops(s);
  // The runtime's pool, as the engine runs kernels: the caller takes chunks too, so
  // threads - 1 workers give `threads` in all.
  std::optional<ThreadPool> pool;
  GemmOptions options;
  if (threads > 1) {
    pool.emplace(threads - 1);
    options.parallel_for = pool->AsParallelForFn();
  }
  TimeGemm(state, shape, "tessera", [&] {
    Sgemm(false, false, s.m, s.n, s.k, 1.0f, ops.a.data(), s.k, ops.b.data(), s.n, 0.0f, ops.c.data(), s.n, options);
  });
}

void BM_OpenBlas(benchmark::State& state) {
  const int shape = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const GemmShape& s = kShapes[shape];
  Operands ops(s);
  openblas_set_num_threads(threads);
  TimeGemm(state, shape, "openblas", [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, ops.a.data(), s.k, ops.b.data(), s.n,
                0.0f, ops.c.data(), s.n);
  });
}

void PrintSummary(const bench::RateRecorder& results) {
  std::printf("\nTessera Sgemm (%s) vs OpenBLAS cblas_sgemm, medians over repetitions\n",
              std::string(CpuIsaName(ActiveCpuIsa())).c_str());
  std::printf("%-18s %7s | %9s %9s %6s | %9s %9s %6s\n", "M x N x K", "threads", "tsr GF/s", "oblas", "ratio",
              "tsr GF/cs", "oblas", "ratio");
  for (int shape = 0; shape < static_cast<int>(std::size(kShapes)); ++shape) {
    for (int threads : {1, 2}) {
      const bench::Rates* t = results.Find(shape, threads, "tessera");
      const bench::Rates* o = results.Find(shape, threads, "openblas");
      if (t == nullptr || o == nullptr) continue;
      const double tw = bench::MedianRate(t, false), ow = bench::MedianRate(o, false);
      const double tc = bench::MedianRate(t, true), oc = bench::MedianRate(o, true);
      const GemmShape& s = kShapes[shape];
      const std::string dims = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      std::printf("%-18s %7d | %9.1f %9.1f %5.2fx | %9.1f %9.1f %5.2fx\n", dims.c_str(), threads, tw, ow,
                  ow > 0 ? tw / ow : 0.0, tc, oc, oc > 0 ? tc / oc : 0.0);
    }
  }
}

void RegisterBenchmarks() {
  for (int shape = 0; shape < static_cast<int>(std::size(kShapes)); ++shape) {
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark("BM_OpenBlas", BM_OpenBlas)->Args({shape, threads})->UseRealTime();
      benchmark::RegisterBenchmark("BM_Tessera", BM_Tessera)->Args({shape, threads})->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  tsr::RegisterBenchmarks();
  tsr::bench::RateRecorder reporter("GFLOP/s", "GFLOP/cpu_s");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  tsr::PrintSummary(reporter);
  return 0;
}
