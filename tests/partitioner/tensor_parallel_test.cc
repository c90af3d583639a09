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

// The CNN: its dense layers split (400x120 by columns, 120x84 by rows, 84x10 by
// columns), the convolutions replicated; alone and with the batch split too.
TEST(TensorParallelTest, LeNetTensorParallelAndHybridMatchOneDevice) {
  absl::StatusOr<Graph> model = examples::BuildLeNet({.training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  const TrainingGraph t = Training(*std::move(model), OptimizerKind::kMomentum);
  ExpectStrategyMatchesOneDevice(
      t, TensorParallelStrategy(2), Shape{8, 1, 28, 28}, 0.01, [](const PartitionedProgram& p) {
        EXPECT_EQ(p.variable_shardings.at("dense/kernel").ToString(p.mesh), "[-, {model}]");
        EXPECT_EQ(p.variable_shardings.at("dense_1/kernel").ToString(p.mesh), "[{model}, -]");
      });
  ExpectStrategyMatchesOneDevice(t, HybridStrategy(2, 2), Shape{8, 1, 28, 28}, 0.01);
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

// A GPT-2 block (causal attention, GELU MLP, LayerNorms, residuals): query, key and
// value split by columns — each device attends with its 2 of the 4 heads —, the
// attention output and the MLP's down projection by rows, the MLP's up projection by
// columns. Forward: one all-reduce after the attention and one after the MLP (plus the
// head's and the loss's); the weights are never gathered.
TEST(TensorParallelTest, GptBlockOverTwoDevicesMatchesOneDevice) {
  absl::StatusOr<Graph> model =
      examples::BuildGptBlock({.sequence = 8, .width = 32, .heads = 4, .num_classes = 10, .training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  const TrainingGraph t = Training(*std::move(model), OptimizerKind::kAdam);
  ExpectStrategyMatchesOneDevice(
      t, TensorParallelStrategy(2), Shape{4, 8, 32}, 0.002,
      [](const PartitionedProgram& p) {
        for (const char* column :
             {"attention/query/kernel", "attention/key/kernel", "attention/value/kernel", "mlp/fc/kernel"}) {
          EXPECT_EQ(p.variable_shardings.at(column).ToString(p.mesh), "[-, {model}]") << column;
        }
        for (const char* row : {"attention/attention_output/kernel", "mlp/proj/kernel"}) {
          EXPECT_EQ(p.variable_shardings.at(row).ToString(p.mesh), "[{model}, -]") << row;
        }
        for (const CollectiveReason& r : p.collectives) {
          EXPECT_EQ(r.tensor.find("kernel"), std::string::npos) << r.collective << " " << r.tensor << "\n"
                                                                << p.Explain();
        }
        int forward_all_reduces = 0;
        for (const CollectiveReason& r : p.collectives) {
          forward_all_reduces += r.collective.rfind("AllReduce", 0) == 0 && r.tensor.rfind("gradients", 0) != 0;
        }
        EXPECT_LE(forward_all_reduces, 4) << p.Explain();
      },
      // Softmax is shift-invariant per query, so the key bias's gradient is exactly zero
      // but for rounding, and Adam turns that noise into steps of any direction.
      [](const std::string& name) { return name.rfind("attention/key/bias", 0) == 0; });
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
