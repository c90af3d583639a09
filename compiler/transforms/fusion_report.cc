// tsr-fusion-report (see fusion_report.h).
#include "compiler/transforms/fusion_report.h"

#include "absl/strings/str_cat.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/transforms/attention_fusion.h"
#include "compiler/transforms/epilogue_fusion.h"
#include "compiler/transforms/inverted_residual_fusion.h"
#include "compiler/transforms/layernorm_fusion.h"
#include "compiler/transforms/region_fusion.h"
#include "mlir/IR/Diagnostics.h"

namespace tsr {
namespace {

// How many graph ops a fused op stands for: the parts its location lists (a FusedLoc
// tagged `metadata`), at least one.
int64_t LocParts(mlir::Operation* op, llvm::StringRef metadata) {
  mlir::Location loc = op->getLoc();
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) loc = name.getChildLoc();
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc)) {
    auto tag = llvm::dyn_cast_or_null<mlir::StringAttr>(fused.getMetadata());
    if (tag && tag.getValue() == metadata) return std::max<int64_t>(1, fused.getLocations().size());
  }
  return 1;
}

int64_t EpilogueParts(mlir::Operation* op) { return LocParts(op, kEpilogueLocMetadata); }

class FusionReportPass : public mlir::PassWrapper<FusionReportPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FusionReportPass)

  llvm::StringRef getArgument() const override { return "tsr-fusion-report"; }
  llvm::StringRef getDescription() const override {
    return "Reports (as a remark) how many kernels remain after fusion and how many ops were fused";
  }

  void runOnOperation() override {
    markAllAnalysesPreserved();
    mlir::func::FuncOp func = getOperation();
    if (func.isExternal()) return;
    const FusionReport r = ReportFusion(func);
    mlir::emitRemark(func.getLoc()) << "fusion report: " << FormatFusionReport(r) << "; " << r.library_kernels
                                    << " library kernels, " << r.ops_in_fusions << " ops in fusions, "
                                    << r.ops_in_epilogues << " ops in fused epilogues";
  }
};

}  // namespace

FusionReport ReportFusion(mlir::func::FuncOp func) {
  FusionReport r;
  for (mlir::Block& block : func.getBody()) {
    for (mlir::Operation& op : block) {
      if (llvm::isa<mlir::tsr::ConstantOp, mlir::func::ReturnOp>(op)) continue;
      if (auto fusion = llvm::dyn_cast<mlir::tsr::FusionOp>(op)) {
        ++r.fusions;
        for (mlir::Operation& inner : fusion.getBody().front()) {
          // A LayerNormalization made by tsr-fuse-layernorm counts the ops it stands for.
          if (!llvm::isa<mlir::tsr::ConstantOp, mlir::tsr::YieldOp>(inner)) {
            r.ops_in_fusions += LocParts(&inner, kLayerNormLocMetadata);
          }
        }
        continue;
      }
      if (llvm::isa<mlir::func::CallOp>(op)) {
        ++r.fusions;
        continue;
      }
      ++r.library_kernels;
      const llvm::StringRef name = op.getName().getStringRef();
      if (name == "tsr.BlockChannels" || name == "tsr.UnblockChannels") {
        ++r.layout_conversions;  // added by the layout pass: no graph op of the model's
        continue;
      }
      if (name == "tsr.MultiHeadAttention") {
        ++r.attention_blocks;
        r.graph_ops += LocParts(&op, kAttentionLocMetadata);
        continue;
      }
      if (name == "tsr.BlockedInvertedResidual") {
        ++r.inverted_residuals;
        r.graph_ops += LocParts(&op, kInvertedResidualLocMetadata);
        continue;
      }
      // A BlockedConv keeps the location of the Conv or FusedConv it replaced.
      if (name == "tsr.FusedConv" || name == "tsr.FusedMatMul" ||
          (name == "tsr.BlockedConv" && EpilogueParts(&op) > 1)) {
        ++r.fused_epilogues;
        r.ops_in_epilogues += EpilogueParts(&op);
        r.graph_ops += EpilogueParts(&op);
      } else {
        r.graph_ops += LocParts(&op, kLayerNormLocMetadata);
      }
    }
  }
  r.graph_ops += r.ops_in_fusions;
  r.kernels = r.library_kernels + r.fusions;
  return r;
}

std::string FormatFusionReport(const FusionReport& r) {
  std::string out = absl::StrCat(r.graph_ops, " ops -> ", r.kernels, " kernels (", r.fusions, " fusions, ",
                                 r.fused_epilogues, " fused epilogues");
  if (r.inverted_residuals > 0) absl::StrAppend(&out, ", ", r.inverted_residuals, " inverted-residual blocks");
  if (r.attention_blocks > 0) {
    absl::StrAppend(&out, ", ", r.attention_blocks, r.attention_blocks == 1 ? " attention block" : " attention blocks");
  }
  if (r.layout_conversions > 0) absl::StrAppend(&out, ", ", r.layout_conversions, " layout conversions");
  return out + ")";
}

std::unique_ptr<mlir::Pass> CreateFusionReportPass() { return std::make_unique<FusionReportPass>(); }

void RegisterFusionReportPass() { mlir::PassRegistration<FusionReportPass>(); }

void RegisterFusionPasses() {
  RegisterEpilogueFusionPass();
  RegisterRegionFusionPass();
  RegisterFusionReportPass();
}

}  // namespace tsr
