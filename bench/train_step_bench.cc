// One training step of the example models (examples/models.h: the MLP 784-256-256-10
// and LeNet) at batch 64 — feeds, forward, mean softmax cross-entropy, backward, SGD
// with momentum 0.9 at learning rate 0.01 — on Tessera's cpu device, side by side
// with PyTorch 1.13 (Debian python3-torch) on the same model, batch and optimizer,
// measured in the same run by bench/pytorch_train_step.py as a subprocess. Prints
// median step times (wall and process CPU), examples/s and the ratio
// tessera / pytorch (the goal is <= 1.0). Without python3-torch the Tessera side is
// printed alone. With --profile it also lists the op types that took the most time
// in Tessera's steps, and with --trace DIR writes those steps as Chrome traces.
//
//   train_step_bench --models mlp,lenet --threads 1,2 --modes interpret,compiled --steps 100 --repetitions 3
//
// The Tessera step is Trainer::Step, what Trainer::Fit runs per batch (the training
// graph and the session come from Trainer::Create); the step time includes feeding the
// batch and fetching the loss, as PyTorch's includes loss.item(). Two modes: "compiled"
// (the default of `tessera train`: forward, backward and optimizer compiled as one
// program, compiler/pipeline/compiled_step.h) and "interpret" (the Session, op by op).
// The table also gives the achieved GFLOP/s (3 x the forward FLOPs that SummarizeModel
// counts, per step, over the median step time) and the peak memory of a step
// (the session's or the compiled program's).
//
// Threads: the session's pool has --threads workers and the calling thread only waits,
// so --threads N runs kernels on N threads (the CPU columns show it); --pin
// restricts the whole process, and the PyTorch subprocess, to that many CPUs for an
// exact count. PyTorch gets OMP/OPENBLAS/MKL_NUM_THREADS and torch.set_num_threads.
// On a shared machine libgomp's spinning workers hurt PyTorch at 2 threads; set
// OMP_WAIT_POLICY=PASSIVE in the environment (the subprocess inherits it) to avoid it.
#include <sched.h>
#include <stdio.h>

#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "examples/models.h"
#include "graph/builder/model_summary.h"
#include "graph/status_macros.h"
#include "runtime/profiler.h"
#include "runtime/trainer/trainer.h"
#include "tools/flag_parser.h"
#ifdef TESSERA_HAS_COMPILER
#include "compiler/pipeline/compiled_step.h"
#endif

#ifndef TESSERA_PYTORCH_TRAIN_STEP_SCRIPT
#define TESSERA_PYTORCH_TRAIN_STEP_SCRIPT "bench/pytorch_train_step.py"
#endif

namespace tsr {
namespace {

constexpr double kLearningRate = 0.01;
constexpr double kMomentum = 0.9;

struct BenchOptions {
  std::vector<std::string> models;
  std::vector<int> threads;
  std::vector<std::string> modes;
  int64_t batch = 64;
  int64_t steps = 100;
  int64_t warmup = 10;
  int64_t repetitions = 3;
  bool pin = false;
  bool profile = false;
  int64_t top = 5;
  std::string trace_dir;  // Chrome traces of the profiled steps here (implies profile)
  std::string python = "/usr/bin/python3";
  std::string script = TESSERA_PYTORCH_TRAIN_STEP_SCRIPT;
};

absl::StatusOr<Graph> BuildModel(const std::string& name) {
  if (name == "mlp") return examples::BuildMlp({.training_head = true});
  if (name == "lenet") return examples::BuildLeNet({.training_head = true});
  return absl::InvalidArgumentError(absl::StrCat("unknown model '", name, "' (mlp or lenet)"));
}

// The training session of one model at one thread count, and its fixed batch.
class TesseraTrainStep {
 public:
  static absl::StatusOr<std::unique_ptr<TesseraTrainStep>> Create(const std::string& model_name, int threads,
                                                                  int64_t batch, const std::string& mode) {
    TSR_ASSIGN_OR_RETURN(Graph model, BuildModel(model_name));
    auto step = std::unique_ptr<TesseraTrainStep>(new TesseraTrainStep());
    TSR_ASSIGN_OR_RETURN(ModelSummary summary, SummarizeModel(model));
    step->params_ = summary.trainable_params;
    TrainerOptions options{.batch_size = batch,
                           .learning_rate = kLearningRate,
                           .optimizer = {.kind = OptimizerKind::kMomentum, .momentum = kMomentum},
                           .seed = 1,
                           .num_threads = threads,
                           .progress = false};
    if (mode == "compiled") {
#ifdef TESSERA_HAS_COMPILER
      options.step_compiler = CompiledStepCompiler();
#else
      return absl::UnimplementedError("this build has no compiler (MLIR not found): use --modes interpret");
#endif
    }
    TSR_ASSIGN_OR_RETURN(step->trainer_, Trainer::Create(std::move(model), options));
    // Training FLOPs by the usual convention (MLPerf, MFU figures): 3 x the forward pass
    // (forward, input gradients, weight gradients). The MLP's first layer computes no input
    // gradient, so its true count is ~25% lower.
    step->flops_ = 3 * summary.flops * batch;
    // Synthetic batch with a fixed seed: pixels in [0, 1), labels in [0, 10).
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
    std::uniform_int_distribution<int64_t> label(0, 9);
    const Shape image_shape = model_name == "mlp" ? Shape({batch, 784}) : Shape({batch, 1, 28, 28});
    Tensor image(DType::kF32, image_shape), labels(DType::kI64, Shape({batch}));
    for (float& v : image.flat<float>()) v = pixel(rng);
    for (int64_t& v : labels.flat<int64_t>()) v = label(rng);
    step->feeds_ = {{"image", image}, {"labels", labels}};
    return step;
  }

  // One training step; returns the loss.
  absl::StatusOr<double> Run(RunMetadata* metadata = nullptr) {
    TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, trainer_->Step(feeds_, kLearningRate, metadata));
    return out[1].GetAsDouble(0);
  }

  int64_t params() const { return params_; }
  int64_t flops() const { return flops_; }

 private:
  TesseraTrainStep() = default;

  std::unique_ptr<Trainer> trainer_;
  std::vector<std::pair<std::string, Tensor>> feeds_;
  int64_t params_ = 0;
  int64_t flops_ = 0;
};

// What bench/pytorch_train_step.py printed on its RESULT line.
struct PeerResult {
  bench::TimeSample median_ms;
  int64_t params = 0;
  std::string version;
};

// Runs `command` through the shell; its stdout and stderr.
absl::StatusOr<std::string> RunCommand(const std::string& command, int* exit_status) {
  FILE* pipe = popen(absl::StrCat(command, " 2>&1").c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("cannot start: ", command));
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  *exit_status = pclose(pipe);
  return output;
}

std::string LastLine(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  return lines.empty() ? "(no output)" : lines.back();
}

// Empty when PyTorch can run, else why not.
std::string PeerUnavailableReason(const BenchOptions& o) {
  int status = 0;
  absl::StatusOr<std::string> out = RunCommand(absl::StrCat(o.python, " -c 'import torch'"), &status);
  if (!out.ok()) return std::string(out.status().message());
  if (status != 0) {
    return absl::StrCat(o.python, " cannot import torch (", LastLine(*out),
                        "); scripts/install_bench_deps.sh installs Debian's python3-torch");
  }
  return "";
}

absl::StatusOr<PeerResult> RunPyTorch(const BenchOptions& o, const std::string& model, int threads) {
  const std::string command = absl::StrFormat(
      "OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d MKL_NUM_THREADS=%d %s %s --model %s --threads %d --steps %d "
      "--warmup %d --batch %d",
      threads, threads, threads, o.python, o.script, model, threads, o.steps, o.warmup, o.batch);
  int status = 0;
  TSR_ASSIGN_OR_RETURN(std::string output, RunCommand(command, &status));
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::ConsumePrefix(&line, "RESULT ")) continue;
    std::map<std::string, std::string> fields;
    for (absl::string_view field : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(field, absl::MaxSplits('=', 1));
      fields[kv.first] = kv.second;
    }
    PeerResult r;
    if (!absl::SimpleAtod(fields["median_ms"], &r.median_ms.wall) ||
        !absl::SimpleAtod(fields["median_cpu_ms"], &r.median_ms.cpu) ||
        !absl::SimpleAtoi(fields["params"], &r.params)) {
      return absl::InternalError(absl::StrCat("malformed RESULT line from ", o.script, ": ", line));
    }
    r.version = fields["torch"];
    return r;
  }
  return absl::InternalError(
      absl::StrCat("`", command, "` printed no RESULT line (exit status ", status, "): ", LastLine(output)));
}

// Restricts the calling thread — and the threads and processes it starts — to the
// first `cpus` CPUs it may run on; restores the previous set when destroyed.
class ScopedCpuPin {
 public:
  ScopedCpuPin(bool enabled, int cpus) {
    if (!enabled || sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;
    cpu_set_t pinned;
    CPU_ZERO(&pinned);
    for (int cpu = 0, taken = 0; cpu < CPU_SETSIZE && taken < cpus; ++cpu) {
      if (CPU_ISSET(cpu, &saved_)) {
        CPU_SET(cpu, &pinned);
        ++taken;
      }
    }
    active_ = sched_setaffinity(0, sizeof(pinned), &pinned) == 0;
  }
  ~ScopedCpuPin() {
    if (active_) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  ScopedCpuPin(const ScopedCpuPin&) = delete;
  ScopedCpuPin& operator=(const ScopedCpuPin&) = delete;

 private:
  cpu_set_t saved_;
  bool active_ = false;
};

// One way of running Tessera's step.
struct Side {
  std::string mode;                           // "interpret" or "compiled"
  std::unique_ptr<TesseraTrainStep> tessera;  // created pinned, so its workers stay pinned
  std::vector<bench::TimeSample> ms;          // per repetition: medians over the steps
  int64_t peak_bytes = 0;
};

struct Case {
  std::string model;
  int threads = 1;
  std::vector<Side> sides;  // one per mode
  std::vector<bench::TimeSample> peer_ms;
  std::optional<PeerResult> peer;
};

absl::Status RunBench(const BenchOptions& o) {
  const std::string no_peer = PeerUnavailableReason(o);
  std::vector<Case> cases;
  for (const std::string& model : o.models) {
    for (int threads : o.threads) {
      Case c{.model = model, .threads = threads};
      for (const std::string& mode : o.modes) c.sides.push_back({.mode = mode});
      cases.push_back(std::move(c));
    }
  }
  // Repetitions on the outside, so that a slow minute of the shared machine touches
  // every case and both sides alike.
  for (int64_t rep = 0; rep < o.repetitions; ++rep) {
    for (Case& c : cases) {
      ScopedCpuPin pin(o.pin, c.threads);
      std::string line = absl::StrFormat("rep %d/%d %-6s threads %d:", rep + 1, o.repetitions, c.model, c.threads);
      for (Side& side : c.sides) {
        if (side.tessera == nullptr) {
          TSR_ASSIGN_OR_RETURN(side.tessera, TesseraTrainStep::Create(c.model, c.threads, o.batch, side.mode));
          RunMetadata metadata;
          TSR_RETURN_IF_ERROR(side.tessera->Run(&metadata).status());
          side.peak_bytes = metadata.peak_bytes;
        }
        absl::Status status;
        const std::vector<bench::TimeSample> steps =
            bench::TimeRepeatedly(static_cast<int>(o.warmup), static_cast<int>(o.steps), [&] {
              absl::StatusOr<double> loss = side.tessera->Run();
              if (!loss.ok()) status.Update(loss.status());
            });
        TSR_RETURN_IF_ERROR(status);
        side.ms.push_back(bench::MedianOf(steps).Scaled(1e3));
        absl::StrAppendFormat(&line, " %s %.3f ms (cpu %.3f)", side.mode, side.ms.back().wall, side.ms.back().cpu);
      }
      if (no_peer.empty()) {
        TSR_ASSIGN_OR_RETURN(PeerResult peer, RunPyTorch(o, c.model, c.threads));
        if (peer.params != c.sides.front().tessera->params()) {
          return absl::InternalError(absl::StrCat("the PyTorch ", c.model, " has ", peer.params,
                                                  " parameters but Tessera's has ", c.sides.front().tessera->params()));
        }
        c.peer_ms.push_back(peer.median_ms);
        c.peer = peer;
        absl::StrAppendFormat(&line, ", pytorch %.3f ms (cpu %.3f)", peer.median_ms.wall, peer.median_ms.cpu);
      }
      std::cout << line << std::endl;
    }
  }

  std::cout << absl::StrFormat(
      "\nOne training step, batch %d (forward + backward + SGD momentum %.1f, lr %.2f), medians of %d repetitions "
      "of the median over %d steps\n",
      o.batch, kMomentum, kLearningRate, o.repetitions, o.steps);
  if (no_peer.empty() && !cases.empty() && cases[0].peer.has_value()) {
    std::cout << "peer: PyTorch " << cases[0].peer->version << " (" << o.python << " " << o.script << ")\n";
  } else {
    std::cout << "peer skipped: " << no_peer << "\n";
  }
  if (o.pin) std::cout << "pinned: each case ran on its first `threads` allowed CPUs\n";
  bench::RatioTable table({"model", "threads", "mode", "GFLOP/s (3x fwd)", "peak MB"},
                          {.ours = "tessera", .peer = "pytorch", .unit = "ms"});
  std::string throughput = "examples/s (wall):";
  for (const Case& c : cases) {
    std::optional<bench::TimeSample> peer;
    std::vector<double> peer_wall, peer_cpu;
    for (const bench::TimeSample& s : c.peer_ms) peer_wall.push_back(s.wall), peer_cpu.push_back(s.cpu);
    if (!c.peer_ms.empty()) peer = bench::TimeSample{bench::Median(peer_wall), bench::Median(peer_cpu)};
    absl::StrAppendFormat(&throughput, "\n  %-6s threads %d:", c.model, c.threads);
    for (const Side& side : c.sides) {
      std::vector<double> wall, cpu;
      for (const bench::TimeSample& s : side.ms) wall.push_back(s.wall), cpu.push_back(s.cpu);
      const bench::TimeSample ours{bench::Median(wall), bench::Median(cpu)};
      table.AddRow({c.model, absl::StrCat(c.threads), side.mode,
                    absl::StrFormat("%.1f", static_cast<double>(side.tessera->flops()) / (ours.wall * 1e6)),
                    absl::StrFormat("%.1f", static_cast<double>(side.peak_bytes) / 1e6)},
                   ours, peer);
      absl::StrAppendFormat(&throughput, " tessera %s %.0f,", side.mode,
                            1e3 * static_cast<double>(o.batch) / ours.wall);
    }
    if (peer.has_value()) {
      absl::StrAppendFormat(&throughput, " pytorch %.0f", 1e3 * static_cast<double>(o.batch) / peer->wall);
    }
  }
  std::cout << table.ToString() << throughput << "\n";

  if (o.profile) {
    // At the first thread count listed (normally 1): the op types that took longest.
    for (Case& c : cases) {
      if (c.threads != o.threads.front()) continue;
      ScopedCpuPin pin(o.pin, c.threads);
      for (Side& side : c.sides) {
        Profiler profiler;
        size_t steps_per_run = 0;
        for (int64_t i = 0; i < o.steps; ++i) {
          RunMetadata metadata;
          TSR_RETURN_IF_ERROR(side.tessera->Run(&metadata).status());
          steps_per_run = metadata.timings.size();
          for (const OpTiming& t : metadata.timings) {
            profiler.Record({t.node, t.op, t.start_ns, t.duration_ns, t.thread});
          }
        }
        std::cout << absl::StrFormat(
                         "\nTessera %s (%s), threads %d: op types by total time over %d profiled steps (%d "
                         "kernels per step)\n",
                         c.model, side.mode, c.threads, o.steps, steps_per_run)
                  << profiler.TopTable(static_cast<int>(o.top));
        if (!o.trace_dir.empty()) {
          const std::string path = absl::StrCat(o.trace_dir, "/", c.model, "_", side.mode, "_t", c.threads, ".json");
          TSR_RETURN_IF_ERROR(profiler.WriteChromeTrace(path));
          std::cout << "wrote a Chrome trace of those steps to " << path << "\n";
        }
      }
    }
  }
  return absl::OkStatus();
}

constexpr char kUsage[] =
    "train_step_bench [--models mlp,lenet] [--threads 1,2] [--modes interpret,compiled] [--steps N] [--warmup N] "
    "[--repetitions N]\n"
    "                 [--batch N] [--pin] [--profile] [--top N] [--trace DIR]\n"
    "                 [--python PATH] [--script PATH]";

absl::StatusOr<std::vector<int>> ParseThreadList(const std::string& text) {
  std::vector<int> threads;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int t = 0;
    if (!absl::SimpleAtoi(part, &t) || t < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--threads: '", part, "' is not a thread count >= 1"));
    }
    threads.push_back(t);
  }
  if (threads.empty()) return absl::InvalidArgumentError("--threads: no thread count given");
  return threads;
}

int Main(int argc, char** argv) {
  BenchOptions o;
  std::string models = "mlp,lenet", threads = "1,2", modes = "interpret,compiled";
  cli::FlagParser flags;
  flags.AddString("models", '\0', "LIST", &models, "comma-separated: mlp, lenet (default both)");
  flags.AddString("threads", '\0', "LIST", &threads, "comma-separated thread counts (default 1,2)");
  flags.AddString("modes", '\0', "LIST", &modes, "comma-separated: interpret, compiled (default both)");
  flags.AddInt("steps", '\0', "N", &o.steps, "timed steps per repetition, each side (default 100)");
  flags.AddInt("warmup", '\0', "N", &o.warmup, "untimed steps before them, and at least 0.2 s of them (default 10)");
  flags.AddInt("repetitions", '\0', "N", &o.repetitions, "repetitions of every case (default 3)");
  flags.AddInt("batch", '\0', "N", &o.batch, "batch size (default 64)");
  flags.AddBool("pin", '\0', &o.pin, "run each case, and PyTorch, on exactly `threads` CPUs");
  flags.AddBool("profile", '\0', &o.profile, "also list Tessera's costliest op types at the first thread count");
  flags.AddInt("top", '\0', "N", &o.top, "with --profile, how many op types (default 5)");
  flags.AddString("trace", '\0', "DIR", &o.trace_dir,
                  "profile (as --profile) and write each profiled case's steps as a Chrome trace (open it in "
                  "https://ui.perfetto.dev), DIR/<model>_<mode>_t<threads>.json");
  flags.AddString("python", '\0', "PATH", &o.python, "the Python with PyTorch (default /usr/bin/python3)");
  flags.AddString("script", '\0', "PATH", &o.script, "bench/pytorch_train_step.py");
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (flags.help_requested()) {
    std::cout << kUsage << "\n\nTimes one training step of the example models against PyTorch.\n\n" << flags.Help();
    return 0;
  }
  if (!o.trace_dir.empty()) o.profile = true;
  absl::Status status = positionals.status();
  if (status.ok() && !positionals->empty()) {
    status = absl::InvalidArgumentError(absl::StrCat("unexpected argument '", positionals->front(), "'"));
  }
  if (status.ok() && (o.steps < 1 || o.repetitions < 1 || o.batch < 1 || o.warmup < 0)) {
    status = absl::InvalidArgumentError("--steps, --repetitions and --batch must be >= 1, --warmup >= 0");
  }
  if (status.ok()) {
    absl::StatusOr<std::vector<int>> parsed = ParseThreadList(threads);
    status = parsed.status();
    if (parsed.ok()) o.threads = *parsed;
  }
  o.models = absl::StrSplit(models, ',', absl::SkipEmpty());
  for (const std::string& model : o.models) {
    if (status.ok() && model != "mlp" && model != "lenet") status = BuildModel(model).status();
  }
  o.modes = absl::StrSplit(modes, ',', absl::SkipEmpty());
  for (const std::string& mode : o.modes) {
    if (status.ok() && mode != "interpret" && mode != "compiled") {
      status = absl::InvalidArgumentError(absl::StrCat("--modes: unknown mode '", mode, "' (interpret or compiled)"));
    }
  }
  if (status.ok() && o.modes.empty()) status = absl::InvalidArgumentError("--modes: no mode given");
  if (!status.ok()) {
    std::cerr << "train_step_bench: " << status.message() << "\nusage: " << kUsage << "\n";
    return 2;
  }
  status = RunBench(o);
  if (!status.ok()) {
    std::cerr << "train_step_bench: " << status.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) { return tsr::Main(argc, argv); }
