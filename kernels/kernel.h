// The kernel interface: what one op implementation sees when it runs, and the
// registry of implementations keyed by (op, device, dtype).
//
// A kernel never allocates its outputs: the runtime did, with the shapes inference
// gives once the batch is bound. A kernel reads its inputs, its attributes (with
// defaults, as shape functions see them) and writes its outputs.
//
// The dtype of the key is the dtype of input 0, or of output 0 for ops without inputs.
#ifndef TESSERA_KERNELS_KERNEL_H_
#define TESSERA_KERNELS_KERNEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/attr_reader.h"
#include "graph/op_def.h"
#include "graph/tensor.h"

namespace tsr {

class CollectiveGroups;  // runtime/collectives/collective_groups.h

// Runs fn(begin, end) over [0, n) split into chunks, possibly concurrently; returns
// when every chunk is done. `cost_per_item` (rough cycles) lets it avoid splitting
// small work. The runtime's thread pool provides one; a null ParallelFor runs inline.
using ParallelForFn =
    std::function<void(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>&)>;

// Runs fn over [0, n) through `parallel_for`, or inline when it is null; nothing when
// n <= 0. For code handed a ParallelForFn (KernelContext::ParallelFor uses it too).
void RunParallelFor(const ParallelForFn& parallel_for, int64_t n, int64_t cost_per_item,
                    const std::function<void(int64_t, int64_t)>& fn);

class KernelContext : public AttrReader {
 public:
  KernelContext(const OpDef& def, absl::string_view node_name, const AttrMap& attrs, std::vector<const Tensor*> inputs,
                std::vector<Tensor*> outputs);

  const OpDef& op_def() const { return def_; }
  absl::string_view node_name() const { return node_name_; }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // False for an absent optional input.
  bool has_input(int i) const { return i >= 0 && i < num_inputs() && inputs_[i] != nullptr; }
  const Tensor& input(int i) const { return *inputs_[i]; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  Tensor& output(int i) { return *outputs_[i]; }
  // Whether anything reads output i after the kernel (a later op, the caller). A kernel
  // may skip computing an output nobody reads (MaxPool's Indices at inference), leaving
  // its contents unspecified; the runtime says so when it knows (default: all needed).
  bool output_needed(int i) const {
    return i >= 0 && i < num_outputs() && (static_cast<size_t>(i) >= unneeded_.size() || !unneeded_[i]);
  }
  void set_output_needed(int i, bool needed) {
    if (static_cast<size_t>(i) >= unneeded_.size()) unneeded_.resize(static_cast<size_t>(i) + 1, false);
    unneeded_[i] = !needed;
  }

  // Splits work over the runtime's threads (inline when none were given).
  void ParallelFor(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn) const;
  void set_parallel_for(ParallelForFn fn) { parallel_for_ = std::move(fn); }
  // The runtime's ParallelFor itself, to hand to code that takes one (Sgemm); null
  // when none was given (such code then runs inline).
  const ParallelForFn& parallel_for() const { return parallel_for_; }

  // Randomness for stateful ops (Dropout): a counter-based stream keyed by
  // (seed, node, step) so runs are reproducible.
  uint64_t seed() const { return seed_; }
  uint64_t step() const { return step_; }
  void set_rng_key(uint64_t seed, uint64_t step) {
    seed_ = seed;
    step_ = step;
  }

  // The communicators of the device running the kernel, for the collective ops
  // (AllReduce, ...) of partitioned graphs; null when the runtime runs a single device.
  CollectiveGroups* collective_groups() const { return collective_groups_; }
  void set_collective_groups(CollectiveGroups* groups) { collective_groups_ = groups; }

  // InvalidArgument "node 'name' (Op): message".
  absl::Status Error(absl::string_view message) const;

 private:
  const OpDef& def_;
  std::string node_name_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  std::vector<bool> unneeded_;
  ParallelForFn parallel_for_;
  uint64_t seed_ = 0;
  uint64_t step_ = 0;
  CollectiveGroups* collective_groups_ = nullptr;
};

using KernelFn = std::function<absl::Status(KernelContext&)>;

// Devices kernels are registered for. "reference" holds the plain oracle kernels;
// "cpu" the optimized ones (the CPU device falls back to reference kernels).
inline constexpr absl::string_view kReferenceDevice = "reference";
inline constexpr absl::string_view kCpuDevice = "cpu";

class KernelRegistry {
 public:
  KernelRegistry() = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // All built-in kernels (reference and cpu), registered on first use.
  static KernelRegistry& Global();

  // AlreadyExists when (op, device, dtype) has a kernel.
  absl::Status Register(absl::string_view op, absl::string_view device, DType dtype, KernelFn fn);
  // Registers `fn` for each dtype in `dtypes`.
  absl::Status Register(absl::string_view op, absl::string_view device, absl::Span<const DType> dtypes, KernelFn fn);
  // nullptr when missing.
  const KernelFn* Find(absl::string_view op, absl::string_view device, DType dtype) const;
  // NotFound "no <device> kernel for op 'X' with dtype f16" when missing.
  absl::StatusOr<const KernelFn*> Lookup(absl::string_view op, absl::string_view device, DType dtype) const;
  // The dtypes with a kernel for (op, device).
  std::vector<DType> DTypesFor(absl::string_view op, absl::string_view device) const;

 private:
  absl::flat_hash_map<std::string, KernelFn> kernels_;  // key "op|device|dtype"
};

// The dtype that selects a node's kernel: input 0's, or output 0's without inputs.
DType KernelDType(const std::vector<const Tensor*>& inputs, const std::vector<Tensor*>& outputs);

}  // namespace tsr

#endif  // TESSERA_KERNELS_KERNEL_H_
