// The Trainer under a strategy (strategies/distributed_step.h): training steps and
// evaluation partitioned over virtual devices (mirrored, tensor-parallel, hybrid, ZeRO, pipeline) — interpreted, and
// compiled with collective steps in the executables — must give, epoch by epoch, the losses, accuracies and final
// weights of one device training on the same batches (1e-5 relative), with partial last batches split unevenly over the
// devices.
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/pipeline/compiled_step.h"
#include "examples/models.h"
#include "gtest/gtest.h"
#include "runtime/trainer/trainer.h"
#include "strategies/data_parallel.h"
#include "strategies/distributed_step.h"
#include "strategies/pipeline.h"
#include "strategies/tensor_parallel.h"
#include "strategies/zero.h"
#include "tests/runtime/trainer/clusters_dataset.h"

namespace tsr {
namespace {

Graph Mlp(double dropout) {
  absl::StatusOr<Graph> g = examples::BuildMlp(
      {.input_features = 8, .hidden_units = {16, 12}, .num_classes = 3, .dropout = dropout, .training_head = true});
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

// With `progress`, the log also names each step's program (StepProgram::Summary).
std::unique_ptr<Trainer> MakeTrainer(double dropout, StepCompiler compiler, std::ostream* log, bool progress = false) {
  TrainerOptions options;
  options.epochs = 2;
  options.batch_size = 32;
  options.learning_rate = 0.1;
  options.optimizer.kind = OptimizerKind::kMomentum;
  options.seed = 11;
  options.num_threads = 1;
  options.progress = progress;
  options.out = log;
  options.step_compiler = std::move(compiler);
  absl::StatusOr<std::unique_ptr<Trainer>> t = Trainer::Create(Mlp(dropout), options);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

double Relative(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-12); }

// `log`, when given, receives the partitioned Trainer's log.
void ExpectSameTraining(double dropout, std::shared_ptr<const Strategy> strategy, StepCompiler device_compiler,
                        std::string* log = nullptr) {
  // 100 = 3 x 32 + 4: the last batch of 4 is split 2+2 or 1+1+2; evaluation 30 = 32 - 2.
  const auto train = ClustersDataset(100, 41, {8}, 1.5f);
  const auto eval = ClustersDataset(30, 42, {8}, 1.5f);
  std::ostringstream one_log, mirrored_log;
  std::unique_ptr<Trainer> one = MakeTrainer(dropout, nullptr, &one_log);
  std::unique_ptr<Trainer> mirrored = MakeTrainer(
      dropout, PartitionedStepCompiler(std::move(strategy), {.device_compiler = device_compiler}), &mirrored_log,
      /*progress=*/log != nullptr);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(mirrored, nullptr);
  absl::StatusOr<TrainResult> a = one->Fit(train, eval);
  absl::StatusOr<TrainResult> b = mirrored->Fit(train, eval);
  if (log != nullptr) *log = mirrored_log.str();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(mirrored_log.str().find("does not compile"), std::string::npos) << mirrored_log.str();
  // A program the compiler refused would run on the interpreter, passing unnoticed.
  if (device_compiler) {
    EXPECT_EQ(mirrored_log.str().find("(interpreted:"), std::string::npos) << mirrored_log.str();
  }
  ASSERT_EQ(a->epochs.size(), b->epochs.size());
  for (size_t e = 0; e < a->epochs.size(); ++e) {
    EXPECT_LE(Relative(b->epochs[e].train_loss, a->epochs[e].train_loss), 1e-5) << "epoch " << e;
    EXPECT_LE(Relative(b->epochs[e].eval.loss, a->epochs[e].eval.loss), 1e-5) << "epoch " << e;
    EXPECT_EQ(b->epochs[e].train_accuracy, a->epochs[e].train_accuracy) << "epoch " << e;
    EXPECT_EQ(b->epochs[e].eval.accuracy, a->epochs[e].eval.accuracy) << "epoch " << e;
  }
  for (const std::string& name : one->session().VariableNames()) {
    absl::StatusOr<Tensor> x = one->session().GetVariable(name);
    absl::StatusOr<Tensor> y = mirrored->session().GetVariable(name);
    ASSERT_TRUE(x.ok() && y.ok()) << name;
    double num = 0, den = 0;
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      num += std::pow(y->GetAsDouble(i) - x->GetAsDouble(i), 2);
      den += std::pow(x->GetAsDouble(i), 2);
    }
    EXPECT_LE(std::sqrt(num / std::max(den, 1e-30)), 1e-5) << "variable " << name;
  }
}

TEST(PartitionedStepTest, MirroredInterpretedTrainsAsOneDevice) {
  ExpectSameTraining(0.2, std::make_shared<MirroredStrategy>(2), nullptr);
}

// Compiled device programs with AllReduce/AllGather steps; dropout's mask is drawn on the
// whole tensor (its rule keeps it whole), so it matches one device's draw.
TEST(PartitionedStepTest, MirroredCompiledUnevenWithDropoutTrainsAsOneDevice) {
  ExpectSameTraining(0.3, std::make_shared<MirroredStrategy>(3), CompiledStepCompiler());
}

// Split weights: the Trainer's starting values and checkpointed values reach each device
// as its share, and the compiled programs hold shares.
TEST(PartitionedStepTest, TensorParallelCompiledTrainsAsOneDevice) {
  ExpectSameTraining(0.0, std::make_shared<TensorParallelStrategy>(2), CompiledStepCompiler());
}

TEST(PartitionedStepTest, HybridInterpretedTrainsAsOneDevice) {
  ExpectSameTraining(0.0, std::make_shared<HybridStrategy>(2, 2), nullptr);
}

// Pipeline: 2 stages, 4 micro-batches (the last batch of 4: one row each; evaluation's
// 30 rows: 7 and 8), 1F1B, each stage's calls compiled -- a program per call and
// micro-batch size, the forward and backward ones taking the update's new weights; the
// evaluation runs pipelined too. Interpreted stages give the same.
TEST(PartitionedStepTest, PipelineTrainsAsOneDevice) {
  const PipelinePlan plan{2, 4, PipelineScheduleKind::kOneForwardOneBackward, {}};
  std::string log;
  ExpectSameTraining(0.0, std::make_shared<PipelineStrategy>(plan), CompiledStepCompiler(), &log);
  EXPECT_NE(log.find("compiled programs"), std::string::npos) << log;
  EXPECT_EQ(log.find("(interpreted:"), std::string::npos) << log;
  ExpectSameTraining(0.0, std::make_shared<PipelineStrategy>(plan), nullptr, &log);
  EXPECT_NE(log.find("stage 0 interpreted"), std::string::npos) << log;
}

// ZeRO: the update shares (stages 1, 2) are set with their parameters; ReduceScatter
// steps in the executables.
TEST(PartitionedStepTest, ZeroCompiledTrainsAsOneDevice) {
  for (int stage : {1, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << "stage " << stage);
    ExpectSameTraining(0.2, std::make_shared<ZeroStrategy>(stage, 2), CompiledStepCompiler());
  }
}

}  // namespace
}  // namespace tsr
