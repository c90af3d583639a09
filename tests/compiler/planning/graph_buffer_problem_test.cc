// Tests of BuildGraphBufferProblem on the example models (inference and training
// graphs): plans verify, and their peak and lower-bound bytes are printed.
#include "compiler/planning/graph_buffer_problem.h"

#include <cstdio>

#include "examples/models.h"
#include "gmock/gmock.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/optimizers.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

// The model with the training step the Trainer adds: gradients and momentum updates.
absl::StatusOr<Graph> TrainingGraph(Graph model) {
  TensorRef loss;
  for (const SignatureEntry& e : model.outputs()) {
    if (e.name == "loss") loss = e.ref;
  }
  if (!loss.valid()) return absl::InvalidArgumentError("no loss");
  GraphBuilder b(std::move(model));
  const Output loss_out = b.Wrap(loss);
  Minimize(b, loss_out, TrainableVariables(b));
  return b.Finish();
}

void PlanAndReport(const char* label, const Graph& graph, int64_t batch) {
  absl::StatusOr<GraphBufferProblem> gp = BuildGraphBufferProblem(graph, batch);
  ASSERT_TRUE(gp.ok()) << gp.status();
  ASSERT_EQ(gp->problem.values.size(), gp->tensors.size());
  absl::StatusOr<BufferPlan> plan = PlanBuffers(gp->problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyBufferPlan(gp->problem, *plan).ok()) << VerifyBufferPlan(gp->problem, *plan);
  const int64_t bound = LiveBytesLowerBound(gp->problem);
  int64_t temporaries = 0;
  int in_place = 0;
  for (size_t i = 0; i < gp->problem.values.size(); ++i) {
    if (!gp->problem.values[i].external) temporaries += gp->problem.values[i].size;
    if (plan->reused_from[i] >= 0) ++in_place;
  }
  EXPECT_GE(plan->arena_bytes, bound);
  EXPECT_LE(plan->arena_bytes, temporaries);
  std::printf(
      "%-14s batch %lld: %zu steps, %zu values, arena %lld bytes (lower bound %lld, ratio %.3f), "
      "sum of temporaries %lld, %d in place, outside the arena %lld bytes\n",
      label, static_cast<long long>(batch), gp->steps.size(), gp->problem.values.size(),
      static_cast<long long>(plan->arena_bytes), static_cast<long long>(bound),
      bound > 0 ? static_cast<double>(plan->arena_bytes) / static_cast<double>(bound) : 1.0,
      static_cast<long long>(temporaries), in_place, static_cast<long long>(gp->external_bytes));
}

TEST(GraphBufferProblemTest, MlpInference) {
  absl::StatusOr<Graph> g = examples::BuildMlp();
  ASSERT_TRUE(g.ok()) << g.status();
  PlanAndReport("mlp", *g, 64);
}

TEST(GraphBufferProblemTest, LeNetInference) {
  absl::StatusOr<Graph> g = examples::BuildLeNet();
  ASSERT_TRUE(g.ok()) << g.status();
  PlanAndReport("lenet", *g, 64);
}

TEST(GraphBufferProblemTest, MlpTraining) {
  absl::StatusOr<Graph> g = examples::BuildMlp({.training_head = true});
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<Graph> train = TrainingGraph(*std::move(g));
  ASSERT_TRUE(train.ok()) << train.status();
  PlanAndReport("mlp train", *train, 64);
}

TEST(GraphBufferProblemTest, LeNetTraining) {
  absl::StatusOr<Graph> g = examples::BuildLeNet({.training_head = true});
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<Graph> train = TrainingGraph(*std::move(g));
  ASSERT_TRUE(train.ok()) << train.status();
  PlanAndReport("lenet train", *train, 64);
}

TEST(GraphBufferProblemTest, SmallGraphLivenessAndInPlace) {
  // x -> Relu -> Sigmoid -> y: the Sigmoid may overwrite the Relu's output; y is an output.
  Graph g0;
  absl::StatusOr<Node*> x = g0.AddNodeAndInfer(
      "x", "Placeholder", {},
      {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(Shape{kBatchDim, 16})}});
  ASSERT_TRUE(x.ok()) << x.status();
  absl::StatusOr<Node*> r = g0.AddNodeAndInfer("r", "Relu", {(*x)->output()});
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<Node*> s = g0.AddNodeAndInfer("s", "Sigmoid", {(*r)->output()});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<Node*> t = g0.AddNodeAndInfer("t", "Tanh", {(*s)->output()});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(g0.AddInput("x", (*x)->output()).ok());
  ASSERT_TRUE(g0.AddOutput("y", (*t)->output()).ok());
  absl::StatusOr<GraphBufferProblem> gp = BuildGraphBufferProblem(g0, 8);
  ASSERT_TRUE(gp.ok()) << gp.status();
  const auto& v = gp->problem.values;
  ASSERT_EQ(v.size(), 4u);
  EXPECT_TRUE(v[0].external);
  EXPECT_FALSE(v[1].external);
  EXPECT_TRUE(v[3].external);
  EXPECT_EQ(v[1].size, 8 * 16 * 4);
  EXPECT_EQ(v[1].def_step, 1);
  EXPECT_EQ(v[1].last_use_step, 2);
  EXPECT_EQ(v[2].inplace_candidates, std::vector<int>{1});
  EXPECT_EQ(gp->external_bytes, 2 * 8 * 16 * 4);
  absl::StatusOr<BufferPlan> plan = PlanBuffers(gp->problem);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->arena_bytes, 8 * 16 * 4);
  EXPECT_EQ(plan->reused_from[2], 1);
}

}  // namespace
}  // namespace tsr
