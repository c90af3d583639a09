// Data parallelism end to end: a training graph (model, loss, gradients, optimizer) is
// partitioned over a `data` mesh by the Mirrored strategy and run on in-process virtual
// devices (MeshSession); 20 steps must give the losses and the final weights of one
// device training on the same global batch, to 1e-5 relative — with even and uneven
// shares of the batch, for the MLP and the LeNet CNN of examples/.
#include "strategies/data_parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "examples/models.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/optimizers.h"
#include "gtest/gtest.h"
#include "partitioner/spmd_partitioner.h"
#include "runtime/mesh_session.h"
#include "runtime/session.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {
namespace {

constexpr int kSteps = 20;
constexpr uint64_t kSeed = 7;

// Trains `t` for kSteps on one device and on `devices` mirrored devices; compares.
void ExpectMirroredMatchesOneDevice(const TrainingGraph& t, const Shape& image_shape, int devices, double lr) {
  SCOPED_TRACE(::testing::Message() << devices << " devices, global batch " << image_shape.dim(0));
  std::printf("data seed 1234, variable seed %llu\n", static_cast<unsigned long long>(kSeed));
  const std::vector<TrainingBatch> batches = RandomBatches(image_shape, kSteps, 1234);
  const Tensor rate = Tensor::Scalar<float>(static_cast<float>(lr));

  absl::StatusOr<std::unique_ptr<Session>> one = Session::Create(t.graph.Clone(), {.num_threads = 1, .seed = kSeed});
  ASSERT_TRUE(one.ok()) << one.status();
  std::vector<double> losses;
  for (const TrainingBatch& batch : batches) {
    absl::StatusOr<std::vector<Tensor>> out =
        (*one)->Run({{"image", batch.image}, {"labels", batch.labels}, {"learning_rate", rate}}, {"loss"},
                    RunOptions{.targets = t.updates});
    ASSERT_TRUE(out.ok()) << out.status();
    losses.push_back((*out)[0].GetAsDouble(0));
  }

  MirroredStrategy strategy(devices);
  absl::StatusOr<StrategyPlan> plan = strategy.Plan(t.graph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<PartitionedProgram> program =
      PartitionGraph(t.graph, plan->mesh, plan->annotations, {.batch = image_shape.dim(0), .targets = t.updates});
  ASSERT_TRUE(program.ok()) << program.status();
  // One all-reduce per trainable weight's gradient (plus the loss): nothing is gathered
  // but the fetched logits.
  int gradient_reductions = 0;
  for (const CollectiveReason& r : program->collectives) {
    if (r.collective.rfind("AllReduce", 0) == 0 && r.consumer.find("input") != std::string::npos) ++gradient_reductions;
    if (r.collective.rfind("AllGather", 0) == 0) EXPECT_EQ(r.consumer, "output 'logits'") << program->Explain();
  }
  EXPECT_GE(gradient_reductions, 2) << program->Explain();

  PartitionedProgram& p = *program;
  std::vector<std::vector<std::vector<std::pair<std::string, Tensor>>>> feeds(kSteps);
  for (int s = 0; s < kSteps; ++s) {
    for (int d = 0; d < devices; ++d) {
      absl::StatusOr<Tensor> image = p.ShareOf("image", batches[s].image, d);
      absl::StatusOr<Tensor> labels = p.ShareOf("labels", batches[s].labels, d);
      ASSERT_TRUE(image.ok() && labels.ok());
      feeds[s].push_back({{"image", *image}, {"labels", *labels}, {"learning_rate", rate}});
    }
  }
  absl::StatusOr<std::unique_ptr<MeshSession>> mesh =
      MeshSession::Create(std::move(p.devices), {{"data", devices}}, {.threads_per_device = 1, .seed = kSeed});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  for (int s = 0; s < kSteps; ++s) {
    absl::StatusOr<std::vector<std::vector<Tensor>>> out = (*mesh)->Run(feeds[s], {"loss"}, {.targets = t.updates});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int d = 0; d < devices; ++d) {
      EXPECT_NEAR((*out)[d][0].GetAsDouble(0), losses[s], 1e-5 * std::abs(losses[s]))
          << "step " << s << " device " << d;
    }
  }
  for (const std::string& name : t.variables) {
    absl::StatusOr<Tensor> expected = (*one)->GetVariable(name);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (int d = 0; d < devices; ++d) {
      absl::StatusOr<Tensor> got = (*mesh)->device(d).GetVariable(name);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_LE(RelativeError(*got, *expected), 1e-5) << "variable " << name << " on device " << d;
    }
  }
}

TEST(DataParallelTest, MlpMirroredTwoDevicesMatchesOneDevice) {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {64, 32}, .training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  ExpectMirroredMatchesOneDevice(Training(*std::move(model), OptimizerKind::kMomentum), Shape{64, 784}, 2, 0.05);
}

TEST(DataParallelTest, MlpMirroredUnevenSharesMatchOneDevice) {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {32}, .training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  // 50 over 3 devices: 16, 17, 17 rows; the partial means are rescaled by the shares.
  ExpectMirroredMatchesOneDevice(Training(*std::move(model), OptimizerKind::kSgd), Shape{50, 784}, 3, 0.1);
}

TEST(DataParallelTest, LeNetMirroredTwoDevicesMatchesOneDevice) {
  absl::StatusOr<Graph> model = examples::BuildLeNet({.training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  ExpectMirroredMatchesOneDevice(Training(*std::move(model), OptimizerKind::kAdam), Shape{16, 1, 28, 28}, 2, 0.001);
}

TEST(DataParallelTest, StrategyRejectsGraphsWithoutABatch) {
  GraphBuilder b;
  b.MarkOutput("y", b.Input("x", DType::kF32, {4, 4}));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok());
  absl::StatusOr<StrategyPlan> plan = MirroredStrategy(2).Plan(*graph);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("symbolic batch"), std::string::npos) << plan.status();
}

}  // namespace
}  // namespace tsr
