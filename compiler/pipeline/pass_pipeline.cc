// The optimization stages and their runner (see pass_pipeline.h).
#include "compiler/pipeline/pass_pipeline.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/conversion/mlir_diagnostics.h"
#include "compiler/lowering/fusion_outlining.h"
#include "compiler/lowering/fusion_tiling.h"
#include "compiler/transforms/activation_layout.h"
#include "compiler/transforms/algebraic_simplify.h"
#include "compiler/transforms/attention_fusion.h"
#include "compiler/transforms/constant_fold.h"
#include "compiler/transforms/epilogue_fusion.h"
#include "compiler/transforms/fold_batchnorm.h"
#include "compiler/transforms/inverted_residual_fusion.h"
#include "compiler/transforms/layernorm_fusion.h"
#include "compiler/transforms/region_fusion.h"
#include "compiler/transforms/transpose_folding.h"
#include "compiler/transforms/weight_layout.h"
#include "kernels/cpu/cpu_features.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace tsr {

std::vector<PipelineStage> OptimizationStages(const CompileOptions& options) {
  std::vector<PipelineStage> stages = {
      {"canonicalize", [] { return mlir::createCanonicalizerPass(); }},
      {"cse", [] { return mlir::createCSEPass(); }},
      {"tsr-constant-fold", [] { return CreateConstantFoldPass(); }},
      {"tsr-algebraic-simplify", [] { return CreateAlgebraicSimplifyPass(); }},
      {"tsr-fold-batchnorm", [] { return CreateFoldBatchNormPass(); }},
      {"tsr-fold-transposes", [] { return CreateTransposeFoldingPass(); }},
      {"canonicalize", [] { return mlir::createCanonicalizerPass(); }},
      {"cse", [] { return mlir::createCSEPass(); }},
  };
  if (options.fuse) {
    // Before the epilogue fusion: the attention chain's MatMuls and the layer norm's Add must
    // still be plain.
    stages.push_back({"tsr-fuse-attention", [] { return CreateAttentionFusionPass(); }});
    stages.push_back({"tsr-fuse-layernorm", [] { return CreateLayerNormFusionPass(); }});
    stages.push_back({"tsr-fuse-epilogues", [] { return CreateEpilogueFusionPass(); }});
  }
  stages.push_back({"tsr-weight-layout", [] { return CreateWeightLayoutPass(); }});
  // The blocked kernels have AVX-512 and AVX2 paths; below AVX2 they run portable loops,
  // slower than the plain layout's kernels.
  if (options.blocked_layout && ActiveCpuIsa() >= CpuIsa::kAvx2) {
    stages.push_back({"tsr-activation-layout", [] { return CreateActivationLayoutPass(); }});
    if (options.fuse) {
      stages.push_back({"tsr-fuse-inverted-residuals", [] { return CreateInvertedResidualFusionPass(); }});
    }
  }
  if (options.fuse) {
    stages.push_back({"tsr-fuse-regions", [] { return CreateRegionFusionPass(); }});
    stages.push_back({"tsr-tile-fusions", [] { return CreateFusionTilingPass(); }});
  }
  stages.push_back({"tsr-outline-fusions", [] { return CreateOutlineFusionsPass(); }, /*on_module=*/true});
  return stages;
}

absl::Status IrDumper::Write(const std::string& name, const std::string& text, const std::string& extension) {
  if (!enabled()) return absl::OkStatus();
  if (!created_) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec)
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create the IR dump directory ", dir_, ": ", ec.message()));
    created_ = true;
  }
  const std::string path =
      (std::filesystem::path(dir_) / absl::StrFormat("%02d-%s%s", next_++, name, extension)).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("cannot write the IR dump ", path));
  if (stats_ != nullptr) stats_->dumped_files.push_back(path);
  return absl::OkStatus();
}

absl::Status IrDumper::WriteModule(const std::string& name, mlir::ModuleOp module) {
  if (!enabled()) return absl::OkStatus();
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
  return Write(name, text);
}

absl::Status RunStages(mlir::ModuleOp module, const std::vector<PipelineStage>& stages, IrDumper& dumper,
                       CompileStats* stats) {
  mlir::MLIRContext& context = *module.getContext();
  for (const PipelineStage& stage : stages) {
    DiagnosticCollector diagnostics(context);
    mlir::PassManager pm(&context);
    if (stage.on_module) {
      pm.addPass(stage.make());
    } else {
      pm.addNestedPass<mlir::func::FuncOp>(stage.make());
    }
    const auto start = std::chrono::steady_clock::now();
    const mlir::LogicalResult result = pm.run(module);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (stats != nullptr) stats->stages.push_back({stage.name, seconds});
    if (mlir::failed(result)) return diagnostics.Error(absl::StrCat("compile stage ", stage.name, " failed"));
    if (absl::Status s = dumper.WriteModule(stage.name, module); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace tsr
