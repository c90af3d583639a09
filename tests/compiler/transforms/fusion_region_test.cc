// Structural check of tsr-fuse-regions: graphs built with the graph builder are imported and
// fused; the expected tsr.Fusion ops appear, and the module with every fusion inlined back
// (InlineFusions below) exports to a graph that computes what the original computes
// (interpreter, reference kernels). Compiling the fusions themselves is the outliner's test.
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/mlir_diagnostics.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/transforms/fusion_report.h"
#include "compiler/transforms/region_fusion.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/session.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::InlineFusions;
using pass_test::RandomTensor;

struct Fused {
  int fusions = 0;
  int loop_fusions = 0;
  int multi_output_fusions = 0;
  FusionReport report;
  Graph inlined;
};

absl::StatusOr<Fused> FuseRegions(const Graph& graph) {
  mlir::DialectRegistry registry;
  RegisterGraphDialects(registry);
  mlir::MLIRContext context(registry);
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = ImportGraph(context, graph);
  if (!module.ok()) return module.status();
  DiagnosticCollector diagnostics(context);
  mlir::PassManager pm(&context);
  pm.addNestedPass<mlir::func::FuncOp>(CreateRegionFusionPass());
  if (mlir::failed(pm.run(**module))) return diagnostics.Error("tsr-fuse-regions failed");
  Fused fused;
  (*module)->walk([&](mlir::tsr::FusionOp f) {
    ++fused.fusions;
    fused.loop_fusions += f.getKind() == "loop";
    fused.multi_output_fusions += f.getNumResults() > 1;
  });
  for (auto func : (*module)->getOps<mlir::func::FuncOp>()) fused.report = ReportFusion(func);
  InlineFusions(**module);
  if (mlir::failed(mlir::verify(**module))) return diagnostics.Error("the inlined module does not verify");
  absl::StatusOr<Graph> exported = ExportGraph(**module);
  if (!exported.ok()) return exported.status();
  fused.inlined = *std::move(exported);
  return fused;
}

// The inlined graph runs the same ops in another order: results agree exactly.
void ExpectSameOutputs(const Graph& before, const Graph& after,
                       const std::vector<std::pair<std::string, Tensor>>& feeds) {
  pass_test::ExpectSameOutputs(before, after, feeds, 0.0);
}

// Attention scores and a residual LayerNormalization, as in a GPT-2 block (batch bound to 2).
TEST(RegionFusion, AttentionSoftmaxAndResidualLayerNorm) {
  const unsigned seed = 3;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output scores = b.Input("scores", DType::kF32, {2, 4, 16, 16});
  Output v = b.Input("v", DType::kF32, {2, 4, 16, 8});
  Output x = b.Input("x", DType::kF32, {2, 16, 32});
  Output attn = b.Input("attn", DType::kF32, {2, 16, 32});
  // Softmax(scores * scale + mask) then a MatMul: one reduction fusion.
  Output s = ops::Mul(b, scores, ops::Scalar(b, 0.125f));
  s = ops::Add(b, s, ops::Const(b, RandomTensor(DType::kF32, {1, 1, 16, 16}, rng)));
  s = ops::Softmax(b, s, -1);
  b.MarkOutput("context", ops::MatMul(b, s, v));
  // h = x + attn is the residual stream (an output) and LayerNormalization's input; the
  // scale-and-shift after it joins: one multi-output reduction fusion.
  Output h = ops::Add(b, x, attn);
  Output ln = ops::LayerNormalization(b, h, ops::Const(b, RandomTensor(DType::kF32, {32}, rng)),
                                      ops::Const(b, RandomTensor(DType::kF32, {32}, rng)));
  ln = ops::Add(b, ops::Mul(b, ln, ops::Const(b, RandomTensor(DType::kF32, {32}, rng))), ops::Scalar(b, 0.5f));
  b.MarkOutput("h", h);
  b.MarkOutput("ln", ln);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();

  absl::StatusOr<Fused> fused = FuseRegions(*graph);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(fused->fusions, 2);
  EXPECT_EQ(fused->loop_fusions, 0);
  EXPECT_EQ(fused->multi_output_fusions, 1);
  // MatMul + 2 fusions; 8 graph ops in all (constants are not counted).
  EXPECT_EQ(fused->report.kernels, 3);
  EXPECT_EQ(fused->report.ops_in_fusions, 7);
  ExpectSameOutputs(*graph, fused->inlined,
                    {{"scores", RandomTensor(DType::kF32, {2, 4, 16, 16}, rng)},
                     {"v", RandomTensor(DType::kF32, {2, 4, 16, 8}, rng)},
                     {"x", RandomTensor(DType::kF32, {2, 16, 32}, rng)},
                     {"attn", RandomTensor(DType::kF32, {2, 16, 32}, rng)}});
}

// Elementwise chains around library ops: a cycle through a MatMul splits a chain, a cheap
// Relu of the MatMul's result read by two reductions is recomputed in both, an Exp read by two
// reductions is computed once and written out.
TEST(RegionFusion, ChainsCyclesAndRecomputation) {
  const unsigned seed = 5;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {4, 8});
  Output r = ops::Relu(b, ops::Add(b, x, ops::Const(b, RandomTensor(DType::kF32, {8}, rng))));
  Output m = ops::MatMul(b, r, ops::Const(b, RandomTensor(DType::kF32, {8, 8}, rng)));
  b.MarkOutput("y", ops::Tanh(b, ops::Add(b, r, m)));  // r -> m -> Add: Add cannot join r's fusion
  Output relu = ops::Relu(b, m);
  b.MarkOutput("sum", ops::ReduceSum(b, relu, {1}));
  b.MarkOutput("max", ops::ReduceMax(b, relu, {1}));
  Output e = ops::Exp(b, x);
  b.MarkOutput("mean", ops::Sqrt(b, ops::ReduceMean(b, e, {1})));
  b.MarkOutput("min", ops::ReduceMin(b, e, {1}));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();

  absl::StatusOr<Fused> fused = FuseRegions(*graph);
  ASSERT_TRUE(fused.ok()) << fused.status();
  // {Add, Relu}, {Add, Tanh}, {Relu, ReduceSum}, {Relu (copy), ReduceMax}, {Exp, ReduceMean,
  // Sqrt}, {ReduceMin}; and the MatMul.
  EXPECT_EQ(fused->fusions, 6);
  EXPECT_EQ(fused->loop_fusions, 2);
  EXPECT_EQ(fused->multi_output_fusions, 1);  // Exp is also read by ReduceMin
  EXPECT_EQ(fused->report.kernels, 7);
  EXPECT_EQ(fused->report.ops_in_fusions, 12);
  ExpectSameOutputs(*graph, fused->inlined, {{"x", RandomTensor(DType::kF32, {4, 8}, rng)}});
}

}  // namespace
}  // namespace tsr
