// Pipeline parallelism end to end: the MLP and the LeNet CNN trained 20 steps with
// 2 stages x 4 micro-batches under GPipe, 1F1B and interleaved 1F1B (2 chunks per
// device), and 3 stages over uneven micro-batches, give one device's losses and final
// weights on the same global batches (1e-5 relative); 1F1B holds fewer micro-batches' activations than GPipe; a stage
// that fails stops the others with its error instead of leaving them waiting.
#include "strategies/pipeline.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "examples/models.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/optimizers.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {
namespace {

constexpr int kSteps = 20;
constexpr uint64_t kSeed = 7;

struct Outcome {
  std::vector<int64_t> peak_held_bytes;
};

Outcome ExpectPipelineMatchesOneDevice(const TrainingGraph& t, const PipelinePlan& plan, const Shape& image_shape,
                                       double lr) {
  SCOPED_TRACE(::testing::Message() << PipelineStrategy(plan).name() << ", global batch " << image_shape.dim(0));
  std::printf("data seed 1234, variable seed %llu\n", static_cast<unsigned long long>(kSeed));
  const std::vector<TrainingBatch> batches = RandomBatches(image_shape, kSteps, 1234);
  const Tensor rate = Tensor::Scalar<float>(static_cast<float>(lr));
  absl::StatusOr<std::unique_ptr<Session>> one = Session::Create(t.graph.Clone(), {.num_threads = 1, .seed = kSeed});
  EXPECT_TRUE(one.ok()) << one.status();
  if (!one.ok()) return {};
  StepProgramSpec spec;
  spec.graph = &t.graph;
  spec.fetches = {"loss", "logits"};
  spec.targets = t.updates;
  spec.batch = image_shape.dim(0);
  spec.seed = kSeed;
  absl::StatusOr<std::unique_ptr<StepProgram>> pipeline = MakePipelineStep(plan, spec);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status();
  if (!pipeline.ok()) return {};
  Outcome outcome;
  for (int s = 0; s < kSteps; ++s) {
    const Batch feeds = {{"image", batches[s].image}, {"labels", batches[s].labels}, {"learning_rate", rate}};
    absl::StatusOr<std::vector<Tensor>> expected =
        (*one)->Run(feeds, {"loss", "logits"}, RunOptions{.targets = t.updates});
    absl::StatusOr<std::vector<Tensor>> got = (*pipeline)->Run(feeds, s, nullptr);
    EXPECT_TRUE(expected.ok() && got.ok()) << expected.status() << " " << got.status();
    if (!expected.ok() || !got.ok()) return {};
    const double loss = (*expected)[0].GetAsDouble(0);
    EXPECT_NEAR((*got)[0].GetAsDouble(0), loss, 1e-5 * std::abs(loss)) << "step " << s;
    EXPECT_LE(RelativeError((*got)[1], (*expected)[1]), 1e-5) << "logits, step " << s;
  }
  outcome.peak_held_bytes = LastPipelineRunStats(**pipeline).peak_held_bytes;
  EXPECT_EQ(LastPipelineRunStats(**pipeline).microbatches, std::min<int64_t>(plan.microbatches, image_shape.dim(0)));
  for (const std::string& name : t.variables) {
    absl::StatusOr<Tensor> want = (*one)->GetVariable(name);
    absl::StatusOr<Tensor> got = (*pipeline)->ReadVariable(name);
    EXPECT_TRUE(want.ok() && got.ok()) << name;
    if (want.ok() && got.ok()) {
      EXPECT_LE(RelativeError(*got, *want), 1e-5) << "variable " << name;
    }
  }
  return outcome;
}

TrainingGraph Mlp(OptimizerKind kind) {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {64, 32}, .training_head = true});
  EXPECT_TRUE(model.ok()) << model.status();
  return Training(*std::move(model), kind);
}

TrainingGraph LeNet(OptimizerKind kind) {
  absl::StatusOr<Graph> model = examples::BuildLeNet({.training_head = true});
  EXPECT_TRUE(model.ok()) << model.status();
  return Training(*std::move(model), kind);
}

using Kind = PipelineScheduleKind;

TEST(PipelineTest, MlpTwoStagesFourMicrobatchesBothSchedules) {
  const TrainingGraph t = Mlp(OptimizerKind::kAdam);
  const Outcome gpipe = ExpectPipelineMatchesOneDevice(t, {2, 4, Kind::kGPipe, {}}, Shape{64, 784}, 0.001);
  const Outcome one_f_one_b =
      ExpectPipelineMatchesOneDevice(t, {2, 4, Kind::kOneForwardOneBackward, {}}, Shape{64, 784}, 0.001);
  // The last stage keeps all 4 micro-batches' activations for its backward under GPipe,
  // one at a time under 1F1B (plus, with either, gradients not yet taken by stage 0).
  ASSERT_EQ(gpipe.peak_held_bytes.size(), 2u);
  ASSERT_EQ(one_f_one_b.peak_held_bytes.size(), 2u);
  EXPECT_LT(one_f_one_b.peak_held_bytes[1], gpipe.peak_held_bytes[1]);
}

TEST(PipelineTest, LeNetTwoStagesFourMicrobatchesBothSchedules) {
  const TrainingGraph t = LeNet(OptimizerKind::kMomentum);
  for (Kind kind : {Kind::kGPipe, Kind::kOneForwardOneBackward}) {
    ExpectPipelineMatchesOneDevice(t, {2, 4, kind, {}}, Shape{16, 1, 28, 28}, 0.01);
  }
}

// 50 rows in 4 micro-batches of 12 or 13 (weighted by their shares), over 3 stages cut
// where asked; SGD.
TEST(PipelineTest, MlpThreeStagesUnevenMicrobatchesAtCutPoints) {
  ExpectPipelineMatchesOneDevice(Mlp(OptimizerKind::kSgd),
                                 {3, 4, Kind::kOneForwardOneBackward, {"dense_1/MatMul", "logits/MatMul"}},
                                 Shape{50, 784}, 0.1);
}

// Global-norm clipping: the norm of the accumulated gradients (computed on every stage
// from every stage's gradients), not of each micro-batch's.
TEST(PipelineTest, ClippingByGlobalNormUsesTheWholeBatchsGradients) {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {64, 32}, .training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  TensorRef loss_ref;
  for (const SignatureEntry& e : model->outputs()) {
    if (e.name == "loss") loss_ref = e.ref;
  }
  GraphBuilder b(*std::move(model));
  TrainingOps train =
      Minimize(b, b.Wrap(loss_ref), TrainableVariables(b), {.kind = OptimizerKind::kAdam, .clip_global_norm = 0.5});
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  TrainingGraph t{*std::move(graph), train.update_nodes, {}};
  for (const Node* node : t.graph.nodes()) {
    if (node->op() == "Variable") t.variables.push_back(node->name());
  }
  // Adam at the other tests' rate: its m / sqrt(v) turns a rounding-sized gradient (the
  // micro-batches' sums in another order) into a full-size step, so the drift from one
  // device grows with the rate -- at 0.01 it sat at 0.9-1.5e-5 and crossed the 1e-5 bar
  // with any change of the GEMM's rounding. A clipping factor taken per micro-batch would
  // still change every step's direction by far more than rounding does.
  ExpectPipelineMatchesOneDevice(t, {2, 4, Kind::kOneForwardOneBackward, {}}, Shape{32, 784}, 0.001);
}

// Interleaved 1F1B: 2 devices x 2 chunks, the model cut into 4 stages (0 and 2 on device
// 0, 1 and 3 on device 1), so each micro-batch's activations go 0 -> 1 -> 0 -> 1.
TEST(PipelineTest, MlpInterleavedTwoDevicesTwoChunks) {
  const TrainingGraph t = Mlp(OptimizerKind::kAdam);
  const Outcome outcome = ExpectPipelineMatchesOneDevice(
      t, {.stages = 2, .microbatches = 4, .schedule = Kind::kInterleaved, .chunks = 2}, Shape{64, 784}, 0.001);
  EXPECT_EQ(outcome.peak_held_bytes.size(), 4u);  // by producing stage
}

TEST(PipelineTest, LeNetInterleavedTwoDevicesTwoChunks) {
  ExpectPipelineMatchesOneDevice(LeNet(OptimizerKind::kMomentum),
                                 {.stages = 2, .microbatches = 4, .schedule = Kind::kInterleaved, .chunks = 2},
                                 Shape{16, 1, 28, 28}, 0.01);
}

// 3 devices x 2 chunks over 4 micro-batches (a group of 3 and a partial one) of 12 or 13
// rows, and 2 x 3 chunks with more micro-batches than rows.
TEST(PipelineTest, MlpInterleavedPartialGroupsAndMoreMicrobatchesThanRows) {
  ExpectPipelineMatchesOneDevice(Mlp(OptimizerKind::kSgd),
                                 {.stages = 3, .microbatches = 4, .schedule = Kind::kInterleaved, .chunks = 2},
                                 Shape{50, 784}, 0.1);
  ExpectPipelineMatchesOneDevice(Mlp(OptimizerKind::kMomentum),
                                 {.stages = 2, .microbatches = 8, .schedule = Kind::kInterleaved, .chunks = 3},
                                 Shape{3, 784}, 0.05);
}

// More micro-batches than rows: one row each.
TEST(PipelineTest, MoreMicrobatchesThanRows) {
  ExpectPipelineMatchesOneDevice(Mlp(OptimizerKind::kMomentum), {2, 8, Kind::kGPipe, {}}, Shape{3, 784}, 0.05);
}

TEST(PipelineTest, AFailingStageStopsThePipelineWithItsError) {
  const TrainingGraph t = Mlp(OptimizerKind::kSgd);
  StepProgramSpec spec;
  spec.graph = &t.graph;
  spec.fetches = {"loss"};
  spec.targets = t.updates;
  absl::StatusOr<std::unique_ptr<StepProgram>> pipeline =
      MakePipelineStep({2, 4, Kind::kOneForwardOneBackward, {}}, spec, {.timeout = absl::Seconds(30)});
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  // Labels out of range: the last stage's loss fails; stage 0 must not wait 30 s for its
  // gradient.
  const std::vector<TrainingBatch> batches = RandomBatches(Shape{8, 784}, 1, 5);
  Tensor labels = Tensor::FromVector<int64_t>(Shape{8}, {0, 1, 2, 3, 4, 5, 6, 99});
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out = (*pipeline)->Run(
      {{"image", batches[0].image}, {"labels", labels}, {"learning_rate", Tensor::Scalar<float>(0.1f)}}, 0, nullptr);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("pipeline stage 1"), std::string::npos) << out.status();
}

TEST(PipelineTest, StrategyPlanAndName) {
  PipelineStrategy strategy({2, 4, Kind::kGPipe, {}});
  EXPECT_EQ(strategy.name(), "pipeline(2 stages, 4 micro-batches, gpipe)");
  absl::StatusOr<StrategyPlan> plan = strategy.Plan(Mlp(OptimizerKind::kSgd).graph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->pipeline.has_value());
  EXPECT_EQ(plan->mesh.ToString(), "{pipe=2}");
  EXPECT_EQ(PipelineStrategy({0, 4, Kind::kGPipe, {}}).Plan(Mlp(OptimizerKind::kSgd).graph).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Interleaved: the mesh is the devices; chunks only with the interleaved schedule.
  PipelineStrategy interleaved({.stages = 2, .microbatches = 4, .schedule = Kind::kInterleaved, .chunks = 3});
  EXPECT_EQ(interleaved.name(), "pipeline(2 stages, 3 chunks each, 4 micro-batches, interleaved)");
  absl::StatusOr<StrategyPlan> interleaved_plan = interleaved.Plan(Mlp(OptimizerKind::kSgd).graph);
  ASSERT_TRUE(interleaved_plan.ok()) << interleaved_plan.status();
  EXPECT_EQ(interleaved_plan->mesh.ToString(), "{pipe=2}");
  absl::Status chunked_gpipe = PipelineStrategy({.stages = 2, .microbatches = 4, .schedule = Kind::kGPipe, .chunks = 2})
                                   .Plan(Mlp(OptimizerKind::kSgd).graph)
                                   .status();
  EXPECT_EQ(chunked_gpipe.message(), "2 model chunks per device need the interleaved schedule, not gpipe");
  // Data-parallel replicas of the pipeline: a second mesh axis, run only across processes.
  PipelineStrategy replicated({2, 4, Kind::kOneForwardOneBackward, {}, 3});
  EXPECT_EQ(replicated.name(), "pipeline(2 stages, 3 data replicas, 4 micro-batches, 1f1b)");
  const TrainingGraph t = Mlp(OptimizerKind::kSgd);
  absl::StatusOr<StrategyPlan> replicated_plan = replicated.Plan(t.graph);
  ASSERT_TRUE(replicated_plan.ok()) << replicated_plan.status();
  EXPECT_EQ(replicated_plan->mesh.ToString(), "{pipe=2, data=3}");
  StepProgramSpec spec;
  spec.graph = &t.graph;
  spec.fetches = {"loss"};
  spec.targets = t.updates;
  absl::StatusOr<std::unique_ptr<StepProgram>> in_process = MakePipelineStep(*replicated_plan->pipeline, spec);
  EXPECT_EQ(in_process.status().code(), absl::StatusCode::kUnimplemented) << in_process.status();
}

}  // namespace
}  // namespace tsr
