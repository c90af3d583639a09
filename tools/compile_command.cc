// `tessera compile MODEL -o OUT.tsrx`: compiles a model (GraphDef or ONNX) ahead of time
// through the MLIR pipeline (compiler/pipeline/compile_graph.h) into a .tsrx executable
// that `tessera run OUT.tsrx` loads and runs without the compiler.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/proto/graph_def_io.h"
#include "partitioner/pipeline_stages.h"
#include "partitioner/spmd_partitioner.h"
#include "strategies/strategy_factory.h"
#include "tools/command.h"
#include "tools/strategy_flags.h"
#include "tools/variable_values.h"
#ifdef TESSERA_HAS_COMPILER
#include "compiler/executable/executable_file.h"
#include "compiler/pipeline/compile_graph.h"
#endif

namespace tsr::cli {

namespace {

constexpr absl::string_view kUsage =
    "tessera compile MODEL -o OUT.tsrx [--batch N] [--threads N] [--dump-ir DIR] [--target-cpu CPU]\n"
    "                      [--target-features FEATURES] [--no-fusion] [--no-blocked-layout] [--seed N] [--quiet]\n"
    "       tessera compile MODEL --strategy NAME [--devices N | --mesh data=D,model=M |\n"
    "                       --stages S --microbatches M --pipeline-schedule NAME [--chunks V]] [--batch N] --explain";
constexpr absl::string_view kDescription =
    "Compiles MODEL (a GraphDef: .pb or .tsrg binary, .pbtxt text; or an ONNX model, .onnx)\n"
    "ahead of time into a .tsrx executable, written atomically to OUT: the batch dimension\n"
    "N is bound to --batch, the graph is lowered to MLIR (the tsr dialect), simplified\n"
    "(canonicalization, CSE, constant folding, algebraic simplification, BatchNorm folding,\n"
    "matrix transposes into the Gemm that reads them),\n"
    "fused (Conv/MatMul epilogues, elementwise chains and reductions), chains of convolutions\n"
    "keep their activations in the channel-blocked layout [N, C/16, H, W, 16] (AVX2 and AVX-512 hosts;\n"
    "--no-blocked-layout: NCHW throughout), the fused regions are\n"
    "compiled to machine code for this CPU (or --target-cpu), and the remaining ops become\n"
    "calls of the optimized kernels over one statically planned arena. Variables are frozen:\n"
    "their saved values ('tessera train --save'), or the values 'tessera run' gives them\n"
    "from --seed. Run the result with 'tessera run OUT.tsrx --input NAME=FILE.npy'; its\n"
    "inputs must have exactly the compiled shapes. --dump-ir writes the IR after every\n"
    "stage, the module given to code generation and the executable's steps and buffer plan.\n"
    "Training graphs (optimizer updates) do not compile yet.\n"
    "With --strategy (mirrored, tensor-parallel, zero1/2/3, hybrid, multi-worker) and --explain, partitions\n"
    "MODEL (a training graph too) over the strategy's device mesh and prints each device's\n"
    "program and, for every collective inserted, which tensor it moves, from which sharding\n"
    "to which, and for which consumer, and the bytes of Variables each device holds. With\n"
    "--strategy pipeline it prints the stages (ops, FLOPs, what each sends to which stage),\n"
    "the schedule's bubble fraction and each stage's order of forward and backward tasks\n"
    "(under --pipeline-schedule interleaved, each device's, the model stage after an '@').";

}  // namespace

int RunCompile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  FlagParser flags;
  std::string output, dump_ir, target_cpu, target_features;
  int64_t batch = 1, threads = 0, seed = 0;
  bool no_fusion = false, no_blocked_layout = false, quiet = false;
  flags.AddString("output", 'o', "FILE", &output, "where to write the executable (.tsrx)");
  flags.AddInt("batch", 'b', "N", &batch, "the batch size N is bound to (default 1)");
  flags.AddInt("threads", '\0', "N", &threads,
               "worker threads the executable runs with by default (0, the default: one per core)");
  flags.AddString("dump-ir", '\0', "DIR", &dump_ir, "write the IR after every stage to DIR");
  flags.AddString("target-cpu", '\0', "CPU", &target_cpu,
                  "LLVM CPU to generate code for (znver3, x86-64-v3, ...; default: this host)");
  flags.AddString("target-features", '\0', "FEATURES", &target_features,
                  "extra LLVM features with --target-cpu (\"+avx2,-avx512f\")");
  flags.AddBool("no-fusion", '\0', &no_fusion, "no fusion: every op a library kernel (a baseline)");
  flags.AddBool("no-blocked-layout", '\0', &no_blocked_layout,
                "every convolution reads and writes NCHW (no channel-blocked chains; a baseline)");
  flags.AddInt("seed", '\0', "N", &seed, "seed of the initializers of Variables without a value (default 0)");
  flags.AddBool("quiet", 'q', &quiet, "print nothing but errors");
  StrategySpec strategy_spec;
  int64_t devices = 1;
  bool explain = false;
  flags.AddString("strategy", '\0', "NAME", &strategy_spec.name,
                  "partition for mirrored, tensor-parallel, zero1/2/3, hybrid or multi-worker (with --explain)");
  flags.AddInt("devices", '\0', "N", &devices, "devices of --strategy (default 1)");
  flags.AddString("mesh", '\0', "AXES", &strategy_spec.mesh, "the mesh of --strategy hybrid: data=D,model=M");
  flags.AddBool("explain", '\0', &explain, "print each device's program and why each collective was inserted");
  PipelineFlags pipeline;
  AddPipelineFlags(flags, &pipeline);
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(args);
  if (!positionals.ok()) return UsageError(err, "compile", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (positionals->size() != 1) {
    return UsageError(err, "compile", absl::StrCat("expected one MODEL, got ", positionals->size(), " arguments"));
  }
  strategy_spec.devices = static_cast<int>(std::clamp<int64_t>(devices, -1, 1 << 20));
  ApplyPipelineFlags(pipeline, strategy_spec);
  absl::StatusOr<std::shared_ptr<const Strategy>> strategy = MakeStrategy(strategy_spec);
  if (!strategy.ok()) return UsageError(err, "compile", strategy.status().message());
  if (explain != (*strategy != nullptr)) {
    return UsageError(err, "compile", "--explain goes with --strategy (a partitioned compile prints its plan)");
  }
  if (explain && !output.empty()) {
    return UsageError(err, "compile", "-o with --strategy: partitioned executables are not written yet; use --explain");
  }
  if (output.empty() && !explain) return UsageError(err, "compile", "-o OUT.tsrx is required");
  if (batch < 1 || batch > (int64_t{1} << 31)) return UsageError(err, "compile", "--batch must be in [1, 2^31]");
  if (threads < 0 || threads > 4096) return UsageError(err, "compile", "--threads must be in [0, 4096]");
  if (seed < 0) return UsageError(err, "compile", "--seed must not be negative");
  if (!target_features.empty() && target_cpu.empty()) {
    return UsageError(err, "compile", "--target-features needs --target-cpu");
  }
#ifdef TESSERA_HAS_COMPILER
  const std::string& model = (*positionals)[0];
  absl::StatusOr<Graph> graph = IsOnnxModelPath(model) ? LoadOnnxGraph(model) : LoadGraph(model);
  if (!graph.ok()) return Failure(err, "compile", graph.status());
  if (explain) {
    absl::StatusOr<StrategyPlan> plan = (*strategy)->Plan(*graph);
    if (!plan.ok()) return Failure(err, "compile", plan.status());
    // A training graph's optimizer and model updates are kept as the step's targets.
    PartitionOptions partition{.batch = batch, .reduce_scatter = plan->reduce_scatter};
    for (const Node* node : graph->nodes()) {
      if (node->op_def() != nullptr && !node->op_def()->variable_updates.empty()) {
        partition.targets.push_back(node->name());
      }
    }
    if (plan->pipeline.has_value()) {
      // The stages, what each sends where, and each stage's order of tasks.
      const PipelinePlan& pipeline = *plan->pipeline;
      PipelineSplitOptions options{
          .stages = pipeline.stages * pipeline.chunks, .cut_points = pipeline.cut_points, .targets = partition.targets};
      for (const SignatureEntry& e : graph->outputs()) options.fetches.push_back(e.name);
      absl::StatusOr<PipelineProgram> stages = SplitPipelineStages(*graph, options);
      if (!stages.ok()) return Failure(err, "compile", stages.status());
      const int m = pipeline.microbatches;
      const bool chunked = pipeline.chunks > 1;
      out << (*strategy)->name() << ": " << stages->Explain()
          << absl::StrFormat(chunked ? "bubble fraction %.3f ((S - 1) / (V M + S - 1))\n"
                                     : "bubble fraction %.3f ((S - 1) / (M + S - 1))\n",
                             PipelineBubbleFraction(pipeline.stages, m, pipeline.chunks));
      const auto tasks = PipelineTasks(pipeline.schedule, pipeline.stages, m, pipeline.chunks);
      for (size_t s = 0; s < tasks.size(); ++s) {
        if (chunked) {
          out << "device " << s << " (stages " << s;
          for (int c = 1; c < pipeline.chunks; ++c) out << ", " << s + c * pipeline.stages;
          out << ") runs " << TasksToString(tasks[s], /*with_stage=*/true) << " (at most "
              << PeakMicrobatchesInFlight(tasks[s]) << " chunks' activations held)\n";
          continue;
        }
        out << "stage " << s << " runs " << TasksToString(tasks[s]) << " (at most "
            << PeakMicrobatchesInFlight(tasks[s]) << " micro-batches' activations held)\n";
      }
      return kExitOk;
    }
    absl::StatusOr<PartitionedProgram> program = PartitionGraph(*graph, plan->mesh, plan->annotations, partition);
    if (!program.ok()) return Failure(err, "compile", program.status());
    out << (*strategy)->name() << ": " << program->Explain();
    return kExitOk;
  }
  CompileOptions options;
  options.batch = batch;
  options.threads = static_cast<int>(threads);
  options.dump_ir_dir = dump_ir;
  options.codegen.cpu = target_cpu;
  options.codegen.features = target_features;
  options.fuse = !no_fusion;
  options.blocked_layout = !no_blocked_layout;
  absl::StatusOr<std::map<std::string, Tensor>> values = InitialVariableValues(*graph, static_cast<uint64_t>(seed));
  if (!values.ok()) return Failure(err, "compile", values.status());
  options.variable_values = *std::move(values);
  CompileStats stats;
  absl::StatusOr<Executable> executable = CompileGraph(*graph, options, &stats);
  if (!executable.ok()) {
    return Failure(err, "compile",
                   absl::Status(executable.status().code(), absl::StrCat(model, ": ", executable.status().message())));
  }
  if (absl::Status s = WriteExecutable(*executable, output); !s.ok()) return Failure(err, "compile", s);
  if (!quiet) {
    out << "compiled " << model << " (batch " << batch << ") -> " << output << "\n" << FormatCompileStats(stats);
    if (!dump_ir.empty()) out << "  wrote " << stats.dumped_files.size() << " IR dumps to " << dump_ir << "\n";
  }
  return kExitOk;
#else
  return Failure(err, "compile",
                 absl::UnimplementedError("this tessera was built without MLIR/LLVM: it cannot compile models"));
#endif
}

}  // namespace tsr::cli
