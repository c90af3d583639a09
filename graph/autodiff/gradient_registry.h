// Attaching gradient functions to the registry's ops, one function per family (one
// file each); RegisterBuiltinGradients (gradients.h) calls them all.
#ifndef TESSERA_GRAPH_AUTODIFF_GRADIENT_REGISTRY_H_
#define TESSERA_GRAPH_AUTODIFF_GRADIENT_REGISTRY_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/op_def.h"
#include "graph/op_registry.h"

namespace tsr {

// Sets `op`'s gradient function; NotFound when the registry has no such op.
absl::Status SetGradient(OpRegistry& registry, absl::string_view op, GradientFn fn);

// Identity, Add, Sub, Mul, Div, Pow, Mod, Neg, Abs, Exp, Log, Sqrt, Rsqrt, Reciprocal,
// Max, Min, Where, Clip, Cast.
absl::Status RegisterElementwiseGradients(OpRegistry& registry);
// Relu, LeakyRelu, PRelu, Sigmoid, Tanh, Erf, Softplus, Silu, Gelu, Elu, Selu, Celu,
// HardSigmoid, HardSwish, Softsign, ThresholdedRelu, Shrink.
absl::Status RegisterActivationGradients(OpRegistry& registry);
// Sin ... Atanh (math_ops.cc); Floor, Ceil, Round, Sign (zero).
absl::Status RegisterMathGradients(OpRegistry& registry);
// MatMul, Gemm.
absl::Status RegisterMatMulGradients(OpRegistry& registry);
// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL2, ReduceProd.
absl::Status RegisterReductionGradients(OpRegistry& registry);
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Concat.
absl::Status RegisterShapeGradients(OpRegistry& registry);
// Softmax, LogSoftmax, SoftmaxCrossEntropyLoss.
absl::Status RegisterSoftmaxGradients(OpRegistry& registry);
// Conv (filter gradient through ConvGradFilter, input gradient through ConvTranspose)
// and ConvTranspose (input gradient through Conv, filter gradient through ConvGradFilter).
absl::Status RegisterConvGradients(OpRegistry& registry);
// MaxPool, AveragePool, GlobalAveragePool.
absl::Status RegisterPoolGradients(OpRegistry& registry);
// BatchNormalization (training and inference forms), LayerNormalization.
absl::Status RegisterNormalizationGradients(OpRegistry& registry);
// Gather, Slice, Pad (every mode), Tile, GatherElements, ScatterElements ('none', 'add').
absl::Status RegisterIndexingGradients(OpRegistry& registry);
// Dropout.
absl::Status RegisterRandomGradients(OpRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_GRAPH_AUTODIFF_GRADIENT_REGISTRY_H_
