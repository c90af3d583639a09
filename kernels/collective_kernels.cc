// Kernels of the collective ops (graph/ops/collective_ops.cc): they find the device's
// communicator over the op's mesh axes in KernelContext::collective_groups() and run the
// collective on the op's buffers, named by the node (the same on every device of a
// partitioned program, so that mismatches and timeouts name it). Registered for the
// reference and the cpu device alike: moving data has one implementation.
#include "kernels/collective_kernels.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/tensor_block.h"
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

// A split moved from `concat_axis` to `split_axis`: this member's block is cut along
// split_axis into one slice per member (SplitBegin rule), each sent to its member; the
// slices received are placed along concat_axis at their senders' offsets. The
// communicator's AllToAll cuts its input into equal parts, so each slice travels padded
// to the largest slice's extent along split_axis.
absl::Status AllToAllKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Collectives * communicator, Communicator(ctx));
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const Shape& xs = x.shape();
  const auto axis = [&](const char* name) {
    const int64_t a = ctx.GetInt(name);
    return static_cast<int>(a < 0 ? a + xs.rank() : a);
  };
  const int split = axis("split_axis"), concat = axis("concat_axis");
  const int world = communicator->world_size(), me = communicator->rank();
  const int64_t split_total = xs.dim(split), concat_total = y.shape().dim(concat);
  int64_t others = 1;
  for (int d = 0; d < xs.rank(); ++d) {
    if (d != split && d != concat) others *= xs.dim(d);
  }
  int64_t widest = 0;
  for (int m = 0; m < world; ++m) {
    widest = std::max(widest, SplitBegin(split_total, world, m + 1) - SplitBegin(split_total, world, m));
  }
  if (SplitBegin(split_total, world, me + 1) - SplitBegin(split_total, world, me) != y.shape().dim(split) ||
      SplitBegin(concat_total, world, me + 1) - SplitBegin(concat_total, world, me) != xs.dim(concat)) {
    return ctx.Error(absl::StrCat("input ", xs.ToString(), " and output ", y.shape().ToString(), " are not member ", me,
                                  " of ", world, "'s blocks of one tensor"));
  }
  const size_t element = DTypeSize(x.dtype());
  // This member's part for each member: its rows along concat_axis, padded along split_axis.
  const int64_t part = xs.dim(concat) * widest * others;
  Tensor send(x.dtype(), Shape({world * part}));
  for (int m = 0; m < world; ++m) {
    Shape slice = xs;
    const int64_t begin = SplitBegin(split_total, world, m);
    slice.set_dim(split, SplitBegin(split_total, world, m + 1) - begin);
    std::vector<int64_t> offset(xs.rank(), 0);
    offset[split] = begin;
    TSR_ASSIGN_OR_RETURN(Tensor block, ExtractBlock(x, offset, slice));
    if (block.num_bytes() > 0) {
      std::memcpy(static_cast<char*>(send.raw_data()) + static_cast<size_t>(m * part) * element, block.raw_data(),
                  block.num_bytes());
    }
  }
  Tensor received(x.dtype(), Shape({concat_total * widest * others}));
  TSR_RETURN_IF_ERROR(Failed(ctx, communicator->AllToAll(send, received, ctx.node_name()).Wait()));
  int64_t at = 0;  // elements of `received` before sender m's part
  for (int m = 0; m < world; ++m) {
    const int64_t begin = SplitBegin(concat_total, world, m), rows = SplitBegin(concat_total, world, m + 1) - begin;
    Shape slice = y.shape();
    slice.set_dim(concat, rows);
    Tensor block(x.dtype(), slice);
    if (block.num_bytes() > 0) {
      std::memcpy(block.raw_data(), static_cast<const char*>(received.raw_data()) + static_cast<size_t>(at) * element,
                  block.num_bytes());
    }
    std::vector<int64_t> offset(xs.rank(), 0);
    offset[concat] = begin;
    TSR_RETURN_IF_ERROR(InsertBlock(y, offset, block));
    at += rows * widest * others;
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
    TSR_RETURN_IF_ERROR(registry.Register("AllToAll", device, kAllDTypes, AllToAllKernel));
  }
  return absl::OkStatus();
}

}  // namespace tsr
