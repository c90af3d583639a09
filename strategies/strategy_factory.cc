// MakeStrategy (see strategy_factory.h).
#include "strategies/strategy_factory.h"

#include "absl/strings/str_cat.h"
#include "partitioner/device_mesh.h"
#include "strategies/data_parallel.h"
#include "strategies/tensor_parallel.h"

namespace tsr {

absl::StatusOr<std::shared_ptr<const Strategy>> MakeStrategy(const StrategySpec& spec) {
  const std::string& name = spec.name;
  if (name != "one-device" && name != "mirrored" && name != "multi-worker" && name != "tensor-parallel" &&
      name != "hybrid") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--strategy is '", name, "' but one-device, mirrored, multi-worker, tensor-parallel or hybrid is required"));
  }
  if ((name == "hybrid") != !spec.mesh.empty()) {
    return absl::InvalidArgumentError("--mesh goes with --strategy hybrid (and hybrid needs --mesh data=D,model=M)");
  }
  if (spec.devices < 1 || spec.devices > 256) return absl::InvalidArgumentError("--devices must be in [1, 256]");
  if (name != "mirrored" && name != "tensor-parallel" && name != "multi-worker" && spec.devices != 1) {
    return absl::InvalidArgumentError("--devices needs --strategy mirrored or tensor-parallel");
  }
  if (name == "one-device") return std::shared_ptr<const Strategy>();
  if (name == "mirrored") return std::shared_ptr<const Strategy>(std::make_shared<MirroredStrategy>(spec.devices));
  if (name == "multi-worker") {
    return std::shared_ptr<const Strategy>(std::make_shared<MultiWorkerMirroredStrategy>(spec.devices));
  }
  if (name == "tensor-parallel") {
    return std::shared_ptr<const Strategy>(std::make_shared<TensorParallelStrategy>(spec.devices));
  }
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse(spec.mesh);
  if (!mesh.ok()) return mesh.status();
  if (mesh->num_axes() != 2 || mesh->AxisIndex("data") != 0 || mesh->AxisIndex("model") != 1) {
    return absl::InvalidArgumentError(absl::StrCat("--mesh is '", spec.mesh, "' but data=D,model=M is required"));
  }
  return std::shared_ptr<const Strategy>(std::make_shared<HybridStrategy>(mesh->axis_size(0), mesh->axis_size(1)));
}

}  // namespace tsr
