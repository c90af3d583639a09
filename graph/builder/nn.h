// Layers in namespace tsr::nn, Keras-style: each layer opens its own name scope
// ("dense", "dense_1", ... unless `name` is given), creates its Variables there with
// named initializers ("dense/kernel", "dense/bias", "batch_normalization/gamma"), and
// builds its computation from the ops in graph/builder/ops.h.
//
//   Output h = nn::Dense(b, x, 256, {.activation = "relu"});         // [N,784] -> [N,256]
//   Output c = nn::Conv2D(b, img, 32, 3, {.padding = "same", .activation = "relu"});
//
// Images are NCHW (the ONNX layout): Conv2D's kernel is [filters, in/groups, kh, kw].
// Layer errors are recorded on the builder like op errors and name the layer.
#ifndef TESSERA_GRAPH_BUILDER_NN_H_
#define TESSERA_GRAPH_BUILDER_NN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/builder/graph_builder.h"

namespace tsr::nn {

// Applies an activation by name: "" or "linear" (none), "relu", "gelu", "gelu_tanh",
// "sigmoid", "tanh", "silu" (also "swish"), "softplus", "leaky_relu", "softmax" (last axis).
Output Activation(GraphBuilder& b, Output x, absl::string_view activation);

struct DenseOptions {
  std::string activation;  // see Activation(); empty: linear
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
  std::string name;  // empty: "dense", "dense_1", ...
};
// x @ kernel + bias over the last axis: [..., in] -> [..., units]; kernel [in, units].
Output Dense(GraphBuilder& b, Output x, int64_t units, const DenseOptions& options = {});

struct Conv2DOptions {
  std::vector<int64_t> strides = {1, 1};  // one value applies to both axes
  std::string padding = "valid";          // or "same" (output = ceil(input / stride))
  std::string activation;
  std::vector<int64_t> dilations = {1, 1};
  int64_t groups = 1;
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
  std::string name;  // empty: "conv2d", "conv2d_1", ...
};
// [N, C, H, W] -> [N, filters, H', W']; kernel_size holds (kh, kw) or one value for both.
Output Conv2D(GraphBuilder& b, Output x, int64_t filters, const std::vector<int64_t>& kernel_size,
              const Conv2DOptions& options = {});
Output Conv2D(GraphBuilder& b, Output x, int64_t filters, int64_t kernel_size, const Conv2DOptions& options = {});

struct BatchNormOptions {
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;  // learn an offset (beta)
  bool scale = true;   // learn a scale (gamma)
  // A bool scalar (TrainingFlag) deciding at run time: when true the layer normalizes
  // with the batch statistics and its "update_moving_mean"/"update_moving_variance"
  // Assign nodes (which a Trainer runs with every training step) blend them into the
  // moving ones; when false it uses the moving statistics. Unset: always the latter.
  Output training_mode;
  std::string name;  // empty: "batch_normalization", ...
};
// Normalizes over channel axis 1: gamma and beta are trainable [C] variables,
// moving_mean and moving_variance non-trainable ones (see training_mode).
Output BatchNorm(GraphBuilder& b, Output x, const BatchNormOptions& options = {});

struct LayerNormOptions {
  int64_t axis = -1;  // normalizes over [axis, rank)
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  std::string name;  // empty: "layer_normalization", ...
};
// gamma and beta have the shape of x's dims [axis, rank), which must be static.
Output LayerNorm(GraphBuilder& b, Output x, const LayerNormOptions& options = {});

struct MultiHeadAttentionOptions {
  bool causal = false;     // query i attends to keys 0..i only
  int64_t key_dim = 0;     // per head; 0: query features / num_heads
  int64_t value_dim = 0;   // per head; 0: key_dim
  int64_t output_dim = 0;  // 0: query features
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
  std::string name;  // empty: "multi_head_attention", ...
};
// query [N, Tq, Dq], key_value [N, Tk, Dkv] -> [N, Tq, output_dim]. Projections are
// Dense layers named "query", "key", "value" and "attention_output" inside the
// layer's scope; heads are split with Reshape/Transpose, scores are scaled by
// 1/sqrt(key_dim) and normalized with Softmax; the causal mask is an additive
// constant [Tq, Tk] (large negative above the diagonal).
Output MultiHeadAttention(GraphBuilder& b, Output query, Output key_value, int64_t num_heads,
                          const MultiHeadAttentionOptions& options = {});

struct Pool2DOptions {
  std::vector<int64_t> strides;   // empty: the pool size
  std::string padding = "valid";  // or "same"
  std::string name;               // node name; empty: the op name, made unique
};
// [N, C, H, W] -> [N, C, H', W']; pool_size holds (ph, pw) or one value for both.
Output MaxPool2D(GraphBuilder& b, Output x, const std::vector<int64_t>& pool_size, const Pool2DOptions& options = {});
Output MaxPool2D(GraphBuilder& b, Output x, int64_t pool_size, const Pool2DOptions& options = {});

// [N, d1, d2, ...] -> [N, d1 * d2 * ...].
Output Flatten(GraphBuilder& b, Output x, absl::string_view name = {});

// The name of the bool scalar Placeholder TrainingFlag adds.
inline constexpr char kTrainingFlagName[] = "training";
// A bool scalar Placeholder named "training" that layers behaving differently in
// training (Dropout) can take: the Trainer feeds true in training steps and false
// when it evaluates, so one graph serves both. Call it once per graph.
Output TrainingFlag(GraphBuilder& b);

struct DropoutOptions {
  // Without training the layer is the identity (an inference graph).
  bool training = false;
  // A bool scalar (TrainingFlag) deciding at run time; replaces `training` when set.
  Output training_mode;
  std::optional<int64_t> seed;
  std::string name;  // node name; empty: the op name, made unique
};
// Zeroes a fraction `rate` of the elements in training and scales the rest by 1/(1-rate).
Output Dropout(GraphBuilder& b, Output x, double rate, const DropoutOptions& options = {});

}  // namespace tsr::nn

#endif  // TESSERA_GRAPH_BUILDER_NN_H_
