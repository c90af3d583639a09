// The fusion passes on the ONNX zoo models (scripts/onnx_zoo_models.py: ResNet-18 and the
// GPT-2 block, exported into a temporary folder, or every model found in $TESSERA_ZOO_DIR):
// tsr-fuse-attention, tsr-fuse-layernorm, tsr-fuse-epilogues then tsr-fuse-regions must leave fewer
// kernels (the GPT-2 block's attention chain one MultiHeadAttention), and the fused module, with
// every tsr.Fusion inlined back, must export to a graph that computes the model's outputs
// (interpreter, 1e-5 relative to each output's largest magnitude). Prints the fusion report.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/mlir_diagnostics.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/transforms/attention_fusion.h"
#include "compiler/transforms/epilogue_fusion.h"
#include "compiler/transforms/fusion_report.h"
#include "compiler/transforms/layernorm_fusion.h"
#include "compiler/transforms/region_fusion.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "tests/compiler/transforms/pass_test_util.h"
#include "tests/models/onnx_zoo_export.h"

namespace tsr {
namespace {

using pass_test::InlineFusions;

std::vector<Tensor> Run(const Graph& graph, const std::vector<std::string>& inputs, const Tensor& input) {
  std::vector<std::string> fetches;
  for (const SignatureEntry& out : graph.outputs()) fetches.push_back(out.name);
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(graph.Clone());
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({{inputs.front(), input}}, fetches);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<Tensor>{};
}

void CheckModel(const std::string& dir, const std::string& name) {
  SCOPED_TRACE(name);
  absl::StatusOr<ImportedModel> model = ImportOnnxModel(absl::StrCat(dir, "/", name, "/model.onnx"));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<Tensor> input = ReadNpy(absl::StrCat(dir, "/", name, "/input.npy"));
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_EQ(model->input_names.size(), 1u);

  mlir::DialectRegistry registry;
  RegisterGraphDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = ImportGraph(context, model->graph);
  ASSERT_TRUE(module.ok()) << module.status();
  mlir::func::FuncOp main = *(*module)->getOps<mlir::func::FuncOp>().begin();
  const FusionReport before = ReportFusion(main);
  DiagnosticCollector diagnostics(context);
  mlir::PassManager pm(&context);
  pm.addNestedPass<mlir::func::FuncOp>(CreateAttentionFusionPass());
  pm.addNestedPass<mlir::func::FuncOp>(CreateLayerNormFusionPass());
  pm.addNestedPass<mlir::func::FuncOp>(CreateEpilogueFusionPass());
  pm.addNestedPass<mlir::func::FuncOp>(CreateRegionFusionPass());
  ASSERT_TRUE(mlir::succeeded(pm.run(**module))) << diagnostics.Error("fusion failed");
  const FusionReport after = ReportFusion(main);
  std::printf("%s: %s; %lld library kernels, %lld ops in fusions, %lld ops in fused epilogues\n", name.c_str(),
              FormatFusionReport(after).c_str(), static_cast<long long>(after.library_kernels),
              static_cast<long long>(after.ops_in_fusions), static_cast<long long>(after.ops_in_epilogues));
  EXPECT_LT(after.kernels, before.kernels);
  if (name == "gpt_block") {
    EXPECT_EQ(after.attention_blocks, 1);
  }

  InlineFusions(**module);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(**module)));
  absl::StatusOr<Graph> fused = ExportGraph(**module);
  ASSERT_TRUE(fused.ok()) << fused.status();
  std::vector<Tensor> expected = Run(model->graph, model->input_names, *input);
  std::vector<Tensor> actual = Run(*fused, model->input_names, *input);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(model->graph.outputs()[i].name);
    pass_test::ExpectClose(expected[i], actual[i], 1e-5);
  }
}

TEST(FusionModels, ZooModelsKeepTheirOutputs) {
  const absl::Status s =
      testing::ForEachZooModel({"resnet18", "gpt_block"}, ::testing::TempDir(), "tsr_fusion_zoo", CheckModel);
  if (absl::IsUnavailable(s)) GTEST_SKIP() << s.message();
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace tsr
