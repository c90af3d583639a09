// Tensor parallelism (Megatron column/row splits of the dense layers) and the hybrid of
// data x tensor parallelism on a 2x2 mesh: 20 training steps give one device's losses
// and weights (assembled from the devices' shares) to 1e-5, and the collectives are the
// Megatron ones — the row layers' partial sums all-reduced over `model`, nothing
// gathered but what the loss and the fetches need.
#include "strategies/tensor_parallel.h"

#include <string>

#include "examples/models.h"
#include "gtest/gtest.h"
#include "tests/partitioner/strategy_equivalence.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {
namespace {

TrainingGraph Mlp(OptimizerKind kind) {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {64, 32}, .training_head = true});
  EXPECT_TRUE(model.ok()) << model.status();
  return Training(*std::move(model), kind);
}

TEST(TensorParallelTest, MlpOverTwoDevicesMatchesOneDevice) {
  const TrainingGraph t = Mlp(OptimizerKind::kMomentum);
  ExpectStrategyMatchesOneDevice(t, TensorParallelStrategy(2), Shape{32, 784}, 0.05, [](const PartitionedProgram& p) {
    // The weights are split, not gathered: no AllGather of a Variable.
    for (const CollectiveReason& r : p.collectives) {
      EXPECT_EQ(r.tensor.find("kernel"), std::string::npos) << r.collective << " " << r.tensor << "\n" << p.Explain();
    }
    EXPECT_EQ(p.variable_shardings.at("dense/kernel").ToString(p.mesh), "[-, {model}]");
    EXPECT_EQ(p.variable_shardings.at("dense_1/kernel").ToString(p.mesh), "[{model}, -]");
    EXPECT_EQ(p.variable_shardings.at("dense/bias").ToString(p.mesh), "[{model}]");
    EXPECT_EQ(p.variable_shardings.at("dense_1/bias").ToString(p.mesh), "replicated");
  });
}

TEST(TensorParallelTest, MlpOverThreeDevicesWithUnevenSplitsAndAdamMatchesOneDevice) {
  // 64 and 32 columns over 3 devices: 21/21/22 and 10/11/11.
  ExpectStrategyMatchesOneDevice(Mlp(OptimizerKind::kAdam), TensorParallelStrategy(3), Shape{16, 784}, 0.002);
}

TEST(TensorParallelTest, HybridDataTimesModelOnTwoByTwoMatchesOneDevice) {
  ExpectStrategyMatchesOneDevice(Mlp(OptimizerKind::kMomentum), HybridStrategy(2, 2), Shape{32, 784}, 0.05,
                                 [](const PartitionedProgram& p) {
                                   EXPECT_EQ(p.mesh.ToString(), "{data=2, model=2}");
                                   EXPECT_EQ(p.input_shardings.at("image").ToString(p.mesh), "[{data}, -]");
                                 });
}

// A weight split without its optimizer slot: its bias's update would write shares into
// the whole bias and its whole momentum. The partitioner says which node, Variables and
// layouts.
TEST(TensorParallelTest, SplitWeightWithWholeSlotIsAClearError) {
  const TrainingGraph t = Mlp(OptimizerKind::kMomentum);
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse("model=2");
  ASSERT_TRUE(mesh.ok());
  ShardingAnnotations annotations;
  annotations.tensors["dense/kernel"] = {{}, {"model"}};
  absl::StatusOr<PartitionedProgram> p =
      PartitionGraph(t.graph, *mesh, annotations, {.batch = 4, .targets = t.updates});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented) << p.status();
  EXPECT_NE(
      p.status().message().find("node 'optimizer/update/dense/bias' (MomentumUpdate) computes Variable 'dense/bias' "
                                "as [{model}] but the Variable is replicated, and Variable 'dense/bias/momentum' as "
                                "[{model}] but the Variable is replicated"),
      std::string::npos)
      << p.status();
}

TEST(TensorParallelTest, RejectsGraphsWithoutDenseLayers) {
  GraphBuilder b;
  b.MarkOutput("y", b.Input("x", DType::kF32, {kBatchDim, 4}));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok());
  absl::StatusOr<StrategyPlan> plan = TensorParallelStrategy(2).Plan(*graph);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("no MatMul or Gemm"), std::string::npos) << plan.status();
}

}  // namespace
}  // namespace tsr
