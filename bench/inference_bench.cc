// Whole-model inference latency of the five real models — MLP and LeNet at batch 64,
// ResNet-18, MobileNetV2 and a GPT-2 block (seq 128) at batch 1 — on Tessera's cpu
// device, interpreted and compiled, side by side with ONNX Runtime (all graph
// optimizations on; the bar), PyTorch, JAX/XLA and IREE on the same models, weights,
// input and thread counts, measured in the same run.
//
//   inference_bench --models mlp,lenet,resnet18,mobilenet_v2,gpt_block --threads 1,2
//       --warmup 5 --repetitions 20 --rounds 3 [--tessera-mode interpret,compiled]
//       [--peers ort,pytorch,jax,iree] [--json out.json]
//
// bench/peer_inference.py exports each model with PyTorch (scripts/onnx_zoo_models.py's
// definitions and seeds) to ONNX at the bench batch in a temporary folder; Tessera
// imports it (graph/onnx) and runs it in every mode of --tessera-mode, one column each:
//   interpret  the runtime Session's executor with --threads workers;
//   compiled   the compile driver (compiler/pipeline: CompileGraph at the bench batch with
//              the case's thread count) and the compiled runtime (CompiledProgram::Load
//              with that thread count). Compilation happens once per model and thread
//              count, before the rounds; its time (CompileStats::total_seconds) and the
//              load time are reported, not counted in the latency.
//   compiled-nchw  the same without the channel-blocked layout (CompileOptions::
//              blocked_layout off: every convolution reads and writes NCHW), for A/B runs.
// The default is interpret and compiled; a build without MLIR/LLVM 19 has no compile driver, and there the
// default is interpret alone. A mode that fails to compile or run a model shows "-" and
// the reason, like a peer.
//
// Every peer runs in its own Python process per model and thread count (thread pools are
// sized when the libraries load); see bench/peer_inference.py for each peer's settings
// and how honest its thread limit is. A peer that is not installed, or cannot run a
// model, shows "-" and the reason. Peers get OMP_WAIT_POLICY=PASSIVE (unless already
// set): on a shared machine spinning OpenMP workers distort the figures.
//
// Correctness first: each Tessera mode's output must match ONNX Runtime's (PyTorch's when
// ORT is not run) to max|diff| / max|ref| <= 1e-4, and each peer's must match PyTorch's;
// a wrong answer gets no time. Reported per model and thread count: the median latency
// (wall and process CPU) over --repetitions runs after --warmup, the median of those
// over --rounds (the rounds interleave all cases, peers and modes, so a slow minute of a
// loaded machine touches every system alike), the ratio of each mode to ORT, achieved
// GFLOP/s (the graph's FLOP estimate, graph/builder/model_summary.h, over the wall time)
// and each mode's peak memory. The two modes count memory differently, both as their
// runtimes define it: interpret, the device allocator's peak during a run above what it
// held before (RunMetadata::peak_bytes: the weights, held by the session, are not
// counted); compiled, CompiledProgram::peak_bytes(): the buffer plan's arena, the
// constants (the weights) and the outputs; the constants are shown beside it.
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "bench/bench_util.h"
#include "graph/builder/model_summary.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/status_macros.h"
#include "runtime/npy.h"
#include "runtime/run_metadata.h"
#include "runtime/session.h"
#include "tools/flag_parser.h"

#ifdef TESSERA_HAS_COMPILER
#include "compiler/pipeline/compile_graph.h"
#include "runtime/compiled/compiled_program.h"
#endif

#ifndef TESSERA_PEER_INFERENCE_SCRIPT
#define TESSERA_PEER_INFERENCE_SCRIPT "bench/peer_inference.py"
#endif
#ifndef TESSERA_BENCH_PYTHON
#define TESSERA_BENCH_PYTHON "build/bench-venv/bin/python3"
#endif

namespace tsr {
namespace {

constexpr double kTolerance = 1e-4;
const char* const kAllModels[] = {"mlp", "lenet", "resnet18", "mobilenet_v2", "gpt_block"};
const char* const kAllPeers[] = {"ort", "pytorch", "jax", "iree"};
#ifdef TESSERA_HAS_COMPILER
// compiled-nchw: compiled without the channel-blocked layout (CompileOptions::blocked_layout), for A/B runs.
const char* const kAllModes[] = {"interpret", "compiled", "compiled-nchw"};
constexpr char kDefaultModes[] = "interpret,compiled";
#else
const char* const kAllModes[] = {"interpret"};
constexpr char kDefaultModes[] = "interpret";
#endif

struct BenchOptions {
  std::vector<std::string> models;
  std::vector<int> threads;
  std::vector<std::string> peers;
  int64_t warmup = 5;
  int64_t repetitions = 20;
  int64_t rounds = 1;
  std::vector<std::string> tessera_modes;  // the Tessera columns, in this order
  std::string python;                      // runs the peers
  std::string export_python;               // runs the export (Debian's torch with Debian's onnx)
  std::string script = TESSERA_PEER_INFERENCE_SCRIPT;
  std::string json;
  bool keep = false;
};

// The batch sizes: the small models at a training-size batch, the rest at 1.
int64_t BatchOf(const std::string& model) { return model == "mlp" || model == "lenet" ? 64 : 1; }

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

// The first `n` CPUs this process may run on, as taskset's list ("0,1").
std::string FirstCpus(int n) {
  cpu_set_t set;
  std::vector<std::string> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "0";
  for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<int>(cpus.size()) < n; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(absl::StrCat(cpu));
  }
  return absl::StrJoin(cpus, ",");
}

// max |got - ref| / max |ref| over the whole output (the zoo test's measure: the error
// relative to the output's scale); infinity for a shape mismatch or a NaN.
double RelativeError(const Tensor& got, const Tensor& ref) {
  if (got.num_elements() != ref.num_elements()) return INFINITY;
  double max_diff = 0, max_ref = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double diff = std::abs(got.GetAsDouble(i) - ref.GetAsDouble(i));
    if (std::isnan(diff)) return INFINITY;
    max_diff = std::max(max_diff, diff);
    max_ref = std::max(max_ref, std::abs(ref.GetAsDouble(i)));
  }
  return max_ref > 0 ? max_diff / max_ref : (max_diff > 0 ? INFINITY : 0);
}

// One system's figures for one model and thread count.
struct SystemResult {
  std::vector<bench::TimeSample> ms;  // per round: the median over the repetitions
  std::string unavailable;            // why there is no time, when there is none
  std::string version;
  std::optional<bench::TimeSample> Median() const {
    if (ms.empty()) return std::nullopt;
    std::vector<double> wall, cpu;
    for (const bench::TimeSample& s : ms) wall.push_back(s.wall), cpu.push_back(s.cpu);
    return bench::TimeSample{bench::Median(wall), bench::Median(cpu)};
  }
};

using Feeds = std::vector<std::pair<std::string, Tensor>>;

// One Tessera mode on one case: how to run the model, and the mode's figures.
struct TesseraMode {
  std::string mode;  // "interpret", "compiled" or "compiled-nchw"
  // One inference; the closure owns the session or program, so that both modes run
  // through the same timing code.
  std::function<absl::StatusOr<Tensor>(const Feeds&, RunMetadata*)> run;
  SystemResult result;  // result.version is the mode
  bool checked = false;
  double error = 0;  // max|diff|/max|ref| against the case's reference
  int64_t peak_bytes = 0;
  // The compiled mode only: the compile driver's and the loader's figures.
  std::optional<double> compile_seconds;  // CompileStats::total_seconds
  double load_seconds = 0;                // CompiledProgram::Load
  int64_t constant_bytes = 0;             // within peak_bytes
  int64_t arena_bytes = 0;                // within peak_bytes
  std::string fusion_summary;
};

struct Case {
  std::string model;
  int threads = 1;
  std::string dir;  // the exported model, input and reference outputs
  int64_t flops = 0;
  std::string reference;  // what Tessera's output was checked against
  std::string input_name, output_name;
  Tensor input;
  std::vector<TesseraMode> tessera;  // in the order of --tessera-mode
  std::map<std::string, SystemResult> peers;
};

absl::Status Export(const BenchOptions& o, const std::string& model, const std::string& dir) {
  const std::string command = absl::StrFormat("%s %s export --model %s --batch %d --out %s", o.export_python, o.script,
                                              model, BatchOf(model), dir);
  int status = 0;
  TSR_ASSIGN_OR_RETURN(std::string output, RunCommand(command, &status));
  if (status != 0 || !absl::StrContains(output, "EXPORTED ")) {
    return absl::InternalError(absl::StrCat("`", command, "` failed (exit status ", status, "): ", LastLine(output)));
  }
  return absl::OkStatus();
}

// Runs one peer on one case; records a time or the reason there is none.
void RunPeer(const BenchOptions& o, const std::string& peer, Case& c) {
  SystemResult& r = c.peers[peer];
  if (!r.unavailable.empty()) return;  // a peer that could not run once is not retried
  std::string env =
      absl::StrFormat("OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d MKL_NUM_THREADS=%d", c.threads, c.threads, c.threads);
  if (getenv("OMP_WAIT_POLICY") == nullptr) absl::StrAppend(&env, " OMP_WAIT_POLICY=PASSIVE");
  std::string prefix;
  if (peer == "jax") {
    // XLA's CPU backend has no thread-count option: one thread by turning off its
    // multi-threaded Eigen; any count by the CPUs the process may use (taskset).
    if (c.threads == 1) {
      absl::StrAppend(&env, " XLA_FLAGS='--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1'");
    }
    if (system("command -v taskset >/dev/null 2>&1") == 0) prefix = absl::StrCat("taskset -c ", FirstCpus(c.threads));
  }
  const std::string command =
      absl::StrFormat("%s %s %s %s run --peer %s --model %s --dir %s --threads %d --warmup %d --repetitions %d", env,
                      prefix, o.python, o.script, peer, c.model, c.dir, c.threads, o.warmup, o.repetitions);
  int status = 0;
  absl::StatusOr<std::string> output = RunCommand(command, &status);
  if (!output.ok()) {
    r.unavailable = std::string(output.status().message());
    return;
  }
  for (absl::string_view line : absl::StrSplit(*output, '\n')) {
    if (absl::ConsumePrefix(&line, "UNAVAILABLE ")) {
      std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits(" reason=", 1));
      r.unavailable = std::string(kv.second);
      return;
    }
    if (!absl::ConsumePrefix(&line, "RESULT ")) continue;
    std::map<std::string, std::string> fields;
    for (absl::string_view field : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(field, absl::MaxSplits('=', 1));
      fields[kv.first] = kv.second;
    }
    bench::TimeSample s;
    if (!absl::SimpleAtod(fields["median_ms"], &s.wall) || !absl::SimpleAtod(fields["median_cpu_ms"], &s.cpu)) {
      r.unavailable = absl::StrCat("malformed RESULT line: ", line);
      return;
    }
    r.ms.push_back(s);
    r.version = fields["version"];
    return;
  }
  r.unavailable = absl::StrCat("no RESULT line (exit status ", status, "): ", LastLine(*output));
}

// The interpreted mode: a Session over (a copy of) the imported graph.
absl::Status PrepareInterpreted(const Case& c, const Graph& graph, TesseraMode& m) {
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Session> created, Session::Create(graph.Clone(), {.num_threads = c.threads}));
  std::shared_ptr<Session> session = std::move(created);
  m.run = [session, output = c.output_name](const Feeds& feeds, RunMetadata* metadata) -> absl::StatusOr<Tensor> {
    TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, session->Run(feeds, {output}, metadata));
    return std::move(out[0]);
  };
  return absl::OkStatus();
}

#ifdef TESSERA_HAS_COMPILER
// The compiled mode: the graph compiled at the bench batch for the case's thread count,
// then loaded with that count. Errors name the stage that failed (the caller adds the case).
absl::Status PrepareCompiled(const Case& c, const Graph& graph, bool blocked_layout, TesseraMode& m) {
  CompileOptions options;
  options.blocked_layout = blocked_layout;
  options.batch = BatchOf(c.model);
  options.threads = c.threads;
  CompileStats stats;
  absl::StatusOr<Executable> executable = CompileGraph(graph, options, &stats);
  if (!executable.ok()) {
    return absl::Status(executable.status().code(),
                        absl::StrCat("CompileGraph (batch ", options.batch, ", threads ", c.threads,
                                     ") failed: ", executable.status().message()));
  }
  m.compile_seconds = stats.total_seconds;
  m.fusion_summary = stats.fusion_summary;
  const double load_start = bench::WallSeconds();
  absl::StatusOr<std::unique_ptr<CompiledProgram>> loaded =
      CompiledProgram::Load(*std::move(executable), {.threads = c.threads});
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(), absl::StrCat("CompiledProgram::Load (threads ", c.threads,
                                                             ") failed: ", loaded.status().message()));
  }
  m.load_seconds = bench::WallSeconds() - load_start;
  std::shared_ptr<CompiledProgram> program = std::move(*loaded);
  // The program returns its outputs in signature order; the bench reads the one it checks.
  int output_index = -1;
  for (size_t i = 0; i < program->outputs().size(); ++i) {
    if (program->outputs()[i].name == c.output_name) output_index = static_cast<int>(i);
  }
  if (output_index < 0) {
    return absl::NotFoundError(absl::StrCat("the compiled program has no output named '", c.output_name, "'"));
  }
  m.peak_bytes = program->peak_bytes();
  m.constant_bytes = program->constant_bytes();
  m.arena_bytes = program->arena_bytes();
  m.run = [program, output_index](const Feeds& feeds, RunMetadata* metadata) -> absl::StatusOr<Tensor> {
    TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, program->Run(feeds, metadata));
    return std::move(out[output_index]);
  };
  return absl::OkStatus();
}
#endif  // TESSERA_HAS_COMPILER

// Imports the model and prepares every Tessera mode; the FLOP estimate and the input. A
// mode that cannot be prepared is recorded with the reason, so the others still run.
absl::Status PrepareTessera(const BenchOptions& o, Case& c) {
  TSR_ASSIGN_OR_RETURN(ImportedModel model, ImportOnnxModel(c.dir + "/model.onnx"));
  if (model.input_names.size() != 1 || model.output_names.size() != 1) {
    return absl::InternalError(absl::StrCat(c.model, ": expected one input and one output"));
  }
  c.input_name = model.input_names[0];
  c.output_name = model.output_names[0];
  TSR_ASSIGN_OR_RETURN(ModelSummary summary, SummarizeModel(model.graph));
  // EstimateFlops counts a symbolic batch dim as 1; the export's shapes are static.
  c.flops = summary.flops;
  if (!summary.inputs.empty() && !summary.inputs[0].type.shape.is_static()) c.flops *= BatchOf(c.model);
  TSR_ASSIGN_OR_RETURN(c.input, ReadNpy(c.dir + "/input.npy"));
  for (const std::string& mode : o.tessera_modes) {
    TesseraMode& m = c.tessera.emplace_back();
    m.mode = mode;
    m.result.version = mode;
    absl::Status status = absl::InvalidArgumentError(absl::StrCat("unknown Tessera mode '", mode, "'"));
    if (mode == "interpret") status = PrepareInterpreted(c, model.graph, m);
#ifdef TESSERA_HAS_COMPILER
    if (mode == "compiled" || mode == "compiled-nchw") status = PrepareCompiled(c, model.graph, mode == "compiled", m);
#endif
    if (!status.ok()) {
      m.run = nullptr;
      m.result.unavailable = std::string(status.message());
      std::cout << absl::StrFormat("%s threads %d: tessera-%s unavailable: %s", c.model, c.threads, mode,
                                   status.message())
                << std::endl;
    } else if (m.compile_seconds.has_value()) {
      std::cout << absl::StrFormat("compiled %s for %d thread(s) in %.2f s (load %.1f ms): %s", c.model, c.threads,
                                   *m.compile_seconds, m.load_seconds * 1e3, m.fusion_summary)
                << std::endl;
    }
  }
  return absl::OkStatus();
}

// Checks one mode's output (once), then times it; a wrong answer is recorded, not timed.
absl::Status RunTesseraMode(const BenchOptions& o, Case& c, TesseraMode& m) {
  if (!m.result.unavailable.empty()) return absl::OkStatus();
  const Feeds feeds = {{c.input_name, c.input}};
  if (!m.checked) {
    m.checked = true;
    RunMetadata metadata;
    absl::StatusOr<Tensor> out = m.run(feeds, &metadata);
    if (!out.ok()) {
      m.result.unavailable = absl::StrCat("run failed: ", out.status().message());
      return absl::OkStatus();
    }
    const bool have_ort = std::filesystem::exists(c.dir + "/ort_output.npy");
    c.reference = have_ort ? "onnxruntime" : "pytorch";
    TSR_ASSIGN_OR_RETURN(Tensor ref, ReadNpy(c.dir + (have_ort ? "/ort_output.npy" : "/expected.npy")));
    m.error = RelativeError(*out, ref);
    if (!(m.error <= kTolerance)) {
      m.result.unavailable =
          absl::StrFormat("wrong answer: max|diff|/max|%s| = %.3g > %g", c.reference, m.error, kTolerance);
      return absl::OkStatus();
    }
    // The interpreter measures its peak per run; the compiled program's is fixed at load.
    if (m.mode == "interpret") m.peak_bytes = metadata.peak_bytes;
  }
  absl::Status status;
  const std::vector<bench::TimeSample> runs =
      bench::TimeRepeatedly(static_cast<int>(o.warmup), static_cast<int>(o.repetitions), [&] {
        absl::StatusOr<Tensor> out = m.run(feeds, nullptr);
        if (!out.ok()) status.Update(out.status());
      });
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat(c.model, " threads ", c.threads, ", tessera ", m.mode,
                                                    ": a timed run failed: ", status.message()));
  }
  m.result.ms.push_back(bench::MedianOf(runs).Scaled(1e3));
  return absl::OkStatus();
}

std::string Ms(const std::optional<bench::TimeSample>& t, bool cpu) {
  if (!t.has_value()) return "-";
  return absl::StrFormat("%.3f", cpu ? t->cpu : t->wall);
}

// "wall/cpu": FLOPs per second of wall time, and per second of process CPU time (what
// the threads achieved while they ran: robust against other processes taking cores).
std::string Gflops(const Case& c, const std::optional<bench::TimeSample>& t) {
  if (!t.has_value() || t->wall <= 0 || t->cpu <= 0) return "-";
  const double flops = static_cast<double>(c.flops);
  return absl::StrFormat("%.1f/%.1f", flops / (t->wall * 1e6), flops / (t->cpu * 1e6));
}

std::string Ratio(const std::optional<bench::TimeSample>& ours, const std::optional<bench::TimeSample>& peer,
                  bool cpu) {
  if (!ours.has_value() || !peer.has_value()) return "-";
  return absl::StrFormat("%.2f", cpu ? ours->cpu / peer->cpu : ours->wall / peer->wall);
}

// A left-aligned text table.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) absl::StrAppend(&line, absl::StrFormat("%-*s  ", width[i], row[i]));
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(line), "\n");
  }
  return out;
}

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(ch) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", ch);
    } else {
      out.push_back(ch);
    }
  }
  return out + "\"";
}

// `extra`: more fields for the object, each with its leading ", ".
std::string JsonSystem(const Case& c, const SystemResult& r, const std::string& extra = "") {
  const std::optional<bench::TimeSample> t = r.Median();
  if (!t.has_value()) return absl::StrCat("{\"unavailable\": ", JsonString(r.unavailable), extra, "}");
  return absl::StrFormat(
      "{\"version\": %s, \"wall_ms\": %.4f, \"cpu_ms\": %.4f, \"gflops_wall\": %.3f, \"gflops_cpu\": %.3f%s}",
      JsonString(r.version), t->wall, t->cpu, static_cast<double>(c.flops) / (t->wall * 1e6),
      static_cast<double>(c.flops) / (t->cpu * 1e6), extra);
}

std::string JsonMode(const Case& c, const TesseraMode& m) {
  std::string extra;
  if (m.checked) absl::StrAppendFormat(&extra, ", \"rel_error\": %.3g", m.error);
  if (m.result.Median().has_value()) absl::StrAppend(&extra, ", \"peak_bytes\": ", m.peak_bytes);
  if (m.compile_seconds.has_value()) {
    absl::StrAppendFormat(&extra,
                          ", \"compile_seconds\": %.4f, \"load_seconds\": %.4f, \"arena_bytes\": %d, "
                          "\"constant_bytes\": %d, \"fusion_summary\": %s",
                          *m.compile_seconds, m.load_seconds, m.arena_bytes, m.constant_bytes,
                          JsonString(m.fusion_summary));
  }
  return JsonSystem(c, m.result, extra);
}

// One object per model and thread count: "tessera" maps each mode to its figures (plus
// rel_error, peak_bytes and, compiled, the compile and load figures); each peer has its own.
absl::Status WriteJson(const BenchOptions& o, const std::vector<Case>& cases) {
  std::vector<std::string> entries;
  for (const Case& c : cases) {
    std::vector<std::string> modes;
    for (const TesseraMode& m : c.tessera) {
      modes.push_back(absl::StrCat("\n     ", JsonString(m.mode), ": ", JsonMode(c, m)));
    }
    std::string e = absl::StrFormat(
        "  {\"model\": %s, \"batch\": %d, \"threads\": %d, \"flops\": %d, \"reference\": %s,\n   \"tessera\": {%s}",
        JsonString(c.model), BatchOf(c.model), c.threads, c.flops, JsonString(c.reference), absl::StrJoin(modes, ","));
    for (const auto& [peer, r] : c.peers) absl::StrAppend(&e, ",\n   ", JsonString(peer), ": ", JsonSystem(c, r));
    entries.push_back(e + "}");
  }
  std::ofstream out(o.json);
  out << "[\n" << absl::StrJoin(entries, ",\n") << "\n]\n";
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", o.json));
  return absl::OkStatus();
}

void PrintReport(const BenchOptions& o, const std::vector<Case>& cases) {
  std::cout << absl::StrFormat(
      "\nInference latency, ms: median over %d round(s) of the median of %d runs after %d warm-up runs. Tessera "
      "modes: %s. Ratio = tessera mode / ort (the bar; lower is better).\n",
      o.rounds, o.repetitions, o.warmup, absl::StrJoin(o.tessera_modes, ", "));
  const bool have_ort = absl::c_linear_search(o.peers, "ort");
  for (const bool cpu : {false, true}) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header = {"model", "batch", "threads"};
    for (const std::string& mode : o.tessera_modes) header.push_back(absl::StrCat("tessera-", mode));
    for (const std::string& p : o.peers) header.push_back(p);
    for (const std::string& mode : o.tessera_modes) header.push_back(absl::StrCat(mode, "/ort"));
    rows.push_back(header);
    for (const Case& c : cases) {
      std::vector<std::string> row = {c.model, absl::StrCat(BatchOf(c.model)), absl::StrCat(c.threads)};
      for (const TesseraMode& m : c.tessera) row.push_back(Ms(m.result.Median(), cpu));
      for (const std::string& p : o.peers) row.push_back(Ms(c.peers.at(p).Median(), cpu));
      for (const TesseraMode& m : c.tessera) {
        row.push_back(have_ort ? Ratio(m.result.Median(), c.peers.at("ort").Median(), cpu) : "-");
      }
      rows.push_back(row);
    }
    std::cout << (cpu ? "\nProcess CPU time (all threads), ms:\n" : "\nWall time, ms:\n") << FormatTable(rows);
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"model", "threads", "GFLOP"};
  for (const std::string& mode : o.tessera_modes) header.push_back(absl::StrCat("tessera-", mode));
  for (const std::string& p : o.peers) header.push_back(p);
  for (const std::string& mode : o.tessera_modes) header.push_back(absl::StrCat("peak ", mode));
  rows.push_back(header);
  for (const Case& c : cases) {
    std::vector<std::string> row = {c.model, absl::StrCat(c.threads), absl::StrFormat("%.3f", c.flops / 1e9)};
    for (const TesseraMode& m : c.tessera) row.push_back(Gflops(c, m.result.Median()));
    for (const std::string& p : o.peers) row.push_back(Gflops(c, c.peers.at(p).Median()));
    for (const TesseraMode& m : c.tessera) {
      std::string peak = m.result.ms.empty() ? "-" : FormatBytes(m.peak_bytes);
      if (!m.result.ms.empty() && m.mode != "interpret") {
        absl::StrAppend(&peak, " (", FormatBytes(m.constant_bytes), " constants)");
      }
      row.push_back(peak);
    }
    rows.push_back(row);
  }
  std::cout << "\nAchieved GFLOP/s, wall/cpu (the graph's FLOP estimate / median wall time, / median process CPU "
               "time) and Tessera's peak memory per mode (interpret: device allocator during a run, above the "
               "weights; compiled: arena + constants + outputs):\n"
            << FormatTable(rows);
  if (absl::c_linear_search(o.tessera_modes, "compiled") || absl::c_linear_search(o.tessera_modes, "compiled-nchw")) {
    std::vector<std::vector<std::string>> compile_rows = {
        {"model", "threads", "compile s", "load ms", "arena", "constants", "fusion"}};
    for (const Case& c : cases) {
      for (const TesseraMode& m : c.tessera) {
        if (!m.compile_seconds.has_value()) continue;
        compile_rows.push_back({c.model, absl::StrCat(c.threads), absl::StrFormat("%.2f", *m.compile_seconds),
                                absl::StrFormat("%.1f", m.load_seconds * 1e3), FormatBytes(m.arena_bytes),
                                FormatBytes(m.constant_bytes), m.fusion_summary});
      }
    }
    std::cout << "\nCompiled mode: compile time (CompileStats::total_seconds, once per model and thread count), "
                 "load time (CompiledProgram::Load) and buffer plan:\n"
              << FormatTable(compile_rows);
  }
  std::cout << "\nVersions and checks:\n";
  std::map<std::string, std::string> versions;
  for (const Case& c : cases) {
    for (const TesseraMode& m : c.tessera) {
      std::cout << absl::StrFormat("  %-12s threads %d: tessera %s %s\n", c.model, c.threads, m.mode,
                                   m.result.unavailable.empty()
                                       ? absl::StrFormat("max|diff|/max|%s| = %.3g", c.reference, m.error)
                                       : absl::StrCat("- (", m.result.unavailable, ")"));
    }
    for (const auto& [peer, r] : c.peers) {
      if (!r.unavailable.empty()) {
        std::cout << absl::StrFormat("  %-12s threads %d: %s - (%s)\n", c.model, c.threads, peer, r.unavailable);
      } else if (!r.version.empty()) {
        versions[peer] = r.version;
      }
    }
  }
  for (const auto& [peer, version] : versions) std::cout << "  " << peer << " " << version << "\n";
}

absl::Status RunBench(const BenchOptions& o) {
  char pattern[] = "/tmp/inference_bench_XXXXXX";
  if (mkdtemp(pattern) == nullptr) return absl::InternalError("cannot create a temporary folder");
  const std::string root = pattern;
  std::vector<Case> cases;
  for (const std::string& model : o.models) {
    const std::string dir = absl::StrCat(root, "/", model);
    std::cout << "exporting " << model << " (batch " << BatchOf(model) << ") to " << dir << std::endl;
    TSR_RETURN_IF_ERROR(Export(o, model, dir));
    for (int threads : o.threads) {
      Case& c = cases.emplace_back();
      c.model = model;
      c.threads = threads;
      c.dir = dir;
      TSR_RETURN_IF_ERROR(PrepareTessera(o, c));
      for (const std::string& p : o.peers) c.peers[p];
    }
  }
  // Rounds on the outside, so that a slow minute of the shared machine touches every
  // case and every system alike. The peers run first: ORT's output is Tessera's check.
  for (int64_t round = 0; round < o.rounds; ++round) {
    for (Case& c : cases) {
      for (const std::string& p : o.peers) RunPeer(o, p, c);
      for (TesseraMode& m : c.tessera) TSR_RETURN_IF_ERROR(RunTesseraMode(o, c, m));
      // "name ms (cpu ms)" of this round, or "-" for a system without a time.
      const auto figure = [&](const std::string& name, const SystemResult& r) {
        return absl::StrCat(name, " ",
                            r.ms.size() == static_cast<size_t>(round + 1)
                                ? absl::StrFormat("%.3f ms (cpu %.3f)", r.ms.back().wall, r.ms.back().cpu)
                                : "-");
      };
      std::vector<std::string> figures;
      for (const TesseraMode& m : c.tessera) figures.push_back(figure(absl::StrCat("tessera-", m.mode), m.result));
      for (const std::string& p : o.peers) figures.push_back(figure(p, c.peers.at(p)));
      std::cout << absl::StrFormat("round %d/%d %-12s threads %d: %s", round + 1, o.rounds, c.model, c.threads,
                                   absl::StrJoin(figures, ", "))
                << std::endl;
    }
  }
  PrintReport(o, cases);
  if (!o.json.empty()) TSR_RETURN_IF_ERROR(WriteJson(o, cases));
  if (o.keep) {
    std::cout << "kept the exported models in " << root << "\n";
  } else {
    std::filesystem::remove_all(root);
  }
  return absl::OkStatus();
}

constexpr char kUsage[] =
    "inference_bench [--models LIST] [--threads 1,2] [--peers ort,pytorch,jax,iree] [--warmup N]\n"
    "                [--repetitions N] [--rounds N] [--tessera-mode interpret,compiled] [--json FILE] [--keep]\n"
    "                [--python PATH] [--export-python PATH] [--script PATH]";

absl::StatusOr<std::vector<std::string>> ParseList(const std::string& flag, const std::string& text,
                                                   absl::Span<const char* const> known) {
  std::vector<std::string> items = absl::StrSplit(text, ',', absl::SkipEmpty());
  if (items.empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": empty list"));
  for (const std::string& item : items) {
    bool found = false;
    for (const char* k : known) found = found || item == k;
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": unknown '", item, "' (known: ", absl::StrJoin(known, ","), ")"));
    }
  }
  return items;
}

absl::Status ParseThreads(const std::string& text, std::vector<int>* threads) {
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int t = 0;
    if (!absl::SimpleAtoi(part, &t) || t < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--threads: '", part, "' is not a thread count >= 1"));
    }
    threads->push_back(t);
  }
  if (threads->empty()) return absl::InvalidArgumentError("--threads: no thread count given");
  return absl::OkStatus();
}

absl::Status Validate(BenchOptions& o, const std::string& models, const std::string& threads, const std::string& peers,
                      const std::string& modes, const std::vector<std::string>& positionals) {
  if (!positionals.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", positionals.front(), "'"));
  }
  if (o.repetitions < 1 || o.rounds < 1 || o.warmup < 0) {
    return absl::InvalidArgumentError("--repetitions and --rounds must be >= 1, --warmup >= 0");
  }
#ifndef TESSERA_HAS_COMPILER
  for (absl::string_view mode : absl::StrSplit(modes, ',')) {
    if (mode == "compiled" || mode == "compiled-nchw") {
      return absl::InvalidArgumentError(
          "--tessera-mode compiled: this inference_bench was built without the compile driver and the compiled "
          "runtime (MLIR/LLVM 19 was not found when CMake ran); only 'interpret' is available");
    }
  }
#endif
  TSR_ASSIGN_OR_RETURN(o.tessera_modes, ParseList("tessera-mode", modes, kAllModes));
  for (size_t i = 0; i < o.tessera_modes.size(); ++i) {
    if (absl::c_count(o.tessera_modes, o.tessera_modes[i]) > 1) {
      return absl::InvalidArgumentError(absl::StrCat("--tessera-mode: '", o.tessera_modes[i], "' is listed twice"));
    }
  }
  TSR_ASSIGN_OR_RETURN(o.models, ParseList("models", models, kAllModels));
  if (peers != "none") {
    TSR_ASSIGN_OR_RETURN(o.peers, ParseList("peers", peers, kAllPeers));
  }
  if (o.python.empty()) o.python = access(TESSERA_BENCH_PYTHON, X_OK) == 0 ? TESSERA_BENCH_PYTHON : "/usr/bin/python3";
  return ParseThreads(threads, &o.threads);
}

int Main(int argc, char** argv) {
  BenchOptions o;
  o.export_python = "/usr/bin/python3";
  std::string models = "mlp,lenet,resnet18,mobilenet_v2,gpt_block", threads = "1,2", peers = "ort,pytorch,jax,iree";
  std::string modes = kDefaultModes;
  cli::FlagParser flags;
  flags.AddString("models", '\0', "LIST", &models, "comma-separated: mlp,lenet,resnet18,mobilenet_v2,gpt_block (all)");
  flags.AddString("threads", '\0', "LIST", &threads, "comma-separated thread counts (default 1,2)");
  flags.AddString("peers", '\0', "LIST", &peers, "comma-separated: ort,pytorch,jax,iree (default all), or none");
  flags.AddInt("warmup", '\0', "N", &o.warmup,
               "untimed runs before the timed ones, each system, and at least 0.2 s of them (default 5)");
  flags.AddInt("repetitions", '\0', "N", &o.repetitions, "timed runs per round, each system (default 20)");
  flags.AddInt("rounds", '\0', "N", &o.rounds, "measurements of every case, interleaved; medians (default 1)");
  flags.AddString(
      "tessera-mode", '\0', "LIST", &modes,
      absl::StrCat(
          "comma-separated, one Tessera column each: interpret (the runtime Session), compiled "
          "(CompileGraph at the bench batch and thread count, run by CompiledProgram; its compile "
          "time is reported once per model and thread count), compiled-nchw (the same without the channel-blocked "
          "layout) (default ",
          kDefaultModes, ")"));
  flags.AddString("json", '\0', "FILE", &o.json, "also write the figures as JSON");
  flags.AddBool("keep", '\0', &o.keep, "keep the exported models (the folder is printed)");
  flags.AddString("python", '\0', "PATH", &o.python,
                  "the Python that runs the peers (default " TESSERA_BENCH_PYTHON
                  " when present, else /usr/bin/python3)");
  flags.AddString("export-python", '\0', "PATH", &o.export_python,
                  "the Python with Debian's torch that exports the models (default /usr/bin/python3)");
  flags.AddString("script", '\0', "PATH", &o.script, "bench/peer_inference.py");
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (flags.help_requested()) {
    std::cout << kUsage
              << "\n\nTimes whole-model inference of the five real models on Tessera against ONNX Runtime, PyTorch,\n"
                 "JAX/XLA and IREE (scripts/install_bench_deps.sh installs them into build/bench-venv).\n\n"
              << flags.Help();
    return 0;
  }
  absl::Status status = positionals.status();
  if (status.ok()) status = Validate(o, models, threads, peers, modes, *positionals);
  if (!status.ok()) {
    std::cerr << "inference_bench: " << status.message() << "\nusage: " << kUsage << "\n";
    return 2;
  }
  status = RunBench(o);
  if (!status.ok()) {
    std::cerr << "inference_bench: " << status.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) { return tsr::Main(argc, argv); }
