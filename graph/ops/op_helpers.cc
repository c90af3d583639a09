// Shared shape functions and FLOP estimates.
#include "graph/ops/op_helpers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tsr {

absl::Status SameAsFirstInput(InferenceContext& ctx) {
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status BroadcastAllInputs(InferenceContext& ctx) {
  Shape shape = ctx.input_shape(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    absl::StatusOr<Shape> b = BroadcastShapes(shape, ctx.input_shape(i));
    if (!b.ok()) return ctx.Error(b.status().message());
    shape = *std::move(b);
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(shape));
  return absl::OkStatus();
}

absl::Status BroadcastToBool(InferenceContext& ctx) {
  if (absl::Status s = BroadcastAllInputs(ctx); !s.ok()) return s;
  ctx.set_output(0, DType::kBool, ctx.output(0).shape);
  return absl::OkStatus();
}

int64_t OutputElements(const InferenceContext& ctx, int i) {
  if (i >= ctx.num_outputs()) return 0;
  return ctx.output(i).shape.BindBatch(1).num_elements();
}

FlopsFn PerOutputElement(int64_t per_element) {
  return [per_element](const InferenceContext& ctx) { return per_element * OutputElements(ctx, 0); };
}

absl::StatusOr<std::vector<int>> NormalizeAxes(const InferenceContext& ctx, const std::vector<int64_t>& axes,
                                               int rank) {
  std::vector<int> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    absl::StatusOr<int> n = NormalizeAxis(a, rank);
    if (!n.ok()) return ctx.Error(n.status().message());
    if (std::find(out.begin(), out.end(), *n) != out.end()) {
      return ctx.Error(absl::StrCat("axis ", a, " is repeated"));
    }
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tsr
