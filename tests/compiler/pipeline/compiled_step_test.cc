// The Trainer on compiled steps (CompiledStepCompiler): for an MLP with dropout and
// Adam, a model with BatchNorm's moving statistics (the model's own updates and the
// training flag) and the LeNet CNN, whole epochs — full and partial batches, evaluation
// in between — give the same losses, accuracies and final Variables as the interpreter
// (≤ 1e-4 relative). Resuming a compiled run from a checkpoint ends bit-identical to an
// uninterrupted compiled run; a step that does not compile falls back to the interpreter
// with a note.
#include "compiler/pipeline/compiled_step.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "examples/models.h"
#include "gmock/gmock.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/nn.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "runtime/trainer/trainer.h"
#include "tests/runtime/trainer/batchnorm_classifier.h"
#include "tests/runtime/trainer/clusters_dataset.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

// Three classes, each lighting up a third of the features (then reshaped for a CNN).
std::shared_ptr<const Dataset> Clusters(int64_t n, uint32_t seed, const std::vector<int64_t>& image_dims) {
  return ClustersDataset(n, seed, image_dims, 1.5f);
}

Graph MlpWithDropout() {
  absl::StatusOr<Graph> g = examples::BuildMlp(
      {.input_features = 8, .hidden_units = {16, 12}, .num_classes = 3, .dropout = 0.3, .training_head = true});
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

Graph DenseBatchNorm() {
  absl::StatusOr<Graph> g = BatchNormClassifier();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

Graph LeNet() {
  absl::StatusOr<Graph> g = examples::BuildLeNet({.num_classes = 3, .training_head = true});
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

struct Case {
  std::string name;
  std::function<Graph()> model;
  std::vector<int64_t> image_dims;
  OptimizerKind optimizer;
  int64_t train_examples;
  int64_t eval_examples;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::unique_ptr<Trainer> MakeTrainer(const Case& c, bool compiled, std::ostream* log, TrainerOptions options = {}) {
  options.epochs = 2;
  options.batch_size = 16;
  options.learning_rate = 0.02;
  options.seed = 5;
  options.num_threads = 1;
  options.out = log;
  options.interactive = false;
  options.optimizer.kind = c.optimizer;
  if (compiled) options.step_compiler = CompiledStepCompiler();
  absl::StatusOr<std::unique_ptr<Trainer>> trainer = Trainer::Create(c.model(), options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  return trainer.ok() ? *std::move(trainer) : nullptr;
}

void ExpectClose(double want, double got, double rel, const std::string& what) {
  EXPECT_NEAR(want, got, rel * std::max(1.0, std::abs(want))) << what;
}

void ExpectSameVariables(Trainer& want, Trainer& got, double rel) {
  for (const std::string& name : want.session().VariableNames()) {
    absl::StatusOr<Tensor> a = want.session().GetVariable(name);
    absl::StatusOr<Tensor> b = got.session().GetVariable(name);
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    if (rel == 0) {
      EXPECT_TRUE(a->BitwiseEquals(*b)) << name << " differs";
      continue;
    }
    double scale = 1e-30;
    for (int64_t k = 0; k < a->num_elements(); ++k) scale = std::max(scale, std::abs(a->GetAsDouble(k)));
    // Plus a floor: a bias right before BatchNorm has a zero gradient in exact
    // arithmetic and moves only by rounding noise (~1e-10), differently on each path.
    for (int64_t k = 0; k < a->num_elements(); ++k) {
      ASSERT_NEAR(a->GetAsDouble(k), b->GetAsDouble(k), rel * scale + 1e-7) << name << " element " << k;
    }
  }
}

class CompiledTrainerTest : public ::testing::TestWithParam<Case> {};

TEST_P(CompiledTrainerTest, AgreesWithTheInterpreter) {
  const Case& c = GetParam();
  // Both sizes leave a partial last batch: programs for batch 16 and for the remainder.
  const auto train = Clusters(c.train_examples, 31, c.image_dims);
  const auto eval = Clusters(c.eval_examples, 32, c.image_dims);
  std::ostringstream interpreted_log, compiled_log;
  std::unique_ptr<Trainer> interpreted = MakeTrainer(c, false, &interpreted_log);
  std::unique_ptr<Trainer> compiled = MakeTrainer(c, true, &compiled_log);
  ASSERT_TRUE(interpreted != nullptr && compiled != nullptr);
  absl::StatusOr<TrainResult> want = interpreted->Fit(train, eval);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<TrainResult> got = compiled->Fit(train, eval);
  ASSERT_TRUE(got.ok()) << got.status();
  std::printf("%s", compiled_log.str().c_str());
  EXPECT_THAT(compiled_log.str(), HasSubstr("compiled the training step for batch 16"));
  EXPECT_THAT(compiled_log.str(),
              HasSubstr(absl::StrCat("compiled the training step for batch ", c.train_examples % 16)));
  EXPECT_THAT(compiled_log.str(), HasSubstr("compiled the evaluation step for batch 16"));
  EXPECT_THAT(compiled_log.str(), ::testing::Not(HasSubstr("does not compile")));
  ASSERT_EQ(want->epochs.size(), got->epochs.size());
  EXPECT_EQ(want->steps, got->steps);
  EXPECT_EQ(compiled->global_step(), got->steps);
  for (size_t e = 0; e < want->epochs.size(); ++e) {
    const EpochResult& a = want->epochs[e];
    const EpochResult& b = got->epochs[e];
    ExpectClose(a.train_loss, b.train_loss, 1e-4, absl::StrCat("epoch ", e, " train loss"));
    ExpectClose(a.train_accuracy, b.train_accuracy, 1e-9, absl::StrCat("epoch ", e, " train accuracy"));
    ExpectClose(a.eval.loss, b.eval.loss, 1e-4, absl::StrCat("epoch ", e, " test loss"));
    ExpectClose(a.eval.accuracy, b.eval.accuracy, 1e-9, absl::StrCat("epoch ", e, " test accuracy"));
    EXPECT_EQ(a.eval.examples, b.eval.examples);
  }
  // Fit left the session current: its Variables are the compiled program's.
  ExpectSameVariables(*interpreted, *compiled, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Models, CompiledTrainerTest,
    ::testing::Values(Case{"mlp_dropout_adam", MlpWithDropout, {8}, OptimizerKind::kAdam, 100, 40},
                      Case{"batchnorm_momentum", DenseBatchNorm, {8}, OptimizerKind::kMomentum, 90, 20},
                      Case{"lenet_sgd", LeNet, {1, 28, 28}, OptimizerKind::kSgd, 40, 20}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

std::string TempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "compiled_step_test_" + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(CompiledTrainer, ResumingFromACheckpointGivesBitIdenticalWeights) {
  const Case c{"mlp", MlpWithDropout, {8}, OptimizerKind::kAdam, 100, 20};
  const auto train = Clusters(c.train_examples, 41, c.image_dims);
  const auto eval = Clusters(c.eval_examples, 42, c.image_dims);
  std::ostringstream log;
  std::unique_ptr<Trainer> straight = MakeTrainer(c, true, &log);
  ASSERT_TRUE(straight != nullptr);
  absl::StatusOr<TrainResult> straight_result = straight->Fit(train, eval);
  ASSERT_TRUE(straight_result.ok()) << straight_result.status();

  const std::string dir = TempDir("ckpt");
  TrainerOptions interrupted{.max_steps = 9, .checkpoint_dir = dir, .checkpoint_every_steps = 3};
  {
    std::unique_ptr<Trainer> first = MakeTrainer(c, true, &log, interrupted);
    ASSERT_TRUE(first != nullptr);
    absl::StatusOr<TrainResult> r = first->Fit(train, eval);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->steps, 9);
  }
  interrupted.max_steps = 0;
  std::unique_ptr<Trainer> resumed = MakeTrainer(c, true, &log, interrupted);
  ASSERT_TRUE(resumed != nullptr);
  absl::StatusOr<TrainResult> r = resumed->Fit(train, eval);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->resumed_from_step, 9);
  EXPECT_EQ(r->steps, straight_result->steps);
  ExpectSameVariables(*straight, *resumed, 0);
  EXPECT_EQ(r->epochs.back().eval.loss, straight_result->epochs.back().eval.loss);
  std::filesystem::remove_all(dir);
}

TEST(CompiledTrainer, AStepThatDoesNotCompileRunsOnTheInterpreter) {
  const Case c{"mlp", MlpWithDropout, {8}, OptimizerKind::kSgd, 64, 16};
  const auto train = Clusters(c.train_examples, 51, c.image_dims);
  std::ostringstream log, plain_log;
  TrainerOptions options;
  options.step_compiler = [](const StepProgramSpec& spec) -> absl::StatusOr<std::unique_ptr<StepProgram>> {
    if (!spec.targets.empty()) return absl::UnimplementedError("op 'Frobnicate' has no lowering");
    return CompiledStepCompiler()(spec);
  };
  std::unique_ptr<Trainer> fallback = MakeTrainer(c, false, &log, options);
  std::unique_ptr<Trainer> plain = MakeTrainer(c, false, &plain_log);
  ASSERT_TRUE(fallback != nullptr && plain != nullptr);
  absl::StatusOr<TrainResult> got = fallback->Fit(train, Clusters(c.eval_examples, 52, c.image_dims));
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<TrainResult> want = plain->Fit(train, Clusters(c.eval_examples, 52, c.image_dims));
  ASSERT_TRUE(want.ok()) << want.status();
  // Noted once, then the interpreter trains; evaluation still runs compiled.
  EXPECT_THAT(log.str(), HasSubstr("note: the training step for batch 16 does not compile (op 'Frobnicate' has no "
                                   "lowering); the interpreter runs it"));
  EXPECT_THAT(log.str(), HasSubstr("compiled the evaluation step for batch 16"));
  EXPECT_EQ(got->epochs.back().train_loss, want->epochs.back().train_loss);
  ExpectSameVariables(*plain, *fallback, 1e-5);
}

}  // namespace
}  // namespace tsr
