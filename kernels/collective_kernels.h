// The collective ops' kernels (AllReduce, AllGather, ReduceScatter) find the device's
// communicator in KernelContext::collective_groups() by the node's `mesh_axes` and wait
// for the collective. A runtime that overlaps an all-reduce with the steps after it
// (runtime/compiled/compiled_program.cc) issues it with IssueAllReduce instead and
// waits later, before anything touches Y.
#ifndef TESSERA_KERNELS_COLLECTIVE_KERNELS_H_
#define TESSERA_KERNELS_COLLECTIVE_KERNELS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/kernel.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

// An AllReduce node's all-reduce, issued: Y now holds X and is reduced in place once
// the handle completes (X is no longer read).
absl::StatusOr<CollectiveHandle> IssueAllReduce(KernelContext& ctx);

// Waits for a collective issued for ctx's node; a failure names the node.
absl::Status WaitForCollective(KernelContext& ctx, const CollectiveHandle& handle);

}  // namespace tsr

#endif  // TESSERA_KERNELS_COLLECTIVE_KERNELS_H_
