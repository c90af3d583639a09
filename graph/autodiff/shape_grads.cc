// Gradients of the shape and layout ops that only move elements: reshapes give the
// gradient the input's shape back, Transpose applies the inverse permutation, Expand
// sums over the broadcast dimensions, Concat slices and Split concatenates.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

absl::Status ReshapeGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ctx.ReshapeTo(ctx.output_grad(0), ctx.input(0).shape()));
  return absl::OkStatus();
}

absl::Status TransposeGrad(GradientContext& ctx) {
  const int rank = ctx.input(0).rank();
  std::vector<int64_t> perm = ctx.GetInts("perm");
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  ctx.set_input_grad(0, ops::Transpose(ctx.b(), ctx.output_grad(0), inverse));
  return absl::OkStatus();
}

absl::Status ExpandGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ctx.SumToShape(ctx.output_grad(0), ctx.input(0).shape()));
  return absl::OkStatus();
}

absl::Status ConcatGrad(GradientContext& ctx) {
  const int rank = ctx.output(0).rank();
  int64_t axis = ctx.GetInt("axis");
  if (axis < 0) axis += rank;
  int64_t offset = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const int64_t size = ctx.input(i).shape().dim(static_cast<int>(axis));
    if (size == kBatchDim) {
      ctx.Error("cannot split the gradient of a concatenation along the symbolic batch dimension");
      return absl::OkStatus();
    }
    if (ctx.wants_input_grad(i)) {
      ctx.set_input_grad(i, ops::Slice(ctx.b(), ctx.output_grad(0), {offset}, {offset + size}, {axis}));
    }
    offset += size;
  }
  return absl::OkStatus();
}

// The outputs no gradient reached contribute zeros.
absl::Status SplitGrad(GradientContext& ctx) {
  int64_t axis = ctx.GetInt("axis");
  if (axis < 0) axis += ctx.input(0).rank();
  std::vector<Output> parts;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    parts.push_back(ctx.output_grad(i).valid() ? ctx.output_grad(i) : ctx.ZerosLike(ctx.output(i)));
  }
  ctx.set_input_grad(0, ops::Concat(ctx.b(), parts, axis));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterShapeGradients(OpRegistry& registry) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) {
    TSR_RETURN_IF_ERROR(SetGradient(registry, op, ReshapeGrad));
  }
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Transpose", TransposeGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Expand", ExpandGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Concat", ConcatGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Split", SplitGrad));
  return absl::OkStatus();
}

}  // namespace tsr
