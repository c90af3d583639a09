// The equivalence every strategy must show: training partitioned by the strategy on
// in-process virtual devices gives one device's losses and weights on the same global
// batches (issue 7's "same losses and final weights ... to <= 1e-5 relative").
#ifndef TESSERA_TESTS_PARTITIONER_STRATEGY_EQUIVALENCE_H_
#define TESSERA_TESTS_PARTITIONER_STRATEGY_EQUIVALENCE_H_

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "partitioner/spmd_partitioner.h"
#include "runtime/mesh_session.h"
#include "runtime/session.h"
#include "strategies/strategy.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {

inline constexpr int kEquivalenceSteps = 20;
inline constexpr uint64_t kEquivalenceSeed = 7;

// Trains `t` for kEquivalenceSteps on one device and, partitioned by `strategy`, on the
// virtual devices of its mesh (MeshSession); every device's loss of every step and every
// Variable (assembled from the devices' shares) must match one device's to 1e-5.
// `check_program` may inspect the partitioned program first (its collectives).
// `skip_variable` names Variables not to compare (whose gradient is rounding noise).
inline void ExpectStrategyMatchesOneDevice(const TrainingGraph& t, const Strategy& strategy, const Shape& image_shape,
                                           double lr,
                                           const std::function<void(const PartitionedProgram&)>& check_program = {},
                                           const std::function<bool(const std::string&)>& skip_variable = {}) {
  SCOPED_TRACE(::testing::Message() << strategy.name() << ", global batch " << image_shape.dim(0));
  std::printf("data seed 1234, variable seed %llu\n", static_cast<unsigned long long>(kEquivalenceSeed));
  const std::vector<TrainingBatch> batches = RandomBatches(image_shape, kEquivalenceSteps, 1234);
  const Tensor rate = Tensor::Scalar<float>(static_cast<float>(lr));

  absl::StatusOr<std::unique_ptr<Session>> one =
      Session::Create(t.graph.Clone(), {.num_threads = 1, .seed = kEquivalenceSeed});
  ASSERT_TRUE(one.ok()) << one.status();
  std::vector<double> losses;
  for (const TrainingBatch& batch : batches) {
    absl::StatusOr<std::vector<Tensor>> out =
        (*one)->Run({{"image", batch.image}, {"labels", batch.labels}, {"learning_rate", rate}}, {"loss"},
                    RunOptions{.targets = t.updates});
    ASSERT_TRUE(out.ok()) << out.status();
    losses.push_back((*out)[0].GetAsDouble(0));
  }

  absl::StatusOr<StrategyPlan> plan = strategy.Plan(t.graph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<PartitionedProgram> program =
      PartitionGraph(t.graph, plan->mesh, plan->annotations,
                     {.batch = image_shape.dim(0), .targets = t.updates, .reduce_scatter = plan->reduce_scatter});
  ASSERT_TRUE(program.ok()) << program.status();
  if (check_program) check_program(*program);

  PartitionedProgram& p = *program;
  const int devices = plan->mesh.num_devices();
  std::vector<std::vector<std::vector<std::pair<std::string, Tensor>>>> feeds(kEquivalenceSteps);
  for (int s = 0; s < kEquivalenceSteps; ++s) {
    for (int d = 0; d < devices; ++d) {
      absl::StatusOr<Tensor> image = p.ShareOf("image", batches[s].image, d);
      absl::StatusOr<Tensor> labels = p.ShareOf("labels", batches[s].labels, d);
      ASSERT_TRUE(image.ok() && labels.ok());
      feeds[s].push_back({{"image", *image}, {"labels", *labels}, {"learning_rate", rate}});
    }
  }
  std::vector<MeshAxisSize> axes;
  for (const MeshAxis& axis : plan->mesh.axes()) axes.push_back({axis.name, axis.size});
  absl::StatusOr<std::unique_ptr<MeshSession>> mesh =
      MeshSession::Create(std::move(p.devices), axes, {.threads_per_device = 1, .seed = kEquivalenceSeed});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  for (int s = 0; s < kEquivalenceSteps; ++s) {
    absl::StatusOr<std::vector<std::vector<Tensor>>> out = (*mesh)->Run(feeds[s], {"loss"}, {.targets = t.updates});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int d = 0; d < devices; ++d) {
      EXPECT_NEAR((*out)[d][0].GetAsDouble(0), losses[s], 1e-5 * std::abs(losses[s]))
          << "step " << s << " device " << d;
    }
  }
  for (const std::string& name : t.variables) {
    if (skip_variable && skip_variable(name)) continue;
    absl::StatusOr<Tensor> expected = (*one)->GetVariable(name);
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::vector<Tensor> shares;
    for (int d = 0; d < devices; ++d) {
      absl::StatusOr<Tensor> got = (*mesh)->device(d).GetVariable(name);
      ASSERT_TRUE(got.ok()) << got.status();
      shares.push_back(*got);
    }
    absl::StatusOr<Tensor> whole = p.AssembleVariable(name, shares);
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_LE(RelativeError(*whole, *expected), 1e-5)
        << "variable " << name << " (" << p.variable_shardings.at(name).ToString(p.mesh) << ")";
  }
}

}  // namespace tsr

#endif  // TESSERA_TESTS_PARTITIONER_STRATEGY_EQUIVALENCE_H_
