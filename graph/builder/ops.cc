// The typed op helpers of graph/builder/ops.h: each assembles inputs and attributes
// and calls GraphBuilder::Op.
#include "graph/builder/ops.h"

#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tsr::ops {

namespace {

AttrValue IntFlag(bool value) { return AttrValue::Int(value ? 1 : 0); }

// ArgMax or ArgMin: the same attributes.
Output ArgExtreme(GraphBuilder& b, absl::string_view op, Output x, const ArgMaxOptions& options,
                  absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(options.axis);
  attrs["keepdims"] = IntFlag(options.keepdims);
  attrs["select_last_index"] = IntFlag(options.select_last_index);
  return b.Op1(op, {x}, std::move(attrs), name);
}

Output Unary(GraphBuilder& b, absl::string_view op, Output x, absl::string_view name) {
  return b.Op1(op, {x}, {}, name);
}

Output Binary(GraphBuilder& b, absl::string_view op, Output x, Output y, absl::string_view name) {
  return b.Op1(op, {x, y}, {}, name);
}

// A tensor of `dtype` and `shape` holding `values` converted to the dtype: with
// `fill` the single value fills every element, otherwise there is one value per element.
absl::StatusOr<Tensor> Converted(DType dtype, const tsr::Shape& shape, absl::Span<const double> values, bool fill) {
  if (!IsValidDType(dtype)) return absl::InvalidArgumentError("cannot make a constant of an invalid dtype");
  absl::StatusOr<Tensor> t = Tensor::Create(dtype, shape);
  if (!t.ok()) return t.status();
  if (fill ? values.size() != 1 : static_cast<int64_t>(values.size()) != t->num_elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat(values.size(), " values do not fill a constant of shape ", shape.ToString()));
  }
  VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    absl::Span<T> out = t->template flat<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      const double v = fill ? values[0] : values[i];
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        out[i] = T::FromFloat(static_cast<float>(v));
      } else if constexpr (std::is_same_v<T, bool>) {
        out[i] = v != 0.0;
      } else {
        out[i] = static_cast<T>(v);
      }
    }
  });
  return t;
}

Output ConvertedConst(GraphBuilder& b, DType dtype, const tsr::Shape& shape, absl::Span<const double> values, bool fill,
                      absl::string_view what, absl::string_view name) {
  if (!b.ok()) return Output();
  absl::StatusOr<Tensor> t = Converted(dtype, shape, values, fill);
  if (!t.ok()) {
    b.RecordError(absl::Status(t.status().code(),
                               absl::StrCat(what, " in scope '", b.scope_prefix(), "': ", t.status().message())));
    return Output();
  }
  return Const(b, *std::move(t), name);
}

// A 1-D i64 constant, or an absent input when `values` is empty (optional shape-like inputs).
Output IntsOrAbsent(GraphBuilder& b, const std::vector<int64_t>& values) {
  return values.empty() ? Output() : Const(b, values);
}

Output Reduce(GraphBuilder& b, absl::string_view op, Output x, Output axes, bool keepdims, absl::string_view name) {
  AttrMap attrs;
  attrs["keepdims"] = IntFlag(keepdims);
  std::vector<Output> inputs = {x};
  if (axes.valid()) inputs.push_back(axes);
  return b.Op1(op, inputs, std::move(attrs), name);
}

void SetInts(AttrMap& attrs, const char* key, const std::vector<int64_t>& values) {
  if (!values.empty()) attrs[key] = AttrValue::Ints(values);
}

// Drops trailing absent inputs, so that an op sees only the slots that are used.
std::vector<Output> TrimAbsent(std::vector<Output> inputs) {
  while (!inputs.empty() && !inputs.back().valid()) inputs.pop_back();
  return inputs;
}

}  // namespace

// ---- Sources -------------------------------------------------------------------

Output Const(GraphBuilder& b, Tensor value, absl::string_view name) {
  AttrMap attrs;
  attrs["value"] = AttrValue::FromTensor(std::move(value));
  return b.Op1("Constant", {}, std::move(attrs), name);
}

Output Const(GraphBuilder& b, const std::vector<int64_t>& values, absl::string_view name) {
  return Const(b, Tensor::FromVector<int64_t>(tsr::Shape({static_cast<int64_t>(values.size())}), values), name);
}

Output Scalar(GraphBuilder& b, double value, DType dtype, absl::string_view name) {
  return ConvertedConst(b, dtype, tsr::Shape(), {value}, /*fill=*/true, "ops::Scalar", name);
}

Output Const(GraphBuilder& b, DType dtype, const tsr::Shape& shape, const std::vector<double>& values,
             absl::string_view name) {
  return ConvertedConst(b, dtype, shape, values, /*fill=*/false, "ops::Const", name);
}

Output Fill(GraphBuilder& b, DType dtype, const tsr::Shape& shape, double value, absl::string_view name) {
  return ConvertedConst(b, dtype, shape, {value}, /*fill=*/true, "ops::Fill", name);
}

Output Placeholder(GraphBuilder& b, DType dtype, tsr::Shape shape, absl::string_view name) {
  AttrMap attrs;
  attrs["dtype"] = AttrValue::Type(dtype);
  attrs["shape"] = AttrValue::FromShape(std::move(shape));
  return b.Op1("Placeholder", {}, std::move(attrs), name);
}

Output Variable(GraphBuilder& b, absl::string_view name, DType dtype, tsr::Shape shape,
                const VariableOptions& options) {
  if (b.ok() && name.empty()) {
    b.RecordError(absl::InvalidArgumentError(
        absl::StrCat("ops::Variable in scope '", b.scope_prefix(), "': a variable needs a name")));
  }
  AttrMap attrs;
  attrs["dtype"] = AttrValue::Type(dtype);
  attrs["shape"] = AttrValue::FromShape(std::move(shape));
  attrs["initializer"] = AttrValue::String(options.initializer);
  attrs["trainable"] = AttrValue::Bool(options.trainable);
  if (options.init_value) attrs["init_value"] = AttrValue::Float(*options.init_value);
  if (options.init_min) attrs["init_min"] = AttrValue::Float(*options.init_min);
  if (options.init_max) attrs["init_max"] = AttrValue::Float(*options.init_max);
  if (options.init_mean) attrs["init_mean"] = AttrValue::Float(*options.init_mean);
  if (options.init_stddev) attrs["init_stddev"] = AttrValue::Float(*options.init_stddev);
  if (options.seed) attrs["seed"] = AttrValue::Int(*options.seed);
  if (options.value) attrs["value"] = AttrValue::FromTensor(*options.value);
  return b.Op1("Variable", {}, std::move(attrs), name);
}

Output Identity(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Identity", x, name); }

Output ConstantOfShape(GraphBuilder& b, Output shape, std::optional<Tensor> value, absl::string_view name) {
  AttrMap attrs;
  if (value.has_value()) attrs["value"] = AttrValue::FromTensor(*std::move(value));
  return b.Op1("ConstantOfShape", {shape}, std::move(attrs), name);
}
Output ConstantOfShape(GraphBuilder& b, const std::vector<int64_t>& shape, double value, DType dtype,
                       absl::string_view name) {
  if (!b.ok()) return Output();
  absl::StatusOr<Tensor> t = Converted(dtype, tsr::Shape({1}), {value}, /*fill=*/false);
  if (!t.ok()) {
    b.RecordError(absl::Status(t.status().code(), absl::StrCat("ops::ConstantOfShape in scope '", b.scope_prefix(),
                                                               "': ", t.status().message())));
    return Output();
  }
  return ConstantOfShape(b, Const(b, shape), *std::move(t), name);
}
Output EyeLike(GraphBuilder& b, Output x, std::optional<DType> dtype, int64_t k, absl::string_view name) {
  AttrMap attrs;
  attrs["k"] = AttrValue::Int(k);
  if (dtype.has_value()) attrs["dtype"] = AttrValue::Type(*dtype);
  return b.Op1("EyeLike", {x}, std::move(attrs), name);
}

// ---- Elementwise ---------------------------------------------------------------

Output Add(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Add", x, y, name); }
Output Sub(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Sub", x, y, name); }
Output Mul(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Mul", x, y, name); }
Output Div(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Div", x, y, name); }
Output Pow(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Pow", x, y, name); }
Output Neg(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Neg", x, name); }
Output Abs(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Abs", x, name); }
Output Exp(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Exp", x, name); }
Output Log(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Log", x, name); }
Output Sqrt(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Sqrt", x, name); }
Output Rsqrt(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Rsqrt", x, name); }
Output Reciprocal(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Reciprocal", x, name); }
Output Max(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Max", x, y, name); }
Output Max(GraphBuilder& b, const std::vector<Output>& inputs, absl::string_view name) {
  return b.Op1("Max", inputs, {}, name);
}
Output Min(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Min", x, y, name); }
Output Min(GraphBuilder& b, const std::vector<Output>& inputs, absl::string_view name) {
  return b.Op1("Min", inputs, {}, name);
}
Output Equal(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Equal", x, y, name); }
Output Less(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Less", x, y, name); }
Output Greater(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Greater", x, y, name); }
Output Where(GraphBuilder& b, Output condition, Output x, Output y, absl::string_view name) {
  return b.Op1("Where", {condition, x, y}, {}, name);
}
Output Cast(GraphBuilder& b, Output x, DType to, absl::string_view name) {
  AttrMap attrs;
  attrs["to"] = AttrValue::Type(to);
  return b.Op1("Cast", {x}, std::move(attrs), name);
}
Output Clip(GraphBuilder& b, Output x, Output min, Output max, absl::string_view name) {
  return b.Op1("Clip", TrimAbsent({x, min, max}), {}, name);
}
Output Clip(GraphBuilder& b, Output x, double min, double max, absl::string_view name) {
  return Clip(b, x, Scalar(b, min, x.dtype()), Scalar(b, max, x.dtype()), name);
}
Output Mod(GraphBuilder& b, Output x, Output y, bool fmod, absl::string_view name) {
  AttrMap attrs;
  attrs["fmod"] = IntFlag(fmod);
  return b.Op1("Mod", {x, y}, std::move(attrs), name);
}
Output BitShift(GraphBuilder& b, Output x, Output y, absl::string_view direction, absl::string_view name) {
  AttrMap attrs;
  attrs["direction"] = AttrValue::String(std::string(direction));
  return b.Op1("BitShift", {x, y}, std::move(attrs), name);
}
Output GreaterOrEqual(GraphBuilder& b, Output x, Output y, absl::string_view name) {
  return Binary(b, "GreaterOrEqual", x, y, name);
}
Output LessOrEqual(GraphBuilder& b, Output x, Output y, absl::string_view name) {
  return Binary(b, "LessOrEqual", x, y, name);
}
Output And(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "And", x, y, name); }
Output Or(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Or", x, y, name); }
Output Xor(GraphBuilder& b, Output x, Output y, absl::string_view name) { return Binary(b, "Xor", x, y, name); }
Output Not(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Not", x, name); }
Output Sin(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Sin", x, name); }
Output Cos(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Cos", x, name); }
Output Tan(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Tan", x, name); }
Output Asin(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Asin", x, name); }
Output Acos(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Acos", x, name); }
Output Atan(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Atan", x, name); }
Output Sinh(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Sinh", x, name); }
Output Cosh(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Cosh", x, name); }
Output Asinh(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Asinh", x, name); }
Output Acosh(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Acosh", x, name); }
Output Atanh(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Atanh", x, name); }
Output Floor(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Floor", x, name); }
Output Ceil(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Ceil", x, name); }
Output Round(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Round", x, name); }
Output Sign(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Sign", x, name); }
Output IsNaN(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "IsNaN", x, name); }
Output IsInf(GraphBuilder& b, Output x, bool detect_negative, bool detect_positive, absl::string_view name) {
  AttrMap attrs;
  attrs["detect_negative"] = IntFlag(detect_negative);
  attrs["detect_positive"] = IntFlag(detect_positive);
  return b.Op1("IsInf", {x}, std::move(attrs), name);
}

// ---- Activations ---------------------------------------------------------------

Output Relu(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Relu", x, name); }
Output LeakyRelu(GraphBuilder& b, Output x, double alpha, absl::string_view name) {
  AttrMap attrs;
  attrs["alpha"] = AttrValue::Float(alpha);
  return b.Op1("LeakyRelu", {x}, std::move(attrs), name);
}
Output Gelu(GraphBuilder& b, Output x, absl::string_view approximate, absl::string_view name) {
  AttrMap attrs;
  attrs["approximate"] = AttrValue::String(std::string(approximate));
  return b.Op1("Gelu", {x}, std::move(attrs), name);
}
Output Sigmoid(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Sigmoid", x, name); }
Output Tanh(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Tanh", x, name); }
Output Erf(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Erf", x, name); }
Output Softplus(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Softplus", x, name); }
Output Silu(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Silu", x, name); }
Output PRelu(GraphBuilder& b, Output x, Output slope, absl::string_view name) {
  return Binary(b, "PRelu", x, slope, name);
}
Output Elu(GraphBuilder& b, Output x, double alpha, absl::string_view name) {
  AttrMap attrs;
  attrs["alpha"] = AttrValue::Float(alpha);
  return b.Op1("Elu", {x}, std::move(attrs), name);
}
Output Selu(GraphBuilder& b, Output x, double alpha, double gamma, absl::string_view name) {
  AttrMap attrs;
  attrs["alpha"] = AttrValue::Float(alpha);
  attrs["gamma"] = AttrValue::Float(gamma);
  return b.Op1("Selu", {x}, std::move(attrs), name);
}
Output Celu(GraphBuilder& b, Output x, double alpha, absl::string_view name) {
  AttrMap attrs;
  attrs["alpha"] = AttrValue::Float(alpha);
  return b.Op1("Celu", {x}, std::move(attrs), name);
}
Output HardSigmoid(GraphBuilder& b, Output x, double alpha, double beta, absl::string_view name) {
  AttrMap attrs;
  attrs["alpha"] = AttrValue::Float(alpha);
  attrs["beta"] = AttrValue::Float(beta);
  return b.Op1("HardSigmoid", {x}, std::move(attrs), name);
}
Output HardSwish(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "HardSwish", x, name); }
Output Softsign(GraphBuilder& b, Output x, absl::string_view name) { return Unary(b, "Softsign", x, name); }
Output ThresholdedRelu(GraphBuilder& b, Output x, double alpha, absl::string_view name) {
  AttrMap attrs;
  attrs["alpha"] = AttrValue::Float(alpha);
  return b.Op1("ThresholdedRelu", {x}, std::move(attrs), name);
}
Output Shrink(GraphBuilder& b, Output x, double lambd, double bias, absl::string_view name) {
  AttrMap attrs;
  attrs["lambd"] = AttrValue::Float(lambd);
  attrs["bias"] = AttrValue::Float(bias);
  return b.Op1("Shrink", {x}, std::move(attrs), name);
}

// ---- Reductions ----------------------------------------------------------------

Output ReduceSum(GraphBuilder& b, Output x, Output axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceSum", x, axes, keepdims, name);
}
Output ReduceSum(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceSum", x, IntsOrAbsent(b, axes), keepdims, name);
}
Output ReduceMean(GraphBuilder& b, Output x, Output axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceMean", x, axes, keepdims, name);
}
Output ReduceMean(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceMean", x, IntsOrAbsent(b, axes), keepdims, name);
}
Output ReduceMax(GraphBuilder& b, Output x, Output axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceMax", x, axes, keepdims, name);
}
Output ReduceMax(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceMax", x, IntsOrAbsent(b, axes), keepdims, name);
}
Output ReduceMin(GraphBuilder& b, Output x, Output axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceMin", x, axes, keepdims, name);
}
Output ReduceMin(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceMin", x, IntsOrAbsent(b, axes), keepdims, name);
}
Output ReduceProd(GraphBuilder& b, Output x, Output axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceProd", x, axes, keepdims, name);
}
Output ReduceProd(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceProd", x, IntsOrAbsent(b, axes), keepdims, name);
}
Output ReduceL2(GraphBuilder& b, Output x, Output axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceL2", x, axes, keepdims, name);
}
Output ReduceL2(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceL2", x, IntsOrAbsent(b, axes), keepdims, name);
}

Output ArgMax(GraphBuilder& b, Output x, const ArgMaxOptions& options, absl::string_view name) {
  return ArgExtreme(b, "ArgMax", x, options, name);
}
Output ReduceL1(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims, absl::string_view name) {
  return Reduce(b, "ReduceL1", x, IntsOrAbsent(b, axes), keepdims, name);
}
Output ReduceSumSquare(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims,
                       absl::string_view name) {
  return Reduce(b, "ReduceSumSquare", x, IntsOrAbsent(b, axes), keepdims, name);
}
Output ReduceLogSum(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims,
                    absl::string_view name) {
  return Reduce(b, "ReduceLogSum", x, IntsOrAbsent(b, axes), keepdims, name);
}
Output ReduceLogSumExp(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, bool keepdims,
                       absl::string_view name) {
  return Reduce(b, "ReduceLogSumExp", x, IntsOrAbsent(b, axes), keepdims, name);
}

Output ArgMin(GraphBuilder& b, Output x, const ArgMaxOptions& options, absl::string_view name) {
  return ArgExtreme(b, "ArgMin", x, options, name);
}

Output CumSum(GraphBuilder& b, Output x, int64_t axis, const CumSumOptions& options, absl::string_view name) {
  AttrMap attrs;
  attrs["exclusive"] = IntFlag(options.exclusive);
  attrs["reverse"] = IntFlag(options.reverse);
  return b.Op1("CumSum", {x, Scalar(b, axis)}, std::move(attrs), name);
}

std::vector<Output> TopK(GraphBuilder& b, Output x, int64_t k, const TopKOptions& options, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(options.axis);
  attrs["largest"] = IntFlag(options.largest);
  attrs["sorted"] = IntFlag(options.sorted);
  return b.Op("TopK", {x, Const(b, std::vector<int64_t>{k})}, std::move(attrs), name);
}

Output Einsum(GraphBuilder& b, const std::vector<Output>& inputs, absl::string_view equation, absl::string_view name) {
  AttrMap attrs;
  attrs["equation"] = AttrValue::String(std::string(equation));
  return b.Op1("Einsum", inputs, std::move(attrs), name);
}

// ---- Dropout -------------------------------------------------------------------

Output Dropout(GraphBuilder& b, Output x, const DropoutOptions& options, absl::string_view name) {
  AttrMap attrs;
  if (options.seed) attrs["seed"] = AttrValue::Int(*options.seed);
  // The ratio takes x's dtype so that f16 models stay f16 throughout.
  const DType ratio_dtype = IsFloating(x.dtype()) ? x.dtype() : DType::kF32;
  Output ratio = Scalar(b, options.ratio, ratio_dtype);
  Output training = options.training_mode.valid() ? options.training_mode : Scalar(b, options.training);
  return b.Op1("Dropout", {x, ratio, training}, std::move(attrs), name);
}

// ---- Matrix products and convolutions ------------------------------------------

Output Assign(GraphBuilder& b, Output variable, Output value, absl::string_view name) {
  return b.Op1("Assign", {variable, value}, {}, name);
}

Output MatMul(GraphBuilder& b, Output a, Output w, absl::string_view name) { return Binary(b, "MatMul", a, w, name); }

Output Gemm(GraphBuilder& b, Output a, Output w, Output c, const GemmOptions& options, absl::string_view name) {
  AttrMap attrs;
  attrs["alpha"] = AttrValue::Float(options.alpha);
  attrs["beta"] = AttrValue::Float(options.beta);
  attrs["transA"] = IntFlag(options.trans_a);
  attrs["transB"] = IntFlag(options.trans_b);
  return b.Op1("Gemm", TrimAbsent({a, w, c}), std::move(attrs), name);
}
Output Gemm(GraphBuilder& b, Output a, Output w, const GemmOptions& options, absl::string_view name) {
  return Gemm(b, a, w, Output(), options, name);
}

Output Conv(GraphBuilder& b, Output x, Output w, Output bias, const ConvOptions& options, absl::string_view name) {
  AttrMap attrs;
  SetInts(attrs, "strides", options.strides);
  SetInts(attrs, "pads", options.pads);
  SetInts(attrs, "dilations", options.dilations);
  SetInts(attrs, "kernel_shape", options.kernel_shape);
  attrs["group"] = AttrValue::Int(options.group);
  attrs["auto_pad"] = AttrValue::String(options.auto_pad);
  return b.Op1("Conv", TrimAbsent({x, w, bias}), std::move(attrs), name);
}
Output Conv(GraphBuilder& b, Output x, Output w, const ConvOptions& options, absl::string_view name) {
  return Conv(b, x, w, Output(), options, name);
}

Output ConvTranspose(GraphBuilder& b, Output x, Output w, Output bias, const ConvTransposeOptions& options,
                     absl::string_view name) {
  AttrMap attrs;
  SetInts(attrs, "strides", options.strides);
  SetInts(attrs, "pads", options.pads);
  SetInts(attrs, "dilations", options.dilations);
  SetInts(attrs, "kernel_shape", options.kernel_shape);
  SetInts(attrs, "output_padding", options.output_padding);
  SetInts(attrs, "output_shape", options.output_shape);
  attrs["group"] = AttrValue::Int(options.group);
  attrs["auto_pad"] = AttrValue::String(options.auto_pad);
  return b.Op1("ConvTranspose", TrimAbsent({x, w, bias}), std::move(attrs), name);
}
Output ConvTranspose(GraphBuilder& b, Output x, Output w, const ConvTransposeOptions& options, absl::string_view name) {
  return ConvTranspose(b, x, w, Output(), options, name);
}

// ---- Pooling -------------------------------------------------------------------

namespace {

AttrMap PoolAttrs(const PoolOptions& options) {
  AttrMap attrs;
  SetInts(attrs, "kernel_shape", options.kernel_shape);
  SetInts(attrs, "strides", options.strides);
  SetInts(attrs, "pads", options.pads);
  SetInts(attrs, "dilations", options.dilations);
  attrs["ceil_mode"] = IntFlag(options.ceil_mode);
  attrs["auto_pad"] = AttrValue::String(options.auto_pad);
  return attrs;
}

}  // namespace

Output MaxPool(GraphBuilder& b, Output x, const PoolOptions& options, absl::string_view name) {
  return b.Op1("MaxPool", {x}, PoolAttrs(options), name);
}
Output AveragePool(GraphBuilder& b, Output x, const PoolOptions& options, absl::string_view name) {
  AttrMap attrs = PoolAttrs(options);
  attrs["count_include_pad"] = IntFlag(options.count_include_pad);
  return b.Op1("AveragePool", {x}, std::move(attrs), name);
}
Output GlobalAveragePool(GraphBuilder& b, Output x, absl::string_view name) {
  return Unary(b, "GlobalAveragePool", x, name);
}

// ---- Normalization -------------------------------------------------------------

Output BatchNormalization(GraphBuilder& b, Output x, Output scale, Output bias, Output mean, Output variance,
                          const BatchNormalizationOptions& options, absl::string_view name) {
  AttrMap attrs;
  attrs["epsilon"] = AttrValue::Float(options.epsilon);
  attrs["momentum"] = AttrValue::Float(options.momentum);
  return b.Op1("BatchNormalization", {x, scale, bias, mean, variance}, std::move(attrs), name);
}

std::vector<Output> BatchNormalizationTraining(GraphBuilder& b, Output x, Output scale, Output bias, Output mean,
                                               Output variance, const BatchNormalizationOptions& options,
                                               absl::string_view name) {
  AttrMap attrs;
  attrs["epsilon"] = AttrValue::Float(options.epsilon);
  attrs["momentum"] = AttrValue::Float(options.momentum);
  attrs["training_mode"] = AttrValue::Int(1);
  std::vector<Output> out = b.Op("BatchNormalization", {x, scale, bias, mean, variance}, std::move(attrs), name);
  out.resize(3);
  return out;
}

Output LayerNormalization(GraphBuilder& b, Output x, Output scale, Output bias,
                          const LayerNormalizationOptions& options, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(options.axis);
  attrs["epsilon"] = AttrValue::Float(options.epsilon);
  return b.Op1("LayerNormalization", TrimAbsent({x, scale, bias}), std::move(attrs), name);
}

Output Softmax(GraphBuilder& b, Output x, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  return b.Op1("Softmax", {x}, std::move(attrs), name);
}
Output LogSoftmax(GraphBuilder& b, Output x, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  return b.Op1("LogSoftmax", {x}, std::move(attrs), name);
}
Output Hardmax(GraphBuilder& b, Output x, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  return b.Op1("Hardmax", {x}, std::move(attrs), name);
}
Output InstanceNormalization(GraphBuilder& b, Output x, Output scale, Output bias, double epsilon,
                             absl::string_view name) {
  AttrMap attrs;
  attrs["epsilon"] = AttrValue::Float(epsilon);
  return b.Op1("InstanceNormalization", {x, scale, bias}, std::move(attrs), name);
}
Output MeanVarianceNormalization(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, absl::string_view name) {
  AttrMap attrs;
  attrs["axes"] = AttrValue::Ints(axes);
  return b.Op1("MeanVarianceNormalization", {x}, std::move(attrs), name);
}
Output LRN(GraphBuilder& b, Output x, int64_t size, const LRNOptions& options, absl::string_view name) {
  AttrMap attrs;
  attrs["size"] = AttrValue::Int(size);
  attrs["alpha"] = AttrValue::Float(options.alpha);
  attrs["beta"] = AttrValue::Float(options.beta);
  attrs["bias"] = AttrValue::Float(options.bias);
  return b.Op1("LRN", {x}, std::move(attrs), name);
}

// ---- Losses --------------------------------------------------------------------

Output SoftmaxCrossEntropyLoss(GraphBuilder& b, Output scores, Output labels, Output weights,
                               const SoftmaxCrossEntropyLossOptions& options, absl::string_view name) {
  AttrMap attrs;
  attrs["reduction"] = AttrValue::String(options.reduction);
  if (options.ignore_index) attrs["ignore_index"] = AttrValue::Int(*options.ignore_index);
  return b.Op1("SoftmaxCrossEntropyLoss", TrimAbsent({scores, labels, weights}), std::move(attrs), name);
}
Output SoftmaxCrossEntropyLoss(GraphBuilder& b, Output scores, Output labels,
                               const SoftmaxCrossEntropyLossOptions& options, absl::string_view name) {
  return SoftmaxCrossEntropyLoss(b, scores, labels, Output(), options, name);
}
Output NegativeLogLikelihoodLoss(GraphBuilder& b, Output input, Output target, Output weight,
                                 const SoftmaxCrossEntropyLossOptions& options, absl::string_view name) {
  AttrMap attrs;
  attrs["reduction"] = AttrValue::String(options.reduction);
  if (options.ignore_index) attrs["ignore_index"] = AttrValue::Int(*options.ignore_index);
  return b.Op1("NegativeLogLikelihoodLoss", TrimAbsent({input, target, weight}), std::move(attrs), name);
}

// ---- Shapes and layout ---------------------------------------------------------

Output Reshape(GraphBuilder& b, Output x, Output shape, bool allowzero, absl::string_view name) {
  AttrMap attrs;
  attrs["allowzero"] = IntFlag(allowzero);
  return b.Op1("Reshape", {x, shape}, std::move(attrs), name);
}
Output Reshape(GraphBuilder& b, Output x, const std::vector<int64_t>& shape, bool allowzero, absl::string_view name) {
  return Reshape(b, x, Const(b, shape), allowzero, name);
}

Output Transpose(GraphBuilder& b, Output x, const std::vector<int64_t>& perm, absl::string_view name) {
  AttrMap attrs;
  SetInts(attrs, "perm", perm);
  return b.Op1("Transpose", {x}, std::move(attrs), name);
}

Output Flatten(GraphBuilder& b, Output x, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  return b.Op1("Flatten", {x}, std::move(attrs), name);
}

Output Squeeze(GraphBuilder& b, Output x, Output axes, absl::string_view name) {
  return b.Op1("Squeeze", TrimAbsent({x, axes}), {}, name);
}
Output Squeeze(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, absl::string_view name) {
  return Squeeze(b, x, IntsOrAbsent(b, axes), name);
}
Output Unsqueeze(GraphBuilder& b, Output x, Output axes, absl::string_view name) {
  return b.Op1("Unsqueeze", {x, axes}, {}, name);
}
Output Unsqueeze(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, absl::string_view name) {
  return Unsqueeze(b, x, Const(b, axes), name);
}

Output Concat(GraphBuilder& b, const std::vector<Output>& inputs, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  return b.Op1("Concat", inputs, std::move(attrs), name);
}

std::vector<Output> Split(GraphBuilder& b, Output x, int64_t num_outputs, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  attrs["num_outputs"] = AttrValue::Int(num_outputs);
  std::vector<Output> outs = b.Op("Split", {x}, std::move(attrs), name);
  // After an error, still one (invalid) Output per requested part.
  if (num_outputs > 0 && outs.size() < static_cast<size_t>(num_outputs)) outs.resize(num_outputs);
  return outs;
}
std::vector<Output> Split(GraphBuilder& b, Output x, const std::vector<int64_t>& sizes, int64_t axis,
                          absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  std::vector<Output> outs = b.Op("Split", {x, Const(b, sizes)}, std::move(attrs), name);
  if (outs.size() < sizes.size()) outs.resize(sizes.size());
  return outs;
}

Output Slice(GraphBuilder& b, Output x, Output starts, Output ends, Output axes, Output steps, absl::string_view name) {
  return b.Op1("Slice", TrimAbsent({x, starts, ends, axes, steps}), {}, name);
}
Output Slice(GraphBuilder& b, Output x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
             const std::vector<int64_t>& axes, const std::vector<int64_t>& steps, absl::string_view name) {
  Output starts_t = Const(b, starts);
  Output ends_t = Const(b, ends);
  Output axes_t = IntsOrAbsent(b, axes);
  Output steps_t = IntsOrAbsent(b, steps);
  // Steps without axes: the axes slot must still be filled, with 0..n-1.
  if (!axes.empty() || steps.empty()) return Slice(b, x, starts_t, ends_t, axes_t, steps_t, name);
  std::vector<int64_t> all_axes(starts.size());
  for (size_t i = 0; i < all_axes.size(); ++i) all_axes[i] = static_cast<int64_t>(i);
  return Slice(b, x, starts_t, ends_t, Const(b, all_axes), steps_t, name);
}

Output Expand(GraphBuilder& b, Output x, Output shape, absl::string_view name) {
  return b.Op1("Expand", {x, shape}, {}, name);
}
Output Expand(GraphBuilder& b, Output x, const std::vector<int64_t>& shape, absl::string_view name) {
  return Expand(b, x, Const(b, shape), name);
}

Output Pad(GraphBuilder& b, Output x, const std::vector<int64_t>& pads, const PadOptions& options,
           absl::string_view name) {
  Output value = options.mode == "constant" && options.constant_value != 0.0
                     ? Scalar(b, options.constant_value, x.dtype())
                     : Output();
  return Pad(b, x, Const(b, pads), value, IntsOrAbsent(b, options.axes), options.mode, name);
}
Output Pad(GraphBuilder& b, Output x, Output pads, Output constant_value, Output axes, absl::string_view mode,
           absl::string_view name) {
  AttrMap attrs;
  attrs["mode"] = AttrValue::String(std::string(mode));
  return b.Op1("Pad", TrimAbsent({x, pads, constant_value, axes}), std::move(attrs), name);
}

Output Tile(GraphBuilder& b, Output x, Output repeats, absl::string_view name) {
  return b.Op1("Tile", {x, repeats}, {}, name);
}
Output Tile(GraphBuilder& b, Output x, const std::vector<int64_t>& repeats, absl::string_view name) {
  return Tile(b, x, Const(b, repeats), name);
}

Output Shape(GraphBuilder& b, Output x, std::optional<int64_t> start, std::optional<int64_t> end,
             absl::string_view name) {
  AttrMap attrs;
  if (start) attrs["start"] = AttrValue::Int(*start);
  if (end) attrs["end"] = AttrValue::Int(*end);
  return b.Op1("Shape", {x}, std::move(attrs), name);
}

Output Range(GraphBuilder& b, Output start, Output limit, Output delta, absl::string_view name) {
  return b.Op1("Range", {start, limit, delta}, {}, name);
}
Output Range(GraphBuilder& b, int64_t start, int64_t limit, int64_t delta, absl::string_view name) {
  return Range(b, Scalar(b, start), Scalar(b, limit), Scalar(b, delta), name);
}

Output Size(GraphBuilder& b, Output x, absl::string_view name) { return b.Op1("Size", {x}, {}, name); }

Output Trilu(GraphBuilder& b, Output x, Output k, bool upper, absl::string_view name) {
  AttrMap attrs;
  attrs["upper"] = IntFlag(upper);
  return b.Op1("Trilu", TrimAbsent({x, k}), std::move(attrs), name);
}
Output Trilu(GraphBuilder& b, Output x, int64_t k, bool upper, absl::string_view name) {
  return Trilu(b, x, k == 0 ? Output() : Scalar(b, k), upper, name);
}

Output DepthToSpace(GraphBuilder& b, Output x, int64_t blocksize, absl::string_view mode, absl::string_view name) {
  AttrMap attrs;
  attrs["blocksize"] = AttrValue::Int(blocksize);
  attrs["mode"] = AttrValue::String(std::string(mode));
  return b.Op1("DepthToSpace", {x}, std::move(attrs), name);
}
Output SpaceToDepth(GraphBuilder& b, Output x, int64_t blocksize, absl::string_view name) {
  AttrMap attrs;
  attrs["blocksize"] = AttrValue::Int(blocksize);
  return b.Op1("SpaceToDepth", {x}, std::move(attrs), name);
}

Output ReverseSequence(GraphBuilder& b, Output x, Output sequence_lens, int64_t time_axis, int64_t batch_axis,
                       absl::string_view name) {
  AttrMap attrs;
  attrs["time_axis"] = AttrValue::Int(time_axis);
  attrs["batch_axis"] = AttrValue::Int(batch_axis);
  return b.Op1("ReverseSequence", {x, sequence_lens}, std::move(attrs), name);
}

Output Resize(GraphBuilder& b, Output x, Output roi, Output scales, Output sizes, const ResizeOptions& options,
              absl::string_view name) {
  AttrMap attrs;
  attrs["mode"] = AttrValue::String(options.mode);
  attrs["coordinate_transformation_mode"] = AttrValue::String(options.coordinate_transformation_mode);
  attrs["nearest_mode"] = AttrValue::String(options.nearest_mode);
  attrs["cubic_coeff_a"] = AttrValue::Float(options.cubic_coeff_a);
  attrs["exclude_outside"] = IntFlag(options.exclude_outside);
  attrs["extrapolation_value"] = AttrValue::Float(options.extrapolation_value);
  return b.Op1("Resize", TrimAbsent({x, roi, scales, sizes}), std::move(attrs), name);
}
Output Resize(GraphBuilder& b, Output x, const std::vector<float>& scales, const ResizeOptions& options,
              absl::string_view name) {
  const int64_t n = static_cast<int64_t>(scales.size());
  return Resize(b, x, Output(), Const(b, Tensor::FromVector<float>(tsr::Shape{n}, scales)), Output(), options, name);
}
Output ResizeToSizes(GraphBuilder& b, Output x, const std::vector<int64_t>& sizes, const ResizeOptions& options,
                     absl::string_view name) {
  return Resize(b, x, Output(), Output(), Const(b, sizes), options, name);
}

// ---- Indexing ------------------------------------------------------------------

Output Gather(GraphBuilder& b, Output data, Output indices, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  return b.Op1("Gather", {data, indices}, std::move(attrs), name);
}
Output GatherElements(GraphBuilder& b, Output data, Output indices, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  return b.Op1("GatherElements", {data, indices}, std::move(attrs), name);
}
Output ScatterElements(GraphBuilder& b, Output data, Output indices, Output updates, int64_t axis,
                       absl::string_view reduction, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  attrs["reduction"] = AttrValue::String(std::string(reduction));
  return b.Op1("ScatterElements", {data, indices, updates}, std::move(attrs), name);
}
Output OneHot(GraphBuilder& b, Output indices, Output depth, Output values, int64_t axis, absl::string_view name) {
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(axis);
  return b.Op1("OneHot", {indices, depth, values}, std::move(attrs), name);
}
Output OneHot(GraphBuilder& b, Output indices, int64_t depth, const OneHotOptions& options, absl::string_view name) {
  if (!b.ok()) return Output();
  absl::StatusOr<Tensor> values =
      Converted(options.dtype, tsr::Shape({2}), {options.off_value, options.on_value}, /*fill=*/false);
  if (!values.ok()) {
    b.RecordError(absl::Status(values.status().code(), absl::StrCat("ops::OneHot in scope '", b.scope_prefix(),
                                                                    "': ", values.status().message())));
    return Output();
  }
  return OneHot(b, indices, Scalar(b, depth), Const(b, *std::move(values)), options.axis, name);
}

Output GatherND(GraphBuilder& b, Output data, Output indices, int64_t batch_dims, absl::string_view name) {
  AttrMap attrs;
  attrs["batch_dims"] = AttrValue::Int(batch_dims);
  return b.Op1("GatherND", {data, indices}, std::move(attrs), name);
}
Output ScatterND(GraphBuilder& b, Output data, Output indices, Output updates, absl::string_view reduction,
                 absl::string_view name) {
  AttrMap attrs;
  attrs["reduction"] = AttrValue::String(std::string(reduction));
  return b.Op1("ScatterND", {data, indices, updates}, std::move(attrs), name);
}
Output Compress(GraphBuilder& b, Output x, Output condition, std::optional<int64_t> axis, absl::string_view name) {
  AttrMap attrs;
  if (axis.has_value()) attrs["axis"] = AttrValue::Int(*axis);
  return b.Op1("Compress", {x, condition}, std::move(attrs), name);
}
Output NonZero(GraphBuilder& b, Output x, absl::string_view name) { return b.Op1("NonZero", {x}, {}, name); }

}  // namespace tsr::ops
