// Source ops — Constant, Placeholder, Variable, ConstantOfShape, EyeLike — and
// Identity.
//
// ConstantOfShape's shape input must be a constant: graphs are static, so the output
// shape cannot depend on run-time data.
//
// Variable's initializers are named here and run by the runtime (issue: training):
// zeros, ones, constant(init_value), uniform(init_min, init_max), normal(init_mean,
// init_stddev), truncated_normal(init_mean, init_stddev; redrawn beyond 2 stddev),
// glorot_uniform, glorot_normal, he_uniform, he_normal (fans from the shape as in
// Keras: [.., fan_in, fan_out] for dense, [out, in, kh, kw] for conv). An explicit
// `value` tensor overrides the initializer.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

constexpr const char* kInitializers[] = {
    "zeros",          "ones",          "constant",   "uniform",  "normal", "truncated_normal",
    "glorot_uniform", "glorot_normal", "he_uniform", "he_normal"};

absl::Status InferConstant(InferenceContext& ctx) {
  const Tensor* value = ctx.GetTensor("value");
  if (value == nullptr || !value->valid()) return ctx.Error("attribute 'value' holds no tensor");
  ctx.set_output(0, value->type());
  return absl::OkStatus();
}

absl::Status InferPlaceholder(InferenceContext& ctx) {
  const DType dtype = ctx.GetType("dtype");
  if (!IsValidDType(dtype)) return ctx.Error("attribute 'dtype' is not a valid dtype");
  const Shape shape = ctx.GetShape("shape");
  if (absl::Status s = shape.Validate(); !s.ok()) return ctx.Error(s.message());
  ctx.set_output(0, dtype, shape);
  return absl::OkStatus();
}

absl::Status InferVariable(InferenceContext& ctx) {
  const DType dtype = ctx.GetType("dtype");
  if (!IsValidDType(dtype)) return ctx.Error("attribute 'dtype' is not a valid dtype");
  const Shape shape = ctx.GetShape("shape");
  if (absl::Status s = shape.Validate(); !s.ok()) return ctx.Error(s.message());
  if (!shape.is_static()) {
    return ctx.Error(absl::StrCat("variable shape ", shape.ToString(), " must be static (no batch dimension)"));
  }
  const std::string init = ctx.GetString("initializer");
  if (std::find(std::begin(kInitializers), std::end(kInitializers), init) == std::end(kInitializers)) {
    return ctx.Error(
        absl::StrCat("unknown initializer '", init, "' (known: ", absl::StrJoin(kInitializers, ", "), ")"));
  }
  if (init == "uniform" && !(ctx.GetFloat("init_min") < ctx.GetFloat("init_max"))) {
    return ctx.Error("uniform initializer needs init_min < init_max");
  }
  if ((init == "normal" || init == "truncated_normal") && !(ctx.GetFloat("init_stddev") > 0)) {
    return ctx.Error("normal initializers need init_stddev > 0");
  }
  if (const Tensor* value = ctx.GetTensor("value")) {
    if (value->dtype() != dtype || value->shape() != shape) {
      return ctx.Error(absl::StrCat("attribute 'value' is ", value->type().ToString(), " but the variable is ",
                                    TensorType(dtype, shape).ToString()));
    }
  }
  ctx.set_output(0, dtype, shape);
  return absl::OkStatus();
}

absl::Status InferConstantOfShape(InferenceContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadConstantInts(ctx, 0));
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error(absl::StrCat("shape ", IntsToString(dims), " holds the negative dim ", d));
  }
  Shape shape(dims);
  if (absl::Status s = shape.Validate(); !s.ok()) return ctx.Error(s.message());
  DType dtype = DType::kF32;
  if (const Tensor* value = ctx.GetTensor("value")) {
    if (!value->valid() || value->num_elements() != 1) {
      return ctx.Error(absl::StrCat("attribute 'value' must hold exactly one element but is ",
                                    value->valid() ? value->type().ToString() : std::string("empty")));
    }
    dtype = value->dtype();
  }
  ctx.set_output(0, dtype, std::move(shape));
  return absl::OkStatus();
}

absl::Status InferEyeLike(InferenceContext& ctx) {
  if (ctx.input_rank(0) != 2) {
    return ctx.Error(absl::StrCat("input 'input' has shape ", ctx.input_shape(0).ToString(), " but must be 2-D"));
  }
  DType dtype = ctx.input_dtype(0);
  if (ctx.has_attr("dtype")) {
    dtype = ctx.GetType("dtype");
    if (!IsValidDType(dtype)) return ctx.Error("attribute 'dtype' is not a valid dtype");
  }
  ctx.set_output(0, dtype, ctx.input_shape(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSourceOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Constant")
                                            .Summary("A tensor given by the attribute 'value'.")
                                            .Output("output", "T")
                                            .RequiredAttr("value", AttrType::kTensor)
                                            .Infer(InferConstant)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Placeholder")
                                            .Summary("A graph input, fed at run time; 'shape' may hold the batch dim.")
                                            .Output("output", "T")
                                            .RequiredAttr("dtype", AttrType::kType)
                                            .RequiredAttr("shape", AttrType::kShape)
                                            .Infer(InferPlaceholder)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Variable")
                                            .Summary("Mutable state (a weight), created by its initializer.")
                                            .Output("output", "T")
                                            .RequiredAttr("dtype", AttrType::kType)
                                            .RequiredAttr("shape", AttrType::kShape)
                                            .Attr("initializer", AttrType::kString, AttrValue::String("zeros"))
                                            .Attr("init_value", AttrType::kFloat, AttrValue::Float(0.0))
                                            .Attr("init_min", AttrType::kFloat, AttrValue::Float(-0.05))
                                            .Attr("init_max", AttrType::kFloat, AttrValue::Float(0.05))
                                            .Attr("init_mean", AttrType::kFloat, AttrValue::Float(0.0))
                                            .Attr("init_stddev", AttrType::kFloat, AttrValue::Float(0.05))
                                            .Attr("seed", AttrType::kInt, AttrValue::Int(0))
                                            .Attr("trainable", AttrType::kBool, AttrValue::Bool(true))
                                            .OptionalAttr("value", AttrType::kTensor)
                                            // A device's share of a split Variable (partitioner/):
                                            // the whole Variable's shape and where the share starts;
                                            // the share is initialized as that block of the whole.
                                            .OptionalAttr("partition_shape", AttrType::kShape)
                                            .OptionalAttr("partition_offset", AttrType::kInts)
                                            // The Variable it is a share of, when named otherwise
                                            // (a ZeRO update's share of a replicated parameter):
                                            // its values are drawn as that Variable's.
                                            .OptionalAttr("partition_of", AttrType::kString)
                                            .Stateful()
                                            .Infer(InferVariable)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("ConstantOfShape")
                                            .Summary("A tensor of the (constant) shape 'input' with every element "
                                                     "'value' (a one-element tensor; f32 0 when absent).")
                                            .Input("input", "T1")
                                            .Output("output", "T2")
                                            .TypeConstraint("T1", {DType::kI64})
                                            .TypeConstraint("T2", kAllDTypes)
                                            .OptionalAttr("value", AttrType::kTensor)
                                            .Infer(InferConstantOfShape)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("EyeLike")
                                            .Summary("A 2-D tensor of the input's shape with ones on diagonal 'k' "
                                                     "(k > 0 above the main one) and zeros elsewhere; 'dtype' "
                                                     "defaults to the input's.")
                                            .Input("input", "T1")
                                            .Output("output", "T2")
                                            .TypeConstraint("T1", kAllDTypes)
                                            .TypeConstraint("T2", kAllDTypes)
                                            .OptionalAttr("dtype", AttrType::kType)
                                            .Attr("k", AttrType::kInt, AttrValue::Int(0))
                                            .Infer(InferEyeLike)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Identity")
                                            .Summary("Returns its input.")
                                            .Input("input", "T")
                                            .Output("output", "T")
                                            .Infer(SameAsFirstInput)
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr
