// Kernels of the collective ops (graph/ops/collective_ops.cc): they find the device's
// communicator over the op's mesh axes in KernelContext::collective_groups() and run the
// collective on the op's buffers, named by the node (the same on every device of a
// partitioned program, so that mismatches and timeouts name it). Registered for the
// reference and the cpu device alike: moving data has one implementation.
#include "kernels/collective_kernels.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/kernel.h"
#include "kernels/register_kernels.h"
#include "runtime/collectives/collective_groups.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

namespace {

constexpr DType kReducible[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};

absl::StatusOr<Collectives*> Communicator(KernelContext& ctx) {
  if (ctx.collective_groups() == nullptr) {
    return ctx.Error(
        "no communicators: this graph was partitioned over a device mesh and must run on the devices of that mesh "
        "(a strategy's runner), not on one device");
  }
  absl::StatusOr<Collectives*> communicator = ctx.collective_groups()->ForAxes(ctx.GetStrings("mesh_axes"));
  if (!communicator.ok()) return ctx.Error(communicator.status().message());
  return *communicator;
}

absl::StatusOr<ReduceOp> Reduction(KernelContext& ctx) {
  const std::string reduction = ctx.GetString("reduction");
  if (reduction == "sum") return ReduceOp::kSum;
  if (reduction == "mean") return ReduceOp::kMean;
  if (reduction == "max") return ReduceOp::kMax;
  if (reduction == "min") return ReduceOp::kMin;
  return ctx.Error(absl::StrCat("unknown reduction '", reduction, "'"));
}

// The failure of a collective, with the node that issued it.
absl::Status Failed(KernelContext& ctx, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("node '", ctx.node_name(), "' (", ctx.op_def().name, "): ", status.message()));
}

int NormalizedAxis(KernelContext& ctx) {
  const int rank = ctx.input(0).shape().rank();
  const int64_t axis = ctx.GetInt("axis");
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The product of the dims of `shape` in [begin, end).
int64_t Extent(const Shape& shape, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= shape.dim(i);
  return n;
}

absl::Status AllReduceKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(CollectiveHandle handle, IssueAllReduce(ctx));
  return WaitForCollective(ctx, handle);
}

// Every member's X concatenated along `axis`. Along dim 0 the collective writes Y
// directly; along another dim it gathers the members' blocks (X viewed as one row each)
// and interleaves them: member m's block is [outer, extent_m * inner] with extent_m by
// the SplitBegin rule over Y's extent.
absl::Status AllGatherKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Collectives * communicator, Communicator(ctx));
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int axis = NormalizedAxis(ctx);
  if (axis == 0) return Failed(ctx, communicator->AllGather(x, y, ctx.node_name()).Wait());

  const Shape& xs = x.shape();
  const Shape& ys = y.shape();
  const int world = communicator->world_size();
  const int64_t outer = Extent(xs, 0, axis), inner = Extent(xs, axis + 1, xs.rank());
  const int64_t total = ys.dim(axis);
  const int64_t mine =
      SplitBegin(total, world, communicator->rank() + 1) - SplitBegin(total, world, communicator->rank());
  if (xs.dim(axis) != mine) {
    return ctx.Error(absl::StrCat("input 0 has extent ", xs.dim(axis), " along axis ", axis, " but rank ",
                                  communicator->rank(), " of ", world, " owns ", mine, " of ", total,
                                  " (the SplitBegin rule)"));
  }
  const Tensor flat_x = Tensor::Wrap(x.dtype(), Shape{x.num_elements()}, nullptr, const_cast<void*>(x.raw_data()));
  TSR_ASSIGN_OR_RETURN(Tensor gathered, Tensor::Create(x.dtype(), Shape{y.num_elements()}));
  TSR_RETURN_IF_ERROR(Failed(ctx, communicator->AllGather(flat_x, gathered, ctx.node_name()).Wait()));
  const size_t element = DTypeSize(x.dtype());
  const char* from = static_cast<const char*>(gathered.raw_data());
  char* to = static_cast<char*>(y.raw_data());
  const size_t row_bytes = static_cast<size_t>(total * inner) * element;
  for (int m = 0; m < world; ++m) {
    const int64_t begin = SplitBegin(total, world, m), extent = SplitBegin(total, world, m + 1) - begin;
    const size_t block_row = static_cast<size_t>(extent * inner) * element;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(to + o * row_bytes + static_cast<size_t>(begin * inner) * element, from, block_row);
      from += block_row;
    }
  }
  return absl::OkStatus();
}

absl::Status ReduceScatterKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Collectives * communicator, Communicator(ctx));
  TSR_ASSIGN_OR_RETURN(ReduceOp op, Reduction(ctx));
  if (NormalizedAxis(ctx) != 0) return ctx.Error("ReduceScatter along an axis other than 0 is not supported yet");
  return Failed(ctx, communicator->ReduceScatter(ctx.input(0), ctx.output(0), op, ctx.node_name()).Wait());
}

}  // namespace

absl::StatusOr<CollectiveHandle> IssueAllReduce(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Collectives * communicator, Communicator(ctx));
  TSR_ASSIGN_OR_RETURN(ReduceOp op, Reduction(ctx));
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.raw_data() != x.raw_data() && x.num_bytes() > 0) std::memcpy(y.raw_data(), x.raw_data(), x.num_bytes());
  return communicator->AllReduce(y, op, ctx.node_name());
}

absl::Status WaitForCollective(KernelContext& ctx, const CollectiveHandle& handle) {
  return Failed(ctx, handle.Wait());
}

absl::Status RegisterCollectiveKernels(KernelRegistry& registry) {
  for (absl::string_view device : {kReferenceDevice, kCpuDevice}) {
    TSR_RETURN_IF_ERROR(registry.Register("AllReduce", device, kReducible, AllReduceKernel));
    TSR_RETURN_IF_ERROR(registry.Register("ReduceScatter", device, kReducible, ReduceScatterKernel));
    TSR_RETURN_IF_ERROR(registry.Register("AllGather", device, kAllDTypes, AllGatherKernel));
  }
  return absl::OkStatus();
}

}  // namespace tsr
