// SummarizeModel: parameter, constant, byte and FLOP totals, op counts, signature,
// the heaviest-node selection and the number formatting of the text rendering.
#include "graph/builder/model_summary.h"

#include "gmock/gmock.h"
#include "graph/builder/nn.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

TEST(FormatTest, CountsAndBytes) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(269322), "269,322");
  EXPECT_EQ(FormatCount(-1234567), "-1,234,567");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(1077288), "1.03 MiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 30), "3.00 GiB");
}

// x f32[N,8] -> Dense(4) -> BatchNorm-free scale by a constant [4] -> output "y".
Graph SmallModel() {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 8});
  Output h = nn::Dense(b, x, 4);
  Output stat = ops::Variable(b, "stat", DType::kF64, {3}, {.trainable = false});
  Output y = ops::Mul(b, h, ops::Fill(b, DType::kF32, {4}, 2.0, "two"));
  b.MarkOutput("y", y);
  b.MarkOutput("stat", stat);
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(ModelSummaryTest, Totals) {
  Graph g = SmallModel();
  absl::StatusOr<ModelSummary> s = SummarizeModel(g);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->num_nodes, 8);
  EXPECT_EQ(s->trainable_params, 8 * 4 + 4);
  EXPECT_EQ(s->non_trainable_params, 3);
  EXPECT_EQ(s->params(), 39);
  EXPECT_EQ(s->param_bytes, 36 * 4 + 3 * 8);
  EXPECT_EQ(s->constant_elements, 4);
  EXPECT_EQ(s->constant_bytes, 16);
  // MatMul 2*8*4, bias add 4, scale 4 (batch bound to 1).
  EXPECT_EQ(s->flops, 64 + 4 + 4);
  ASSERT_EQ(s->op_counts.size(), 6u);
  EXPECT_EQ(s->op_counts[0], std::make_pair(std::string("Variable"), 3));
  ASSERT_EQ(s->inputs.size(), 1u);
  EXPECT_EQ(s->inputs[0].type.ToString(), "f32[N,8]");
  ASSERT_EQ(s->outputs.size(), 2u);
  EXPECT_EQ(s->outputs[0].tensor, "Mul");
  EXPECT_EQ(s->outputs[1].type.ToString(), "f64[3]");
  const NodeSummary& kernel = s->nodes[1];
  EXPECT_EQ(kernel.name, "dense/kernel");
  EXPECT_EQ(kernel.params, 32);
  EXPECT_EQ(kernel.bytes, 128);
}

TEST(ModelSummaryTest, HeaviestNodes) {
  absl::StatusOr<ModelSummary> s = SummarizeModel(SmallModel());
  ASSERT_TRUE(s.ok());
  std::vector<const NodeSummary*> top = HeaviestNodes(*s, 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0]->name, "dense/MatMul");
  EXPECT_EQ(top[1]->name, "dense/Add");  // ties with Mul on FLOPs: graph order
  EXPECT_EQ(HeaviestNodes(*s, 100).size(), 8u);
  EXPECT_EQ(HeaviestNodes(*s, -1).front()->name, "x");
}

TEST(ModelSummaryTest, TextRendering) {
  absl::StatusOr<ModelSummary> s = SummarizeModel(SmallModel());
  ASSERT_TRUE(s.ok());
  const std::string text = FormatModelSummary(*s);
  EXPECT_THAT(text, HasSubstr("nodes: 8\n"));
  EXPECT_THAT(text, HasSubstr("ops: Variable 3, "));
  EXPECT_THAT(text, HasSubstr("parameters: 39 (168 B): trainable 36, non-trainable 3\n"));
  EXPECT_THAT(text, HasSubstr("constants: 4 elements (16 B)\n"));
  EXPECT_THAT(text, HasSubstr("FLOPs per example: 72\n"));
  EXPECT_THAT(text, HasSubstr("  input  x: f32[N,8]\n"));
  EXPECT_THAT(text, HasSubstr("  output y: f32[N,4] (Mul)\n"));
  EXPECT_THAT(text, HasSubstr("dense/kernel  Variable"));
  const std::string top = FormatModelSummary(*s, 1);
  EXPECT_THAT(top, HasSubstr("top 1 nodes by FLOPs:"));
  EXPECT_THAT(top, HasSubstr("dense/MatMul"));
  EXPECT_THAT(top, ::testing::Not(HasSubstr("dense/kernel")));
}

TEST(ModelSummaryTest, UnregisteredOpIsAnError) {
  Graph g;
  ASSERT_TRUE(g.AddNode("mystery", "Mystery", {}).ok());
  absl::StatusOr<ModelSummary> s = SummarizeModel(g);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("node 'mystery' has op 'Mystery'"));
}

}  // namespace
}  // namespace tsr
