// Dialect and pass registration of tessera-opt (see tessera_opt_registration.h).
#include "tools/tessera_opt/tessera_opt_registration.h"

#include "compiler/conversion/graph_tsr.h"
#include "compiler/lowering/fusion_outlining.h"
#include "compiler/lowering/fusion_tiling.h"
#include "compiler/transforms/activation_layout.h"
#include "compiler/transforms/algebraic_simplify.h"
#include "compiler/transforms/attention_fusion.h"
#include "compiler/transforms/constant_fold.h"
#include "compiler/transforms/fold_batchnorm.h"
#include "compiler/transforms/fusion_report.h"
#include "compiler/transforms/inverted_residual_fusion.h"
#include "compiler/transforms/layernorm_fusion.h"
#include "compiler/transforms/transpose_folding.h"
#include "compiler/transforms/weight_layout.h"
#include "mlir/Transforms/Passes.h"

namespace tsr {

void RegisterTesseraDialects(mlir::DialectRegistry& registry) { RegisterGraphDialects(registry); }

void RegisterTesseraPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  // Tessera pass libraries register here.
  RegisterConstantFoldPass();
  RegisterAlgebraicSimplifyPass();
  RegisterWeightLayoutPass();
  RegisterActivationLayoutPass();
  RegisterInvertedResidualFusionPass();
  RegisterAttentionFusionPass();
  RegisterLayerNormFusionPass();
  RegisterFoldBatchNormPass();
  RegisterTransposeFoldingPass();
  RegisterFusionPasses();
  RegisterOutlineFusionsPass();
  RegisterFusionTilingPass();
}

}  // namespace tsr
