// f32 convolution throughput on every distinct convolution of ResNet-18 at batch 1
// (plus MobileNet-style depthwise and MobileNetV2's pointwise layers, and ResNet-18's two pooling layers):
// Tessera's cpu kernels (through RunOp, device "cpu", no fallback, the runtime's
// ThreadPool) against oneDNN's convolution_forward / pooling_forward in the same
// run, at 1 and 2 threads. Each benchmark reports GFLOP/s over wall time and GFLOP
// per process CPU-second ("GFLOP/cpu_s": robust on a shared machine); after the run
// tables of medians over the repetitions give both Tessera / oneDNN ratios.
// The flops are the direct convolution's for both libraries, so for the layers
// Tessera runs with Winograd (3x3 stride 1: kernels/cpu/conv_winograd.h) its rates
// are effective ones -- time to solution, not arithmetic done.
//
// Tessera is timed two ways:
//   - "RunOp": NCHW in, NCHW out, everything included (shape inference, output
//     allocation, and the weights' preparation -- GEMM packing or Winograd
//     transform -- redone on every call), as the interpreter runs a Conv node;
//   - "prepared": the weights prepared once outside the timed loop
//     (kernels/cpu/conv_prepared.h: what the compiler does for constant weights),
//     then ConvForward on NCHW in/out with the output preallocated -- the fair
//     counterpart of oneDNN's setup below for inference.
// oneDNN picks its preferred blocked layouts (format_tag::any) for source, weights
// and destination, and the reorders into them are done once, outside the timed loop.
//
// libdnnl here runs on GNU OpenMP, whose workers spin while waiting: on a shared,
// oversubscribed machine that wastes the time slices oneDNN's own threads need, so
// its 2-thread figures are only meaningful with a passive wait policy (set before the
// process starts; libgomp reads it when it loads):
//
//   OMP_WAIT_POLICY=PASSIVE conv_bench --benchmark_min_time=0.2 --benchmark_repetitions=3
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "bench/bench_util.h"
#include "bench/rate_recorder.h"
#include "benchmark/benchmark.h"
#include "dnnl.hpp"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "graph/tensor.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "runtime/thread_pool.h"

namespace tsr {
namespace {

struct ConvLayer {
  const char* name;
  int64_t c, m, size, kernel, stride, pad;
  int64_t group = 1;
  int64_t out() const { return (size + 2 * pad - kernel) / stride + 1; }
  double flops() const { return 2.0 * m * (c / group) * kernel * kernel * out() * out(); }
};
const ConvLayer kLayers[] = {
    {"conv1 7x7/2 3-64 @224", 3, 64, 224, 7, 2, 3},
    {"3x3 64-64 @56", 64, 64, 56, 3, 1, 1},
    {"3x3/2 64-128 @56", 64, 128, 56, 3, 2, 1},
    {"1x1/2 64-128 @56", 64, 128, 56, 1, 2, 0},
    {"3x3 128-128 @28", 128, 128, 28, 3, 1, 1},
    {"3x3/2 128-256 @28", 128, 256, 28, 3, 2, 1},
    {"1x1/2 128-256 @28", 128, 256, 28, 1, 2, 0},
    {"3x3 256-256 @14", 256, 256, 14, 3, 1, 1},
    {"3x3/2 256-512 @14", 256, 512, 14, 3, 2, 1},
    {"1x1/2 256-512 @14", 256, 512, 14, 1, 2, 0},
    {"3x3 512-512 @7", 512, 512, 7, 3, 1, 1},
    // Not in ResNet-18: MobileNet-style depthwise layers, for the direct depthwise kernel.
    {"dw 3x3 128 @56", 128, 128, 56, 3, 1, 1, 128},
    {"dw 3x3/2 256 @28", 256, 256, 28, 3, 2, 1, 256},
    // MobileNetV2's costliest kinds at 224x224: the stem, depthwise at 112, and pointwise
    // (1x1) layers with few channels on large images or many channels on small ones.
    {"mb stem 3x3/2 3-32 @224", 3, 32, 224, 3, 2, 1},
    {"mb dw 3x3 32 @112", 32, 32, 112, 3, 1, 1, 32},
    {"mb dw 3x3/2 96 @112", 96, 96, 112, 3, 2, 1, 96},
    {"mb pw 32-16 @112", 32, 16, 112, 1, 1, 0},
    {"mb pw 16-96 @112", 16, 96, 112, 1, 1, 0},
    {"mb pw 144-24 @56", 144, 24, 56, 1, 1, 0},
    {"mb pw 960-320 @7", 960, 320, 7, 1, 1, 0},
    {"mb pw 320-1280 @7", 320, 1280, 7, 1, 1, 0},
    // MobileNetV2's other depthwise layers (blocks 3 to 17).
    {"mb dw 3x3 144 @56", 144, 144, 56, 3, 1, 1, 144},
    {"mb dw 3x3/2 144 @56", 144, 144, 56, 3, 2, 1, 144},
    {"mb dw 3x3 192 @28", 192, 192, 28, 3, 1, 1, 192},
    {"mb dw 3x3 384 @14", 384, 384, 14, 3, 1, 1, 384},
    {"mb dw 3x3/2 576 @14", 576, 576, 14, 3, 2, 1, 576},
    {"mb dw 3x3 960 @7", 960, 960, 7, 3, 1, 1, 960},
};

// ResNet-18's pooling layers; "flops" count one operation per window tap.
struct PoolLayer {
  const char* name;
  bool max;  // MaxPool, else GlobalAveragePool
  int64_t c, size, kernel, stride, pad;
  int64_t out() const { return (size + 2 * pad - kernel) / stride + 1; }
  double flops() const { return 1.0 * c * out() * out() * kernel * kernel; }
};
const PoolLayer kPools[] = {
    {"maxpool 3x3/2 64 @112", true, 64, 112, 3, 2, 1},
    {"global avgpool 512 @7", false, 512, 7, 7, 1, 0},
};

// Activations live in 64-byte aligned buffers, as the runtime's allocator and arena give
// them (and as oneDNN allocates its own): a std::vector's 16-byte alignment splits every
// 64-byte pixel vector of the blocked layout over two cache lines.
class AlignedFloats {
 public:
  explicit AlignedFloats(int64_t n)
      : data_(static_cast<float*>(std::aligned_alloc(64, (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64))) {}
  AlignedFloats(const std::vector<float>& values) : AlignedFloats(static_cast<int64_t>(values.size())) {
    std::copy(values.begin(), values.end(), data_.get());
  }
  float* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
};

std::vector<float> RandomValues(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// libdnnl here is built on GNU OpenMP; the benchmark does not link libgomp
// itself, so its omp_set_num_threads is looked up in the already loaded
// library.
void SetOpenMpThreads(int threads) {
  using SetFn = void (*)(int);
  static const auto set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set != nullptr) set(threads);
}

// Times the benchmark loop around `run` and reports both rates.
template <typename Fn>
void TimeLoop(benchmark::State& state, double flops, const std::string& library, Fn run) {
  run();  // warm-up: scratch buffers, thread start-up
  const double wall0 = bench::WallSeconds(), cpu0 = bench::ProcessCpuSeconds();
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  const double wall = bench::WallSeconds() - wall0, cpu = bench::ProcessCpuSeconds() - cpu0;
  const double gflop = flops * 1e-9 * static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] = gflop / wall;
  state.counters["GFLOP/cpu_s"] = gflop / cpu;
  state.SetLabel(library);
}

void BM_Tessera(benchmark::State& state) {
  const ConvLayer& layer = kLayers[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  Tensor x(DType::kF32, Shape({1, layer.c, layer.size, layer.size}));
  Tensor w(DType::kF32, Shape({layer.m, layer.c / layer.group, layer.kernel, layer.kernel}));
  const std::vector<float> xv = RandomValues(x.num_elements(), 1), wv = RandomValues(w.num_elements(), 2);
  std::copy(xv.begin(), xv.end(), x.flat<float>().begin());
  std::copy(wv.begin(), wv.end(), w.flat<float>().begin());
  const std::vector<std::optional<Tensor>> inputs = {x, w};
  const AttrMap attrs{{"strides", AttrValue::Ints({layer.stride, layer.stride})},
                      {"pads", AttrValue::Ints({layer.pad, layer.pad, layer.pad, layer.pad})},
                      {"group", AttrValue::Int(layer.group)}};
  // The caller takes chunks too: threads - 1 workers give `threads` in all.
  std::optional<ThreadPool> pool;
  RunOpOptions options;
  options.device = kCpuDevice;
  options.fall_back_to_reference = false;
  if (threads > 1) {
    pool.emplace(threads - 1);
    options.parallel_for = pool->AsParallelForFn();
  }
  TimeLoop(state, layer.flops(), "tessera", [&] {
    absl::StatusOr<std::vector<Tensor>> y = RunOp("Conv", inputs, attrs, options);
    if (!y.ok()) state.SkipWithError(std::string(y.status().message()).c_str());
    benchmark::DoNotOptimize(y);
  });
}

ConvGeometry GeometryOf(const ConvLayer& layer) {
  ConvGeometry geometry;
  geometry.window = Window3d{.in = {1, layer.size, layer.size},
                             .out = {1, layer.out(), layer.out()},
                             .kernel = {1, layer.kernel, layer.kernel},
                             .stride = {1, layer.stride, layer.stride},
                             .dilation = {1, 1, 1},
                             .pad_begin = {0, layer.pad, layer.pad},
                             .pad_end = {0, layer.pad, layer.pad}};
  geometry.channels = layer.c;
  geometry.out_channels = layer.m;
  geometry.group = layer.group;
  return geometry;
}

// `threads` in all: the caller takes chunks too, so threads - 1 workers in `pool`.
ParallelForFn PoolParallelFor(int threads, std::optional<ThreadPool>& pool) {
  if (threads <= 1) return nullptr;
  pool.emplace(threads - 1);
  return pool->AsParallelForFn();
}

// The same convolution on weights prepared once, outside the timed loop.
void BM_TesseraPrepared(benchmark::State& state) {
  const ConvLayer& layer = kLayers[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  const AlignedFloats xv(RandomValues(layer.c * layer.size * layer.size, 1));
  const std::vector<float> wv = RandomValues(layer.m * (layer.c / layer.group) * layer.kernel * layer.kernel, 2);
  const AlignedFloats yv(layer.m * layer.out() * layer.out());
  const ConvGeometry geometry = GeometryOf(layer);
  std::optional<ThreadPool> pool;
  const ParallelForFn parallel_for = PoolParallelFor(threads, pool);
  absl::StatusOr<PreparedConvWeights> prepared = PrepareConvWeights(geometry, wv.data(), parallel_for);
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  TimeLoop(state, layer.flops(), "tessera_prepared", [&] {
    ConvForward(*prepared, 1, xv.data(), nullptr, yv.data(), parallel_for);
    benchmark::DoNotOptimize(yv.data());
  });
}

// The same convolution in the channel-blocked layout (conv_blocked.h) on weights
// prepared once, as the compiler's layout pass runs chains of convolutions: input and
// output blocked, except a few-channel input (a network's first layer), read as it lies.
void BM_TesseraBlocked(benchmark::State& state) {
  const ConvLayer& layer = kLayers[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  const bool x_blocked = layer.group > 1 || layer.c >= kChannelBlock;
  const int64_t in_pixels = layer.size * layer.size, out_pixels = layer.out() * layer.out();
  const std::vector<float> plain = RandomValues(layer.c * in_pixels, 1);
  const AlignedFloats xv(ChannelBlocks(layer.c) * kChannelBlock * in_pixels);
  if (x_blocked) {
    BlockChannels(1, layer.c, in_pixels, plain.data(), xv.data());
  } else {
    std::copy(plain.begin(), plain.end(), xv.data());
  }
  const std::vector<float> wv = RandomValues(layer.m * (layer.c / layer.group) * layer.kernel * layer.kernel, 2);
  const AlignedFloats yv(ChannelBlocks(layer.m) * kChannelBlock * out_pixels);
  const ConvGeometry geometry = GeometryOf(layer);
  std::optional<ThreadPool> pool;
  const ParallelForFn parallel_for = PoolParallelFor(threads, pool);
  absl::StatusOr<PreparedBlockedConv> prepared = PrepareBlockedConv(geometry, wv.data());
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  TimeLoop(state, layer.flops(), "tessera_blocked", [&] {
    BlockedConvForward(*prepared, 1, xv.data(), x_blocked, nullptr, nullptr, FusedActivation{}, yv.data(),
                       parallel_for);
    benchmark::DoNotOptimize(yv.data());
  });
}

void BM_OneDnn(benchmark::State& state) {
  using dnnl::memory;
  const ConvLayer& layer = kLayers[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  SetOpenMpThreads(threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::dims src_dims = {1, layer.c, layer.size, layer.size};
  // Grouped weights are [groups, M/groups, C/groups, kh, kw] (goihw) in oneDNN.
  const memory::dims w_dims = layer.group == 1 ? memory::dims{layer.m, layer.c, layer.kernel, layer.kernel}
                                               : memory::dims{layer.group, layer.m / layer.group, layer.c / layer.group,
                                                              layer.kernel, layer.kernel};
  const memory::dims dst_dims = {1, layer.m, layer.out(), layer.out()};
  const memory::dims strides = {layer.stride, layer.stride}, pads = {layer.pad, layer.pad};
  auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); };
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             any(src_dims), any(w_dims), any(dst_dims), strides, pads, pads);
  const dnnl::convolution_forward::primitive_desc pd(desc, engine);
  std::vector<float> xv = RandomValues(layer.c * layer.size * layer.size, 1);
  std::vector<float> wv = RandomValues(layer.m * (layer.c / layer.group) * layer.kernel * layer.kernel, 2);
  memory user_src({src_dims, memory::data_type::f32, memory::format_tag::nchw}, engine, xv.data());
  memory user_w(
      {w_dims, memory::data_type::f32, layer.group == 1 ? memory::format_tag::oihw : memory::format_tag::goihw}, engine,
      wv.data());
  // Reorders into oneDNN's layouts, once, outside the timed loop.
  memory src(pd.src_desc(), engine), w(pd.weights_desc(), engine), dst(pd.dst_desc(), engine);
  dnnl::reorder(user_src, src).execute(stream, user_src, src);
  dnnl::reorder(user_w, w).execute(stream, user_w, w);
  stream.wait();
  const dnnl::convolution_forward conv(pd);
  const std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
  TimeLoop(state, layer.flops(), "onednn", [&] {
    conv.execute(stream, args);
    stream.wait();
  });
}

void BM_TesseraPool(benchmark::State& state) {
  const PoolLayer& layer = kPools[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  Tensor x(DType::kF32, Shape({1, layer.c, layer.size, layer.size}));
  const std::vector<float> xv = RandomValues(x.num_elements(), 1);
  std::copy(xv.begin(), xv.end(), x.flat<float>().begin());
  const std::vector<std::optional<Tensor>> inputs = {x};
  AttrMap attrs;
  if (layer.max) {
    attrs = {{"kernel_shape", AttrValue::Ints({layer.kernel, layer.kernel})},
             {"strides", AttrValue::Ints({layer.stride, layer.stride})},
             {"pads", AttrValue::Ints({layer.pad, layer.pad, layer.pad, layer.pad})}};
  }
  std::optional<ThreadPool> pool;
  RunOpOptions options;
  options.device = kCpuDevice;
  options.fall_back_to_reference = false;
  options.outputs = 1;  // MaxPool without Indices, as oneDNN's inference pooling and as inference graphs run it
  if (threads > 1) {
    pool.emplace(threads - 1);
    options.parallel_for = pool->AsParallelForFn();
  }
  const char* op = layer.max ? "MaxPool" : "GlobalAveragePool";
  // The kernel on a preallocated output, as the compiled runtime calls it (and as
  // oneDNN's loop runs): RunOp would add shape inference, a fresh output and its
  // poison fill to every call. Checked once against RunOp's result.
  absl::StatusOr<std::vector<Tensor>> want = RunOp(op, inputs, attrs, options);
  const absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup(op);
  const KernelFn* fn = KernelRegistry::Global().Find(op, kCpuDevice, DType::kF32);
  if (!want.ok() || !def.ok() || fn == nullptr) {
    state.SkipWithError("no cpu pooling kernel");
    return;
  }
  Tensor y(DType::kF32, (*want)[0].shape());
  KernelContext ctx(**def, op, attrs, {&x}, {&y});
  ctx.set_parallel_for(options.parallel_for);
  if (!(*fn)(ctx).ok() ||
      !std::equal(y.flat<float>().begin(), y.flat<float>().end(), (*want)[0].flat<float>().begin())) {
    state.SkipWithError("the pooling kernel's output differs from RunOp's");
    return;
  }
  TimeLoop(state, layer.flops(), "tessera_pool", [&] {
    absl::Status status = (*fn)(ctx);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
    benchmark::DoNotOptimize(y);
  });
}

void BM_OneDnnPool(benchmark::State& state) {
  using dnnl::memory;
  const PoolLayer& layer = kPools[state.range(0)];
  SetOpenMpThreads(static_cast<int>(state.range(1)));
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::desc src_md({1, layer.c, layer.size, layer.size}, memory::data_type::f32, memory::format_tag::nchw);
  const memory::desc dst_md({1, layer.c, layer.out(), layer.out()}, memory::data_type::f32, memory::format_tag::nchw);
  const dnnl::pooling_forward::desc desc(
      dnnl::prop_kind::forward_inference,
      layer.max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding, src_md, dst_md,
      {layer.stride, layer.stride}, {layer.kernel, layer.kernel}, {layer.pad, layer.pad}, {layer.pad, layer.pad});
  const dnnl::pooling_forward::primitive_desc pd(desc, engine);
  std::vector<float> xv = RandomValues(layer.c * layer.size * layer.size, 1);
  memory src(src_md, engine, xv.data()), dst(pd.dst_desc(), engine);
  const dnnl::pooling_forward pooling(pd);
  const std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  TimeLoop(state, layer.flops(), "onednn_pool", [&] {
    pooling.execute(stream, args);
    stream.wait();
  });
}

void PrintSummary(const bench::RateRecorder& results) {
  std::printf(
      "\nTessera cpu Conv (%s, NCHW in/out) vs oneDNN %d.%d convolution_forward (its preferred blocked layouts,\n"
      "reorders outside the timed loop), batch 1, medians over repetitions. runop: through RunOp, everything\n"
      "included; prep: weights prepared once outside the loop (PrepareConvWeights + ConvForward); blk: the\n"
      "channel-blocked kernels (conv_blocked.h), activations in nChw16c, weights prepared once.\n"
      "Rates in GFLOP per process CPU-second (cpu) and per wall second (wall); ratios Tessera / oneDNN.\n",
      std::string(CpuIsaName(ActiveCpuIsa())).c_str(), dnnl::version()->major, dnnl::version()->minor);
  std::printf("%-22s %3s | %6s %6s %6s %6s %5s %5s %5s | %6s %6s %6s %6s %5s %5s %5s\n", "layer", "thr", "runop",
              "prep", "blk", "onednn", "r/run", "r/prp", "r/blk", "runop", "prep", "blk", "onednn", "r/run", "r/prp",
              "r/blk");
  std::printf("%-22s %3s | %45s | %45s\n", "", "", "cpu GFLOP/s", "wall GFLOP/s");
  for (int layer = 0; layer < static_cast<int>(std::size(kLayers)); ++layer) {
    for (int threads : {1, 2}) {
      const bench::Rates* t = results.Find(layer, threads, "tessera");
      const bench::Rates* p = results.Find(layer, threads, "tessera_prepared");
      const bench::Rates* b = results.Find(layer, threads, "tessera_blocked");
      const bench::Rates* o = results.Find(layer, threads, "onednn");
      if (o == nullptr) continue;
      for (bool cpu : {true, false}) {
        const double tr = bench::MedianRate(t, cpu), pr = bench::MedianRate(p, cpu), br = bench::MedianRate(b, cpu),
                     orate = bench::MedianRate(o, cpu);
        if (cpu) std::printf("%-22s %3d |", kLayers[layer].name, threads);
        std::printf(" %6.1f %6.1f %6.1f %6.1f %5.2f %5.2f %5.2f %s", tr, pr, br, orate, orate > 0 ? tr / orate : 0.0,
                    orate > 0 ? pr / orate : 0.0, orate > 0 ? br / orate : 0.0, cpu ? "|" : "\n");
      }
    }
  }
  std::printf(
      "\nPooling, NCHW for both (MaxPool without its Indices output, as inference graphs run it; Tessera's\n"
      "kernel called on a preallocated output, as the compiled runtime runs it); G-op/s count one operation\n"
      "per window tap\n");
  std::printf("%-24s %7s | %9s %9s %6s | %9s %9s %6s\n", "layer", "threads", "tsr Gop/s", "onednn", "ratio",
              "tsr Gop/cs", "onednn", "ratio");
  for (int layer = 0; layer < static_cast<int>(std::size(kPools)); ++layer) {
    for (int threads : {1, 2}) {
      const bench::Rates* t = results.Find(layer, threads, "tessera_pool");
      const bench::Rates* o = results.Find(layer, threads, "onednn_pool");
      if (t == nullptr || o == nullptr) continue;
      const double tw = bench::MedianRate(t, false), ow = bench::MedianRate(o, false);
      const double tc = bench::MedianRate(t, true), oc = bench::MedianRate(o, true);
      std::printf("%-24s %7d | %9.2f %9.2f %5.2fx | %9.2f %9.2f %5.2fx\n", kPools[layer].name, threads, tw, ow,
                  ow > 0 ? tw / ow : 0.0, tc, oc, oc > 0 ? tc / oc : 0.0);
    }
  }
}

void RegisterBenchmarks() {
  for (int layer = 0; layer < static_cast<int>(std::size(kLayers)); ++layer) {
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark("BM_OneDnn", BM_OneDnn)->Args({layer, threads})->UseRealTime();
      benchmark::RegisterBenchmark("BM_Tessera", BM_Tessera)->Args({layer, threads})->UseRealTime();
      benchmark::RegisterBenchmark("BM_TesseraPrepared", BM_TesseraPrepared)->Args({layer, threads})->UseRealTime();
      benchmark::RegisterBenchmark("BM_TesseraBlocked", BM_TesseraBlocked)->Args({layer, threads})->UseRealTime();
    }
  }
  for (int layer = 0; layer < static_cast<int>(std::size(kPools)); ++layer) {
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark("BM_OneDnnPool", BM_OneDnnPool)->Args({layer, threads})->UseRealTime();
      benchmark::RegisterBenchmark("BM_TesseraPool", BM_TesseraPool)->Args({layer, threads})->UseRealTime();
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
