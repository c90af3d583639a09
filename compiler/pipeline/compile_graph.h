// The compile driver: Graph -> Executable (compiler/executable/executable.h), the whole
// static-compilation pipeline behind `tessera compile`:
//
//   1. the batch is bound (graph/bind_batch.h) and the graph imported as `func.func @main` of tsr
//      ops on static shapes (compiler/conversion/graph_tsr.h);
//   2. simplification: canonicalize, cse, tsr-constant-fold, tsr-algebraic-simplify,
//      tsr-fold-batchnorm (inference graphs), canonicalize, cse;
//   3. fusion: tsr-fuse-epilogues (Conv/MatMul/Gemm + bias, activation, residual ->
//      FusedConv/FusedMatMul), tsr-weight-layout (constant GEMM weights row-major),
//      tsr-fuse-regions (elementwise chains and reductions ->
//      tsr.Fusion), then tsr-outline-fusions (each tsr.Fusion -> a linalg function);
//   4. the outlined functions are compiled together into one object file (compiler/codegen)
//      for the target of `options.codegen`;
//   5. @main becomes the executable's steps — every func.call a function step, every other tsr
//      op a library-kernel step (kernels/), tsr.Constant a constant — and its temporaries are
//      placed in one arena by the static buffer planner (compiler/planning), elementwise
//      kernels writing in place over an input that dies there.
//
// No MLIR here: tools and tests call it with Tessera types.
#ifndef TESSERA_COMPILER_PIPELINE_COMPILE_GRAPH_H_
#define TESSERA_COMPILER_PIPELINE_COMPILE_GRAPH_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/codegen.h"
#include "compiler/executable/executable.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tsr {

struct CompileOptions {
  // Binds the graph's batch dimension N (graphs without one ignore it).
  int64_t batch = 1;
  // Worker threads the executable runs with unless its loader says otherwise (0: one per
  // core); recorded in the executable.
  int threads = 0;
  // When not empty: the IR after every stage is written there as NN-<stage>.mlir (00-import,
  // 01-canonicalize, ...), then the module given to code generation (codegen-input.mlir),
  // the IR after every code-generation pass that changed it (codegen-<pass>.mlir, the
  // vectorization schedule's result, the LLVM IR as codegen-llvm-ir.ll) and the
  // executable's steps and buffer plan (executable.txt). The directory is created.
  std::string dump_ir_dir;
  // Target of the generated code (default: this host, every feature it has).
  CodegenOptions codegen;
  // Values of the Variables that hold none, by node name (a Variable saved after training
  // holds its value). Variables are frozen into constants: the program holds no state.
  std::map<std::string, Tensor> variable_values;
  // A training program: Variables stay state (variables of the executable, with the
  // initial values freezing would give them) and optimizer updates run — those named in
  // `targets` (graph node names, e.g. TrainingOps::update_nodes) and those whose outputs
  // are needed; each run commits the new values after its last step, as Session::Run with
  // these targets does. Off (inference): Variables are frozen and updates refused.
  bool variables_as_state = false;
  std::vector<std::string> targets;
  // Epilogue and region fusion; off: every op is a library-kernel step (a baseline).
  bool fuse = true;
  // Chains of convolutions in the channel-blocked layout (tsr-activation-layout) on
  // hosts with AVX2 or AVX-512; off: every convolution reads and writes NCHW.
  bool blocked_layout = true;
};

struct StageTiming {
  std::string stage;  // "canonicalize", "tsr-fuse-regions", "codegen", ...
  double seconds = 0;
};

struct CompileStats {
  double total_seconds = 0;
  std::vector<StageTiming> stages;  // in order, import and codegen included
  int64_t graph_ops = 0;            // nodes of the graph but placeholders, constants and variables
  int64_t kernel_steps = 0;         // library-kernel steps of the executable
  int64_t function_steps = 0;       // compiled-function steps (outlined fusions)
  int64_t fused_epilogues = 0;      // FusedConv / FusedMatMul steps
  std::string fusion_summary;       // "N ops -> K kernels (F fusions, E fused epilogues)"
  int64_t arena_bytes = 0;          // the buffer plan's arena
  int64_t arena_lower_bound = 0;    // no plan can use less (live bytes at the busiest step)
  int64_t constant_bytes = 0;
  int64_t object_bytes = 0;               // machine code, all object files together
  std::vector<std::string> dumped_files;  // with dump_ir_dir, in writing order
};

// Compiles a graph whose values are computed from its placeholders, constants and Variables
// (frozen into constants, or kept as state for training: see variables_as_state). Errors name the stage and carry
// MLIR's diagnostics or the node at fault. The executable passes ValidateExecutable.
absl::StatusOr<Executable> CompileGraph(const Graph& graph, const CompileOptions& options = {},
                                        CompileStats* stats = nullptr);

// Multi-line human-readable report of `stats`: stage times, kernel counts, memory.
std::string FormatCompileStats(const CompileStats& stats);

}  // namespace tsr

#endif  // TESSERA_COMPILER_PIPELINE_COMPILE_GRAPH_H_
