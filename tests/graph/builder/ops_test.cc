// The typed op helpers: each builds its op with the inputs and attributes it names,
// and inference gives the expected type. Every test ends with a verified graph.
#include "graph/builder/ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::ElementsAre;

std::string TypeOf(const Output& o) { return o.type().ToString(); }

// The Constant value feeding input `i` of `o`'s node.
std::vector<int64_t> ConstInput(const GraphBuilder& b, const Output& o, int i) {
  if (o.node() == nullptr || i >= o.node()->num_inputs()) return {};
  const Tensor* t = b.graph().ConstantValue(o.node()->input(i));
  return t == nullptr ? std::vector<int64_t>{} : t->ToInt64Vector();
}

const AttrValue& Attr(const Output& o, absl::string_view name) {
  const AttrValue* a = o.node()->FindAttr(name);
  static const AttrValue* const kMissing = new AttrValue(AttrValue::String("<missing>"));
  return a == nullptr ? *kMissing : *a;
}

class OpsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    absl::StatusOr<Graph> g = b_.Finish();
    EXPECT_TRUE(g.ok()) << g.status();
  }
  GraphBuilder b_;
};

TEST_F(OpsTest, Sources) {
  Output c = ops::Const(b_, {2, 3, 4});
  EXPECT_EQ(TypeOf(c), "i64[3]");
  EXPECT_EQ(b_.graph().ConstantValue(c.ref())->ToInt64Vector(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(TypeOf(ops::Scalar(b_, 1.5f)), "f32[]");
  EXPECT_EQ(TypeOf(ops::Scalar(b_, int64_t{7})), "i64[]");
  Output h = ops::Scalar(b_, 0.5, DType::kF16);
  EXPECT_EQ(TypeOf(h), "f16[]");
  EXPECT_EQ(b_.graph().ConstantValue(h.ref())->GetAsDouble(0), 0.5);
  Output f = ops::Fill(b_, DType::kI32, {2, 2}, 3);
  EXPECT_EQ(b_.graph().ConstantValue(f.ref())->ToInt64Vector(), (std::vector<int64_t>{3, 3, 3, 3}));
  Output m = ops::Const(b_, DType::kF64, {2}, {1.25, -2});
  EXPECT_EQ(b_.graph().ConstantValue(m.ref())->GetAsDouble(1), -2.0);
  EXPECT_EQ(TypeOf(ops::Placeholder(b_, DType::kI64, {kBatchDim})), "i64[N]");
  EXPECT_TRUE(b_.graph().inputs().empty());

  Output v = ops::Variable(b_, "w", DType::kF32, {3, 4},
                           {.initializer = "truncated_normal", .trainable = false, .init_stddev = 0.02, .seed = 7});
  EXPECT_EQ(TypeOf(v), "f32[3,4]");
  EXPECT_EQ(Attr(v, "initializer").s(), "truncated_normal");
  EXPECT_FALSE(Attr(v, "trainable").b());
  EXPECT_EQ(Attr(v, "init_stddev").f(), 0.02);
  EXPECT_EQ(Attr(v, "seed").i(), 7);
  EXPECT_EQ(v.node()->FindAttr("init_mean"), nullptr);  // unset: the op default
  EXPECT_EQ(TypeOf(ops::Identity(b_, v)), "f32[3,4]");
}

TEST_F(OpsTest, Elementwise) {
  Output x = b_.Input("x", DType::kF32, {kBatchDim, 3});
  Output y = ops::Variable(b_, "y", DType::kF32, {3});
  for (Output o : {ops::Add(b_, x, y), ops::Sub(b_, x, y), ops::Mul(b_, x, y), ops::Div(b_, x, y), ops::Pow(b_, x, y),
                   ops::Max(b_, x, y), ops::Min(b_, x, y), ops::Max(b_, {x, y, x}), ops::Min(b_, {x, y})}) {
    EXPECT_EQ(TypeOf(o), "f32[N,3]") << o.name();
  }
  for (Output o : {ops::Neg(b_, x), ops::Abs(b_, x), ops::Exp(b_, x), ops::Log(b_, x), ops::Sqrt(b_, x),
                   ops::Rsqrt(b_, x), ops::Reciprocal(b_, x)}) {
    EXPECT_EQ(TypeOf(o), "f32[N,3]") << o.name();
  }
  Output less = ops::Less(b_, x, y);
  EXPECT_EQ(TypeOf(less), "bool[N,3]");
  EXPECT_EQ(TypeOf(ops::Equal(b_, x, y)), "bool[N,3]");
  EXPECT_EQ(TypeOf(ops::Greater(b_, x, y)), "bool[N,3]");
  EXPECT_EQ(TypeOf(ops::Where(b_, less, x, y)), "f32[N,3]");
  EXPECT_EQ(TypeOf(ops::Cast(b_, x, DType::kI32)), "i32[N,3]");
  Output clipped = ops::Clip(b_, x, 0.0, 6.0);
  EXPECT_EQ(TypeOf(clipped), "f32[N,3]");
  EXPECT_EQ(b_.graph().ConstantValue(clipped.node()->input(2))->GetAsDouble(0), 6.0);
  Output lower_only = ops::Clip(b_, x, ops::Scalar(b_, 0.0f), Output());
  EXPECT_EQ(lower_only.node()->num_inputs(), 2);
}

TEST_F(OpsTest, Activations) {
  Output x = b_.Input("x", DType::kF32, {kBatchDim, 8});
  for (Output o : {ops::Relu(b_, x), ops::LeakyRelu(b_, x, 0.2), ops::Gelu(b_, x, "tanh"), ops::Sigmoid(b_, x),
                   ops::Tanh(b_, x), ops::Erf(b_, x), ops::Softplus(b_, x), ops::Silu(b_, x)}) {
    EXPECT_EQ(TypeOf(o), "f32[N,8]") << o.name();
  }
  EXPECT_EQ(Attr(ops::LeakyRelu(b_, x, 0.3), "alpha").f(), 0.3);
  EXPECT_EQ(Attr(ops::Gelu(b_, x), "approximate").s(), "none");
}

TEST_F(OpsTest, Reductions) {
  Output x = b_.Input("x", DType::kF32, {kBatchDim, 4, 5});
  Output mean = ops::ReduceMean(b_, x, {1}, /*keepdims=*/false);
  EXPECT_EQ(TypeOf(mean), "f32[N,5]");
  EXPECT_THAT(ConstInput(b_, mean, 1), ElementsAre(1));
  EXPECT_EQ(Attr(mean, "keepdims").i(), 0);
  EXPECT_EQ(TypeOf(ops::ReduceSum(b_, x, {-1})), "f32[N,4,1]");
  Output all = ops::ReduceMax(b_, x);
  EXPECT_EQ(all.node()->num_inputs(), 1);  // no axes input: reduce everything
  EXPECT_EQ(TypeOf(all), "f32[1,1,1]");
  EXPECT_EQ(TypeOf(ops::ReduceMin(b_, x, ops::Const(b_, {1, 2}), false)), "f32[N]");
  EXPECT_EQ(TypeOf(ops::ReduceProd(b_, x, {2}, false)), "f32[N,4]");
  EXPECT_EQ(TypeOf(ops::ReduceL2(b_, x, {1, 2}, false)), "f32[N]");
  EXPECT_EQ(TypeOf(ops::ArgMax(b_, x, {.axis = 2, .keepdims = false})), "i64[N,4]");
}

TEST_F(OpsTest, Dropout) {
  Output x = b_.Input("x", DType::kF16, {kBatchDim, 4});
  Output y = ops::Dropout(b_, x, {.ratio = 0.25, .training = true, .seed = 3});
  EXPECT_EQ(TypeOf(y), "f16[N,4]");
  EXPECT_EQ(Attr(y, "seed").i(), 3);
  EXPECT_EQ(b_.graph().ConstantValue(y.node()->input(1))->dtype(), DType::kF16);
  EXPECT_EQ(b_.graph().ConstantValue(y.node()->input(2))->GetAsInt64(0), 1);
}

TEST_F(OpsTest, MatrixProducts) {
  Output a = b_.Input("a", DType::kF32, {kBatchDim, 4});
  Output w = ops::Variable(b_, "w", DType::kF32, {3, 4});
  Output c = ops::Variable(b_, "c", DType::kF32, {3});
  EXPECT_EQ(TypeOf(ops::MatMul(b_, a, ops::Variable(b_, "w2", DType::kF32, {4, 6}))), "f32[N,6]");
  Output gemm = ops::Gemm(b_, a, w, c, {.alpha = 0.5, .trans_b = true});
  EXPECT_EQ(TypeOf(gemm), "f32[N,3]");
  EXPECT_EQ(Attr(gemm, "transB").i(), 1);
  EXPECT_EQ(Attr(gemm, "transA").i(), 0);
  EXPECT_EQ(Attr(gemm, "alpha").f(), 0.5);
  EXPECT_EQ(ops::Gemm(b_, a, w, {.trans_b = true}).node()->num_inputs(), 2);
}

TEST_F(OpsTest, Convolutions) {
  Output x = b_.Input("x", DType::kF32, {kBatchDim, 3, 32, 32});
  Output w = ops::Variable(b_, "w", DType::kF32, {16, 3, 3, 3});
  Output bias = ops::Variable(b_, "b", DType::kF32, {16});
  Output conv = ops::Conv(b_, x, w, {.strides = {2, 2}, .pads = {1, 1, 1, 1}});
  EXPECT_EQ(TypeOf(conv), "f32[N,16,16,16]");
  EXPECT_EQ(conv.node()->num_inputs(), 2);
  EXPECT_EQ(TypeOf(ops::Conv(b_, x, w, bias)), "f32[N,16,30,30]");
  Output wt = ops::Variable(b_, "wt", DType::kF32, {16, 8, 2, 2});
  EXPECT_EQ(TypeOf(ops::ConvTranspose(b_, conv, wt, {.strides = {2, 2}})), "f32[N,8,32,32]");
}

TEST_F(OpsTest, Pooling) {
  Output x = b_.Input("x", DType::kF32, {kBatchDim, 6, 28, 28});
  EXPECT_EQ(TypeOf(ops::MaxPool(b_, x, {.kernel_shape = {2, 2}, .strides = {2, 2}})), "f32[N,6,14,14]");
  EXPECT_EQ(TypeOf(ops::AveragePool(b_, x, {.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}})), "f32[N,6,28,28]");
  EXPECT_EQ(TypeOf(ops::GlobalAveragePool(b_, x)), "f32[N,6,1,1]");
}

TEST_F(OpsTest, Normalization) {
  Output x = b_.Input("x", DType::kF32, {kBatchDim, 4, 8});
  Output c = ops::Variable(b_, "c", DType::kF32, {4});
  Output bn = ops::BatchNormalization(b_, x, c, c, c, c, {.epsilon = 1e-3});
  EXPECT_EQ(TypeOf(bn), "f32[N,4,8]");
  EXPECT_EQ(Attr(bn, "epsilon").f(), 1e-3);
  Output g = ops::Variable(b_, "g", DType::kF32, {8});
  EXPECT_EQ(TypeOf(ops::LayerNormalization(b_, x, g, Output())), "f32[N,4,8]");
  EXPECT_EQ(TypeOf(ops::LayerNormalization(b_, x, g, g, {.axis = -1, .epsilon = 1e-6})), "f32[N,4,8]");
  EXPECT_EQ(Attr(ops::Softmax(b_, x, 1), "axis").i(), 1);
  EXPECT_EQ(TypeOf(ops::LogSoftmax(b_, x)), "f32[N,4,8]");
}

TEST_F(OpsTest, Loss) {
  Output scores = b_.Input("scores", DType::kF32, {kBatchDim, 10});
  Output labels = b_.Input("labels", DType::kI64, {kBatchDim});
  EXPECT_EQ(TypeOf(ops::SoftmaxCrossEntropyLoss(b_, scores, labels)), "f32[]");
  Output none = ops::SoftmaxCrossEntropyLoss(b_, scores, labels, {.reduction = "none", .ignore_index = -100});
  EXPECT_EQ(TypeOf(none), "f32[N]");
  EXPECT_EQ(Attr(none, "ignore_index").i(), -100);
}

TEST_F(OpsTest, ShapesAndLayout) {
  Output x = b_.Input("x", DType::kF32, {kBatchDim, 28, 28});
  Output flat = ops::Reshape(b_, x, {-1, 784});
  EXPECT_EQ(TypeOf(flat), "f32[N,784]");
  EXPECT_THAT(ConstInput(b_, flat, 1), ElementsAre(-1, 784));
  EXPECT_EQ(TypeOf(ops::Transpose(b_, x, {0, 2, 1})), "f32[N,28,28]");
  EXPECT_EQ(TypeOf(ops::Transpose(b_, flat)), "f32[784,N]");
  EXPECT_EQ(TypeOf(ops::Flatten(b_, x)), "f32[N,784]");
  Output u = ops::Unsqueeze(b_, x, {1});
  EXPECT_EQ(TypeOf(u), "f32[N,1,28,28]");
  EXPECT_EQ(TypeOf(ops::Squeeze(b_, u, {1})), "f32[N,28,28]");
  EXPECT_EQ(TypeOf(ops::Squeeze(b_, u)), "f32[N,28,28]");
  EXPECT_EQ(TypeOf(ops::Concat(b_, {x, x}, 2)), "f32[N,28,56]");
  std::vector<Output> halves = ops::Split(b_, x, 2, 1);
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_EQ(TypeOf(halves[1]), "f32[N,14,28]");
  std::vector<Output> parts = ops::Split(b_, x, std::vector<int64_t>{20, 8}, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(TypeOf(parts[1]), "f32[N,28,8]");
  EXPECT_EQ(TypeOf(ops::Slice(b_, x, {2}, {10}, {1})), "f32[N,8,28]");
  Output v = ops::Variable(b_, "v", DType::kF32, {1, 3});
  Output strided = ops::Slice(b_, ops::Variable(b_, "m", DType::kF32, {4, 6}), {0, 0}, {4, 6}, {}, {2, 3});
  EXPECT_THAT(ConstInput(b_, strided, 3), ElementsAre(0, 1));  // axes filled in for the steps
  EXPECT_EQ(TypeOf(strided), "f32[2,2]");
  ASSERT_TRUE(b_.ok()) << b_.status();
  EXPECT_EQ(TypeOf(ops::Expand(b_, v, {4, 3})), "f32[4,3]");
  EXPECT_EQ(TypeOf(ops::Pad(b_, x, {0, 1, 1, 0, 1, 1})), "f32[N,30,30]");
  Output padded = ops::Pad(b_, x, {2, 2}, {.constant_value = -1, .axes = {2}});
  EXPECT_EQ(TypeOf(padded), "f32[N,28,32]");
  EXPECT_EQ(padded.node()->num_inputs(), 4);
  EXPECT_EQ(TypeOf(ops::Tile(b_, v, {2, 2})), "f32[2,6]");
  EXPECT_EQ(TypeOf(ops::Shape(b_, v)), "i64[2]");
  EXPECT_EQ(TypeOf(ops::Shape(b_, v, 1)), "i64[1]");
  EXPECT_EQ(TypeOf(ops::Range(b_, 0, 10, 2)), "i64[5]");
  EXPECT_TRUE(b_.ok()) << b_.status();
}

TEST_F(OpsTest, Indexing) {
  Output table = ops::Variable(b_, "table", DType::kF32, {100, 16});
  Output ids = b_.Input("ids", DType::kI64, {kBatchDim, 8});
  EXPECT_EQ(TypeOf(ops::Gather(b_, table, ids)), "f32[N,8,16]");
  Output data = b_.Input("data", DType::kF32, {kBatchDim, 5});
  Output idx = b_.Input("idx", DType::kI64, {kBatchDim, 2});
  EXPECT_EQ(TypeOf(ops::GatherElements(b_, data, idx, 1)), "f32[N,2]");
  Output upd = b_.Input("upd", DType::kF32, {kBatchDim, 2});
  EXPECT_EQ(TypeOf(ops::ScatterElements(b_, data, idx, upd, 1, "add")), "f32[N,5]");
  Output labels = b_.Input("labels", DType::kI64, {kBatchDim});
  Output hot = ops::OneHot(b_, labels, 10, {.on_value = 2, .off_value = -1});
  EXPECT_EQ(TypeOf(hot), "f32[N,10]");
  const Tensor* values = b_.graph().ConstantValue(hot.node()->input(2));
  ASSERT_NE(values, nullptr);
  EXPECT_EQ(values->GetAsDouble(0), -1.0);
  EXPECT_EQ(values->GetAsDouble(1), 2.0);
}

TEST(OpsErrorTest, HelperErrorsAreRecorded) {
  GraphBuilder b;
  Output v = ops::Variable(b, "", DType::kF32, {2});
  EXPECT_FALSE(v.valid());
  EXPECT_THAT(b.status().message(), ::testing::HasSubstr("a variable needs a name"));

  GraphBuilder c;
  ops::Const(c, DType::kF32, {2, 2}, {1, 2, 3});
  EXPECT_THAT(c.status().message(), ::testing::HasSubstr("3 values do not fill a constant of shape [2,2]"));

  GraphBuilder d;
  Output x = d.Input("x", DType::kF32, {kBatchDim, 4});
  ops::Reshape(d, x, {3, 5}, false, "bad_reshape");
  EXPECT_THAT(d.status().message(), ::testing::HasSubstr("node 'bad_reshape' (Reshape)"));
}

}  // namespace
}  // namespace tsr
