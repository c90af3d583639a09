// `DescribedCollectives<Interface>`: the collectives of the `Collectives` interface
// (all-reduce, reduce-scatter, all-gather, broadcast, all-to-all, barrier) expressed as one
// descriptor (collective_descriptor.h) and the operation's tensors, for the backends whose
// ranks are processes (MPI, Gloo). A backend implements `Issue` — exchange the
// descriptors, then move the data — and its own Send/Recv; `Interface` is its public
// interface (MpiCollectives, GlooCollectives).
#ifndef TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_DESCRIBED_COLLECTIVES_H_
#define TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_DESCRIBED_COLLECTIVES_H_

#include "absl/strings/string_view.h"
#include "graph/tensor.h"
#include "runtime/collectives/collectives.h"
#include "runtime/collectives/cross_process/collective_descriptor.h"

namespace tsr {

template <typename Interface>
class DescribedCollectives : public Interface {
 public:
  CollectiveHandle AllReduce(Tensor& inout, ReduceOp op, absl::string_view name) override {
    return Issue(MakeDescriptor(CollectiveKind::kAllReduce, name, inout.type(), {}, op), inout, Tensor());
  }
  CollectiveHandle ReduceScatter(const Tensor& input, Tensor& output, ReduceOp op, absl::string_view name) override {
    return Issue(MakeDescriptor(CollectiveKind::kReduceScatter, name, input.type(), output.type(), op), input, output);
  }
  CollectiveHandle AllGather(const Tensor& input, Tensor& output, absl::string_view name) override {
    return Issue(MakeDescriptor(CollectiveKind::kAllGather, name, input.type(), output.type()), input, output);
  }
  CollectiveHandle Broadcast(Tensor& inout, int root, absl::string_view name) override {
    return Issue(MakeDescriptor(CollectiveKind::kBroadcast, name, inout.type(), {}, ReduceOp::kSum, root), inout,
                 Tensor());
  }
  CollectiveHandle AllToAll(const Tensor& input, Tensor& output, absl::string_view name) override {
    return Issue(MakeDescriptor(CollectiveKind::kAllToAll, name, input.type(), output.type()), input, output);
  }
  CollectiveHandle Barrier(absl::string_view name) override {
    return Issue(MakeDescriptor(CollectiveKind::kBarrier, name), Tensor(), Tensor());
  }

 protected:
  // Runs the collective `descriptor` describes on `input` / `output` (in-place ones pass
  // their tensor as input and an invalid output).
  virtual CollectiveHandle Issue(CollectiveDescriptor descriptor, const Tensor& input, const Tensor& output) = 0;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_DESCRIBED_COLLECTIVES_H_
