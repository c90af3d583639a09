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
#include "tests/partitioner/strategy_equivalence.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {
namespace {

// Mirrored: one all-reduce per trainable weight's gradient (plus the loss); nothing is
// gathered but the fetched logits.
void ExpectDataParallelCollectives(const PartitionedProgram& program) {
  int gradient_reductions = 0;
  for (const CollectiveReason& r : program.collectives) {
    if (r.collective.rfind("AllReduce", 0) == 0 && r.consumer.find("input") != std::string::npos) ++gradient_reductions;
    if (r.collective.rfind("AllGather", 0) == 0) EXPECT_EQ(r.consumer, "output 'logits'") << program.Explain();
  }
  EXPECT_GE(gradient_reductions, 2) << program.Explain();
}

void ExpectMirroredMatchesOneDevice(const TrainingGraph& t, const Shape& image_shape, int devices, double lr) {
  ExpectStrategyMatchesOneDevice(t, MirroredStrategy(devices), image_shape, lr, ExpectDataParallelCollectives);
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
