// Pooling over the spatial dimensions of X [N, C, D1, ..., Dn]: MaxPool (with the
// flat indices of the maxima), AveragePool, GlobalAveragePool. The window arithmetic
// is in conv_geometry.h.
//
// Batch and channel dimensions pass through (either may be symbolic); windowed pools
// need static spatial sizes.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/ops/conv_geometry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

constexpr DType kMaxPoolDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8, DType::kU8};
constexpr DType kIndicesDTypes[] = {DType::kI64};

absl::Status CheckPoolInput(const InferenceContext& ctx) {
  if (ctx.input_rank(0) < 3) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", ctx.input_shape(0).ToString(),
                                  " but [N,C,D1,...] with at least one spatial dimension is required"));
  }
  return absl::OkStatus();
}

// The output shape of a windowed pool: [N, C, spatial outputs...].
absl::StatusOr<Shape> InferWindowedPool(const InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckPoolInput(ctx));
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  const Shape& x = ctx.input_shape(0);
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry(absl::MakeConstSpan(x.dims()).subspan(2), *spec);
  if (!g.ok()) return ctx.Error(g.status().message());
  // A window lying wholly in the padding would have no input to pool over (an
  // average of nothing); auto_pad never produces one, explicit pads might.
  for (int i = 0; i < g->num_spatial(); ++i) {
    const int64_t window = g->effective_kernel(i);
    if (g->pads_begin[i] >= window || g->pads_end[i] >= window) {
      return ctx.Error(absl::StrCat("pads ", g->pads_begin[i], "+", g->pads_end[i], " of spatial dimension ", i,
                                    " must be smaller than the window span ", window));
    }
  }
  Shape out{x.dim(0), x.dim(1)};
  for (int64_t d : g->output) out.AddDim(d);
  return out;
}

absl::Status InferMaxPool(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "ceil_mode"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "storage_order"));
  TSR_ASSIGN_OR_RETURN(Shape out, InferWindowedPool(ctx));
  ctx.set_output(0, ctx.input_dtype(0), out);
  ctx.set_output(1, DType::kI64, std::move(out));
  return absl::OkStatus();
}

absl::Status InferAveragePool(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "ceil_mode"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "count_include_pad"));
  TSR_ASSIGN_OR_RETURN(Shape out, InferWindowedPool(ctx));
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

// One comparison or addition per window tap.
int64_t WindowedPoolFlops(const InferenceContext& ctx) {
  int64_t flops = OutputElements(ctx);
  for (int64_t k : ctx.GetInts("kernel_shape")) flops = SaturatingProduct({flops, k});
  return flops;
}

absl::Status InferGlobalAveragePool(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckPoolInput(ctx));
  Shape out = ctx.input_shape(0);
  for (int i = 2; i < out.rank(); ++i) out.set_dim(i, 1);
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

// One addition per input element (the divisions are per output, negligible).
int64_t GlobalAveragePoolFlops(const InferenceContext& ctx) { return ctx.input_shape(0).num_elements(); }

// Attributes both windowed pools take, with their ONNX defaults.
OpDefBuilder PoolBuilder(std::string name, std::string summary, absl::Span<const DType> dtypes) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("X", "T")
      .Output("Y", "T")
      .TypeConstraint("T", dtypes)
      .Attr("auto_pad", AttrType::kString, AttrValue::String("NOTSET"))
      .Attr("ceil_mode", AttrType::kInt, AttrValue::Int(0))
      .OptionalAttr("dilations", AttrType::kInts)
      .RequiredAttr("kernel_shape", AttrType::kInts)
      .OptionalAttr("pads", AttrType::kInts)
      .OptionalAttr("strides", AttrType::kInts)
      .Flops(WindowedPoolFlops);
  return b;
}

}  // namespace

absl::Status RegisterPoolOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(
      PoolBuilder("MaxPool",
                  "Maximum over each window (padding excluded); Indices holds the flat index of each maximum "
                  "in X's [N,C,D1,...] layout (row-major, or column-major spatial when storage_order=1).",
                  kMaxPoolDTypes)
          .Output("Indices", "I")
          .TypeConstraint("I", kIndicesDTypes)
          .Attr("storage_order", AttrType::kInt, AttrValue::Int(0))
          .Infer(InferMaxPool)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      PoolBuilder("AveragePool", "Mean over each window; padded positions count only when count_include_pad=1.",
                  kFloatDTypes)
          .Attr("count_include_pad", AttrType::kInt, AttrValue::Int(0))
          .Infer(InferAveragePool)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("GlobalAveragePool")
                                            .Summary("Mean over all spatial positions: [N,C,D1,...] -> [N,C,1,...].")
                                            .Input("X", "T")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kFloatDTypes)
                                            .Infer(InferGlobalAveragePool)
                                            .Flops(GlobalAveragePoolFlops)
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr
