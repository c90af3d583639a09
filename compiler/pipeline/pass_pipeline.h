// The optimization stages of the compile driver (compile_graph.h, steps 2 and 3) and the
// runner that applies them one at a time, timing each and optionally writing the IR after
// it. MLIR-level header (compiler/ only).
#ifndef TESSERA_COMPILER_PIPELINE_PASS_PIPELINE_H_
#define TESSERA_COMPILER_PIPELINE_PASS_PIPELINE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/pipeline/compile_graph.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tsr {

struct PipelineStage {
  std::string name;  // the pass's command-line name
  std::function<std::unique_ptr<mlir::Pass>()> make;
  bool on_module = false;  // else nested on every func.func
};

// canonicalize, cse, tsr-constant-fold, tsr-algebraic-simplify, tsr-fold-batchnorm,
// canonicalize, cse, tsr-fuse-epilogues (with options.fuse), tsr-weight-layout,
// tsr-fuse-regions and tsr-tile-fusions (with options.fuse), and tsr-outline-fusions last.
std::vector<PipelineStage> OptimizationStages(const CompileOptions& options);

// Writes a module's IR to files of a dump directory, numbered in writing order.
class IrDumper {
 public:
  // An empty `dir` writes nothing.
  IrDumper(std::string dir, CompileStats* stats) : dir_(std::move(dir)), stats_(stats) {}
  bool enabled() const { return !dir_.empty(); }
  // Creates the directory (once) and writes `text` as NN-<name><extension>.
  absl::Status Write(const std::string& name, const std::string& text, const std::string& extension = ".mlir");
  absl::Status WriteModule(const std::string& name, mlir::ModuleOp module);

 private:
  std::string dir_;
  CompileStats* stats_;
  int next_ = 0;
  bool created_ = false;
};

// Runs the stages in order, each with its own pass manager (verifying its result); records
// one StageTiming per stage in `stats` (may be null) and dumps the IR after each. The error
// names the stage and carries MLIR's diagnostics.
absl::Status RunStages(mlir::ModuleOp module, const std::vector<PipelineStage>& stages, IrDumper& dumper,
                       CompileStats* stats);

}  // namespace tsr

#endif  // TESSERA_COMPILER_PIPELINE_PASS_PIPELINE_H_
