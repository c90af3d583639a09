// Gradients of the ops that select or repeat elements: Gather and Slice scatter the
// output gradient into zeros of the data's shape (the backward ops GatherGrad and
// SliceGrad, graph/ops/gradient_ops.cc: Gather's indices may repeat, Slice's steps
// may skip); constant-mode Pad takes the slice of the gradient where the data landed
// (and pads it back where negative pads cropped), the other modes go through PadGrad;
// Tile sums the gradient over the repeats; GatherElements and ScatterElements swap
// into each other, as do GatherND and ScatterND; Compress (a Gather of the constant
// condition's true positions) scatters back through GatherGrad.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

absl::Status GatherGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ctx.b().Op1("GatherGrad", {ctx.output_grad(0), ctx.input(1), ctx.input(0)},
                                    {{"axis", AttrValue::Int(ctx.GetInt("axis"))}}));
  return absl::OkStatus();
}

absl::Status SliceGrad(GradientContext& ctx) {
  std::vector<Output> args = {ctx.output_grad(0), ctx.input(0), ctx.input(1), ctx.input(2)};
  for (int i = 3; i < 5; ++i) args.push_back(i < ctx.num_inputs() ? ctx.input(i) : Output());
  ctx.set_input_grad(0, ctx.b().Op1("SliceGrad", args));
  return absl::OkStatus();
}

// The values of constant input `i` (shape inference required it constant).
std::vector<int64_t> ConstantInts(GradientContext& ctx, int i) {
  std::vector<int64_t> values;
  const Tensor* t = ctx.b().graph().ConstantValue(ctx.input(i).ref());
  if (t == nullptr) {
    ctx.Error(absl::StrCat("input ", i, " must be a constant"));
    return values;
  }
  for (int64_t e = 0; e < t->num_elements(); ++e) values.push_back(t->GetAsInt64(e));
  return values;
}

// Y = Pad(X, pads): X[i] lands at Y[i + begin]. A positive begin/end is a band of the
// gradient to drop (Slice); a negative one cropped X, whose gradient there is zero (Pad).
// Reflect, edge and wrap copy some X elements several times: the backward op PadGrad
// adds each gradient element to the element it was copied from.
absl::Status PadGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  if (ctx.GetString("mode") != "constant") {
    if (ctx.wants_input_grad(0)) {
      ctx.set_input_grad(
          0, b.Op1("PadGrad",
                   {ctx.output_grad(0), ctx.input(0), ctx.input(1), ctx.num_inputs() > 3 ? ctx.input(3) : Output()},
                   {{"mode", AttrValue::String(ctx.GetString("mode"))}}));
    }
    return absl::OkStatus();
  }
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  const int rank = x.rank();
  const std::vector<int64_t> pads = ConstantInts(ctx, 1);
  std::vector<int64_t> axes;
  if (ctx.num_inputs() > 3 && ctx.input(3).valid()) {
    axes = ConstantInts(ctx, 3);
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (!b.ok() || pads.size() != 2 * axes.size()) return absl::OkStatus();
  const size_t n = axes.size();
  std::vector<int64_t> starts, ends, slice_axes, crop_pads(2 * static_cast<size_t>(rank), 0);
  bool cropped = false;
  for (size_t j = 0; j < n; ++j) {
    const int64_t a = axes[j] < 0 ? axes[j] + rank : axes[j];
    const int64_t begin = pads[j], end = pads[j + n];
    if (begin > 0 || end > 0) {
      starts.push_back(std::max<int64_t>(begin, 0));
      ends.push_back(dy.shape().dim(static_cast<int>(a)) - std::max<int64_t>(end, 0));
      slice_axes.push_back(a);
    }
    if (begin < 0 || end < 0) {
      crop_pads[a] = std::max<int64_t>(-begin, 0);
      crop_pads[a + rank] = std::max<int64_t>(-end, 0);
      cropped = true;
    }
  }
  const Output inner = starts.empty() ? dy : ops::Slice(b, dy, starts, ends, slice_axes);
  if (ctx.wants_input_grad(0)) ctx.set_input_grad(0, cropped ? ops::Pad(b, inner, crop_pads) : inner);
  // The constant fills the elements of Y that no X element reached.
  if (ctx.num_inputs() > 2 && ctx.wants_input_grad(2)) {
    const Output total = ops::ReduceSum(b, dy, std::vector<int64_t>{}, /*keepdims=*/false);
    const Output kept = ops::ReduceSum(b, inner, std::vector<int64_t>{}, /*keepdims=*/false);
    ctx.set_input_grad(2, ctx.ReshapeTo(ops::Sub(b, total, kept), ctx.input(2).shape()));
  }
  return absl::OkStatus();
}

// Y = Tile(X, r): Y viewed as [r0, d0, r1, d1, ...] holds a copy of X at every
// repeat index, so dX sums the gradient over the repeat axes 0, 2, 4, ...
absl::Status TileGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  const std::vector<int64_t> repeats = ConstantInts(ctx, 1);
  if (!b.ok()) return absl::OkStatus();
  if (std::find(repeats.begin(), repeats.end(), 0) != repeats.end()) {
    ctx.set_input_grad(0, ctx.ZerosLike(x));  // Y is empty
    return absl::OkStatus();
  }
  std::vector<int64_t> view, axes;
  int symbolic = 0;
  for (int i = 0; i < x.rank(); ++i) {
    const int64_t d = x.shape().dim(i);
    axes.push_back(static_cast<int64_t>(view.size()));
    view.push_back(repeats[i]);
    view.push_back(d == kBatchDim ? -1 : d);  // Tile keeps a batch dim only with repeat 1
    symbolic += d == kBatchDim;
  }
  if (symbolic > 1) {
    ctx.Error("cannot sum over the repeats of more than one symbolic dimension");
    return absl::OkStatus();
  }
  const Output summed = ops::ReduceSum(b, ops::Reshape(b, dy, view), axes, /*keepdims=*/false);
  ctx.set_input_grad(0, ctx.ReshapeTo(summed, x.shape()));
  return absl::OkStatus();
}

// Y = GatherElements(X, idx): dX scatter-adds dY at idx (repeated indices add up).
absl::Status GatherElementsGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ops::ScatterElements(ctx.b(), ctx.ZerosLike(ctx.input(0)), ctx.input(1), ctx.output_grad(0),
                                             ctx.GetInt("axis"), "add"));
  return absl::OkStatus();
}

// Y = ScatterElements(X, idx, U). 'none': the scattered positions of X were
// overwritten, so dX is dY with zeros there, and dU gathers dY at idx (ONNX leaves
// repeated indices undefined; each copy gets the gradient). 'add': dX = dY and dU
// gathers dY. mul/max/min would need the values that met there: refused.
absl::Status ScatterElementsGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const std::string reduction = ctx.GetString("reduction");
  if (reduction != "none" && reduction != "add") {
    ctx.Error(absl::StrCat("reduction '", reduction, "' has no gradient (only 'none' and 'add' do)"));
    return absl::OkStatus();
  }
  const Output dy = ctx.output_grad(0), indices = ctx.input(1);
  const int64_t axis = ctx.GetInt("axis");
  if (ctx.wants_input_grad(0)) {
    ctx.set_input_grad(
        0, reduction == "add" ? dy : ops::ScatterElements(b, dy, indices, ctx.ZerosLike(ctx.input(2)), axis));
  }
  if (ctx.wants_input_grad(2)) ctx.set_input_grad(2, ops::GatherElements(b, dy, indices, axis));
  return absl::OkStatus();
}

// Y = GatherND(X, idx): dX scatter-adds dY at idx. With batch_dims > 0 the index
// tuples address each batch entry separately, which ScatterND cannot express: refused.
absl::Status GatherNDGrad(GradientContext& ctx) {
  if (ctx.GetInt("batch_dims") != 0) {
    ctx.Error("GatherND with batch_dims > 0 has no gradient");
    return absl::OkStatus();
  }
  ctx.set_input_grad(0, ops::ScatterND(ctx.b(), ctx.ZerosLike(ctx.input(0)), ctx.input(1), ctx.output_grad(0), "add"));
  return absl::OkStatus();
}

// As ScatterElementsGrad: 'none' zeroes dY where X was overwritten (repeated tuples are
// undefined in ONNX; each copy gets the gradient), 'add' passes dY; dU gathers dY.
absl::Status ScatterNDGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const std::string reduction = ctx.GetString("reduction");
  if (reduction != "none" && reduction != "add") {
    ctx.Error(absl::StrCat("reduction '", reduction, "' has no gradient (only 'none' and 'add' do)"));
    return absl::OkStatus();
  }
  const Output dy = ctx.output_grad(0), indices = ctx.input(1);
  if (ctx.wants_input_grad(0)) {
    ctx.set_input_grad(0, reduction == "add" ? dy : ops::ScatterND(b, dy, indices, ctx.ZerosLike(ctx.input(2))));
  }
  if (ctx.wants_input_grad(2)) ctx.set_input_grad(2, ops::GatherND(b, dy, indices));
  return absl::OkStatus();
}

// Compress keeps the positions where the constant condition is true: a Gather of
// those positions along the axis (of the flattened input without one).
absl::Status CompressGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const std::vector<int64_t> condition = ConstantInts(ctx, 1);
  if (!b.ok()) return absl::OkStatus();
  std::vector<int64_t> kept;
  for (size_t i = 0; i < condition.size(); ++i) {
    if (condition[i] != 0) kept.push_back(static_cast<int64_t>(i));
  }
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  const Output positions = ops::Const(b, kept);
  if (ctx.has_attr("axis")) {
    ctx.set_input_grad(0, b.Op1("GatherGrad", {dy, positions, x}, {{"axis", AttrValue::Int(ctx.GetInt("axis"))}}));
    return absl::OkStatus();
  }
  const Output flat = ops::Reshape(b, x, {-1});
  const Output grad = b.Op1("GatherGrad", {dy, positions, flat}, {{"axis", AttrValue::Int(0)}});
  ctx.set_input_grad(0, ctx.ReshapeTo(grad, x.shape()));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterIndexingGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Gather", GatherGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Slice", SliceGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Pad", PadGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Tile", TileGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "GatherElements", GatherElementsGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ScatterElements", ScatterElementsGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "GatherND", GatherNDGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ScatterND", ScatterNDGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Compress", CompressGrad));
  return absl::OkStatus();
}

}  // namespace tsr
