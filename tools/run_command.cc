// `tessera run MODEL --input NAME=FILE.npy ...`: runs a GraphDef or an ONNX model on the CPU runtime
// (runtime/session.h), or a compiled .tsrx executable with runtime/compiled, with inputs read
// from .npy files; prints the outputs, optionally writes them as .npy files and profiles the
// run (Chrome trace + top-N op table).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/proto/graph_def_io.h"
#include "runtime/npy.h"
#include "runtime/profiler.h"
#include "runtime/session.h"
#include "tools/command.h"
#ifdef TESSERA_HAS_COMPILER
#include "compiler/pipeline/compile_graph.h"
#include "graph/status_macros.h"
#include "tools/variable_values.h"
#endif
#ifdef TESSERA_HAS_COMPILED_RUNTIME
#include "compiler/executable/executable_file.h"
#include "runtime/compiled/compiled_program.h"
#include "runtime/native/target_description.h"
#endif

namespace tsr::cli {

namespace {

constexpr absl::string_view kUsage =
    "tessera run MODEL --input NAME=FILE.npy [--input ...] [--output-dir DIR] [--profile TRACE.json]\n"
    "                   [--threads N] [--device cpu|reference] [--interpret] [--top N] [--seed N]\n"
    "                   [--warmup N] [--runs N]";
constexpr absl::string_view kDescription =
    "Loads MODEL (a GraphDef: .pb or .tsrg binary, .pbtxt text; or an ONNX model, .onnx,\n"
    "opsets 11-18, symbolic dims as the batch dimension), feeds every signature\n"
    "input from a NumPy .npy file (--input once per input; the dtype must match and the\n"
    "shape must fit, any size for the batch dimension N), compiles it for that batch size\n"
    "(the pipeline of 'tessera compile': fusion, generated code, one planned arena) and\n"
    "runs it on the CPU, fetching every signature output. --interpret runs it op by op\n"
    "with the interpreter instead (the oracle; so does --device reference); a graph the\n"
    "compiler cannot handle yet runs with the interpreter after a note on stderr. A\n"
    "compiled model (a .tsrx executable written by 'tessera compile', recognized by its\n"
    "extension or its magic) runs without the compiler; its inputs must have exactly the\n"
    "shapes it was compiled for. Prints each\n"
    "output's type and first values; with --output-dir writes each as DIR/<name>.npy\n"
    "(characters other than letters, digits, '.', '_' and '-' in the name become '_'; bf16\n"
    "outputs are written as f32, which numpy can read). With --profile, times every op,\n"
    "writes a Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing) and\n"
    "prints the ops that took longest; --warmup N runs the model N times first, untimed,\n"
    "so that the profile shows the steady state (the first run also pays for page faults,\n"
    "first-touch allocations and cold caches). --runs N profiles N consecutive runs\n"
    "instead of one (a single run's op times vary by tens of percent on a busy machine):\n"
    "the trace shows them one after the other on the clock they ran, and the table's calls\n"
    "and times add up over the N runs, with a line for the mean time of one run. The\n"
    "outputs printed are the last run's. Variables are initialized from --seed.";

// Takes every --input/-i out of `args` (FlagParser keeps only the last value of a
// flag given twice); the rest is left for FlagParser. Stops at "--".
absl::StatusOr<std::vector<std::string>> ExtractInputs(std::vector<std::string>& args) {
  std::vector<std::string> inputs, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (a == "--input" || a == "-i") {
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat("flag ", a, " needs a value"));
      inputs.push_back(args[++i]);
    } else if (absl::StartsWith(a, "--input=")) {
      inputs.push_back(a.substr(8));
    } else {
      rest.push_back(a);
    }
  }
  args = std::move(rest);
  return inputs;
}

// A file name for output `name`: unsafe characters become '_', and names that would
// collide (after that, or with an earlier output) get a numeric suffix.
std::string OutputFileName(const std::string& name, std::set<std::string>& used) {
  std::string base;
  for (char c : name) {
    const bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    base.push_back(safe ? c : '_');
  }
  if (base.empty() || base == "." || base == "..") base = absl::StrCat("_", base);
  std::string file = absl::StrCat(base, ".npy");
  for (int k = 2; used.count(file) != 0; ++k) file = absl::StrCat(base, "_", k, ".npy");
  used.insert(file);
  return file;
}

Tensor Bf16ToF32(const Tensor& t) {
  Tensor out(DType::kF32, t.shape());
  const BFloat16* in = t.data<BFloat16>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) o[i] = in[i].ToFloat();
  return out;
}

// The signature of a loaded model and how to run it: a Session for a graph, a
// CompiledProgram for a .tsrx executable.
using Feeds = std::vector<std::pair<std::string, Tensor>>;
struct RunnableModel {
  std::vector<std::pair<std::string, std::string>> inputs;  // name, type ("f32[N,4]")
  std::vector<std::string> outputs;
  std::function<absl::StatusOr<std::vector<Tensor>>(const Feeds&, RunMetadata*)> run;
};

// The first bytes of a .tsrx file (compiler/executable/executable_file.h's kTsrxMagic,
// spelled here so that a tessera built without the compiled runtime still recognizes one).
constexpr char kExecutableMagic[4] = {'T', 'S', 'R', 'X'};

// A .tsrx file: by its extension, or by its magic whatever its name.
bool IsExecutablePath(const std::string& path) {
  if (absl::EndsWith(path, ".tsrx")) return true;
  std::ifstream file(path, std::ios::binary);
  char magic[4] = {};
  return file.read(magic, 4) && std::equal(magic, magic + 4, kExecutableMagic);
}

struct RunOptions {
  int threads = 0;
  std::string device;
  uint64_t seed = 0;
  bool profile = false;
};

// A graph model's signature; `run` is set once the feeds chose how it runs.
RunnableModel GraphSignature(const Graph& graph) {
  RunnableModel model;
  for (const SignatureEntry& e : graph.inputs()) {
    model.inputs.emplace_back(e.name, graph.node(e.ref.node)->output_type(e.ref.index).ToString());
  }
  for (const SignatureEntry& e : graph.outputs()) model.outputs.push_back(e.name);
  return model;
}

// The interpreter: the runtime's Session (the oracle).
absl::Status Interpret(Graph graph, const RunOptions& options, RunnableModel& model) {
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(
      std::move(graph),
      {.num_threads = options.threads, .device = options.device, .seed = options.seed, .profile = options.profile});
  if (!session.ok()) return session.status();
  std::shared_ptr<Session> shared(*std::move(session));
  model.run = [shared, fetches = model.outputs](const Feeds& feeds, RunMetadata* metadata) {
    return shared->Run(feeds, fetches, metadata);
  };
  return absl::OkStatus();
}

#ifdef TESSERA_HAS_COMPILER
// The compiled path: the graph compiled for the feeds' batch size (Variables frozen with
// the values the interpreter would give them) and run by runtime/compiled.
absl::Status Compile(const Graph& graph, int64_t batch, const RunOptions& options, RunnableModel& model) {
  CompileOptions compile;
  compile.batch = batch;
  TSR_ASSIGN_OR_RETURN(compile.variable_values, InitialVariableValues(graph, options.seed));
  TSR_ASSIGN_OR_RETURN(Executable executable, CompileGraph(graph, compile));
  TSR_ASSIGN_OR_RETURN(
      std::unique_ptr<CompiledProgram> program,
      CompiledProgram::Load(std::move(executable), {.threads = options.threads, .seed = options.seed}));
  std::shared_ptr<CompiledProgram> shared(std::move(program));
  model.run = [shared](const Feeds& feeds, RunMetadata* metadata) { return shared->Run(feeds, metadata); };
  return absl::OkStatus();
}
#endif

absl::StatusOr<RunnableModel> LoadExecutableModel(const std::string& path, const RunOptions& options) {
#ifdef TESSERA_HAS_COMPILED_RUNTIME
  if (options.device != "cpu") {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": a compiled model runs on the cpu device only, not --device ", options.device));
  }
  // Foreign or stale code is refused while reading, before anything is linked.
  const TargetDescription host = HostTargetDescription();
  const HostTarget host_target{host.triple, host.cpu, host.features};
  absl::StatusOr<Executable> executable = ReadExecutable(path, {.host = &host_target});
  const auto named = [&path](const absl::Status& s) {
    return absl::StrContains(s.message(), path) ? s : absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  };
  if (!executable.ok()) return named(executable.status());
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program =
      CompiledProgram::Load(*std::move(executable), {.threads = options.threads, .seed = options.seed});
  if (!program.ok()) return named(program.status());
  RunnableModel model;
  for (const CompiledSignatureEntry& e : (*program)->inputs()) {
    model.inputs.emplace_back(e.name, absl::StrCat(DTypeName(e.dtype), e.shape.ToString()));
  }
  for (const CompiledSignatureEntry& e : (*program)->outputs()) model.outputs.push_back(e.name);
  std::shared_ptr<CompiledProgram> shared(*std::move(program));
  model.run = [shared](const Feeds& feeds, RunMetadata* metadata) { return shared->Run(feeds, metadata); };
  return model;
#else
  (void)options;
  return absl::UnimplementedError(
      absl::StrCat(path, ": a compiled .tsrx model needs a tessera built with MLIR/LLVM (runtime/compiled)"));
#endif
}

}  // namespace

int RunRun(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> rest = args;
  absl::StatusOr<std::vector<std::string>> input_args = ExtractInputs(rest);
  if (!input_args.ok()) return UsageError(err, "run", input_args.status().message());

  FlagParser flags;
  std::string unused_input, output_dir, profile_path, device = "cpu";
  int64_t threads = 0, top = 10, seed = 0, warmup = 0, runs = 1;
  flags.AddString("input", 'i', "NAME=FILE", &unused_input,
                  "feed signature input NAME from a .npy file (once per input)");
  flags.AddString("output-dir", 'o', "DIR", &output_dir, "write each output as DIR/<name>.npy");
  flags.AddString("profile", '\0', "FILE", &profile_path, "time every op; write a Chrome trace to FILE");
  flags.AddInt("threads", '\0', "N", &threads, "worker threads (default 0: one per core)");
  flags.AddString("device", '\0', "DEV", &device, "cpu (default) or reference (the oracle kernels only)");
  flags.AddInt("top", '\0', "N", &top, "with --profile, how many op types to list (default 10)");
  flags.AddInt("seed", '\0', "N", &seed, "seed of the variable initializers and random ops (default 0)");
  flags.AddInt("warmup", '\0', "N", &warmup, "untimed runs before the one whose outputs are printed (default 0)");
  flags.AddInt("runs", '\0', "N", &runs, "with --profile, how many consecutive runs to time (default 1)");
  bool interpret = false;
  flags.AddBool("interpret", '\0', &interpret,
                "run op by op with the interpreter (the oracle) instead of compiling the graph");
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(rest);
  if (!positionals.ok()) return UsageError(err, "run", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (positionals->size() != 1) {
    return UsageError(err, "run", absl::StrCat("expected one MODEL, got ", positionals->size(), " arguments"));
  }
  if (device != "cpu" && device != "reference") {
    return UsageError(err, "run", absl::StrCat("unknown --device '", device, "' (known: cpu, reference)"));
  }
  if (threads < 0 || threads > 4096) return UsageError(err, "run", "--threads must be in [0, 4096]");
  if (top < 0) return UsageError(err, "run", "--top must not be negative");
  if (seed < 0) return UsageError(err, "run", "--seed must not be negative");
  if (warmup < 0 || warmup > 1000000) return UsageError(err, "run", "--warmup must be in [0, 1000000]");
  // Every run's events are kept for the trace: a bound on them.
  if (runs < 1 || runs > 10000) return UsageError(err, "run", "--runs must be in [1, 10000]");
  if (runs > 1 && profile_path.empty()) return UsageError(err, "run", "--runs needs --profile");

  // NAME=FILE pairs, checked before any file is read.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::set<std::string> input_names;
  for (const std::string& a : *input_args) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
      return UsageError(err, "run", absl::StrCat("--input takes NAME=FILE.npy, not '", a, "'"));
    }
    std::string name = a.substr(0, eq);
    if (!input_names.insert(name).second) {
      return UsageError(err, "run", absl::StrCat("input '", name, "' is given twice"));
    }
    inputs.emplace_back(std::move(name), a.substr(eq + 1));
  }

  const std::string& path = (*positionals)[0];
  const bool profile = !profile_path.empty();
  const RunOptions options{static_cast<int>(threads), device, static_cast<uint64_t>(seed), profile};
  const bool executable = IsExecutablePath(path);
  if (executable && interpret) {
    return UsageError(err, "run", "--interpret needs a graph model; a .tsrx executable is compiled code");
  }
  absl::StatusOr<Graph> graph = absl::UnknownError("");
  absl::StatusOr<RunnableModel> model = absl::UnknownError("");
  if (executable) {
    model = LoadExecutableModel(path, options);
  } else {
    graph = IsOnnxModelPath(path) ? LoadOnnxGraph(path) : LoadGraph(path);
    if (!graph.ok()) return Failure(err, "run", graph.status());
    model = GraphSignature(*graph);
  }
  if (!model.ok()) return Failure(err, "run", model.status());
  for (const auto& [name, type] : model->inputs) {
    if (input_names.count(name) == 0) {
      return UsageError(
          err, "run",
          absl::StrCat("missing --input ", name, "=FILE.npy (the model's input '", name, "' is ", type, ")"));
    }
  }
  const std::vector<std::string>& fetches = model->outputs;
  if (fetches.empty()) return Failure(err, "run", absl::InvalidArgumentError("the model has no signature outputs"));

  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, file] : inputs) {
    absl::StatusOr<Tensor> t = ReadNpy(file);
    if (!t.ok()) return Failure(err, "run", t.status());
    feeds.emplace_back(name, *std::move(t));
  }
  if (!executable) {
    // The feeds fix the batch size the graph compiles for; they are checked as the
    // interpreter checks them, with the same messages.
    absl::StatusOr<CheckedFeeds> checked = CheckFeeds(*graph, feeds);
    if (!checked.ok()) return Failure(err, "run", checked.status());
    bool compiled = false;
#ifdef TESSERA_HAS_COMPILER
    if (!interpret && device == "cpu") {
      const absl::Status s = Compile(*graph, checked->batch.value_or(1), options, *model);
      compiled = s.ok();
      // What the compiler cannot handle yet (dynamic shapes, training steps) still runs.
      if (!compiled) err << "tessera run: note: running with the interpreter: " << s.message() << "\n";
    }
#endif
    if (!compiled) {
      if (absl::Status s = Interpret(*std::move(graph), options, *model); !s.ok()) return Failure(err, "run", s);
    }
  }

  for (int64_t i = 0; i < warmup; ++i) {
    if (absl::StatusOr<std::vector<Tensor>> warm = model->run(feeds, nullptr); !warm.ok()) {
      return Failure(err, "run", warm.status());
    }
  }
  // The profiled runs' op timings, each run's placed on the clock at its start.
  Profiler profiler;
  int64_t peak_bytes = 0;
  absl::StatusOr<std::vector<Tensor>> outputs = absl::UnknownError("");
  const auto first_start = std::chrono::steady_clock::now();
  for (int64_t r = 0; r < runs; ++r) {
    RunMetadata metadata;
    const int64_t run_start_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - first_start).count();
    outputs = model->run(feeds, profile ? &metadata : nullptr);
    if (!outputs.ok()) return Failure(err, "run", outputs.status());
    for (const OpTiming& t : metadata.timings) {
      profiler.Record({t.node, t.op, run_start_ns + t.start_ns, t.duration_ns, t.thread});
    }
    peak_bytes = std::max(peak_bytes, metadata.peak_bytes);
  }

  if (!output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(output_dir, ec);
    if (ec) {
      return Failure(err, "run", absl::InternalError(absl::StrCat(output_dir, ": cannot create: ", ec.message())));
    }
  }
  std::set<std::string> used_files;
  for (size_t i = 0; i < fetches.size(); ++i) {
    const Tensor& t = (*outputs)[i];
    out << fetches[i] << ": " << t.DebugString(8) << "\n";
    if (output_dir.empty()) continue;
    const std::string path = absl::StrCat(output_dir, "/", OutputFileName(fetches[i], used_files));
    const bool bf16 = t.dtype() == DType::kBF16;
    if (absl::Status s = WriteNpy(path, bf16 ? Bf16ToF32(t) : t); !s.ok()) return Failure(err, "run", s);
    out << "  wrote " << path << (bf16 ? " (bf16 written as f32)" : "") << "\n";
  }

  if (profile) {
    if (absl::Status s = profiler.WriteChromeTrace(profile_path); !s.ok()) return Failure(err, "run", s);
    const std::vector<ProfileEvent> events = profiler.Events();
    out << "wrote a Chrome trace of " << events.size() << " ops";
    if (runs > 1) out << " (" << runs << " runs)";
    out << " to " << profile_path << "; peak memory " << peak_bytes << " bytes\n"
        << profiler.TopTable(static_cast<int>(top));
    if (runs > 1) {
      int64_t total_ns = 0;
      for (const ProfileEvent& e : events) total_ns += e.duration_ns;
      out << absl::StrFormat("one run (mean of %d): %.3f ms of ops\n", runs,
                             static_cast<double>(total_ns) / 1e6 / runs);
    }
  }
  return kExitOk;
}

}  // namespace tsr::cli
