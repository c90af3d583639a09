// Tests of Trainer: it learns a separable problem, resuming from a checkpoint ends
// with the same weights bit for bit as an uninterrupted run, TensorBoard scalars are
// written, and bad models are refused.
#include "runtime/trainer/trainer.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <sstream>
#include <string>

#include "examples/models.h"
#include "gmock/gmock.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/nn.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "runtime/summary/summary_writer.h"
#include "tests/runtime/trainer/batchnorm_classifier.h"
#include "tests/runtime/trainer/clusters_dataset.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

// Three Gaussian clusters in 8 dimensions.
std::shared_ptr<const Dataset> Clusters(int64_t n, uint32_t seed) { return ClustersDataset(n, seed, {8}, 2.0f); }

Graph Mlp(double dropout = 0) {
  absl::StatusOr<Graph> g = examples::BuildMlp(
      {.input_features = 8, .hidden_units = {16}, .num_classes = 3, .dropout = dropout, .training_head = true});
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

std::string TempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "trainer_test_" + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(TrainerTest, LearnsSeparableClustersAndLogsToTensorBoard) {
  std::ostringstream log;
  const std::string logdir = TempDir("tb");
  absl::StatusOr<std::unique_ptr<Trainer>> trainer = Trainer::Create(Mlp(), {.epochs = 4,
                                                                             .batch_size = 16,
                                                                             .learning_rate = 0.1,
                                                                             .schedule = "cosine",
                                                                             .seed = 3,
                                                                             .num_threads = 2,
                                                                             .logdir = logdir,
                                                                             .log_every_steps = 5,
                                                                             .out = &log,
                                                                             .interactive = false});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  absl::StatusOr<TrainResult> result = (*trainer)->Fit(Clusters(400, 1), Clusters(200, 2));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->epochs.size(), 4u);
  EXPECT_EQ(result->steps, 4 * 25);
  EXPECT_EQ((*trainer)->global_step(), 100);
  EXPECT_LT(result->epochs.back().train_loss, result->epochs.front().train_loss);
  EXPECT_GT(result->epochs.back().eval.accuracy, 0.95);
  EXPECT_EQ(result->epochs.back().eval.examples, 200);
  EXPECT_THAT(log.str(), HasSubstr("epoch 4/4 [==="));
  EXPECT_THAT(log.str(), HasSubstr("test accuracy"));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(logdir)) {
    ++files;
    absl::StatusOr<std::vector<tessera::tb::Event>> events = ReadEventFile(entry.path().string());
    ASSERT_TRUE(events.ok()) << events.status();
    int losses = 0;
    for (const tessera::tb::Event& e : *events) {
      if (e.has_summary() && e.summary().value_size() > 0 && e.summary().value(0).tag() == "train/loss") ++losses;
    }
    EXPECT_EQ(losses, 20);
  }
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(logdir);
}

// With dropout, the draws must follow the global step (not the session's run counter,
// which restarts in the resumed process and also counts evaluation runs).
class TrainerResumeTest : public ::testing::TestWithParam<double> {};

TEST_P(TrainerResumeTest, ResumingGivesBitIdenticalWeights) {
  const double dropout = GetParam();
  const auto train = Clusters(100, 7);
  const auto eval = Clusters(20, 8);
  TrainerOptions options{.epochs = 3,
                         .batch_size = 16,
                         .learning_rate = 0.05,
                         .schedule = "step:5:0.5",
                         .seed = 11,
                         .num_threads = 2,
                         .progress = false};
  options.optimizer.kind = OptimizerKind::kAdam;

  absl::StatusOr<std::unique_ptr<Trainer>> straight = Trainer::Create(Mlp(dropout), options);
  ASSERT_TRUE(straight.ok()) << straight.status();
  absl::StatusOr<TrainResult> straight_result = (*straight)->Fit(train, eval);
  ASSERT_TRUE(straight_result.ok()) << straight_result.status();

  const std::string dir = TempDir("ckpt");
  TrainerOptions interrupted = options;
  interrupted.checkpoint_dir = dir;
  interrupted.checkpoint_every_steps = 4;
  interrupted.max_steps = 10;  // stops mid-epoch 2 (7 batches per epoch); last checkpoint at step 10
  {
    absl::StatusOr<std::unique_ptr<Trainer>> first = Trainer::Create(Mlp(dropout), interrupted);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<TrainResult> r = (*first)->Fit(train, eval);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->steps, 10);
  }
  interrupted.max_steps = 0;
  absl::StatusOr<std::unique_ptr<Trainer>> resumed = Trainer::Create(Mlp(dropout), interrupted);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  absl::StatusOr<TrainResult> r = (*resumed)->Fit(train, eval);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->resumed_from_step, 10);
  EXPECT_EQ(r->steps, 21);
  for (const std::string& name : (*straight)->session().VariableNames()) {
    absl::StatusOr<Tensor> a = (*straight)->session().GetVariable(name);
    absl::StatusOr<Tensor> b = (*resumed)->session().GetVariable(name);
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    EXPECT_TRUE(a->BitwiseEquals(*b)) << name << " differs after resuming";
  }
  // Evaluation runs with dropout off: the same weights give the same test metrics.
  EXPECT_EQ(r->epochs.back().eval.loss, straight_result->epochs.back().eval.loss);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Dropout, TrainerResumeTest, ::testing::Values(0.0, 0.3));

// Dropout is on in training steps and off in evaluation: evaluating the same weights
// twice gives the same loss, and training with dropout ends elsewhere than without.
TEST(TrainerTest, DropoutActsOnlyInTraining) {
  const auto train = Clusters(64, 5);
  const auto eval = Clusters(32, 6);
  TrainerOptions options{.epochs = 1, .batch_size = 16, .learning_rate = 0.1, .seed = 2, .progress = false};
  absl::StatusOr<std::unique_ptr<Trainer>> plain = Trainer::Create(Mlp(0.0), options);
  absl::StatusOr<std::unique_ptr<Trainer>> dropped = Trainer::Create(Mlp(0.5), options);
  ASSERT_TRUE(plain.ok() && dropped.ok());
  ASSERT_TRUE((*plain)->Fit(train, nullptr).ok());
  ASSERT_TRUE((*dropped)->Fit(train, nullptr).ok());
  absl::StatusOr<EvalResult> once = (*dropped)->Evaluate(eval);
  absl::StatusOr<EvalResult> twice = (*dropped)->Evaluate(eval);
  ASSERT_TRUE(once.ok() && twice.ok());
  EXPECT_EQ(once->loss, twice->loss);
  absl::StatusOr<Tensor> a = (*plain)->session().GetVariable("dense/kernel");
  absl::StatusOr<Tensor> b = (*dropped)->session().GetVariable("dense/kernel");
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_FALSE(a->BitwiseEquals(*b));
}

// A model with BatchNorm on the training flag: the Trainer runs its moving-statistics
// updates with every step (they move away from their initial 0 / 1), and evaluation,
// on the moving statistics, still classifies well.
TEST(TrainerTest, RunsTheModelsOwnUpdatesLikeBatchNormStatistics) {
  absl::StatusOr<Graph> model = BatchNormClassifier();
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<Trainer>> trainer = Trainer::Create(
      *std::move(model), {.epochs = 3, .batch_size = 16, .learning_rate = 0.05, .seed = 4, .progress = false});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  absl::StatusOr<TrainResult> result = (*trainer)->Fit(Clusters(400, 1), Clusters(200, 2));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GT(result->epochs.back().eval.accuracy, 0.95);
  absl::StatusOr<Tensor> mean = (*trainer)->session().GetVariable("batch_normalization/moving_mean");
  absl::StatusOr<Tensor> variance = (*trainer)->session().GetVariable("batch_normalization/moving_variance");
  ASSERT_TRUE(mean.ok() && variance.ok());
  int moved = 0;
  for (int64_t c = 0; c < 16; ++c) moved += mean->flat<float>()[c] != 0.0f && variance->flat<float>()[c] != 1.0f;
  EXPECT_GT(moved, 8);
}

TEST(TrainerTest, RefusesModelsWithoutATrainingHeadAndBadOptions) {
  absl::StatusOr<Graph> no_head = examples::BuildMlp({.input_features = 8, .hidden_units = {4}, .num_classes = 3});
  ASSERT_TRUE(no_head.ok());
  EXPECT_THAT(Trainer::Create(*std::move(no_head), {}).status().message(), HasSubstr("input 'labels'"));
  EXPECT_THAT(Trainer::Create(Mlp(), {.epochs = 0}).status().message(), HasSubstr("epochs is 0"));
  absl::StatusOr<std::unique_ptr<Trainer>> t = Trainer::Create(Mlp(), {.schedule = "wobbly", .progress = false});
  ASSERT_TRUE(t.ok());
  EXPECT_THAT((*t)->Fit(Clusters(20, 1), nullptr).status().message(), HasSubstr("learning-rate schedule 'wobbly'"));
}

}  // namespace
}  // namespace tsr
