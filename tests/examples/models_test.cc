// The example models verify and have exactly the expected parameters, signature and
// output types.
#include "examples/models.h"

#include "gmock/gmock.h"
#include "graph/builder/model_summary.h"
#include "gtest/gtest.h"

namespace tsr::examples {
namespace {

const TensorType& SignatureType(const Graph& g, absl::string_view name, bool output) {
  for (const SignatureEntry& e : output ? g.outputs() : g.inputs()) {
    if (e.name == name) return *g.TypeOf(e.ref);
  }
  static const TensorType* const kNone = new TensorType();
  return *kNone;
}

TEST(MlpTest, DefaultIs784_256_256_10) {
  absl::StatusOr<Graph> g = BuildMlp();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->Verify().ok());
  absl::StatusOr<ModelSummary> s = SummarizeModel(*g);
  ASSERT_TRUE(s.ok()) << s.status();
  // 784*256+256 + 256*256+256 + 256*10+10
  EXPECT_EQ(s->trainable_params, 269322);
  EXPECT_EQ(s->non_trainable_params, 0);
  EXPECT_EQ(s->constant_elements, 0);
  EXPECT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(SignatureType(*g, "image", false).ToString(), "f32[N,784]");
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(SignatureType(*g, "logits", true).ToString(), "f32[N,10]");
  // The three matmuls dominate: 2 * (784*256 + 256*256 + 256*10).
  EXPECT_GE(s->flops, 2 * (784 * 256 + 256 * 256 + 256 * 10));
}

TEST(MlpTest, OptionsShapeTheModel) {
  absl::StatusOr<Graph> g =
      BuildMlp({.input_features = 20, .hidden_units = {16}, .num_classes = 3, .activation = "tanh"});
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<ModelSummary> s = SummarizeModel(*g);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->params(), 20 * 16 + 16 + 16 * 3 + 3);
  EXPECT_NE(g->FindNode("dense/Tanh"), nullptr);
  EXPECT_EQ(SignatureType(*g, "logits", true).ToString(), "f32[N,3]");
}

TEST(MlpTest, TrainingHeadAddsLabelsAndLoss) {
  absl::StatusOr<Graph> g = BuildMlp({.training_head = true});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(SignatureType(*g, "labels", false).ToString(), "i64[N]");
  EXPECT_EQ(SignatureType(*g, "loss", true).ToString(), "f32[]");
  EXPECT_EQ(g->FindNode("loss")->op(), "SoftmaxCrossEntropyLoss");
  absl::StatusOr<ModelSummary> s = SummarizeModel(*g);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->params(), 269322);
}

TEST(MlpTest, BadOptionsAreReported) {
  absl::StatusOr<Graph> g = BuildMlp({.hidden_units = {0}});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), ::testing::HasSubstr("layer 'dense' (Dense): units is 0"));
}

TEST(LeNetTest, ShapesAndParameters) {
  absl::StatusOr<Graph> g = BuildLeNet();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->Verify().ok());
  EXPECT_EQ(SignatureType(*g, "image", false).ToString(), "f32[N,1,28,28]");
  EXPECT_EQ(SignatureType(*g, "logits", true).ToString(), "f32[N,10]");
  absl::StatusOr<ModelSummary> s = SummarizeModel(*g);
  ASSERT_TRUE(s.ok());
  // conv 6*1*5*5+6, conv 16*6*5*5+16, dense 400*120+120, 120*84+84, 84*10+10.
  EXPECT_EQ(s->trainable_params, 156 + 2416 + 48120 + 10164 + 850);
  EXPECT_EQ(s->trainable_params, 61706);
  EXPECT_EQ(g->FindNode("conv2d/Conv")->output_type(0).ToString(), "f32[N,6,28,28]");
  EXPECT_EQ(g->FindNode("conv2d_1/Conv")->output_type(0).ToString(), "f32[N,16,10,10]");
  EXPECT_EQ(g->FindNode("dense/kernel")->output_type(0).ToString(), "f32[400,120]");
}

TEST(LeNetTest, TrainingHeadAndClasses) {
  absl::StatusOr<Graph> g = BuildLeNet({.num_classes = 5, .training_head = true});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(SignatureType(*g, "logits", true).ToString(), "f32[N,5]");
  EXPECT_EQ(SignatureType(*g, "loss", true).ToString(), "f32[]");
}

}  // namespace
}  // namespace tsr::examples
