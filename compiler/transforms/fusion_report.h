// tsr-fusion-report: how many kernels a function will run after fusion, as a remark and as a
// struct for the compile driver ("N ops -> K kernels (F fusions, E fused epilogues)").
// MLIR-level header.
//
// A kernel is a tsr.Fusion (or a func.call to an outlined fusion) or any other op outside a
// fusion except tsr.Constant (a value, not a step) and func.return. The pass changes nothing.
#ifndef TESSERA_COMPILER_TRANSFORMS_FUSION_REPORT_H_
#define TESSERA_COMPILER_TRANSFORMS_FUSION_REPORT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace tsr {

struct FusionReport {
  int64_t kernels = 0;          // library_kernels + fusions
  int64_t library_kernels = 0;  // ops outside fusions (fused epilogues included), without constants
  int64_t fusions = 0;          // tsr.Fusion ops and func.call ops (outlined fusions)
  // Ops inside tsr.Fusion regions (constants and yields excluded); a cheap op recomputed in
  // several fusions (see region_fusion.h) counts once per fusion.
  int64_t ops_in_fusions = 0;
  int64_t fused_epilogues = 0;  // FusedConv / FusedMatMul ops, and BlockedConv ops made from FusedConv
  // BlockedInvertedResidual ops (tsr-fuse-inverted-residuals), each standing for its stages'
  // graph ops.
  int64_t inverted_residuals = 0;
  // MultiHeadAttention ops (tsr-fuse-attention), each standing for its chain's graph ops.
  int64_t attention_blocks = 0;
  // BlockChannels / UnblockChannels the layout pass added (library kernels, no graph ops).
  int64_t layout_conversions = 0;
  // Graph ops the fused epilogues stand for (from their locations, see epilogue_fusion.h).
  int64_t ops_in_epilogues = 0;
  // Graph ops the function stands for: library kernels whose parts are counted (a fused
  // epilogue counts as its parts) plus the ops inside fusions.
  int64_t graph_ops = 0;
};

FusionReport ReportFusion(mlir::func::FuncOp func);

// "N ops -> K kernels (F fusions, E fused epilogues)".
std::string FormatFusionReport(const FusionReport& report);

// Runs on func.func; emits the report as a remark on each function with a body.
std::unique_ptr<mlir::Pass> CreateFusionReportPass();

// Registers `tsr-fusion-report` for tessera-opt.
void RegisterFusionReportPass();

// Registers the fusion passes for tessera-opt: tsr-fuse-epilogues, tsr-fuse-regions and
// tsr-fusion-report.
void RegisterFusionPasses();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_FUSION_REPORT_H_
