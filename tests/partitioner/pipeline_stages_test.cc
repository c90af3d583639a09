// SplitPipelineStages on the MLP's and LeNet's training graphs: every op on one stage,
// the stages balanced by FLOPs or cut where asked, activations sent forward and
// gradients backward only, each weight and its optimizer state on its own stage, and
// clear errors for what cannot be pipelined.
#include "partitioner/pipeline_stages.h"

#include <string>
#include <vector>

#include "examples/models.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {
namespace {

TrainingGraph Mlp(OptimizerKind kind) {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {256, 256}, .training_head = true});
  EXPECT_TRUE(model.ok()) << model.status();
  return Training(*std::move(model), kind);
}

PipelineSplitOptions Options(const TrainingGraph& t, int stages, std::vector<std::string> cuts = {}) {
  return PipelineSplitOptions{
      .stages = stages, .cut_points = std::move(cuts), .fetches = {"loss", "logits"}, .targets = t.updates};
}

int StageOf(const PipelineProgram& p, const std::string& node) {
  int found = -1;
  for (size_t s = 0; s < p.stages.size(); ++s) {
    if (p.stages[s].graph.FindNode(node) != nullptr) {
      EXPECT_EQ(found, -1) << node << " is on stages " << found << " and " << s;
      found = static_cast<int>(s);
    }
  }
  return found;
}

void ExpectWellFormed(const PipelineProgram& p) {
  for (const PipelineTransfer& t : p.transfers) {
    switch (t.kind) {
      case PipelineTransfer::Kind::kActivation:
        EXPECT_LT(t.from, t.to) << t.tensor;
        break;
      case PipelineTransfer::Kind::kGradient:
        EXPECT_GT(t.from, t.to) << t.tensor;
        break;
      default:
        break;
    }
    EXPECT_NE(p.stages[t.to].graph.FindNode(t.feed), nullptr) << t.feed;
  }
  for (const auto& [name, stages] : p.variable_stages) EXPECT_FALSE(stages.empty()) << name;
}

TEST(PipelineStagesTest, MlpTwoStagesBalancedByFlops) {
  const TrainingGraph t = Mlp(OptimizerKind::kAdam);
  absl::StatusOr<PipelineProgram> p = SplitPipelineStages(t.graph, Options(t, 2));
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectWellFormed(*p);
  // The 784x256 product is 3x the rest: it alone is stage 0.
  EXPECT_EQ(StageOf(*p, "dense/MatMul"), 0);
  EXPECT_EQ(StageOf(*p, "dense/Add"), 1);
  EXPECT_EQ(StageOf(*p, "dense_1/MatMul"), 1);
  EXPECT_EQ(p->variable_stages.at("dense/bias"), std::vector<int>{1});
  EXPECT_EQ(StageOf(*p, "loss"), 1);
  EXPECT_EQ(p->fetches.at("loss").first, 1);
  // Each weight, its gradient op and its Adam update and slots on the weight's stage.
  EXPECT_EQ(p->variable_stages.at("dense/kernel"), std::vector<int>{0});
  EXPECT_EQ(p->variable_stages.at("dense/kernel/adam_m"), std::vector<int>{0});
  EXPECT_EQ(p->variable_stages.at("logits/kernel"), std::vector<int>{1});
  EXPECT_EQ(StageOf(*p, "gradients/dense/MatMul/MatMul"), 0);
  int activations = 0, gradients = 0;
  for (const PipelineTransfer& x : p->transfers) {
    activations += x.kind == PipelineTransfer::Kind::kActivation;
    gradients += x.kind == PipelineTransfer::Kind::kGradient;
  }
  EXPECT_EQ(activations, 1) << p->Explain();  // dense/MatMul
  EXPECT_EQ(gradients, 1) << p->Explain();    // its gradient
  EXPECT_NE(p->Explain().find("sends activation 'dense/MatMul' to stage 1"), std::string::npos) << p->Explain();
  // Every update of the step runs on some stage.
  int updates = 0;
  for (const PipelineStageProgram& stage : p->stages) updates += static_cast<int>(stage.update_targets.size());
  EXPECT_GE(updates, static_cast<int>(t.updates.size()));
}

TEST(PipelineStagesTest, CutPointsAndFourStages) {
  const TrainingGraph t = Mlp(OptimizerKind::kMomentum);
  absl::StatusOr<PipelineProgram> p = SplitPipelineStages(t.graph, Options(t, 3, {"dense/Relu", "logits/MatMul"}));
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectWellFormed(*p);
  EXPECT_EQ(StageOf(*p, "dense/Add"), 0);
  EXPECT_EQ(StageOf(*p, "dense/Relu"), 1);
  EXPECT_EQ(StageOf(*p, "dense_1/MatMul"), 1);
  EXPECT_EQ(StageOf(*p, "logits/MatMul"), 2);
  absl::StatusOr<PipelineProgram> four = SplitPipelineStages(t.graph, Options(t, 4));
  ASSERT_TRUE(four.ok()) << four.status();
  ExpectWellFormed(*four);
  for (const PipelineStageProgram& stage : four->stages) EXPECT_GT(stage.forward_ops, 0);
}

TEST(PipelineStagesTest, LeNetStagesAreWellFormed) {
  absl::StatusOr<Graph> model = examples::BuildLeNet({.training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  const TrainingGraph t = Training(*std::move(model), OptimizerKind::kSgd);
  for (int stages : {2, 3}) {
    absl::StatusOr<PipelineProgram> p = SplitPipelineStages(t.graph, Options(t, stages));
    ASSERT_TRUE(p.ok()) << p.status();
    ExpectWellFormed(*p);
  }
}

TEST(PipelineStagesTest, ClearErrors) {
  const TrainingGraph t = Mlp(OptimizerKind::kSgd);
  absl::StatusOr<PipelineProgram> p = SplitPipelineStages(t.graph, Options(t, 200));
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("a pipeline of 200 stages needs at least as many forward ops"), std::string::npos)
      << p.status();
  p = SplitPipelineStages(t.graph, Options(t, 2, {"no/such/op"}));
  EXPECT_EQ(p.status().message(), "cut point 'no/such/op' is not a forward op of the model");
  p = SplitPipelineStages(t.graph, Options(t, 3, {"dense/Relu"}));
  EXPECT_EQ(p.status().message(), "1 cut points for 3 stages; stages - 1 are needed");

  // One weight used by two layers that the cut puts on different stages.
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, 8});
  Output labels = b.Input("labels", DType::kI64, {kBatchDim});
  Output w = ops::Variable(b, "shared", DType::kF32, {8, 8});
  Output h = ops::Relu(b, ops::MatMul(b, x, w, "first"), "relu");
  Output logits = ops::MatMul(b, h, w, "second");
  b.MarkOutput("logits", logits);
  b.MarkOutput("loss", ops::SoftmaxCrossEntropyLoss(b, logits, labels, {}, "loss"));
  absl::StatusOr<Graph> shared = b.Finish();
  ASSERT_TRUE(shared.ok()) << shared.status();
  const TrainingGraph ts = Training(*std::move(shared), OptimizerKind::kSgd);
  p = SplitPipelineStages(ts.graph, Options(ts, 2, {"second"}));
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(p.status().message(),
            "Variable 'shared' is used by pipeline stages 0 and 1; weights shared across stages cannot be pipelined "
            "yet");
}

}  // namespace
}  // namespace tsr
