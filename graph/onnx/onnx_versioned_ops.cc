// Converters of ONNX ops whose form changed between opsets 11 and 18, or that map onto a
// small exact composition of Tessera ops. Each turns the older form into the one
// Tessera's op set follows (the latest opset).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/float16.h"
#include "graph/onnx/onnx_op_mapping.h"
#include "graph/onnx/onnx_tensor.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Before the opset where an attribute became an input, a node must not pass that input.
absl::Status CheckNoInputBefore(OnnxNodeContext& ctx, int input, absl::string_view what, int64_t since) {
  if (ctx.input(input).valid()) {
    return ctx.Error(absl::StrCat("input ", input, " ('", what, "') exists from opset ", since, "; at this opset '",
                                  what, "' is an attribute"));
  }
  return absl::OkStatus();
}

// The node's data input followed by the constant `values` (when given), for ops whose
// attribute moved into an input.
absl::StatusOr<std::vector<TensorRef>> DataAndConstant(OnnxNodeContext& ctx,
                                                       const std::optional<std::vector<int64_t>>& values,
                                                       absl::string_view what) {
  std::vector<TensorRef> inputs = {ctx.input(0)};
  if (values.has_value()) {
    TSR_ASSIGN_OR_RETURN(TensorRef c, ctx.AddInt64Constant(*values, what));
    inputs.push_back(c);
  }
  return inputs;
}

}  // namespace

absl::StatusOr<std::vector<TensorRef>> ConvertReduce(OnnxNodeContext& ctx, int64_t axes_input_since) {
  AttrMap attrs;
  TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"keepdims"}, attrs, ctx.op_type()));
  std::vector<TensorRef> inputs = ctx.inputs();
  if (ctx.opset() >= axes_input_since) {
    TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"noop_with_empty_axes"}, attrs, ctx.op_type()));
  } else {
    TSR_RETURN_IF_ERROR(CheckNoInputBefore(ctx, 1, "axes", axes_input_since));
    TSR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, ctx.GetInts("axes"));
    // Absent or empty axes reduce everything, as noop_with_empty_axes=0 does in the new form.
    if (axes.has_value() && axes->empty()) axes.reset();
    TSR_ASSIGN_OR_RETURN(inputs, DataAndConstant(ctx, axes, "axes"));
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode(ctx.op_type(), inputs, std::move(attrs)));
  return AllOutputs(*n);
}

absl::StatusOr<std::vector<TensorRef>> ConvertSqueeze(OnnxNodeContext& ctx) {
  std::vector<TensorRef> inputs = ctx.inputs();
  if (ctx.opset() < 13) {
    TSR_RETURN_IF_ERROR(CheckNoInputBefore(ctx, 1, "axes", 13));
    TSR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, ctx.GetInts("axes"));
    TSR_ASSIGN_OR_RETURN(inputs, DataAndConstant(ctx, axes, "axes"));
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Squeeze", inputs));
  return AllOutputs(*n);
}

absl::StatusOr<std::vector<TensorRef>> ConvertUnsqueeze(OnnxNodeContext& ctx) {
  std::vector<TensorRef> inputs = ctx.inputs();
  if (ctx.opset() < 13) {
    TSR_RETURN_IF_ERROR(CheckNoInputBefore(ctx, 1, "axes", 13));
    TSR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, ctx.GetInts("axes"));
    if (!axes.has_value()) return ctx.Error("required attribute 'axes' is missing");
    TSR_ASSIGN_OR_RETURN(inputs, DataAndConstant(ctx, axes, "axes"));
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Unsqueeze", inputs));
  return AllOutputs(*n);
}

// Split: sizes from the 'split' attribute (< 13) or input (>= 13); without them, equal
// parts, one per output (opset 18 names the count in 'num_outputs' and lets the last
// part be smaller; before 18 the parts must be equal).
absl::StatusOr<std::vector<TensorRef>> ConvertSplit(OnnxNodeContext& ctx) {
  AttrMap attrs;
  TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"axis"}, attrs, "Split"));
  std::vector<TensorRef> inputs = ctx.inputs();
  if (ctx.opset() < 13) {
    TSR_RETURN_IF_ERROR(CheckNoInputBefore(ctx, 1, "split", 13));
    TSR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> split, ctx.GetInts("split"));
    TSR_ASSIGN_OR_RETURN(inputs, DataAndConstant(ctx, split, "split"));
  }
  if (ctx.opset() >= 18) TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"num_outputs"}, attrs, "Split"));
  const bool has_split = inputs.size() > 1 && inputs[1].valid();
  if (!has_split && !attrs.contains("num_outputs")) {
    if (ctx.opset() >= 18) return ctx.Error("needs input 'split' or attribute 'num_outputs'");
    const int64_t parts = ctx.num_outputs();
    if (parts < 1) return ctx.Error("has no outputs");
    TSR_ASSIGN_OR_RETURN(TensorType type, ctx.InputType(0));
    const int64_t axis = attrs.contains("axis") ? attrs["axis"].i() : 0;
    absl::StatusOr<int> a = NormalizeAxis(axis, type.shape.rank());
    if (!a.ok()) return ctx.Error(a.status().message());
    const int64_t d = type.shape.dim(*a);
    if (d != kBatchDim && d % parts != 0) {
      return ctx.Error(
          absl::StrCat("splits axis ", *a, " of size ", d, " into ", parts,
                       " equal parts, which it does not divide (before opset 18 the parts must be equal)"));
    }
    attrs["num_outputs"] = AttrValue::Int(parts);
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Split", inputs, std::move(attrs)));
  return AllOutputs(*n);
}

// Softmax and LogSoftmax. From opset 13 they work along one axis (default -1); before,
// the input was coerced to 2-D at `axis` (default 1) and normalized over the whole
// second part: Flatten(axis), then Softmax along the last axis, then back to the
// input's shape. When `axis` is the last axis both readings agree.
absl::StatusOr<std::vector<TensorRef>> ConvertSoftmax(OnnxNodeContext& ctx) {
  const std::string& op = ctx.op_type();
  TSR_ASSIGN_OR_RETURN(std::optional<int64_t> axis, ctx.GetInt("axis"));
  if (ctx.opset() >= 13) {
    AttrMap attrs;
    if (axis.has_value()) attrs["axis"] = AttrValue::Int(*axis);
    TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode(op, ctx.inputs(), std::move(attrs)));
    return AllOutputs(*n);
  }
  TSR_ASSIGN_OR_RETURN(TensorType type, ctx.InputType(0));
  const Shape& shape = type.shape;
  absl::StatusOr<int> a = NormalizeAxis(axis.value_or(1), shape.rank());
  if (!a.ok()) return ctx.Error(a.status().message());
  if (*a == shape.rank() - 1) {
    TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode(op, ctx.inputs(), {{"axis", AttrValue::Int(-1)}}));
    return AllOutputs(*n);
  }
  // The target shape of the final Reshape: the input's dims, the batch dim as -1.
  std::vector<int64_t> dims = shape.dims();
  int batch_dims = 0;
  bool zero = false;
  for (int64_t& d : dims) {
    if (d == kBatchDim) ++batch_dims;
    zero = zero || d == 0;
  }
  if (batch_dims > 1 || (batch_dims == 1 && zero)) {
    return ctx.Unsupported(absl::StrCat("coercing input ", shape.ToString(), " to 2-D at axis ", *a,
                                        " and back needs a static shape (or one batch dim and no zero dims)"));
  }
  TSR_ASSIGN_OR_RETURN(
      Node * flat, ctx.AddNode("Flatten", {ctx.input(0)}, {{"axis", AttrValue::Int(*a)}}, /*produces_outputs=*/false));
  TSR_ASSIGN_OR_RETURN(Node * soft, ctx.AddNode(op, {flat->output(0)}, {{"axis", AttrValue::Int(1)}}, false));
  TSR_ASSIGN_OR_RETURN(TensorRef target, ctx.AddInt64Constant(dims, "shape"));
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Reshape", {soft->output(0), target},
                                             {{"allowzero", AttrValue::Int(batch_dims == 0 ? 1 : 0)}}));
  return AllOutputs(*n);
}

// Dropout: from opset 12 ratio and training_mode are inputs; before, ratio is an
// attribute and the op is the identity at inference (no training_mode).
absl::StatusOr<std::vector<TensorRef>> ConvertDropout(OnnxNodeContext& ctx) {
  AttrMap attrs;
  TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"seed"}, attrs, "Dropout"));
  std::vector<TensorRef> inputs = ctx.inputs();
  if (ctx.opset() < 12) {
    TSR_RETURN_IF_ERROR(CheckNoInputBefore(ctx, 1, "ratio", 12));
    TSR_ASSIGN_OR_RETURN(std::optional<double> ratio, ctx.GetFloat("ratio"));
    inputs = {ctx.input(0)};
    if (ratio.has_value()) {
      TSR_ASSIGN_OR_RETURN(Tensor ratio_value, FloatScalarTensor(DType::kF32, *ratio));
      TSR_ASSIGN_OR_RETURN(TensorRef r, ctx.AddConstant(ratio_value, "ratio"));
      inputs.push_back(r);
    }
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Dropout", inputs, std::move(attrs)));
  return AllOutputs(*n);
}

// BatchNormalization: from opset 14, training_mode selects training (outputs
// running_mean and running_var). Before 14 the extra outputs (mean, var, saved_mean,
// saved_var) only existed in training, whose form Tessera does not have.
absl::StatusOr<std::vector<TensorRef>> ConvertBatchNormalization(OnnxNodeContext& ctx) {
  AttrMap attrs;
  TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"epsilon", "momentum"}, attrs, "BatchNormalization"));
  if (ctx.opset() >= 14) {
    TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"training_mode"}, attrs, "BatchNormalization"));
  } else {
    for (int i = 1; i < ctx.num_outputs(); ++i) {
      if (!ctx.node().output(i).empty()) {
        return ctx.Unsupported(absl::StrCat("output ", i, " ('", ctx.node().output(i),
                                            "'): the training outputs of BatchNormalization before opset 14 "
                                            "(mean, var, saved_mean, saved_var) are not supported"));
      }
    }
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("BatchNormalization", ctx.inputs(), std::move(attrs)));
  return AllOutputs(*n);
}

absl::StatusOr<std::vector<TensorRef>> ConvertConstant(OnnxNodeContext& ctx) {
  for (const char* unsupported : {"sparse_value", "value_string", "value_strings"}) {
    if (ctx.FindAttr(unsupported) != nullptr) {
      return ctx.Unsupported(
          absl::StrCat("attribute '", unsupported, "' is not supported (no sparse or string tensors)"));
    }
  }
  std::optional<Tensor> value;
  int given = 0;
  TSR_ASSIGN_OR_RETURN(std::optional<Tensor> t, ctx.GetTensor("value"));
  if (t.has_value()) value = *std::move(t), ++given;
  TSR_ASSIGN_OR_RETURN(std::optional<double> f, ctx.GetFloat("value_float"));
  if (f.has_value()) value = Tensor::Scalar<float>(static_cast<float>(*f)), ++given;
  TSR_ASSIGN_OR_RETURN(std::optional<std::vector<double>> fs, ctx.GetFloats("value_floats"));
  if (fs.has_value()) {
    value =
        Tensor::FromVector<float>(Shape{static_cast<int64_t>(fs->size())}, std::vector<float>(fs->begin(), fs->end())),
    ++given;
  }
  TSR_ASSIGN_OR_RETURN(std::optional<int64_t> i, ctx.GetInt("value_int"));
  if (i.has_value()) value = Tensor::Scalar<int64_t>(*i), ++given;
  TSR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> is, ctx.GetInts("value_ints"));
  if (is.has_value()) value = Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(is->size())}, *is), ++given;
  if (given != 1) {
    return ctx.Error(
        absl::StrCat("needs exactly one of the attributes value, value_float, value_floats, value_int, "
                     "value_ints; it has ",
                     given));
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Constant", {}, {{"value", AttrValue::FromTensor(*std::move(value))}}));
  return AllOutputs(*n);
}

absl::StatusOr<std::vector<TensorRef>> ConvertCast(OnnxNodeContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::optional<int64_t> to, ctx.GetInt("to"));
  if (!to.has_value()) return ctx.Error("required attribute 'to' is missing");
  if (*to < INT32_MIN || *to > INT32_MAX) return ctx.Error(absl::StrCat("attribute 'to' is ", *to));
  absl::StatusOr<DType> dtype = DTypeFromOnnx(static_cast<int32_t>(*to));
  if (!dtype.ok()) return ctx.Unsupported(absl::StrCat("attribute 'to': ", dtype.status().message()));
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Cast", ctx.inputs(), {{"to", AttrValue::Type(*dtype)}}));
  return AllOutputs(*n);
}

// Sum: a chain of broadcasting Adds, left to right. Mean: that sum divided by the
// number of inputs (exactly what ONNX's definition computes).
absl::StatusOr<std::vector<TensorRef>> ConvertSumOrMean(OnnxNodeContext& ctx) {
  const bool mean = ctx.op_type() == "Mean";
  const int n = ctx.num_inputs();
  if (n < 1) return ctx.Error("needs at least one input");
  for (int i = 0; i < n; ++i) {
    if (!ctx.input(i).valid()) return ctx.Error(absl::StrCat("input ", i, " is empty"));
  }
  if (n == 1) {
    TSR_ASSIGN_OR_RETURN(Node * id, ctx.AddNode("Identity", {ctx.input(0)}));
    return AllOutputs(*id);
  }
  TensorRef acc = ctx.input(0);
  for (int i = 1; i < n; ++i) {
    const bool last = i == n - 1 && !mean;
    TSR_ASSIGN_OR_RETURN(Node * add, ctx.AddNode("Add", {acc, ctx.input(i)}, {}, last));
    acc = add->output(0);
  }
  if (!mean) return std::vector<TensorRef>{acc};
  TSR_ASSIGN_OR_RETURN(TensorType type, ctx.InputType(0));
  if (!IsFloating(type.dtype))
    return ctx.Error(absl::StrCat("Mean needs floating inputs, not ", DTypeName(type.dtype)));
  TSR_ASSIGN_OR_RETURN(Tensor count_value, FloatScalarTensor(type.dtype, n));
  TSR_ASSIGN_OR_RETURN(TensorRef count, ctx.AddConstant(count_value, "count"));
  TSR_ASSIGN_OR_RETURN(Node * div, ctx.AddNode("Div", {acc, count}));
  return AllOutputs(*div);
}

// GlobalMaxPool: the maximum over every spatial axis, kept as size 1.
absl::StatusOr<std::vector<TensorRef>> ConvertGlobalMaxPool(OnnxNodeContext& ctx) {
  TSR_ASSIGN_OR_RETURN(TensorType type, ctx.InputType(0));
  if (type.shape.rank() < 3) {
    return ctx.Error(absl::StrCat("input ", type.ToString(), " must be [N,C,D1,...] with a spatial dimension"));
  }
  std::vector<int64_t> axes;
  for (int i = 2; i < type.shape.rank(); ++i) axes.push_back(i);
  TSR_ASSIGN_OR_RETURN(TensorRef a, ctx.AddInt64Constant(axes, "axes"));
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("ReduceMax", {ctx.input(0), a}, {{"keepdims", AttrValue::Int(1)}}));
  return AllOutputs(*n);
}

}  // namespace tsr
