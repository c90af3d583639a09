// MakeStrategy (see strategy_factory.h).
#include "strategies/strategy_factory.h"

#include "absl/strings/str_cat.h"
#include "partitioner/device_mesh.h"
#include "strategies/data_parallel.h"
#include "strategies/pipeline.h"
#include "strategies/tensor_parallel.h"
#include "strategies/zero.h"

namespace tsr {

absl::StatusOr<std::shared_ptr<const Strategy>> MakeStrategy(const StrategySpec& spec) {
  const std::string& name = spec.name;
  const bool zero = name == "zero1" || name == "zero2" || name == "zero3";
  const bool takes_devices = name == "mirrored" || name == "tensor-parallel" || name == "multi-worker" || zero;
  if (!takes_devices && name != "one-device" && name != "hybrid" && name != "pipeline") {
    return absl::InvalidArgumentError(
        absl::StrCat("--strategy is '", name,
                     "' but one-device, mirrored, multi-worker, tensor-parallel, zero1, zero2, zero3, hybrid or "
                     "pipeline is required"));
  }
  const bool pipelined = spec.stages != 0 || spec.microbatches != 0 || !spec.schedule.empty() || spec.chunks != 0 ||
                         !spec.cut_points.empty();
  if (pipelined && name != "pipeline") {
    return absl::InvalidArgumentError(
        "--stages, --microbatches, --pipeline-schedule, --chunks and --cut-points go with --strategy pipeline");
  }
  if (name == "pipeline") {
    PipelinePlan plan;
    if (spec.stages != 0) plan.stages = spec.stages;
    if (spec.microbatches != 0) plan.microbatches = spec.microbatches;
    if (!spec.schedule.empty()) {
      absl::StatusOr<PipelineScheduleKind> schedule = ParsePipelineSchedule(spec.schedule);
      if (!schedule.ok())
        return absl::InvalidArgumentError(absl::StrCat("--pipeline-schedule: ", schedule.status().message()));
      plan.schedule = *schedule;
    }
    // Interleaving over one chunk would be 1F1B: two unless told.
    if (spec.chunks != 0) {
      plan.chunks = spec.chunks;
    } else if (plan.schedule == PipelineScheduleKind::kInterleaved) {
      plan.chunks = 2;
    }
    if (absl::Status chunks = CheckPipelineChunks(plan.schedule, plan.chunks); !chunks.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--chunks: ", chunks.message()));
    }
    if (plan.stages < 1 || plan.stages > 64) return absl::InvalidArgumentError("--stages must be in [1, 64]");
    if (plan.microbatches < 1 || plan.microbatches > 4096) {
      return absl::InvalidArgumentError("--microbatches must be in [1, 4096]");
    }
    const int model_stages = plan.stages * plan.chunks;
    if (!spec.cut_points.empty() && static_cast<int>(spec.cut_points.size()) != model_stages - 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cut-points names ", spec.cut_points.size(), " ops but --stages ", plan.stages,
                       plan.chunks > 1 ? absl::StrCat(" x --chunks ", plan.chunks) : "", " needs ", model_stages - 1));
    }
    plan.cut_points = spec.cut_points;
    if (spec.data < 1 || spec.data > 4096)
      return absl::InvalidArgumentError("pipeline data replicas must be in [1, 4096]");
    plan.data = spec.data;
    if (spec.devices != 1 || !spec.mesh.empty()) {
      return absl::InvalidArgumentError("--strategy pipeline takes --stages, not --devices or --mesh");
    }
    return std::shared_ptr<const Strategy>(std::make_shared<PipelineStrategy>(std::move(plan)));
  }
  if ((name == "hybrid") != !spec.mesh.empty()) {
    return absl::InvalidArgumentError("--mesh goes with --strategy hybrid (and hybrid needs --mesh data=D,model=M)");
  }
  if (spec.devices < 1 || spec.devices > 256) return absl::InvalidArgumentError("--devices must be in [1, 256]");
  if (!takes_devices && spec.devices != 1) {
    return absl::InvalidArgumentError("--devices needs --strategy mirrored, tensor-parallel or zero1/2/3");
  }
  if (name == "one-device") return std::shared_ptr<const Strategy>();
  if (name == "mirrored") return std::shared_ptr<const Strategy>(std::make_shared<MirroredStrategy>(spec.devices));
  if (name == "multi-worker") {
    return std::shared_ptr<const Strategy>(std::make_shared<MultiWorkerMirroredStrategy>(spec.devices));
  }
  if (name == "tensor-parallel") {
    return std::shared_ptr<const Strategy>(std::make_shared<TensorParallelStrategy>(spec.devices));
  }
  if (zero) return std::shared_ptr<const Strategy>(std::make_shared<ZeroStrategy>(name.back() - '0', spec.devices));
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse(spec.mesh);
  if (!mesh.ok()) return mesh.status();
  if (mesh->num_axes() != 2 || mesh->AxisIndex("data") != 0 || mesh->AxisIndex("model") != 1) {
    return absl::InvalidArgumentError(absl::StrCat("--mesh is '", spec.mesh, "' but data=D,model=M is required"));
  }
  return std::shared_ptr<const Strategy>(std::make_shared<HybridStrategy>(mesh->axis_size(0), mesh->axis_size(1)));
}

}  // namespace tsr
