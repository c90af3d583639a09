// ZeRO stages 1, 2 and 3 over 2 (and unevenly over 3) virtual devices: 20 training
// steps of the MLP and the LeNet CNN give one device's losses and final weights on the
// same global batch (1e-5 relative), and each stage's programs move and hold what the
// stage promises: stage 1 all-reduces the gradients and all-gathers the updated
// parameters; stage 2 reduce-scatters the gradients instead; stage 3 holds every sharded
// parameter split, gathers it where it is used, and no device holds a whole one.
#include "strategies/zero.h"

#include <cstdint>
#include <string>
#include <vector>

#include "examples/models.h"
#include "graph/builder/model_summary.h"
#include "gtest/gtest.h"
#include "partitioner/spmd_partitioner.h"
#include "tests/partitioner/strategy_equivalence.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {
namespace {

int Count(const PartitionedProgram& program, const std::string& op) {
  int n = 0;
  for (const CollectiveReason& r : program.collectives) n += r.collective.rfind(op + " ", 0) == 0;
  return n;
}

// What every stage must show in its programs, for a model trained with `slots` slots per
// parameter.
std::function<void(const PartitionedProgram&)> StageChecks(int stage, int slots) {
  return [stage, slots](const PartitionedProgram& p) {
    const std::string explained = p.Explain();
    int split_parameters = 0, split_slots = 0;
    for (const auto& [name, sharding] : p.variable_shardings) {
      if (p.update_shares.contains(name)) continue;
      const bool slot =
          name.find('/') != std::string::npos && p.variable_shardings.contains(name.substr(0, name.rfind('/')));
      if (sharding.IsSplit()) ++(slot ? split_slots : split_parameters);
    }
    EXPECT_GT(Count(p, "AllGather"), 0) << explained;
    if (stage < 3) {
      EXPECT_EQ(split_parameters, 0) << explained;
      EXPECT_FALSE(p.update_shares.empty()) << explained;
      if (slots > 0) {
        EXPECT_GT(split_slots, 0) << explained;
      }
      // The gradients: all-reduced by stage 1 (bucketed, as data parallelism), reduce-
      // scattered by stage 2.
      if (stage == 1) {
        EXPECT_EQ(Count(p, "ReduceScatter"), 0) << explained;
        EXPECT_GT(p.combined_all_reduces, 1) << explained;
      } else {
        EXPECT_EQ(static_cast<size_t>(Count(p, "ReduceScatter")), p.update_shares.size()) << explained;
      }
    } else {
      EXPECT_TRUE(p.update_shares.empty()) << explained;
      EXPECT_GT(split_parameters, 0) << explained;
      EXPECT_GT(Count(p, "ReduceScatter"), 0) << explained;
      // Less state per device than one device holds.
      int64_t whole = 0;
      for (const auto& [name, shape] : p.variable_shapes) whole += shape.num_elements() * 4;
      for (const Graph& device : p.devices) EXPECT_LT(VariableBytes(device), whole) << explained;
    }
  };
}

Graph Mlp() {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {64, 32}, .training_head = true});
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

Graph LeNet() {
  absl::StatusOr<Graph> model = examples::BuildLeNet({.training_head = true});
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

class ZeroStageTest : public testing::TestWithParam<int> {};

TEST_P(ZeroStageTest, MlpAdamTwoDevicesMatchesOneDevice) {
  ExpectStrategyMatchesOneDevice(Training(Mlp(), OptimizerKind::kAdam), ZeroStrategy(GetParam(), 2), Shape{64, 784},
                                 0.001, StageChecks(GetParam(), 2));
}

TEST_P(ZeroStageTest, MlpSgdUnevenThreeDevicesMatchesOneDevice) {
  // 50 rows over 3 devices; the 64- and 32-unit layers and the 10-class biases split
  // 21/21/22, 10/11/11, 3/3/4. SGD has no slots: the updates alone are sharded.
  ExpectStrategyMatchesOneDevice(Training(Mlp(), OptimizerKind::kSgd), ZeroStrategy(GetParam(), 3), Shape{50, 784}, 0.1,
                                 StageChecks(GetParam(), 0));
}

TEST_P(ZeroStageTest, LeNetMomentumTwoDevicesMatchesOneDevice) {
  ExpectStrategyMatchesOneDevice(Training(LeNet(), OptimizerKind::kMomentum), ZeroStrategy(GetParam(), 2),
                                 Shape{16, 1, 28, 28}, 0.01, StageChecks(GetParam(), 1));
}

INSTANTIATE_TEST_SUITE_P(Stages, ZeroStageTest, testing::Values(1, 2, 3),
                         [](const testing::TestParamInfo<int>& info) { return "zero" + std::to_string(info.param); });

TEST(ZeroTest, RefusesWhatItCannotShard) {
  EXPECT_EQ(ZeroStrategy(4, 2).Plan(Training(Mlp(), OptimizerKind::kSgd).graph).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A forward graph has no optimizer updates.
  absl::StatusOr<StrategyPlan> plan = ZeroStrategy(2, 2).Plan(Mlp());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("no"), std::string::npos) << plan.status();
  EXPECT_EQ(ZeroStrategy(3, 2).name(), "zero3(2)");
}

}  // namespace
}  // namespace tsr
