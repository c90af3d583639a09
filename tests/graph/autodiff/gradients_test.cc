// Tests of the reverse-mode driver (graph/autodiff/gradients.h): a whole MLP with a
// symbolic batch against central differences, fan-out accumulation, the errors
// (unconnected tensors, ops without gradients, bad requests), naming, and gradients
// added to an existing graph through GraphBuilder(Graph).
#include "graph/autodiff/gradients.h"

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "graph/builder/ops.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/graph/autodiff/gradient_check_util.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Session> Open(Graph graph) {
  absl::StatusOr<std::unique_ptr<Session>> s =
      Session::Create(std::move(graph), {.num_threads = 1, .device = "reference"});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// x [N,4] -> MatMul w1 [4,5] + b1 -> Tanh -> MatMul w2 [5,3] + b2 -> mean softmax
// cross-entropy against labels [N]; parameters are f64 inputs so that the test can
// perturb them.
TEST(GradientsTest, MlpWithSymbolicBatchMatchesCentralDifferences) {
  GraphBuilder b;
  const Output x = b.Input("x", DType::kF64, Shape({kBatchDim, 4}));
  const Output labels = b.Input("labels", DType::kI64, Shape({kBatchDim}));
  const Output w1 = b.Input("w1", DType::kF64, Shape({4, 5}));
  const Output b1 = b.Input("b1", DType::kF64, Shape({5}));
  const Output w2 = b.Input("w2", DType::kF64, Shape({5, 3}));
  const Output b2 = b.Input("b2", DType::kF64, Shape({3}));
  const Output h = ops::Tanh(b, ops::Add(b, ops::MatMul(b, x, w1), b1));
  const Output logits = ops::Add(b, ops::MatMul(b, h, w2), b2);
  const Output loss = ops::SoftmaxCrossEntropyLoss(b, logits, labels);
  const std::vector<Output> params = {w1, b1, w2, b2};
  std::vector<Output> grads = Gradients(b, loss, params);
  ASSERT_TRUE(b.ok()) << b.status();
  for (size_t i = 0; i < grads.size(); ++i) {
    EXPECT_EQ(grads[i].type(), params[i].type());
    b.MarkOutput("grad_" + params[i].name(), grads[i]);
  }
  b.MarkOutput("loss", loss);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::unique_ptr<Session> session = Open(*std::move(graph));
  ASSERT_NE(session, nullptr);

  for (int64_t batch : {2, 5}) {
    SCOPED_TRACE(absl::StrCat("batch=", batch));
    std::mt19937 rng(static_cast<uint32_t>(batch));
    std::vector<std::pair<std::string, Tensor>> feeds = {
        {"x", testing::RandomF64(rng, Shape({batch, 4}))}, {"labels", Tensor(DType::kI64, Shape({batch}))},
        {"w1", testing::RandomF64(rng, Shape({4, 5}))},    {"b1", testing::RandomF64(rng, Shape({5}))},
        {"w2", testing::RandomF64(rng, Shape({5, 3}))},    {"b2", testing::RandomF64(rng, Shape({3}))},
    };
    for (int64_t i = 0; i < batch; ++i) feeds[1].second.flat<int64_t>()[i] = static_cast<int64_t>(rng() % 3);
    absl::StatusOr<std::vector<Tensor>> got = session->Run(feeds, {"grad_w1", "grad_b1", "grad_w2", "grad_b2"});
    ASSERT_TRUE(got.ok()) << got.status();
    for (int p = 0; p < 4; ++p) {
      Tensor& param = feeds[2 + p].second;
      for (int64_t e = 0; e < param.num_elements(); ++e) {
        const double x0 = param.flat<double>()[e];
        const double step = 1e-6;
        param.flat<double>()[e] = x0 + step;
        const double up = (*session->Run(feeds, {"loss"}))[0].GetAsDouble(0);
        param.flat<double>()[e] = x0 - step;
        const double down = (*session->Run(feeds, {"loss"}))[0].GetAsDouble(0);
        param.flat<double>()[e] = x0;
        EXPECT_NEAR((*got)[p].GetAsDouble(e), (up - down) / (2 * step), 1e-7) << feeds[2 + p].first << "[" << e << "]";
      }
    }
  }
}

TEST(GradientsTest, FanOutContributionsAreSummed) {
  GraphBuilder b;
  const Output x = b.Input("x", DType::kF64, Shape({3}));
  // y = sum(x * x + x): dy/dx = 2x + 1.
  const Output y = ops::ReduceSum(b, ops::Add(b, ops::Mul(b, x, x), x), std::vector<int64_t>{}, false);
  std::vector<Output> g = Gradients(b, y, {x});
  b.MarkOutput("g", g[0]);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::unique_ptr<Session> s = Open(*std::move(graph));
  absl::StatusOr<std::vector<Tensor>> out =
      s->Run({{"x", Tensor::FromVector<double>(Shape({3}), {1, -2, 0.5})}}, {"g"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].GetAsDouble(0), 3);
  EXPECT_EQ((*out)[0].GetAsDouble(1), -3);
  EXPECT_EQ((*out)[0].GetAsDouble(2), 2);
}

TEST(GradientsTest, UnconnectedTensors) {
  GraphBuilder b;
  const Output x = b.Input("x", DType::kF32, Shape({2}));
  const Output z = b.Input("z", DType::kF32, Shape({kBatchDim, 2}));
  const Output y = ops::ReduceSum(b, ops::Exp(b, x), std::vector<int64_t>{}, false);
  Gradients(b, y, {x, z});
  EXPECT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("does not depend on 'z'"));

  GraphBuilder b2;
  const Output x2 = b2.Input("x", DType::kF32, Shape({2}));
  const Output z2 = b2.Input("z", DType::kF32, Shape({kBatchDim, 2}));
  const Output y2 = ops::ReduceSum(b2, ops::Exp(b2, x2), std::vector<int64_t>{}, false);
  std::vector<Output> g = Gradients(b2, y2, {x2, z2}, {.allow_unconnected = true});
  ASSERT_TRUE(b2.ok()) << b2.status();
  EXPECT_EQ(g[1].type(), z2.type());
  b2.MarkOutput("gz", g[1]);
  absl::StatusOr<Graph> graph = b2.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::unique_ptr<Session> s = Open(*std::move(graph));
  absl::StatusOr<std::vector<Tensor>> out =
      s->Run({{"x", Tensor::FromVector<float>(Shape({2}), {1, 2})},
              {"z", Tensor::FromVector<float>(Shape({3, 2}), {1, 2, 3, 4, 5, NAN})}},
             {"gz"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), Shape({3, 2}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ((*out)[0].GetAsDouble(i), 0.0);
}

TEST(GradientsTest, BadRequestsAreReported) {
  {
    GraphBuilder b;
    const Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 2}));
    Gradients(b, ops::Exp(b, x), {x});
    EXPECT_THAT(b.status().message(), HasSubstr("reduce it to a scalar"));
  }
  {
    GraphBuilder b;
    const Output i = b.Input("i", DType::kI64, Shape({2}));
    const Output x = b.Input("x", DType::kF32, Shape({2}));
    Gradients(b, ops::ReduceSum(b, x, std::vector<int64_t>{}, false), {i});
    EXPECT_THAT(b.status().message(), HasSubstr("only floating-point tensors have gradients"));
  }
  {
    GraphBuilder b;
    GraphBuilder other;
    const Output x = b.Input("x", DType::kF32, Shape({2}));
    const Output foreign = other.Input("x", DType::kF32, Shape({2}));
    Gradients(b, ops::ReduceSum(b, x, std::vector<int64_t>{}, false), {foreign});
    EXPECT_THAT(b.status().message(), HasSubstr("not a valid Output of this builder"));
  }
}

TEST(GradientsTest, OpsWithoutGradientAreNamed) {
  OpRegistry registry;
  ASSERT_TRUE(registry
                  .Register(OpDefBuilder("Opaque")
                                .Input("x", "T")
                                .Output("y", "T")
                                .TypeConstraint("T", {DType::kF32})
                                .Infer(SameAsFirstInput)
                                .Build())
                  .ok());
  for (const char* op : {"Placeholder", "Constant"})
    ASSERT_TRUE(registry.Register(*OpRegistry::Global().Find(op)).ok());
  GraphBuilder b(registry);
  const Output x = b.Input("x", DType::kF32, Shape({2}));
  const Output y = b.Op1("Opaque", {x}, {}, "mystery");
  Gradients(b, y, {x});
  EXPECT_EQ(b.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(b.status().message(), HasSubstr("op 'Opaque' (node 'mystery') has no gradient function"));
}

TEST(GradientsTest, NodesAreNamedAfterTheForwardNodesAndTheGraphIsExtensible) {
  GraphBuilder b;
  const Output x = b.Input("x", DType::kF32, Shape({2, 3}));
  Output y;
  {
    auto scope = b.Scope("layer");
    y = ops::Sigmoid(b, x, "act");
  }
  const Output loss = ops::ReduceMean(b, y, std::vector<int64_t>{}, false, "loss");
  b.MarkOutput("loss", loss);
  absl::StatusOr<Graph> forward = b.Finish();
  ASSERT_TRUE(forward.ok()) << forward.status();

  // Gradients added later to the finished (e.g. loaded) graph, twice.
  GraphBuilder more(*std::move(forward));
  const Output x_again = more.Wrap(more.graph().FindNode("x")->output(0));
  const Output loss_again = more.Wrap(more.graph().FindNode("loss")->output(0));
  std::vector<Output> g1 = Gradients(more, loss_again, {x_again});
  std::vector<Output> g2 = Gradients(more, loss_again, {x_again});
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_THAT(g1[0].name(), ::testing::StartsWith("gradients/layer/act/"));
  EXPECT_THAT(g2[0].name(), ::testing::StartsWith("gradients_1/layer/act/"));
  more.Wrap(TensorRef{12345, 0});
  EXPECT_THAT(more.status().message(), HasSubstr("does not exist"));
}

}  // namespace
}  // namespace tsr
