// PartitionedStepCompiler (see distributed_step.h).
#include "strategies/distributed_step.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "partitioner/spmd_partitioner.h"
#include "runtime/collectives/collective_groups.h"
#include "runtime/device_threads.h"
#include "runtime/mesh_session.h"
#include "runtime/session.h"
#include "strategies/pipeline.h"

namespace tsr {

namespace {

// One device's program on the interpreter.
class SessionStep : public StepProgram {
 public:
  SessionStep(std::unique_ptr<Session> session, std::vector<std::string> inputs, const StepProgramSpec& spec)
      : session_(std::move(session)), inputs_(std::move(inputs)), fetches_(spec.fetches), targets_(spec.targets) {}

  absl::StatusOr<std::vector<Tensor>> Run(const Batch& feeds, uint64_t step, RunMetadata* metadata) override {
    Batch used;
    for (const auto& [name, tensor] : feeds) {
      if (std::find(inputs_.begin(), inputs_.end(), name) != inputs_.end()) used.emplace_back(name, tensor);
    }
    return session_->Run(used, fetches_, RunOptions{.targets = targets_, .step = step, .metadata = metadata});
  }
  std::vector<std::string> VariableNames() const override { return session_->VariableNames(); }
  absl::StatusOr<Tensor> ReadVariable(absl::string_view name) override { return session_->GetVariable(name); }
  absl::Status AssignVariable(absl::string_view name, const Tensor& value) override {
    return session_->SetVariable(name, value);
  }
  std::string Summary() const override { return "interpreted"; }

 private:
  std::unique_ptr<Session> session_;
  std::vector<std::string> inputs_;
  std::vector<std::string> fetches_;
  std::vector<std::string> targets_;
};

absl::StatusOr<std::unique_ptr<StepProgram>> InterpretDevice(const StepProgramSpec& spec) {
  TSR_ASSIGN_OR_RETURN(
      std::unique_ptr<Session> session,
      Session::Create(
          spec.graph->Clone(),
          SessionOptions{.num_threads = spec.threads, .seed = spec.seed, .collective_groups = spec.collective_groups}));
  for (const auto& [name, value] : spec.variable_values) {
    if (session->GetVariable(name).ok()) TSR_RETURN_IF_ERROR(session->SetVariable(name, value));
  }
  // The signature's inputs and the Placeholders outside it, fed by node name.
  std::vector<std::string> inputs;
  for (const SignatureEntry& e : spec.graph->inputs()) inputs.push_back(e.name);
  for (const Node* node : spec.graph->nodes()) {
    if (node->op() == "Placeholder") inputs.push_back(node->name());
  }
  return std::make_unique<SessionStep>(std::move(session), std::move(inputs), spec);
}

// What device `device` holds of Variable `name` whose whole value is `value`: its share,
// and its update share's (spmd_partitioner.h), by the Variable each is held in.
std::vector<std::pair<std::string, absl::StatusOr<Tensor>>> SharesOf(const PartitionedProgram& program,
                                                                     absl::string_view name, const Tensor& value,
                                                                     int device) {
  std::vector<std::pair<std::string, absl::StatusOr<Tensor>>> held;
  held.emplace_back(std::string(name), program.variable_shardings.contains(std::string(name))
                                           ? program.VariableShare(name, value, device)
                                           : absl::StatusOr<Tensor>(value));
  for (const auto& [share, variable] : program.update_shares) {
    if (variable == name) held.emplace_back(share, program.VariableShare(share, value, device));
  }
  return held;
}

// The devices of a partitioned step that run in this process: all of them, or one.
class PartitionedStep : public StepProgram {
 public:
  PartitionedStep(PartitionedProgram program, std::vector<int> device_ids,
                  std::vector<std::unique_ptr<StepProgram>> devices, std::string summary,
                  std::map<std::string, TensorType> whole_types, std::shared_ptr<CollectiveGroups> process_groups)
      : program_(std::move(program)),
        device_ids_(std::move(device_ids)),
        devices_(std::move(devices)),
        device_threads_(static_cast<int>(devices_.size())),
        summary_(std::move(summary)),
        whole_types_(std::move(whole_types)),
        process_groups_(std::move(process_groups)) {}

  absl::StatusOr<std::vector<Tensor>> Run(const Batch& feeds, uint64_t step, RunMetadata* metadata) override {
    const int n = static_cast<int>(devices_.size());
    std::vector<Batch> shares(n);
    for (const auto& [name, tensor] : feeds) {
      if (!program_.input_shardings.contains(name)) continue;  // not an input of this step
      for (int d = 0; d < n; ++d) {
        TSR_ASSIGN_OR_RETURN(Tensor share, program_.ShareOf(name, tensor, device_ids_[d]));
        shares[d].emplace_back(name, std::move(share));
      }
    }
    std::vector<std::vector<Tensor>> out(n);
    TSR_RETURN_IF_ERROR(device_threads_.Run([&](int d) -> absl::Status {
      TSR_ASSIGN_OR_RETURN(out[d], devices_[d]->Run(shares[d], step, d == 0 ? metadata : nullptr));
      return absl::OkStatus();
    }));
    return std::move(out[0]);
  }
  // The model's Variables (not the partitioner's update shares).
  std::vector<std::string> VariableNames() const override {
    std::vector<std::string> names = devices_[0]->VariableNames();
    names.erase(std::remove_if(names.begin(), names.end(),
                               [&](const std::string& n) { return program_.update_shares.contains(n); }),
                names.end());
    return names;
  }
  // A replicated Variable is read from the first device; a split one is assembled from
  // every device's share. With one device per process, the shares come from the other
  // processes: every process must read the same split Variables in the same order (the
  // Trainer does: it syncs them at the same points of every rank's loop).
  absl::StatusOr<Tensor> ReadVariable(absl::string_view name) override {
    auto it = program_.variable_shardings.find(std::string(name));
    if (it == program_.variable_shardings.end() || !it->second.IsSplit()) return devices_[0]->ReadVariable(name);
    std::vector<Tensor> shares;
    if (static_cast<int>(devices_.size()) == program_.mesh.num_devices()) {
      for (auto& device : devices_) {
        TSR_ASSIGN_OR_RETURN(Tensor share, device->ReadVariable(name));
        shares.push_back(std::move(share));
      }
    } else {
      TSR_ASSIGN_OR_RETURN(shares, GatherShares(name));
    }
    return program_.AssembleVariable(name, shares);
  }
  // Every device gets its share, and its update share of the Variable (if any) too.
  absl::Status AssignVariable(absl::string_view name, const Tensor& value) override {
    for (size_t i = 0; i < devices_.size(); ++i) {
      for (const auto& [held, share] : SharesOf(program_, name, value, device_ids_[i])) {
        TSR_RETURN_IF_ERROR(share.status());
        TSR_RETURN_IF_ERROR(devices_[i]->AssignVariable(held, *share));
      }
    }
    return absl::OkStatus();
  }
  std::string Summary() const override { return summary_; }

 private:
  // Every device's share of split Variable `name`, this process holding one: each
  // process in turn broadcasts its share over the communicator spanning the mesh (rank
  // = device), the others receive it into a buffer of that device's share shape.
  absl::StatusOr<std::vector<Tensor>> GatherShares(absl::string_view name) {
    auto type = whole_types_.find(std::string(name));
    if (type == whole_types_.end() || process_groups_ == nullptr || devices_.size() != 1) {
      return absl::FailedPreconditionError(
          absl::StrCat("Variable '", name, "' is split over the processes, and this step cannot gather it"));
    }
    std::vector<std::string> axes;
    for (const MeshAxis& axis : program_.mesh.axes()) axes.push_back(axis.name);
    TSR_ASSIGN_OR_RETURN(Collectives * world, process_groups_->ForAxes(axes));
    TSR_ASSIGN_OR_RETURN(Tensor zeros, Tensor::Create(type->second.dtype, type->second.shape));
    std::vector<Tensor> shares;
    for (int d = 0; d < program_.mesh.num_devices(); ++d) {
      Tensor share;
      if (d == device_ids_[0]) {
        TSR_ASSIGN_OR_RETURN(share, devices_[0]->ReadVariable(name));
      } else {
        TSR_ASSIGN_OR_RETURN(Tensor shaped, program_.VariableShare(name, zeros, d));
        TSR_ASSIGN_OR_RETURN(share, Tensor::Create(shaped.dtype(), shaped.shape()));
      }
      TSR_RETURN_IF_ERROR(world->Broadcast(share, d, absl::StrCat("read ", name)).Wait());
      shares.push_back(std::move(share));
    }
    return shares;
  }

  PartitionedProgram program_;
  std::vector<int> device_ids_;  // the mesh device of each program in devices_
  std::vector<std::unique_ptr<StepProgram>> devices_;
  DeviceThreads device_threads_;  // runs devices_ at once, every step
  std::string summary_;
  std::map<std::string, TensorType> whole_types_;     // of the Variables
  std::shared_ptr<CollectiveGroups> process_groups_;  // with one device per process
};

absl::StatusOr<std::unique_ptr<StepProgram>> PartitionStep(const Strategy& strategy,
                                                           const PartitionedStepOptions& options,
                                                           const StepProgramSpec& spec) {
  if (spec.graph == nullptr) return absl::InvalidArgumentError("no graph to partition");
  TSR_ASSIGN_OR_RETURN(StrategyPlan plan, strategy.Plan(*spec.graph));
  std::vector<MeshAxisSize> axes;
  for (const MeshAxis& axis : plan.mesh.axes()) axes.push_back(MeshAxisSize{axis.name, axis.size});
  if (options.process_device >= 0 && options.process_groups == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("this process runs device ", options.process_device, " of the mesh ",
                                                   plan.mesh.ToString(), " but has no communicators"));
  }
  if (plan.pipeline.has_value()) {
    PipelineStepOptions pipeline{.threads_per_stage = options.threads_per_device,
                                 .stage_compiler = options.device_compiler,
                                 .timeout = options.collectives.timeout};
    if (options.process_device >= 0) {
      // One pipeline device per process: mesh device = pipe rank x data + replica.
      TSR_ASSIGN_OR_RETURN(pipeline.process_groups, options.process_groups(axes));
      pipeline.pipe_rank = options.process_device / plan.pipeline->data;
    }
    return MakePipelineStep(*plan.pipeline, spec, pipeline);
  }
  TSR_ASSIGN_OR_RETURN(
      PartitionedProgram program,
      PartitionGraph(
          *spec.graph, plan.mesh, plan.annotations,
          PartitionOptions{.batch = spec.batch, .targets = spec.targets, .reduce_scatter = plan.reduce_scatter}));
  std::vector<int> device_ids;
  std::vector<std::shared_ptr<CollectiveGroups>> groups;
  if (options.process_device >= 0) {
    if (options.process_device >= plan.mesh.num_devices()) {
      return absl::InvalidArgumentError(absl::StrCat("this process runs device ", options.process_device,
                                                     " of the mesh ", plan.mesh.ToString(),
                                                     ", which has no such device"));
    }
    TSR_ASSIGN_OR_RETURN(std::shared_ptr<CollectiveGroups> mine, options.process_groups(axes));
    device_ids.push_back(options.process_device);
    groups.push_back(std::move(mine));
  } else {
    TSR_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<CollectiveGroupTable>> tables,
                         MakeInProcessMeshGroups(axes, options.collectives));
    for (int d = 0; d < plan.mesh.num_devices(); ++d) {
      device_ids.push_back(d);
      groups.push_back(tables[d]);
    }
  }
  // Every device's program, compiled by `make` (or interpreted). Several devices of this
  // process compile at once, one thread each, as the processes of a multi-worker job do:
  // a mirrored LeNet's two programs took 0.26 s each, half of its first 300 steps' time,
  // one after the other.
  const auto make_devices = [&](const StepCompiler& make) -> absl::StatusOr<std::vector<std::unique_ptr<StepProgram>>> {
    std::vector<std::unique_ptr<StepProgram>> devices(device_ids.size());
    const auto make_one = [&](size_t i) -> absl::Status {
      const int d = device_ids[i];
      StepProgramSpec device_spec = spec;
      device_spec.graph = &program.devices[d];
      device_spec.threads = options.threads_per_device;
      device_spec.collective_groups = groups[i];
      // The starting values: each device's shares of them.
      device_spec.variable_values.clear();
      for (const auto& [name, value] : spec.variable_values) {
        for (auto& [held, share] : SharesOf(program, name, value, d)) {
          TSR_RETURN_IF_ERROR(share.status());
          device_spec.variable_values[held] = *std::move(share);
        }
      }
      TSR_ASSIGN_OR_RETURN(devices[i], make ? make(device_spec) : InterpretDevice(device_spec));
      return absl::OkStatus();
    };
    if (make && device_ids.size() > 1) {
      // (Several devices: the mesh's, numbered as RunOnEveryDevice's errors name them.)
      TSR_RETURN_IF_ERROR(RunOnEveryDevice(static_cast<int>(device_ids.size()), [&](int i) { return make_one(i); }));
      return devices;
    }
    for (size_t i = 0; i < device_ids.size(); ++i) {
      if (absl::Status made = make_one(i); !made.ok()) {
        return absl::Status(made.code(), absl::StrCat("device ", device_ids[i], ": ", made.message()));
      }
    }
    return devices;
  };
  absl::StatusOr<std::vector<std::unique_ptr<StepProgram>>> devices = make_devices(options.device_compiler);
  std::string compile_failure;
  if (!devices.ok() && options.device_compiler) {
    // A program the compiler cannot take still runs partitioned, on the interpreter.
    compile_failure = absl::StrCat(" (interpreted: ", devices.status().message(), ")");
    devices = make_devices(nullptr);
  }
  if (!devices.ok()) return devices.status();
  const std::string here =
      options.process_device >= 0 ? absl::StrCat(" (device ", options.process_device, " in this process)") : "";
  std::string summary = absl::StrCat(
      strategy.name(), ": ", plan.mesh.num_devices(), " devices", here, " x ", options.threads_per_device, " thread",
      options.threads_per_device == 1 ? "" : "s", ", ", program.CollectivesPerStep(), " collectives per step",
      program.BucketsNote(), "; device ", device_ids.front(), " ", devices->front()->Summary(), compile_failure);
  std::map<std::string, TensorType> whole_types;
  for (const auto& [name, value] : spec.variable_values) whole_types[name] = value.type();
  return std::make_unique<PartitionedStep>(std::move(program), std::move(device_ids), *std::move(devices),
                                           std::move(summary), std::move(whole_types),
                                           options.process_device >= 0 ? groups.front() : nullptr);
}

}  // namespace

StepCompiler PartitionedStepCompiler(std::shared_ptr<const Strategy> strategy, PartitionedStepOptions options) {
  return [strategy = std::move(strategy), options = std::move(options)](const StepProgramSpec& spec) {
    return PartitionStep(*strategy, options, spec);
  };
}

}  // namespace tsr
