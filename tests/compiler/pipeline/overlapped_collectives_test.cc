// Gradient all-reduces overlap the backward pass: the partitioner places each bucket right
// after the last of its gradients (the first bucket small, as DDP's), and a compiled
// device program issues its all-reduces without waiting, running the steps after them
// until one touches the result. The overlapped run must give the same bits as the run
// that waits at every collective, on both devices, step after step.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/pipeline/compile_graph.h"
#include "examples/models.h"
#include "gtest/gtest.h"
#include "partitioner/spmd_partitioner.h"
#include "runtime/collectives/collective_groups.h"
#include "runtime/compiled/compiled_program.h"
#include "runtime/mesh_session.h"
#include "runtime/session.h"
#include "strategies/data_parallel.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {
namespace {

struct Devices {
  std::vector<std::unique_ptr<CompiledProgram>> programs;
};

Devices Compile(const PartitionedProgram& p, const TrainingGraph& t, bool overlap) {
  const std::vector<std::string>& targets = t.updates;
  absl::StatusOr<std::unique_ptr<Session>> init = Session::Create(t.graph.Clone(), {.seed = 3});
  EXPECT_TRUE(init.ok()) << init.status();
  std::vector<MeshAxisSize> axes;
  for (const MeshAxis& axis : p.mesh.axes()) axes.push_back({axis.name, axis.size});
  absl::StatusOr<std::vector<std::shared_ptr<CollectiveGroupTable>>> groups = MakeInProcessMeshGroups(axes);
  EXPECT_TRUE(groups.ok()) << groups.status();
  Devices devices;
  for (size_t d = 0; d < p.devices.size(); ++d) {
    CompileOptions options;
    options.batch = p.global_batch / static_cast<int64_t>(p.devices.size());
    options.threads = 1;
    options.variables_as_state = true;
    options.targets = targets;
    for (const std::string& name : t.variables) {
      absl::StatusOr<Tensor> value = (*init)->GetVariable(name);
      EXPECT_TRUE(value.ok()) << value.status();
      absl::StatusOr<Tensor> share = p.VariableShare(name, *value, static_cast<int>(d));
      if (share.ok()) options.variable_values[name] = *share;
    }
    absl::StatusOr<Executable> executable = CompileGraph(p.devices[d], options);
    EXPECT_TRUE(executable.ok()) << executable.status();
    absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(
        *std::move(executable),
        {.threads = 1, .seed = 3, .collective_groups = (*groups)[d], .overlap_collectives = overlap});
    EXPECT_TRUE(program.ok()) << program.status();
    devices.programs.push_back(*std::move(program));
  }
  return devices;
}

TEST(OverlappedCollectivesTest, GradientAllReducesOverlapTheBackwardPassWithTheSameResults) {
  absl::StatusOr<Graph> model = examples::BuildMlp({.hidden_units = {64, 32}, .training_head = true});
  ASSERT_TRUE(model.ok()) << model.status();
  const TrainingGraph t = Training(*std::move(model), OptimizerKind::kMomentum);
  absl::StatusOr<StrategyPlan> plan = MirroredStrategy(2).Plan(t.graph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // A first bucket of 4 KiB: the last layers' gradients go alone, early; the rest together.
  absl::StatusOr<PartitionedProgram> p = PartitionGraph(
      t.graph, plan->mesh, plan->annotations, {.batch = 16, .targets = t.updates, .first_bucket_bytes = 4096});
  ASSERT_TRUE(p.ok()) << p.status();
  // In device 0's program, an all-reduce comes before the first layer's weight gradient.
  absl::StatusOr<std::vector<const Node*>> order = p->devices[0].TopologicalOrder();
  ASSERT_TRUE(order.ok());
  int first_all_reduce = -1, first_layer_gradient = -1;
  for (size_t i = 0; i < order->size(); ++i) {
    const Node* n = (*order)[i];
    if (n->op() == "AllReduce" && first_all_reduce < 0 && n->name().find("loss") == std::string::npos) {
      first_all_reduce = static_cast<int>(i);
    }
    if (n->name() == "gradients/dense/MatMul/MatMul") first_layer_gradient = static_cast<int>(i);
  }
  ASSERT_GE(first_all_reduce, 0) << p->Explain();
  ASSERT_GE(first_layer_gradient, 0) << p->Explain();
  EXPECT_LT(first_all_reduce, first_layer_gradient) << p->Explain();

  Devices overlapped = Compile(*p, t, true);
  Devices waiting = Compile(*p, t, false);
  ASSERT_EQ(overlapped.programs.size(), 2u);
  ASSERT_EQ(waiting.programs.size(), 2u);
  const std::vector<TrainingBatch> batches = RandomBatches(Shape{16, 784}, 5, 99);
  for (int s = 0; s < 5; ++s) {
    std::vector<std::vector<Tensor>> results[2];
    for (Devices* devices : {&overlapped, &waiting}) {
      std::vector<std::vector<Tensor>>& out = results[devices == &waiting];
      out.resize(2);
      ASSERT_TRUE(RunOnEveryDevice(2, [&](int d) -> absl::Status {
                    absl::StatusOr<Tensor> image = p->ShareOf("image", batches[s].image, d);
                    absl::StatusOr<Tensor> labels = p->ShareOf("labels", batches[s].labels, d);
                    if (!image.ok() || !labels.ok()) return absl::InternalError("share");
                    absl::StatusOr<std::vector<Tensor>> o = devices->programs[d]->Run(
                        {{"image", *image}, {"labels", *labels}, {"learning_rate", Tensor::Scalar<float>(0.05f)}});
                    if (!o.ok()) return o.status();
                    out[d] = *std::move(o);
                    return absl::OkStatus();
                  }).ok());
    }
    for (int d = 0; d < 2; ++d) {
      ASSERT_EQ(results[0][d].size(), results[1][d].size());
      for (size_t i = 0; i < results[0][d].size(); ++i) {
        EXPECT_TRUE(results[0][d][i].BitwiseEquals(results[1][d][i]))
            << "step " << s << " device " << d << " output " << i;
      }
      EXPECT_GT(overlapped.programs[d]->last_run_overlapped_steps(), 0);
      EXPECT_EQ(waiting.programs[d]->last_run_overlapped_steps(), 0);
    }
  }
  for (const std::string& name : t.variables) {
    absl::StatusOr<Tensor> a = overlapped.programs[0]->ReadVariable(name);
    absl::StatusOr<Tensor> b = waiting.programs[0]->ReadVariable(name);
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    EXPECT_TRUE(a->BitwiseEquals(*b)) << name;
  }
  std::printf("steps run while an all-reduce was in flight: %lld of %d\n",
              static_cast<long long>(overlapped.programs[0]->last_run_overlapped_steps()),
              overlapped.programs[0]->num_steps());
}

}  // namespace
}  // namespace tsr
