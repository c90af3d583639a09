// Gradients of the shape and layout ops that only move elements: reshapes give the
// gradient the input's shape back, Transpose applies the inverse permutation, Expand
// sums over the broadcast dimensions, Concat slices and Split concatenates. Trilu and
// ReverseSequence are their own gradients (a mask; an involution), DepthToSpace and
// SpaceToDepth undo each other, and Resize, linear in X, scatters the gradient back
// with its interpolation weights (the backward op ResizeGrad, every mode).
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

absl::Status TriluGrad(GradientContext& ctx) {
  const Output k = ctx.num_inputs() > 1 ? ctx.input(1) : Output();
  ctx.set_input_grad(0, ops::Trilu(ctx.b(), ctx.output_grad(0), k, ctx.GetInt("upper") != 0));
  return absl::OkStatus();
}

// DCR is undone by SpaceToDepth. CRD: dX[n, c*b*b + i*b + j, h, w] = dY[n, c, h*b + i,
// w*b + j], i.e. dY viewed as [N, C', H, b, W, b] permuted to [N, C', b, b, H, W].
absl::Status DepthToSpaceGrad(GradientContext& ctx) {
  const int64_t b = ctx.GetInt("blocksize");
  const Output dy = ctx.output_grad(0);
  if (ctx.GetString("mode") == "DCR") {
    ctx.set_input_grad(0, ops::SpaceToDepth(ctx.b(), dy, b));
    return absl::OkStatus();
  }
  const Shape& x = ctx.input(0).shape();
  const Shape& y = dy.shape();
  const Output view = ops::Reshape(ctx.b(), dy, {0, y.dim(1), x.dim(2), b, x.dim(3), b});
  const Output moved = ops::Transpose(ctx.b(), view, {0, 1, 3, 5, 2, 4});
  ctx.set_input_grad(0, ops::Reshape(ctx.b(), moved, {0, x.dim(1), x.dim(2), x.dim(3)}));
  return absl::OkStatus();
}

absl::Status SpaceToDepthGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ops::DepthToSpace(ctx.b(), ctx.output_grad(0), ctx.GetInt("blocksize"), "DCR"));
  return absl::OkStatus();
}

absl::Status ReverseSequenceGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ops::ReverseSequence(ctx.b(), ctx.output_grad(0), ctx.input(1), ctx.GetInt("time_axis"),
                                             ctx.GetInt("batch_axis")));
  return absl::OkStatus();
}

// roi, scales and sizes (integers or constants) get no gradient.
absl::Status ResizeGrad(GradientContext& ctx) {
  if (!ctx.wants_input_grad(0)) return absl::OkStatus();
  std::vector<Output> args = {ctx.output_grad(0), ctx.input(0)};
  for (int i = 1; i < 4; ++i) args.push_back(i < ctx.num_inputs() ? ctx.input(i) : Output());
  while (!args.back().valid()) args.pop_back();
  ctx.set_input_grad(0, ctx.b().Op1("ResizeGrad", args, ctx.node().attrs()));
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
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Trilu", TriluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "DepthToSpace", DepthToSpaceGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "SpaceToDepth", SpaceToDepthGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReverseSequence", ReverseSequenceGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Resize", ResizeGrad));
  return absl::OkStatus();
}

}  // namespace tsr
