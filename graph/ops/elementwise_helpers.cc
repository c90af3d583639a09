// Unary op definitions and scalar-operand checks shared by the per-element op families.
#include "graph/ops/elementwise_helpers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/ops/op_helpers.h"

namespace tsr {

OpDefBuilder UnaryOp(std::string name, std::string summary, absl::Span<const DType> allowed,
                     int64_t flops_per_element) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("X", "T")
      .Output("Y", "T")
      .TypeConstraint("T", allowed)
      .Infer(SameAsFirstInput)
      .Flops(PerOutputElement(flops_per_element));
  return b;
}

absl::Status CheckScalarInput(const InferenceContext& ctx, int i, absl::string_view what) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const Shape& shape = ctx.input_shape(i);
  if (shape.rank() == 0 || (shape.rank() == 1 && shape.dim(0) == 1)) return absl::OkStatus();
  return ctx.Error(absl::StrCat("input ", i, " ('", what, "') has shape ", shape.ToString(),
                                " but a scalar (shape [] or [1]) is required"));
}

}  // namespace tsr
