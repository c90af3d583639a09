// Layers: output shapes, the Variables each creates (names, shapes, initializers,
// trainability) and errors that name the layer.
#include "graph/builder/nn.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

// The Variable node `name`, checked to exist and have the given type.
const Node* ExpectVariable(const GraphBuilder& b, absl::string_view name, absl::string_view type,
                           absl::string_view initializer, bool trainable = true) {
  const Node* n = b.graph().FindNode(name);
  EXPECT_NE(n, nullptr) << "no node " << name;
  if (n == nullptr) return nullptr;
  EXPECT_EQ(n->op(), "Variable");
  EXPECT_EQ(n->output_type(0).ToString(), type) << name;
  const AttrValue* init = n->FindAttr("initializer");
  EXPECT_TRUE(init != nullptr && init->s() == initializer) << name;
  const AttrValue* t = n->FindAttr("trainable");
  EXPECT_TRUE(t != nullptr && t->b() == trainable) << name;
  return n;
}

int CountOp(const GraphBuilder& b, absl::string_view op) {
  int count = 0;
  for (const Node* n : b.graph().nodes()) count += n->op() == op;
  return count;
}

TEST(DenseTest, ShapesVariablesAndActivation) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 784});
  Output h = nn::Dense(b, x, 256, {.activation = "relu", .use_bias = true, .kernel_initializer = "glorot_uniform"});
  EXPECT_EQ(h.type().ToString(), "f32[N,256]");
  EXPECT_EQ(h.name(), "dense/Relu");
  ExpectVariable(b, "dense/kernel", "f32[784,256]", "glorot_uniform");
  ExpectVariable(b, "dense/bias", "f32[256]", "zeros");

  Output y = nn::Dense(b, h, 10, {.use_bias = false, .kernel_initializer = "he_normal"});
  EXPECT_EQ(y.type().ToString(), "f32[N,10]");
  EXPECT_EQ(y.node()->op(), "MatMul");  // linear, no bias
  ExpectVariable(b, "dense_1/kernel", "f32[256,10]", "he_normal");
  EXPECT_EQ(b.graph().FindNode("dense_1/bias"), nullptr);
  EXPECT_TRUE(b.Finish().ok());
}

TEST(DenseTest, AppliesToTheLastAxisAndTakesAName) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 7, 32});
  Output y = nn::Dense(b, x, 64, {.activation = "gelu", .name = "proj"});
  EXPECT_EQ(y.type().ToString(), "f32[N,7,64]");
  EXPECT_EQ(y.node()->op(), "Gelu");
  ExpectVariable(b, "proj/kernel", "f32[32,64]", "glorot_uniform");
  // A second layer with the same explicit name collides on its variables.
  nn::Dense(b, x, 64, {.name = "proj"});
  EXPECT_THAT(b.status().message(), HasSubstr("'proj/kernel'"));
}

TEST(DenseTest, ErrorsNameTheLayer) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 8});
  nn::Dense(b, x, 4);
  EXPECT_FALSE(nn::Dense(b, x, 0).valid());
  EXPECT_THAT(b.status().message(), HasSubstr("layer 'dense_1' (Dense): units is 0"));

  GraphBuilder c;
  Output v = c.Input("v", DType::kF32, {4, kBatchDim});
  nn::Dense(c, v, 4);
  EXPECT_THAT(c.status().message(), HasSubstr("layer 'dense' (Dense): input is f32[4,N]"));

  GraphBuilder d;
  nn::Dense(d, d.Input("x", DType::kF32, {2, 3}), 4, {.activation = "swishy"});
  EXPECT_THAT(d.status().message(), HasSubstr("unknown activation 'swishy'"));
}

TEST(ActivationTest, EveryNameMapsToItsOp) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {2, 3});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"relu", "Relu"},       {"gelu", "Gelu"},         {"gelu_tanh", "Gelu"},
      {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"},         {"silu", "Silu"},
      {"swish", "Silu"},      {"softplus", "Softplus"}, {"leaky_relu", "LeakyRelu"},
      {"softmax", "Softmax"}};
  for (const auto& [name, op] : cases) EXPECT_EQ(nn::Activation(b, x, name).node()->op(), op) << name;
  EXPECT_EQ(nn::Activation(b, x, "linear").ref(), x.ref());
  EXPECT_EQ(nn::Activation(b, x, "").ref(), x.ref());
}

TEST(Conv2DTest, SameAndValidPadding) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 1, 28, 28});
  Output same = nn::Conv2D(b, x, 6, 5, {.padding = "same", .activation = "relu"});
  EXPECT_EQ(same.type().ToString(), "f32[N,6,28,28]");
  ExpectVariable(b, "conv2d/kernel", "f32[6,1,5,5]", "glorot_uniform");
  ExpectVariable(b, "conv2d/bias", "f32[6]", "zeros");
  const Node* conv = b.graph().FindNode("conv2d/Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->FindAttr("pads")->ints(), (std::vector<int64_t>{2, 2, 2, 2}));

  Output valid = nn::Conv2D(b, same, 16, {5, 3}, {.kernel_initializer = "he_uniform"});
  EXPECT_EQ(valid.type().ToString(), "f32[N,16,24,26]");
  ExpectVariable(b, "conv2d_1/kernel", "f32[16,6,5,3]", "he_uniform");
  EXPECT_EQ(b.graph().FindNode("conv2d_1/Conv")->FindAttr("pads"), nullptr);

  // "same" with stride 2 on an odd size: ceil(25 / 2) = 13; the odd pad goes at the end.
  Output odd = b.Input("odd", DType::kF32, {kBatchDim, 3, 25, 25});
  Output strided = nn::Conv2D(b, odd, 8, 4, {.strides = {2}, .padding = "same", .use_bias = false});
  EXPECT_EQ(strided.type().ToString(), "f32[N,8,13,13]");
  EXPECT_EQ(strided.node()->FindAttr("pads")->ints(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(strided.node()->num_inputs(), 2);  // no bias

  Output grouped = nn::Conv2D(b, same, 12, 3, {.groups = 3, .name = "grouped"});
  EXPECT_EQ(grouped.type().ToString(), "f32[N,12,26,26]");
  ExpectVariable(b, "grouped/kernel", "f32[12,2,3,3]", "glorot_uniform");
  EXPECT_TRUE(b.Finish().ok());
}

TEST(Conv2DTest, Errors) {
  GraphBuilder b;
  nn::Conv2D(b, b.Input("x", DType::kF32, {kBatchDim, 784}), 6, 5);
  EXPECT_THAT(b.status().message(), HasSubstr("layer 'conv2d' (Conv2D): input is f32[N,784] but NCHW"));

  GraphBuilder c;
  nn::Conv2D(c, c.Input("x", DType::kF32, {kBatchDim, 3, 8, 8}), 4, 3, {.padding = "full"});
  EXPECT_THAT(c.status().message(), HasSubstr("padding is \"full\""));

  GraphBuilder d;
  nn::Conv2D(d, d.Input("x", DType::kF32, {kBatchDim, 3, 8, 8}), 4, 3, {.groups = 2});
  EXPECT_THAT(d.status().message(), HasSubstr("must be positive multiples of groups (2)"));
}

TEST(BatchNormTest, VariablesAndMovingStatistics) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 16, 10, 10});
  Output y = nn::BatchNorm(b, x);
  EXPECT_EQ(y.type().ToString(), "f32[N,16,10,10]");
  EXPECT_EQ(y.node()->op(), "BatchNormalization");
  EXPECT_EQ(y.node()->FindAttr("epsilon")->f(), 1e-3);
  EXPECT_EQ(y.node()->FindAttr("momentum")->f(), 0.99);
  ExpectVariable(b, "batch_normalization/gamma", "f32[16]", "ones");
  ExpectVariable(b, "batch_normalization/beta", "f32[16]", "zeros");
  ExpectVariable(b, "batch_normalization/moving_mean", "f32[16]", "zeros", /*trainable=*/false);
  ExpectVariable(b, "batch_normalization/moving_variance", "f32[16]", "ones", /*trainable=*/false);

  Output z = nn::BatchNorm(b, y, {.center = false, .scale = false});
  EXPECT_EQ(z.type().ToString(), "f32[N,16,10,10]");
  EXPECT_EQ(b.graph().FindNode("batch_normalization_1/gamma"), nullptr);
  EXPECT_NE(b.graph().FindNode("batch_normalization_1/moving_mean"), nullptr);
  EXPECT_EQ(CountOp(b, "Variable"), 6);
  EXPECT_TRUE(b.Finish().ok());
}

// With a training flag: true normalizes by the batch statistics and the Assign nodes
// blend them into the moving ones; false normalizes by the moving statistics.
TEST(BatchNormTest, TrainingFlagSelectsBatchStatisticsAndUpdatesMovingOnes) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 2, 3});
  Output training = nn::TrainingFlag(b);
  b.MarkOutput("y", nn::BatchNorm(b, x, {.momentum = 0.75, .epsilon = 1e-3, .training_mode = training}));
  absl::StatusOr<Graph> g = b.Finish();
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(*std::move(g), {.device = "reference"});
  ASSERT_TRUE(session.ok()) << session.status();
  // Channel 0 holds 1..6 (mean 3.5, variance 35/12), channel 1 holds 10 everywhere.
  const Tensor batch = Tensor::FromVector<float>(Shape({2, 2, 3}), {1, 2, 3, 10, 10, 10, 4, 5, 6, 10, 10, 10});
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run(
      {{"x", batch}, {"training", Tensor::Scalar(true)}}, {"y"},
      RunOptions{.targets = {"batch_normalization/update_moving_mean", "batch_normalization/update_moving_variance"}});
  ASSERT_TRUE(out.ok()) << out.status();
  const float sd = std::sqrt(35.0f / 12.0f + 1e-3f);
  EXPECT_NEAR((*out)[0].flat<float>()[0], (1 - 3.5f) / sd, 1e-5);
  EXPECT_NEAR((*out)[0].flat<float>()[8], (6 - 3.5f) / sd, 1e-5);
  EXPECT_NEAR((*out)[0].flat<float>()[3], 0.0f, 1e-5);
  absl::StatusOr<Tensor> mean = (*session)->GetVariable("batch_normalization/moving_mean");
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_NEAR(mean->flat<float>()[0], 0.25f * 3.5f, 1e-6);
  EXPECT_NEAR(mean->flat<float>()[1], 0.25f * 10.0f, 1e-6);
  // Inference: (x - moving_mean) / sqrt(moving_variance).
  absl::StatusOr<Tensor> variance = (*session)->GetVariable("batch_normalization/moving_variance");
  ASSERT_TRUE(variance.ok()) << variance.status();
  out = (*session)->Run({{"x", batch}, {"training", Tensor::Scalar(false)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].flat<float>()[0], (1 - mean->flat<float>()[0]) / std::sqrt(variance->flat<float>()[0] + 1e-3f),
              1e-5);
  EXPECT_NEAR((*out)[0].flat<float>()[3], (10 - mean->flat<float>()[1]) / std::sqrt(variance->flat<float>()[1] + 1e-3f),
              1e-5);
}

TEST(LayerNormTest, ParametersCoverTheNormalizedDims) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 8, 32});
  Output y = nn::LayerNorm(b, x);
  EXPECT_EQ(y.type().ToString(), "f32[N,8,32]");
  ExpectVariable(b, "layer_normalization/gamma", "f32[32]", "ones");
  ExpectVariable(b, "layer_normalization/beta", "f32[32]", "zeros");
  Output z = nn::LayerNorm(b, x, {.axis = 1, .center = false});
  ExpectVariable(b, "layer_normalization_1/gamma", "f32[8,32]", "ones");
  EXPECT_EQ(z.node()->num_inputs(), 2);  // no bias input
  EXPECT_TRUE(b.Finish().ok());

  GraphBuilder c;
  nn::LayerNorm(c, c.Input("x", DType::kF32, {kBatchDim, 4}), {.axis = 0});
  EXPECT_THAT(c.status().message(), HasSubstr("the normalized dims [N,4] must be static"));
}

TEST(MultiHeadAttentionTest, CrossAttentionShapesAndVariables) {
  GraphBuilder b;
  Output q = b.Input("q", DType::kF32, {kBatchDim, 8, 32});
  Output kv = b.Input("kv", DType::kF32, {kBatchDim, 10, 24});
  Output y = nn::MultiHeadAttention(b, q, kv, 4);
  EXPECT_EQ(y.type().ToString(), "f32[N,8,32]");
  ExpectVariable(b, "multi_head_attention/query/kernel", "f32[32,32]", "glorot_uniform");
  ExpectVariable(b, "multi_head_attention/query/bias", "f32[32]", "zeros");
  ExpectVariable(b, "multi_head_attention/key/kernel", "f32[24,32]", "glorot_uniform");
  ExpectVariable(b, "multi_head_attention/value/kernel", "f32[24,32]", "glorot_uniform");
  ExpectVariable(b, "multi_head_attention/attention_output/kernel", "f32[32,32]", "glorot_uniform");
  ExpectVariable(b, "multi_head_attention/attention_output/bias", "f32[32]", "zeros");
  EXPECT_EQ(CountOp(b, "Softmax"), 1);
  // Scores [N, heads, Tq, Tk] feed the softmax.
  for (const Node* n : b.graph().nodes()) {
    if (n->op() == "Softmax") {
      EXPECT_EQ(n->output_type(0).ToString(), "f32[N,4,8,10]");
    }
  }
  EXPECT_EQ(b.graph().FindNode("multi_head_attention/causal_mask"), nullptr);
  EXPECT_TRUE(b.Finish().ok());
}

TEST(MultiHeadAttentionTest, CausalMaskAndCustomDims) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 3, 16});
  Output y = nn::MultiHeadAttention(b, x, x, 2,
                                    {.causal = true, .key_dim = 5, .value_dim = 6, .output_dim = 12, .name = "attn"});
  EXPECT_EQ(y.type().ToString(), "f32[N,3,12]");
  ExpectVariable(b, "attn/query/kernel", "f32[16,10]", "glorot_uniform");
  ExpectVariable(b, "attn/value/kernel", "f32[16,12]", "glorot_uniform");
  ExpectVariable(b, "attn/attention_output/kernel", "f32[12,12]", "glorot_uniform");
  const Node* mask = b.graph().FindNode("attn/causal_mask");
  ASSERT_NE(mask, nullptr);
  const Tensor& m = mask->FindAttr("value")->tensor();
  EXPECT_EQ(m.type().ToString(), "f32[3,3]");
  // Row i may attend to columns 0..i only.
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(m.GetAsDouble(i * 3 + j) < -1e8, j > i) << i << "," << j;
  }
  // The query is scaled by 1/sqrt(key_dim) before the scores.
  bool found_scale = false;
  for (const Node* n : b.graph().nodes()) {
    if (n->op() != "Constant" || n->output_type(0).shape.rank() != 0) continue;
    found_scale |= std::abs(n->FindAttr("value")->tensor().GetAsDouble(0) - 1 / std::sqrt(5.0)) < 1e-6;
  }
  EXPECT_TRUE(found_scale);
  EXPECT_TRUE(b.Finish().ok());
}

TEST(MultiHeadAttentionTest, Errors) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 30});
  nn::MultiHeadAttention(b, x, x, 3);
  EXPECT_THAT(b.status().message(), HasSubstr("layer 'multi_head_attention' (MultiHeadAttention): query is f32[N,30]"));

  GraphBuilder c;
  Output s = c.Input("s", DType::kF32, {kBatchDim, 4, 30});
  nn::MultiHeadAttention(c, s, s, 4);
  EXPECT_THAT(c.status().message(), HasSubstr("query features (30) are not divisible by num_heads (4)"));
}

TEST(PoolFlattenDropoutTest, Shapes) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 6, 28, 28});
  Output p = nn::MaxPool2D(b, x, 2);
  EXPECT_EQ(p.type().ToString(), "f32[N,6,14,14]");
  EXPECT_EQ(p.node()->FindAttr("strides")->ints(), (std::vector<int64_t>{2, 2}));
  Output same = nn::MaxPool2D(b, ops::Slice(b, x, {0}, {25}, {2}), {3, 3}, {.strides = {2}, .padding = "same"});
  EXPECT_EQ(same.type().ToString(), "f32[N,6,13,14]");
  Output flat = nn::Flatten(b, p, "flatten");
  EXPECT_EQ(flat.type().ToString(), "f32[N,1176]");
  EXPECT_EQ(flat.name(), "flatten");

  Output inference = nn::Dropout(b, flat, 0.5);
  EXPECT_EQ(inference.type().ToString(), "f32[N,1176]");
  EXPECT_EQ(b.graph().ConstantValue(inference.node()->input(2))->GetAsInt64(0), 0);
  Output training = nn::Dropout(b, flat, 0.1, {.training = true, .seed = 42});
  EXPECT_EQ(b.graph().ConstantValue(training.node()->input(1))->GetAsDouble(0), static_cast<double>(0.1f));
  EXPECT_EQ(b.graph().ConstantValue(training.node()->input(2))->GetAsInt64(0), 1);
  EXPECT_EQ(training.node()->FindAttr("seed")->i(), 42);
  EXPECT_TRUE(b.Finish().ok());

  GraphBuilder c;
  nn::MaxPool2D(c, c.Input("x", DType::kF32, {kBatchDim, 8}), 2, {.name = "pool"});
  EXPECT_THAT(c.status().message(), HasSubstr("layer 'pool' (MaxPool2D): input is f32[N,8]"));
}

TEST(LayersTest, LayersInsideScopesAndAfterErrors) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 4});
  {
    auto block = b.Scope("block1");
    x = nn::Dense(b, x, 4);
    EXPECT_EQ(x.name(), "block1/dense/Add");
  }
  EXPECT_NE(b.graph().FindNode("block1/dense/kernel"), nullptr);
  // After an error, layers neither add nodes nor change the error.
  ops::Reshape(b, x, {3}, false, "broken");
  const int nodes = b.graph().num_nodes();
  EXPECT_FALSE(nn::Dense(b, x, 4).valid());
  EXPECT_FALSE(nn::MultiHeadAttention(b, x, x, 2).valid());
  EXPECT_EQ(b.graph().num_nodes(), nodes);
  EXPECT_THAT(b.status().message(), HasSubstr("node 'broken' (Reshape)"));
}

}  // namespace
}  // namespace tsr
