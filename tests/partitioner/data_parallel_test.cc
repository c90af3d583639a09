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
    if (r.collective.rfind("AllGather", 0) == 0) {
      EXPECT_EQ(r.consumer, "output 'logits'") << program.Explain();
    }
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

// The gradient all-reduces (6 for the MLP's 3 kernels and 3 biases) travel as one
// bucket by default, as several under a small threshold, one by one with 0; the
// equivalence tests above run with the default buckets.
TEST(DataParallelTest, GradientAllReducesArePackedIntoBuckets) {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {64, 32}, .training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  const TrainingGraph t = Training(*std::move(model), OptimizerKind::kMomentum);
  absl::StatusOr<StrategyPlan> plan = MirroredStrategy(2).Plan(t.graph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto all_reduces = [](const Graph& g) {
    int n = 0;
    for (const Node* node : g.nodes()) n += node->op() == "AllReduce";
    return n;
  };
  struct Case {
    int64_t threshold;
    int buckets;
    int all_reduce_nodes;  // the buckets, the unpacked ones and the loss's
  };
  // Gradient bytes: 784x64, 64, 64x32, 32, 32x10, 10 floats = 200,704 + 256 + 8,192 + 128 + 1,280 + 40.
  for (const Case& c : {Case{0, 0, 7}, Case{int64_t{25} << 20, 1, 2}, Case{16 << 10, 1, 3}}) {
    absl::StatusOr<PartitionedProgram> p =
        PartitionGraph(t.graph, plan->mesh, plan->annotations,
                       {.batch = 16, .targets = t.updates, .combine_threshold_bytes = c.threshold});
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->all_reduce_buckets, c.buckets) << "threshold " << c.threshold << "\n" << p->Explain();
    EXPECT_EQ(all_reduces(p->devices[0]), c.all_reduce_nodes) << "threshold " << c.threshold << "\n" << p->Explain();
  }
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
