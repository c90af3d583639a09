// Einsum (ONNX): a sum of products over labelled axes given by an equation string;
// see einsum_equation.h for the equation forms. Sizes may include the symbolic batch
// dim, which must then be the same label (or broadcast ellipsis position) everywhere.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/einsum_equation.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

absl::StatusOr<EinsumDims> Resolve(const InferenceContext& ctx) {
  absl::StatusOr<EinsumEquation> eq = EinsumEquation::Parse(ctx.GetString("equation"), ctx.num_inputs());
  if (!eq.ok()) return ctx.Error(eq.status().message());
  std::vector<Shape> shapes;
  for (int i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input_shape(i));
  absl::StatusOr<EinsumDims> dims = ResolveEinsumDims(*eq, shapes);
  if (!dims.ok()) return ctx.Error(dims.status().message());
  return dims;
}

absl::Status InferEinsum(InferenceContext& ctx) {
  TSR_ASSIGN_OR_RETURN(EinsumDims dims, Resolve(ctx));
  ctx.set_output(0, ctx.input_dtype(0), dims.output);
  return absl::OkStatus();
}

// One multiply-add per input per point of the full label space.
int64_t EinsumFlops(const InferenceContext& ctx) {
  absl::StatusOr<EinsumDims> dims = Resolve(ctx);
  if (!dims.ok()) return 0;
  int64_t points = 1;
  for (int64_t d : dims->label) points = SaturatingProduct({points, d == kBatchDim ? 1 : d});
  for (int64_t d : dims->ellipsis) points = SaturatingProduct({points, d == kBatchDim ? 1 : d});
  return SaturatingProduct({points, ctx.num_inputs()});
}

}  // namespace

absl::Status RegisterEinsumOps(OpRegistry& registry) {
  return registry.Register(OpDefBuilder("Einsum")
                               .Summary("Sum of products of the inputs over the labels the equation leaves out of "
                                        "its output ('ij,jk->ik' is a matmul, 'ii' a trace).")
                               .VariadicInput("Inputs", "T", 1)
                               .Output("Output", "T")
                               .TypeConstraint("T", kNumericDTypes)
                               .RequiredAttr("equation", AttrType::kString)
                               .Infer(InferEinsum)
                               .Flops(EinsumFlops)
                               .Build());
}

}  // namespace tsr
