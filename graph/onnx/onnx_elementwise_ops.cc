// ONNX mappings of elementwise math, logic and activation ops (beyond the core table in onnx_op_mapping.cc).
//
// All map 1:1 onto Tessera ops of the same name except CastLike, which becomes a Cast
// to its second input's dtype (that input's values are never read). The attributes
// copied kept their meaning and defaults across opsets 11-18.
#include <string>
#include <vector>

#include "graph/onnx/onnx_op_mapping.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// CastLike(input, target_type) = Cast(input, to = dtype of target_type).
absl::StatusOr<std::vector<TensorRef>> ConvertCastLike(OnnxNodeContext& ctx) {
  if (ctx.num_inputs() != 2 || !ctx.input(0).valid() || !ctx.input(1).valid()) {
    return ctx.Error("needs two inputs: input and target_type");
  }
  TSR_ASSIGN_OR_RETURN(TensorType target, ctx.InputType(1));
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Cast", {ctx.input(0)}, {{"to", AttrValue::Type(target.dtype)}}));
  return AllOutputs(*n);
}

}  // namespace

void AddOnnxElementwiseMappings(OnnxOpTable& table) {
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos",  "Atan", "Sinh",  "Cosh", "Asinh", "Acosh",    "Atanh",
                         "And", "Or",  "Xor", "Not",  "Floor", "Ceil", "Round", "Sign", "IsNaN", "Softsign", "PRelu"}) {
    table[op] = {DirectOnnxMapping(op)};
  }
  table["GreaterOrEqual"] = {DirectOnnxMapping("GreaterOrEqual"), 12};
  table["LessOrEqual"] = {DirectOnnxMapping("LessOrEqual"), 12};
  table["HardSwish"] = {DirectOnnxMapping("HardSwish"), 14};
  table["Mod"] = {DirectOnnxMapping("Mod", {"fmod"}), 10};
  table["BitShift"] = {DirectOnnxMapping("BitShift", {"direction"}), 11};
  table["IsInf"] = {DirectOnnxMapping("IsInf", {"detect_negative", "detect_positive"}), 10};
  table["Elu"] = {DirectOnnxMapping("Elu", {"alpha"})};
  table["Selu"] = {DirectOnnxMapping("Selu", {"alpha", "gamma"})};
  table["Celu"] = {DirectOnnxMapping("Celu", {"alpha"}), 12};
  table["HardSigmoid"] = {DirectOnnxMapping("HardSigmoid", {"alpha", "beta"})};
  table["ThresholdedRelu"] = {DirectOnnxMapping("ThresholdedRelu", {"alpha"}), 10};
  table["Shrink"] = {DirectOnnxMapping("Shrink", {"bias", "lambd"}), 9};
  table["CastLike"] = {ConvertCastLike, 15};
}

}  // namespace tsr
