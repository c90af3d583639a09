// Typed helpers for every built-in op, in namespace tsr::ops: one function per op
// (a thin layer over GraphBuilder::Op that spells out inputs and attributes), with an
// options struct where an op has several attributes, and overloads that take
// std::vector<int64_t> for shape-like inputs (they create the Constant node):
//
//   Output y = ops::Conv(b, x, w, {.strides = {2, 2}, .pads = {1, 1, 1, 1}});
//   Output z = ops::Reshape(b, y, {-1, 784});
//   Output m = ops::ReduceMean(b, z, {1}, /*keepdims=*/false);
//
// Semantics are ONNX's (latest opset), as registered in graph/ops/. Every helper
// takes an optional node `name` last (see GraphBuilder for naming and errors).
// Boolean options map to the ONNX int attributes (keepdims, transA, ...).
#ifndef TESSERA_GRAPH_BUILDER_OPS_H_
#define TESSERA_GRAPH_BUILDER_OPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/builder/graph_builder.h"
#include "graph/tensor.h"

namespace tsr::ops {

// ---- Sources -------------------------------------------------------------------

Output Const(GraphBuilder& b, Tensor value, absl::string_view name = {});
// A 1-D i64 constant: the form of shape-like inputs (shapes, axes, pads, ...).
Output Const(GraphBuilder& b, const std::vector<int64_t>& values, absl::string_view name = {});
// A scalar of `value`'s C++ type: Scalar(b, 1.0f) is f32, Scalar(b, int64_t{3}) is i64.
template <typename T>
Output Scalar(GraphBuilder& b, T value, absl::string_view name = {}) {
  return Const(b, Tensor::Scalar<T>(value), name);
}
// A scalar of `dtype` holding `value` (converted), e.g. to match another tensor's dtype.
Output Scalar(GraphBuilder& b, double value, DType dtype, absl::string_view name = {});
// A tensor of `dtype` and static `shape` holding `values` (converted; one per
// element, in row-major order).
Output Const(GraphBuilder& b, DType dtype, const tsr::Shape& shape, const std::vector<double>& values,
             absl::string_view name = {});
// A tensor of `dtype` and static `shape` with every element `value`.
Output Fill(GraphBuilder& b, DType dtype, const tsr::Shape& shape, double value, absl::string_view name = {});

// A Placeholder that is not part of the signature (GraphBuilder::Input adds one that is).
Output Placeholder(GraphBuilder& b, DType dtype, tsr::Shape shape, absl::string_view name = {});

// Variable attributes (see graph/ops/source_ops.cc for the initializers). Unset
// optional fields keep the op's defaults.
struct VariableOptions {
  std::string initializer = "zeros";
  bool trainable = true;
  std::optional<double> init_value;   // "constant"
  std::optional<double> init_min;     // "uniform"
  std::optional<double> init_max;     // "uniform"
  std::optional<double> init_mean;    // "normal", "truncated_normal"
  std::optional<double> init_stddev;  // "normal", "truncated_normal"
  std::optional<int64_t> seed;
  std::optional<Tensor> value;  // overrides the initializer
};
// A Variable; `name` is required because checkpoints and optimizers refer to it.
Output Variable(GraphBuilder& b, absl::string_view name, DType dtype, tsr::Shape shape,
                const VariableOptions& options = {});

Output Identity(GraphBuilder& b, Output x, absl::string_view name = {});
// Gives `variable` (a Variable's output) the value `value` when the node runs (as a
// Session::Run target); returns the new value.
Output Assign(GraphBuilder& b, Output variable, Output value, absl::string_view name = {});

// A tensor of the constant 1-D i64 `shape` filled with the one-element `value`
// (f32 0 when absent).
Output ConstantOfShape(GraphBuilder& b, Output shape, std::optional<Tensor> value = std::nullopt,
                       absl::string_view name = {});
Output ConstantOfShape(GraphBuilder& b, const std::vector<int64_t>& shape, double value = 0.0,
                       DType dtype = DType::kF32, absl::string_view name = {});
// Ones on diagonal k of a 2-D tensor shaped like x; dtype defaults to x's.
Output EyeLike(GraphBuilder& b, Output x, std::optional<DType> dtype = std::nullopt, int64_t k = 0,
               absl::string_view name = {});

// ---- Elementwise ---------------------------------------------------------------

Output Add(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Sub(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Mul(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Div(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Pow(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Neg(GraphBuilder& b, Output x, absl::string_view name = {});
Output Abs(GraphBuilder& b, Output x, absl::string_view name = {});
Output Exp(GraphBuilder& b, Output x, absl::string_view name = {});
Output Log(GraphBuilder& b, Output x, absl::string_view name = {});
Output Sqrt(GraphBuilder& b, Output x, absl::string_view name = {});
Output Rsqrt(GraphBuilder& b, Output x, absl::string_view name = {});
Output Reciprocal(GraphBuilder& b, Output x, absl::string_view name = {});
Output Max(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Max(GraphBuilder& b, const std::vector<Output>& inputs, absl::string_view name = {});
Output Min(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Min(GraphBuilder& b, const std::vector<Output>& inputs, absl::string_view name = {});
Output Equal(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Less(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Greater(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Where(GraphBuilder& b, Output condition, Output x, Output y, absl::string_view name = {});
Output Cast(GraphBuilder& b, Output x, DType to, absl::string_view name = {});
// Either bound may be a default Output() (absent).
Output Clip(GraphBuilder& b, Output x, Output min, Output max, absl::string_view name = {});
// Bounds as scalars of x's dtype.
Output Clip(GraphBuilder& b, Output x, double min, double max, absl::string_view name = {});
// fmod: the remainder takes the sign of x (C fmod; required for floats) instead of y's.
Output Mod(GraphBuilder& b, Output x, Output y, bool fmod = false, absl::string_view name = {});
// direction: "LEFT" or "RIGHT".
Output BitShift(GraphBuilder& b, Output x, Output y, absl::string_view direction, absl::string_view name = {});
Output GreaterOrEqual(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output LessOrEqual(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output And(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Or(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Xor(GraphBuilder& b, Output x, Output y, absl::string_view name = {});
Output Not(GraphBuilder& b, Output x, absl::string_view name = {});
Output Sin(GraphBuilder& b, Output x, absl::string_view name = {});
Output Cos(GraphBuilder& b, Output x, absl::string_view name = {});
Output Tan(GraphBuilder& b, Output x, absl::string_view name = {});
Output Asin(GraphBuilder& b, Output x, absl::string_view name = {});
Output Acos(GraphBuilder& b, Output x, absl::string_view name = {});
Output Atan(GraphBuilder& b, Output x, absl::string_view name = {});
Output Sinh(GraphBuilder& b, Output x, absl::string_view name = {});
Output Cosh(GraphBuilder& b, Output x, absl::string_view name = {});
Output Asinh(GraphBuilder& b, Output x, absl::string_view name = {});
Output Acosh(GraphBuilder& b, Output x, absl::string_view name = {});
Output Atanh(GraphBuilder& b, Output x, absl::string_view name = {});
Output Floor(GraphBuilder& b, Output x, absl::string_view name = {});
Output Ceil(GraphBuilder& b, Output x, absl::string_view name = {});
// Halves round to even.
Output Round(GraphBuilder& b, Output x, absl::string_view name = {});
Output Sign(GraphBuilder& b, Output x, absl::string_view name = {});
Output IsNaN(GraphBuilder& b, Output x, absl::string_view name = {});
Output IsInf(GraphBuilder& b, Output x, bool detect_negative = true, bool detect_positive = true,
             absl::string_view name = {});

// ---- Activations ---------------------------------------------------------------

Output Relu(GraphBuilder& b, Output x, absl::string_view name = {});
Output LeakyRelu(GraphBuilder& b, Output x, double alpha = 0.01, absl::string_view name = {});
// approximate: "none" (erf) or "tanh".
Output Gelu(GraphBuilder& b, Output x, absl::string_view approximate = "none", absl::string_view name = {});
Output Sigmoid(GraphBuilder& b, Output x, absl::string_view name = {});
Output Tanh(GraphBuilder& b, Output x, absl::string_view name = {});
Output Erf(GraphBuilder& b, Output x, absl::string_view name = {});
Output Softplus(GraphBuilder& b, Output x, absl::string_view name = {});
Output Silu(GraphBuilder& b, Output x, absl::string_view name = {});
// slope broadcasts to x's shape.
Output PRelu(GraphBuilder& b, Output x, Output slope, absl::string_view name = {});
Output Elu(GraphBuilder& b, Output x, double alpha = 1.0, absl::string_view name = {});
// The defaults are ONNX's.
Output Selu(GraphBuilder& b, Output x, double alpha = 1.67326319217681884765625,
            double gamma = 1.05070102214813232421875, absl::string_view name = {});
Output Celu(GraphBuilder& b, Output x, double alpha = 1.0, absl::string_view name = {});
Output HardSigmoid(GraphBuilder& b, Output x, double alpha = 0.2, double beta = 0.5, absl::string_view name = {});
Output HardSwish(GraphBuilder& b, Output x, absl::string_view name = {});
Output Softsign(GraphBuilder& b, Output x, absl::string_view name = {});
Output ThresholdedRelu(GraphBuilder& b, Output x, double alpha = 1.0, absl::string_view name = {});
Output Shrink(GraphBuilder& b, Output x, double lambd = 0.5, double bias = 0.0, absl::string_view name = {});

// ---- Reductions ----------------------------------------------------------------
// `axes` as a tensor, or as values (empty: reduce over all axes).

Output ReduceSum(GraphBuilder& b, Output x, Output axes, bool keepdims = true, absl::string_view name = {});
Output ReduceSum(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                 absl::string_view name = {});
Output ReduceMean(GraphBuilder& b, Output x, Output axes, bool keepdims = true, absl::string_view name = {});
Output ReduceMean(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                  absl::string_view name = {});
Output ReduceMax(GraphBuilder& b, Output x, Output axes, bool keepdims = true, absl::string_view name = {});
Output ReduceMax(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                 absl::string_view name = {});
Output ReduceMin(GraphBuilder& b, Output x, Output axes, bool keepdims = true, absl::string_view name = {});
Output ReduceMin(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                 absl::string_view name = {});
Output ReduceProd(GraphBuilder& b, Output x, Output axes, bool keepdims = true, absl::string_view name = {});
Output ReduceProd(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                  absl::string_view name = {});
Output ReduceL2(GraphBuilder& b, Output x, Output axes, bool keepdims = true, absl::string_view name = {});
Output ReduceL2(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                absl::string_view name = {});

struct ArgMaxOptions {
  int64_t axis = 0;
  bool keepdims = true;
  bool select_last_index = false;
};
Output ArgMax(GraphBuilder& b, Output x, const ArgMaxOptions& options = {}, absl::string_view name = {});
Output ReduceL1(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                absl::string_view name = {});
Output ReduceSumSquare(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                       absl::string_view name = {});
Output ReduceLogSum(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                    absl::string_view name = {});
Output ReduceLogSumExp(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, bool keepdims = true,
                       absl::string_view name = {});
// The same options select the minimum's index.
Output ArgMin(GraphBuilder& b, Output x, const ArgMaxOptions& options = {}, absl::string_view name = {});

struct CumSumOptions {
  bool exclusive = false;
  bool reverse = false;
};
// Running sum of x along `axis`.
Output CumSum(GraphBuilder& b, Output x, int64_t axis, const CumSumOptions& options = {}, absl::string_view name = {});

struct TopKOptions {
  int64_t axis = -1;
  bool largest = true;
  bool sorted = true;
};
// {Values, Indices (i64)} of the k largest (or smallest) elements along the axis.
std::vector<Output> TopK(GraphBuilder& b, Output x, int64_t k, const TopKOptions& options = {},
                         absl::string_view name = {});
// Sum of products over the labels `equation` leaves out ("ij,jk->ik", "bii->bi").
Output Einsum(GraphBuilder& b, const std::vector<Output>& inputs, absl::string_view equation,
              absl::string_view name = {});

// ---- Dropout -------------------------------------------------------------------

struct DropoutOptions {
  double ratio = 0.5;
  // Without training the op is the identity.
  bool training = false;
  // A bool scalar deciding at run time (e.g. nn::TrainingFlag); replaces `training`.
  Output training_mode;
  std::optional<int64_t> seed;
};
// The dropped-out tensor (the op's mask output stays unused).
Output Dropout(GraphBuilder& b, Output x, const DropoutOptions& options = {}, absl::string_view name = {});

// ---- Matrix products and convolutions ------------------------------------------

Output MatMul(GraphBuilder& b, Output a, Output w, absl::string_view name = {});

struct GemmOptions {
  double alpha = 1.0;
  double beta = 1.0;
  bool trans_a = false;
  bool trans_b = false;
};
// alpha * op(a) @ op(w) + beta * c.
Output Gemm(GraphBuilder& b, Output a, Output w, Output c, const GemmOptions& options = {},
            absl::string_view name = {});
Output Gemm(GraphBuilder& b, Output a, Output w, const GemmOptions& options = {}, absl::string_view name = {});

// Empty lists keep the op's defaults (kernel from W, unit strides and dilations, no padding).
struct ConvOptions {
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;  // [begin..., end...]
  std::vector<int64_t> dilations;
  std::vector<int64_t> kernel_shape;
  int64_t group = 1;
  std::string auto_pad = "NOTSET";  // or SAME_UPPER, SAME_LOWER, VALID
};
Output Conv(GraphBuilder& b, Output x, Output w, const ConvOptions& options = {}, absl::string_view name = {});
Output Conv(GraphBuilder& b, Output x, Output w, Output bias, const ConvOptions& options = {},
            absl::string_view name = {});

struct ConvTransposeOptions {
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;
  std::vector<int64_t> dilations;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> output_padding;
  std::vector<int64_t> output_shape;
  int64_t group = 1;
  std::string auto_pad = "NOTSET";
};
Output ConvTranspose(GraphBuilder& b, Output x, Output w, const ConvTransposeOptions& options = {},
                     absl::string_view name = {});
Output ConvTranspose(GraphBuilder& b, Output x, Output w, Output bias, const ConvTransposeOptions& options = {},
                     absl::string_view name = {});

// ---- Pooling -------------------------------------------------------------------

struct PoolOptions {
  std::vector<int64_t> kernel_shape;  // required
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;
  std::vector<int64_t> dilations;
  bool ceil_mode = false;
  bool count_include_pad = false;  // AveragePool only
  std::string auto_pad = "NOTSET";
};
Output MaxPool(GraphBuilder& b, Output x, const PoolOptions& options, absl::string_view name = {});
Output AveragePool(GraphBuilder& b, Output x, const PoolOptions& options, absl::string_view name = {});
Output GlobalAveragePool(GraphBuilder& b, Output x, absl::string_view name = {});

// ---- Normalization -------------------------------------------------------------

struct BatchNormalizationOptions {
  double epsilon = 1e-5;
  double momentum = 0.9;
};
// Inference form: normalizes with the given running mean and variance.
Output BatchNormalization(GraphBuilder& b, Output x, Output scale, Output bias, Output mean, Output variance,
                          const BatchNormalizationOptions& options = {}, absl::string_view name = {});
// Training form: normalizes with the batch statistics; returns {Y, running_mean,
// running_var} with running = input * momentum + batch * (1 - momentum).
std::vector<Output> BatchNormalizationTraining(GraphBuilder& b, Output x, Output scale, Output bias, Output mean,
                                               Output variance, const BatchNormalizationOptions& options = {},
                                               absl::string_view name = {});

struct LayerNormalizationOptions {
  int64_t axis = -1;
  double epsilon = 1e-5;
};
// `bias` may be a default Output() (absent).
Output LayerNormalization(GraphBuilder& b, Output x, Output scale, Output bias,
                          const LayerNormalizationOptions& options = {}, absl::string_view name = {});
Output Softmax(GraphBuilder& b, Output x, int64_t axis = -1, absl::string_view name = {});
Output LogSoftmax(GraphBuilder& b, Output x, int64_t axis = -1, absl::string_view name = {});
Output Hardmax(GraphBuilder& b, Output x, int64_t axis = -1, absl::string_view name = {});
// Per sample and channel of [N, C, D...]; `scale` and `bias` are [C].
Output InstanceNormalization(GraphBuilder& b, Output x, Output scale, Output bias, double epsilon = 1e-5,
                             absl::string_view name = {});
// (x - mean) / (std + 1e-9) over `axes`.
Output MeanVarianceNormalization(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {0, 2, 3},
                                 absl::string_view name = {});
struct LRNOptions {
  double alpha = 1e-4;
  double beta = 0.75;
  double bias = 1.0;
};
Output LRN(GraphBuilder& b, Output x, int64_t size, const LRNOptions& options = {}, absl::string_view name = {});

// ---- Losses --------------------------------------------------------------------

struct SoftmaxCrossEntropyLossOptions {
  std::string reduction = "mean";  // or "sum", "none"
  std::optional<int64_t> ignore_index;
};
// `weights` may be a default Output() (absent).
Output SoftmaxCrossEntropyLoss(GraphBuilder& b, Output scores, Output labels, Output weights,
                               const SoftmaxCrossEntropyLossOptions& options = {}, absl::string_view name = {});
Output SoftmaxCrossEntropyLoss(GraphBuilder& b, Output scores, Output labels,
                               const SoftmaxCrossEntropyLossOptions& options = {}, absl::string_view name = {});
// `input` holds log-probabilities [N, C, D1...]; `weight` may be a default Output() (absent).
Output NegativeLogLikelihoodLoss(GraphBuilder& b, Output input, Output target, Output weight,
                                 const SoftmaxCrossEntropyLossOptions& options = {}, absl::string_view name = {});

// ---- Shapes and layout ---------------------------------------------------------

// `shape` may hold -1 (inferred) and 0 (copied from the input unless allowzero).
Output Reshape(GraphBuilder& b, Output x, Output shape, bool allowzero = false, absl::string_view name = {});
Output Reshape(GraphBuilder& b, Output x, const std::vector<int64_t>& shape, bool allowzero = false,
               absl::string_view name = {});
// Empty `perm` reverses the axes.
Output Transpose(GraphBuilder& b, Output x, const std::vector<int64_t>& perm = {}, absl::string_view name = {});
Output Flatten(GraphBuilder& b, Output x, int64_t axis = 1, absl::string_view name = {});
// Empty `axes` removes every dimension of size 1.
Output Squeeze(GraphBuilder& b, Output x, Output axes, absl::string_view name = {});
Output Squeeze(GraphBuilder& b, Output x, const std::vector<int64_t>& axes = {}, absl::string_view name = {});
Output Unsqueeze(GraphBuilder& b, Output x, Output axes, absl::string_view name = {});
Output Unsqueeze(GraphBuilder& b, Output x, const std::vector<int64_t>& axes, absl::string_view name = {});
Output Concat(GraphBuilder& b, const std::vector<Output>& inputs, int64_t axis, absl::string_view name = {});
// Into `num_outputs` equal parts (the last may be smaller), or into parts of the given sizes.
std::vector<Output> Split(GraphBuilder& b, Output x, int64_t num_outputs, int64_t axis = 0,
                          absl::string_view name = {});
std::vector<Output> Split(GraphBuilder& b, Output x, const std::vector<int64_t>& sizes, int64_t axis = 0,
                          absl::string_view name = {});
// `axes` and `steps` may be default Outputs (absent).
Output Slice(GraphBuilder& b, Output x, Output starts, Output ends, Output axes = {}, Output steps = {},
             absl::string_view name = {});
// Empty `axes` means 0..n-1; empty `steps` means all 1.
Output Slice(GraphBuilder& b, Output x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
             const std::vector<int64_t>& axes = {}, const std::vector<int64_t>& steps = {},
             absl::string_view name = {});
Output Expand(GraphBuilder& b, Output x, Output shape, absl::string_view name = {});
Output Expand(GraphBuilder& b, Output x, const std::vector<int64_t>& shape, absl::string_view name = {});

struct PadOptions {
  std::string mode = "constant";  // or "reflect", "edge", "wrap"
  double constant_value = 0.0;    // "constant" mode, as x's dtype
  std::vector<int64_t> axes;      // empty: all axes
};
// `pads` = [begin per axis..., end per axis...].
Output Pad(GraphBuilder& b, Output x, const std::vector<int64_t>& pads, const PadOptions& options = {},
           absl::string_view name = {});
// The general form: any of constant_value and axes may be a default Output() (absent).
Output Pad(GraphBuilder& b, Output x, Output pads, Output constant_value, Output axes, absl::string_view mode,
           absl::string_view name = {});
Output Tile(GraphBuilder& b, Output x, Output repeats, absl::string_view name = {});
Output Tile(GraphBuilder& b, Output x, const std::vector<int64_t>& repeats, absl::string_view name = {});
// The shape of x as a 1-D i64 tensor, optionally dims [start, end).
Output Shape(GraphBuilder& b, Output x, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, absl::string_view name = {});
Output Range(GraphBuilder& b, Output start, Output limit, Output delta, absl::string_view name = {});
// i64 scalars.
Output Range(GraphBuilder& b, int64_t start, int64_t limit, int64_t delta = 1, absl::string_view name = {});

// The number of elements of x as an i64 scalar.
Output Size(GraphBuilder& b, Output x, absl::string_view name = {});
// The upper (j - i >= k) or lower (j - i <= k) triangle of the last two axes; `k` is
// an i64 scalar or a default Output (0).
Output Trilu(GraphBuilder& b, Output x, Output k, bool upper = true, absl::string_view name = {});
Output Trilu(GraphBuilder& b, Output x, int64_t k = 0, bool upper = true, absl::string_view name = {});
// mode "DCR" or "CRD".
Output DepthToSpace(GraphBuilder& b, Output x, int64_t blocksize, absl::string_view mode = "DCR",
                    absl::string_view name = {});
Output SpaceToDepth(GraphBuilder& b, Output x, int64_t blocksize, absl::string_view name = {});
Output ReverseSequence(GraphBuilder& b, Output x, Output sequence_lens, int64_t time_axis = 0, int64_t batch_axis = 1,
                       absl::string_view name = {});
struct ResizeOptions {
  std::string mode = "nearest";  // or "linear", "cubic"
  std::string coordinate_transformation_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
};
// Exactly one of `scales` (f32) and `sizes` (i64) is given (the other a default
// Output); `roi` only for tf_crop_and_resize.
Output Resize(GraphBuilder& b, Output x, Output roi, Output scales, Output sizes, const ResizeOptions& options = {},
              absl::string_view name = {});
Output Resize(GraphBuilder& b, Output x, const std::vector<float>& scales, const ResizeOptions& options = {},
              absl::string_view name = {});
Output ResizeToSizes(GraphBuilder& b, Output x, const std::vector<int64_t>& sizes, const ResizeOptions& options = {},
                     absl::string_view name = {});

// ---- Indexing ------------------------------------------------------------------

Output Gather(GraphBuilder& b, Output data, Output indices, int64_t axis = 0, absl::string_view name = {});
Output GatherElements(GraphBuilder& b, Output data, Output indices, int64_t axis = 0, absl::string_view name = {});
// reduction: "none", "add", "mul", "max" or "min".
Output ScatterElements(GraphBuilder& b, Output data, Output indices, Output updates, int64_t axis = 0,
                       absl::string_view reduction = "none", absl::string_view name = {});
// `values` = [off_value, on_value].
Output OneHot(GraphBuilder& b, Output indices, Output depth, Output values, int64_t axis = -1,
              absl::string_view name = {});
struct OneHotOptions {
  double on_value = 1.0;
  double off_value = 0.0;
  DType dtype = DType::kF32;
  int64_t axis = -1;
};
Output OneHot(GraphBuilder& b, Output indices, int64_t depth, const OneHotOptions& options = {},
              absl::string_view name = {});

// Slices of data addressed by the index tuples in the last axis of `indices` (i64).
Output GatherND(GraphBuilder& b, Output data, Output indices, int64_t batch_dims = 0, absl::string_view name = {});
// reduction: "none", "add", "mul", "max" or "min".
Output ScatterND(GraphBuilder& b, Output data, Output indices, Output updates, absl::string_view reduction = "none",
                 absl::string_view name = {});
// `condition` (bool, 1-D) must be a constant; without `axis` x is flattened.
Output Compress(GraphBuilder& b, Output x, Output condition, std::optional<int64_t> axis = std::nullopt,
                absl::string_view name = {});
// [rank, count] i64 coordinates of the nonzero elements of x, which must be a constant.
Output NonZero(GraphBuilder& b, Output x, absl::string_view name = {});

}  // namespace tsr::ops

#endif  // TESSERA_GRAPH_BUILDER_OPS_H_
