// Registration of the built-in op set, one function per family (one file each).
#ifndef TESSERA_GRAPH_OPS_REGISTER_OPS_H_
#define TESSERA_GRAPH_OPS_REGISTER_OPS_H_

#include "absl/status/status.h"

namespace tsr {

class OpRegistry;

// Registers every family below.
absl::Status RegisterBuiltinOps(OpRegistry& registry);

// Constant, Identity, Placeholder, Variable, ConstantOfShape, EyeLike.
absl::Status RegisterSourceOps(OpRegistry& registry);
// Add, Sub, Mul, Div, Pow, Neg, Abs, Exp, Log, Sqrt, Rsqrt, Reciprocal, Max, Min,
// Equal, Less, Greater, Where, Cast, Clip.
absl::Status RegisterElementwiseOps(OpRegistry& registry);
// Relu, LeakyRelu, Gelu, Sigmoid, Tanh, Erf, Softplus, Silu.
absl::Status RegisterActivationOps(OpRegistry& registry);
// Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Floor, Ceil, Round, Sign, IsNaN, IsInf, Not.
absl::Status RegisterMathOps(OpRegistry& registry);
// ReduceSum/Mean/Max/Min/Prod/L2, ArgMax.
absl::Status RegisterReductionOps(OpRegistry& registry);
// Dropout.
absl::Status RegisterRandomOps(OpRegistry& registry);
// MatMul, Gemm.
absl::Status RegisterMatMulOps(OpRegistry& registry);
// Conv, ConvTranspose.
absl::Status RegisterConvOps(OpRegistry& registry);
// MaxPool, AveragePool, GlobalAveragePool.
absl::Status RegisterPoolOps(OpRegistry& registry);
// BatchNormalization, LayerNormalization, Softmax, LogSoftmax.
absl::Status RegisterNormalizationOps(OpRegistry& registry);
// SoftmaxCrossEntropyLoss.
absl::Status RegisterLossOps(OpRegistry& registry);
absl::Status RegisterEinsumOps(OpRegistry& registry);  // Einsum
// Reshape, Transpose, Flatten, Squeeze, Unsqueeze, Concat, Split, Slice, Expand,
// Pad, Tile, Shape, Size, Range, Trilu, DepthToSpace, SpaceToDepth, ReverseSequence.
absl::Status RegisterShapeOps(OpRegistry& registry);
// Gather, GatherElements, ScatterElements, OneHot, GatherND, ScatterND, Compress, NonZero.
absl::Status RegisterIndexingOps(OpRegistry& registry);
absl::Status RegisterResizeOps(OpRegistry& registry);  // Resize, ResizeGrad (resize_ops.cc)
// SGDUpdate, MomentumUpdate, AdamUpdate, RMSPropUpdate, Increment.
absl::Status RegisterOptimizerOps(OpRegistry& registry);
// ConvGradFilter, MaxPoolGrad, AveragePoolGrad, BatchNormalizationGrad,
// LayerNormalizationGrad, GatherGrad, SliceGrad (the backward ops autodiff emits).
absl::Status RegisterGradientOps(OpRegistry& registry);
absl::Status RegisterFusedOps(OpRegistry& registry);  // FusedConv, FusedMatMul (after Conv)
// MultiHeadAttention (attention_ops.cc)
absl::Status RegisterAttentionOps(OpRegistry& registry);
// BlockChannels, UnblockChannels, BlockedConv (blocked_ops.cc; after FusedConv)
absl::Status RegisterBlockedOps(OpRegistry& registry);
// AllReduce, AllGather, ReduceScatter: the partitioner's communication (collective_ops.cc).
absl::Status RegisterCollectiveOps(OpRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_REGISTER_OPS_H_
