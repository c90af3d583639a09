// Memory-bound kernels against memcpy: the CPU Transpose, Concat, Slice, Pad and
// Gather kernels (kernels/cpu/layout_kernels.cc, indexing_kernels.cc) and an
// elementwise Add (whichever kernel is registered for it on kCpuDevice), each next to
// a memcpy moving the same number of bytes (read + written) in the same run, at 1 and
// 2 threads (the runtime ThreadPool: the caller plus one worker). Rates are GB/s of
// bytes read + written, over wall time and per process CPU-second ("GB/cpu_s",
// steadier on a shared machine). After the run a table gives the medians over the
// repetitions and the op / memcpy ratios.
//
//   memory_bench --benchmark_min_time=0.2 --benchmark_repetitions=3
//
// The op kernels run on preallocated outputs (as the executor runs them); "Add
// (RunOp)" goes through RunOp, which also infers shapes and allocates and zero-fills
// the output on every call.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench/bench_util.h"
#include "bench/rate_recorder.h"
#include "benchmark/benchmark.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "runtime/thread_pool.h"

namespace tsr {
namespace {

Tensor RandomF32(const Shape& shape) {
  Tensor t(DType::kF32, shape);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& x : t.flat<float>()) x = dist(rng);
  return t;
}

Tensor I64(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(v.size())}, v);
}

// One benchmarked op: its inputs, attributes and the bytes one run reads + writes.
struct Case {
  std::string name;
  std::string op;
  std::function<std::vector<std::optional<Tensor>>()> inputs;
  AttrMap attrs;
  bool through_run_op = false;
  // Reads only as many bytes as it writes (Slice, Gather): not all of input 0.
  bool reads_output_bytes = false;
};

std::vector<Case> MakeCases() {
  std::vector<Case> cases;
  cases.push_back({"Transpose [64,512,512] (0,2,1)",
                   "Transpose",
                   [] {
                     return std::vector<std::optional<Tensor>>{RandomF32(Shape{64, 512, 512})};
                   },
                   {{"perm", AttrValue::Ints({0, 2, 1})}}});
  cases.push_back({"Transpose NCHW->NHWC [32,64,56,56]",
                   "Transpose",
                   [] {
                     return std::vector<std::optional<Tensor>>{RandomF32(Shape{32, 64, 56, 56})};
                   },
                   {{"perm", AttrValue::Ints({0, 2, 3, 1})}}});
  cases.push_back({"Concat 4x[32,64,56,56] axis 1",
                   "Concat",
                   [] {
                     std::vector<std::optional<Tensor>> in;
                     for (int i = 0; i < 4; ++i) in.push_back(RandomF32(Shape{32, 64, 56, 56}));
                     return in;
                   },
                   {{"axis", AttrValue::Int(1)}}});
  cases.push_back(
      {"Slice [4096,4096] -> [4096,2048]",
       "Slice",
       [] {
         return std::vector<std::optional<Tensor>>{RandomF32(Shape{4096, 4096}), I64({0}), I64({2048}), I64({1})};
       },
       {}});
  cases.back().reads_output_bytes = true;
  cases.push_back(
      {"Pad [32,64,56,56] +1 constant",
       "Pad",
       [] {
         return std::vector<std::optional<Tensor>>{RandomF32(Shape{32, 64, 56, 56}), I64({0, 0, 1, 1, 0, 0, 1, 1})};
       },
       {{"mode", AttrValue::String("constant")}}});
  cases.push_back({"Gather 4096 rows of [30522,768]",
                   "Gather",
                   [] {
                     std::vector<int64_t> idx(4096);
                     std::mt19937 rng(2);
                     for (int64_t& i : idx) i = static_cast<int64_t>(rng() % 30522);
                     return std::vector<std::optional<Tensor>>{RandomF32(Shape{30522, 768}),
                                                               Tensor::FromVector<int64_t>(Shape{4096}, idx)};
                   },
                   {{"axis", AttrValue::Int(0)}}});
  cases.back().reads_output_bytes = true;
  const auto add_inputs = [] {
    return std::vector<std::optional<Tensor>>{RandomF32(Shape{1 << 24}), RandomF32(Shape{1 << 24})};
  };
  cases.push_back({"Add 2x16M f32", "Add", add_inputs, {}});
  cases.push_back({"Add 2x16M f32 (RunOp)", "Add", add_inputs, {}, true});
  return cases;
}

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>(MakeCases());
  return *cases;
}

template <typename Fn>
void TimeLoop(benchmark::State& state, double bytes, const std::string& label, Fn run) {
  run();  // warm-up: first touch of the buffers, thread start-up
  const double wall0 = bench::WallSeconds(), cpu0 = bench::ProcessCpuSeconds();
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  const double wall = bench::WallSeconds() - wall0, cpu = bench::ProcessCpuSeconds() - cpu0;
  const double gb = bytes * 1e-9 * static_cast<double>(state.iterations());
  state.counters["GB/s"] = gb / wall;
  state.counters["GB/cpu_s"] = gb / cpu;
  state.SetLabel(label);
}

// Bytes read + written by one run of the op: all inputs (or, for ops that read a
// part of input 0, the output's bytes) and all outputs.
double MovedBytes(const Case& c, const std::vector<std::optional<Tensor>>& inputs, const std::vector<Tensor>& outputs) {
  double written = 0, read = 0;
  for (const Tensor& t : outputs) written += static_cast<double>(t.num_bytes());
  for (const auto& t : inputs) read += t ? static_cast<double>(t->num_bytes()) : 0;
  if (c.reads_output_bytes) read = written;
  return read + written;
}

void BM_Op(benchmark::State& state) {
  const Case& c = Cases()[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  ThreadPool pool(threads - 1);
  RunOpOptions options;
  options.device = kCpuDevice;
  if (threads > 1) options.parallel_for = pool.AsParallelForFn();
  const std::vector<std::optional<Tensor>> inputs = c.inputs();
  absl::StatusOr<std::vector<Tensor>> outputs = RunOp(c.op, inputs, c.attrs, options);
  if (!outputs.ok()) {
    state.SkipWithError(std::string(outputs.status().message()).c_str());
    return;
  }
  const double bytes = MovedBytes(c, inputs, *outputs);
  if (c.through_run_op) {
    TimeLoop(state, bytes, "op", [&] { benchmark::DoNotOptimize(RunOp(c.op, inputs, c.attrs, options)); });
    return;
  }
  const OpDef* def = *OpRegistry::Global().Lookup(c.op);
  const DType dtype = inputs[0]->dtype();
  const KernelFn* fn = KernelRegistry::Global().Find(c.op, kCpuDevice, dtype);
  if (fn == nullptr) fn = KernelRegistry::Global().Find(c.op, kReferenceDevice, dtype);
  std::vector<const Tensor*> in_ptrs;
  for (const auto& t : inputs) in_ptrs.push_back(t ? &*t : nullptr);
  std::vector<Tensor*> out_ptrs;
  for (Tensor& t : *outputs) out_ptrs.push_back(&t);
  KernelContext ctx(*def, "bench", c.attrs, in_ptrs, out_ptrs);
  if (threads > 1) ctx.set_parallel_for(pool.AsParallelForFn());
  TimeLoop(state, bytes, "op", [&] {
    const absl::Status s = (*fn)(ctx);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  });
}

// memcpy of half the op's bytes (so as many bytes are read + written), split in
// 64 KiB pieces over the same threads.
void BM_Memcpy(benchmark::State& state) {
  const Case& c = Cases()[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  ThreadPool pool(threads - 1);
  RunOpOptions options;
  options.device = kCpuDevice;
  const std::vector<std::optional<Tensor>> inputs = c.inputs();
  absl::StatusOr<std::vector<Tensor>> outputs = RunOp(c.op, inputs, c.attrs, options);
  if (!outputs.ok()) {
    state.SkipWithError(std::string(outputs.status().message()).c_str());
    return;
  }
  const double bytes = MovedBytes(c, inputs, *outputs);
  const int64_t n = static_cast<int64_t>(bytes / 2);
  std::vector<char> src(n, 1), dst(n, 0);
  constexpr int64_t kPiece = 64 * 1024;
  const std::function<void(int64_t, int64_t)> copy = [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kPiece, hi = std::min(n, end * kPiece);
    std::memcpy(dst.data() + lo, src.data() + lo, hi - lo);
  };
  TimeLoop(state, 2.0 * n, "memcpy", [&] {
    if (threads > 1) {
      pool.ParallelFor((n + kPiece - 1) / kPiece, kPiece, copy);
    } else {
      copy(0, (n + kPiece - 1) / kPiece);
    }
  });
}

void PrintSummary(const bench::RateRecorder& results) {
  std::printf("\nCPU kernels vs memcpy of the same bytes (read + written), medians over repetitions\n");
  std::printf("%-38s %7s | %8s %8s %6s | %8s %8s %6s\n", "case", "threads", "op GB/s", "memcpy", "ratio", "op GB/cs",
              "memcpy", "ratio");
  for (int i = 0; i < static_cast<int>(Cases().size()); ++i) {
    for (int threads : {1, 2}) {
      const bench::Rates* o = results.Find(i, threads, "op");
      const bench::Rates* m = results.Find(i, threads, "memcpy");
      if (o == nullptr || m == nullptr) continue;
      const double ow = bench::MedianRate(o, false), mw = bench::MedianRate(m, false);
      const double oc = bench::MedianRate(o, true), mc = bench::MedianRate(m, true);
      std::printf("%-38s %7d | %8.2f %8.2f %5.2fx | %8.2f %8.2f %5.2fx\n", Cases()[i].name.c_str(), threads, ow, mw,
                  mw > 0 ? ow / mw : 0.0, oc, mc, mc > 0 ? oc / mc : 0.0);
    }
  }
}

void RegisterBenchmarks() {
  for (int i = 0; i < static_cast<int>(Cases().size()); ++i) {
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark("BM_Memcpy", BM_Memcpy)->Args({i, threads})->UseRealTime();
      benchmark::RegisterBenchmark("BM_Op", BM_Op)->Args({i, threads})->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  tsr::RegisterBenchmarks();
  tsr::bench::RateRecorder reporter("GB/s", "GB/cpu_s");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  tsr::PrintSummary(reporter);
  return 0;
}
