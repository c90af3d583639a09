// Random ops: Dropout with ONNX opset 13 semantics.
//
// Dropout(data, ratio = 0.5, training_mode = false) -> (output, mask). Outside
// training it is the identity (mask all true); in training it zeroes each element
// with probability `ratio` and scales the rest by 1 / (1 - ratio). It is Stateful()
// so that passes never fold or deduplicate two draws of the random mask.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/elementwise_helpers.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

absl::Status InferDropout(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckScalarInput(ctx, 1, "ratio"));
  TSR_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, "training_mode"));
  const Tensor* ratio = ctx.has_input(1) ? ctx.input_value(1) : nullptr;
  if (ratio != nullptr && ratio->num_elements() == 1) {
    const double r = ratio->GetAsDouble(0);
    // Written so that NaN fails too; ratio = 1 would scale by 1 / 0.
    if (!(r >= 0.0 && r < 1.0)) {
      return ctx.Error(absl::StrCat("input 1 ('ratio') is ", r, " but a value in [0, 1) is required"));
    }
  }
  ctx.set_output(0, ctx.input(0));
  ctx.set_output(1, DType::kBool, ctx.input_shape(0));
  return absl::OkStatus();
}

// Without a training_mode input the op is the identity. Otherwise: one comparison of
// a uniform draw against the ratio and one scaling multiply per element.
int64_t DropoutFlops(const InferenceContext& ctx) {
  if (!ctx.has_input(2)) return 0;
  const Tensor* training = ctx.input_value(2);
  if (training != nullptr && training->num_elements() == 1 && training->GetAsInt64(0) == 0) return 0;
  return 2 * OutputElements(ctx);
}

}  // namespace

absl::Status RegisterRandomOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Dropout")
                                            .Summary("Zeroes elements with probability 'ratio' in training mode and "
                                                     "scales the rest by 1 / (1 - ratio); identity otherwise.")
                                            .Input("data", "T")
                                            .OptionalInput("ratio", "T1")
                                            .OptionalInput("training_mode", "T2")
                                            .Output("output", "T")
                                            .OptionalOutput("mask", "T2")
                                            .TypeConstraint("T", kFloatDTypes)
                                            .TypeConstraint("T1", kFloatDTypes)
                                            .TypeConstraint("T2", {DType::kBool})
                                            .OptionalAttr("seed", AttrType::kInt)
                                            // The index in the whole tensor of this tensor's first
                                            // element when it is a device's rows of it
                                            // (partitioner/): its draws are those rows' draws.
                                            .Attr("element_offset", AttrType::kInt, AttrValue::Int(0))
                                            .Stateful()
                                            .Infer(InferDropout)
                                            .Flops(DropoutFlops)
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr
