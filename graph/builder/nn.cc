// The layers of graph/builder/nn.h.
#include "graph/builder/nn.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/builder/ops.h"

namespace tsr::nn {

namespace {

// Opens the layer's scope: `name` as given, else `default_name` made unique.
GraphBuilder::NameScope LayerScope(GraphBuilder& b, const std::string& name, absl::string_view default_name) {
  return name.empty() ? b.UniqueScope(default_name) : b.Scope(name);
}

// The current scope path without its trailing '/': the layer's name inside LayerScope.
std::string CurrentLayer(const GraphBuilder& b) {
  std::string prefix = b.scope_prefix();
  if (!prefix.empty()) prefix.pop_back();
  return prefix;
}

// Records "layer 'name' (Kind): message" and returns an invalid Output.
Output LayerError(GraphBuilder& b, absl::string_view kind, absl::string_view message) {
  b.RecordError(absl::InvalidArgumentError(absl::StrCat("layer '", CurrentLayer(b), "' (", kind, "): ", message)));
  return Output();
}

// (a, b) from {a, b} or {a}; nullopt otherwise or when a value is not positive.
std::optional<std::pair<int64_t, int64_t>> Pair(const std::vector<int64_t>& v) {
  if (v.size() != 1 && v.size() != 2) return std::nullopt;
  const int64_t first = v[0];
  const int64_t second = v.size() == 2 ? v[1] : v[0];
  if (first <= 0 || second <= 0) return std::nullopt;
  return std::make_pair(first, second);
}

std::string IntsToString(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }

// ONNX pads [h_begin, w_begin, h_end, w_end] that keep output = ceil(input / stride)
// ("same"); the odd pixel goes at the end, as in TensorFlow and SAME_UPPER.
absl::StatusOr<std::vector<int64_t>> SamePads(const Shape& x, std::pair<int64_t, int64_t> kernel,
                                              std::pair<int64_t, int64_t> strides,
                                              std::pair<int64_t, int64_t> dilations) {
  const int64_t k[2] = {kernel.first, kernel.second};
  const int64_t s[2] = {strides.first, strides.second};
  const int64_t d[2] = {dilations.first, dilations.second};
  std::vector<int64_t> pads(4, 0);
  for (int i = 0; i < 2; ++i) {
    const int64_t in = x.dim(2 + i);
    if (in == kBatchDim) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"same\" padding needs static spatial dims but the input is ", x.ToString()));
    }
    const int64_t out = (in + s[i] - 1) / s[i];
    const int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in);
    pads[i] = total / 2;
    pads[i + 2] = total - total / 2;
  }
  return pads;
}

// The value that stands for -infinity in additive masks: large enough to zero the
// softmax, small enough to stay finite in the dtype.
double MaskValue(DType dtype) { return dtype == DType::kF16 ? -65504.0 : -1e9; }

}  // namespace

Output Activation(GraphBuilder& b, Output x, absl::string_view activation) {
  if (activation.empty() || activation == "linear") return x;
  if (activation == "relu") return ops::Relu(b, x);
  if (activation == "gelu") return ops::Gelu(b, x);
  if (activation == "gelu_tanh") return ops::Gelu(b, x, "tanh");
  if (activation == "sigmoid") return ops::Sigmoid(b, x);
  if (activation == "tanh") return ops::Tanh(b, x);
  if (activation == "silu" || activation == "swish") return ops::Silu(b, x);
  if (activation == "softplus") return ops::Softplus(b, x);
  if (activation == "leaky_relu") return ops::LeakyRelu(b, x);
  if (activation == "softmax") return ops::Softmax(b, x);
  b.RecordError(absl::InvalidArgumentError(
      absl::StrCat("unknown activation '", activation, "' in scope '", b.scope_prefix(),
                   "' (known: linear, relu, gelu, gelu_tanh, sigmoid, tanh, silu, swish, softplus, leaky_relu, "
                   "softmax)")));
  return Output();
}

Output Dense(GraphBuilder& b, Output x, int64_t units, const DenseOptions& options) {
  if (!b.ok()) return Output();
  auto scope = LayerScope(b, options.name, "dense");
  if (units <= 0) return LayerError(b, "Dense", absl::StrCat("units is ", units, " but must be positive"));
  if (x.rank() < 1) {
    return LayerError(b, "Dense", absl::StrCat("input is ", x.type().ToString(), " but rank >= 1 is required"));
  }
  const int64_t in = x.shape().dim(x.rank() - 1);
  if (in == kBatchDim) {
    return LayerError(b, "Dense",
                      absl::StrCat("input is ", x.type().ToString(), " but its last dimension must be static"));
  }
  Output kernel =
      ops::Variable(b, "kernel", x.dtype(), Shape({in, units}), {.initializer = options.kernel_initializer});
  Output y = ops::MatMul(b, x, kernel);
  if (options.use_bias) {
    y = ops::Add(b, y, ops::Variable(b, "bias", x.dtype(), Shape({units}), {.initializer = options.bias_initializer}));
  }
  return Activation(b, y, options.activation);
}

Output Conv2D(GraphBuilder& b, Output x, int64_t filters, const std::vector<int64_t>& kernel_size,
              const Conv2DOptions& options) {
  if (!b.ok()) return Output();
  auto scope = LayerScope(b, options.name, "conv2d");
  if (x.rank() != 4) {
    return LayerError(b, "Conv2D", absl::StrCat("input is ", x.type().ToString(), " but NCHW (rank 4) is required"));
  }
  const int64_t channels = x.shape().dim(1);
  if (channels == kBatchDim) {
    return LayerError(b, "Conv2D", absl::StrCat("input is ", x.type().ToString(), " but channels must be static"));
  }
  const auto kernel = Pair(kernel_size);
  const auto strides = Pair(options.strides);
  const auto dilations = Pair(options.dilations);
  if (!kernel || !strides || !dilations) {
    return LayerError(
        b, "Conv2D",
        absl::StrCat("kernel_size ", IntsToString(kernel_size), ", strides ", IntsToString(options.strides),
                     " and dilations ", IntsToString(options.dilations), " must each hold one or two positive values"));
  }
  if (filters <= 0 || options.groups <= 0 || channels % options.groups != 0 || filters % options.groups != 0) {
    return LayerError(b, "Conv2D",
                      absl::StrCat("filters (", filters, ") and input channels (", channels,
                                   ") must be positive multiples of groups (", options.groups, ")"));
  }
  std::vector<int64_t> pads;
  if (options.padding == "same") {
    absl::StatusOr<std::vector<int64_t>> same = SamePads(x.shape(), *kernel, *strides, *dilations);
    if (!same.ok()) return LayerError(b, "Conv2D", same.status().message());
    pads = *std::move(same);
  } else if (options.padding != "valid") {
    return LayerError(b, "Conv2D",
                      absl::StrCat("padding is \"", options.padding, "\" but \"valid\" or \"same\" is required"));
  }
  Output w =
      ops::Variable(b, "kernel", x.dtype(), Shape({filters, channels / options.groups, kernel->first, kernel->second}),
                    {.initializer = options.kernel_initializer});
  Output bias = options.use_bias
                    ? ops::Variable(b, "bias", x.dtype(), Shape({filters}), {.initializer = options.bias_initializer})
                    : Output();
  Output y = ops::Conv(b, x, w, bias,
                       {.strides = {strides->first, strides->second},
                        .pads = pads,
                        .dilations = {dilations->first, dilations->second},
                        .group = options.groups});
  return Activation(b, y, options.activation);
}

Output Conv2D(GraphBuilder& b, Output x, int64_t filters, int64_t kernel_size, const Conv2DOptions& options) {
  return Conv2D(b, x, filters, std::vector<int64_t>{kernel_size}, options);
}

Output BatchNorm(GraphBuilder& b, Output x, const BatchNormOptions& options) {
  if (!b.ok()) return Output();
  auto scope = LayerScope(b, options.name, "batch_normalization");
  if (x.rank() < 2 || x.shape().dim(1) == kBatchDim) {
    return LayerError(b, "BatchNorm",
                      absl::StrCat("input is ", x.type().ToString(),
                                   " but rank >= 2 with static channels (axis 1) "
                                   "is required"));
  }
  const DType dtype = x.dtype();
  const Shape channels({x.shape().dim(1)});
  Output gamma = options.scale ? ops::Variable(b, "gamma", dtype, channels, {.initializer = "ones"})
                               : ops::Fill(b, dtype, channels, 1.0);
  Output beta = options.center ? ops::Variable(b, "beta", dtype, channels, {.initializer = "zeros"})
                               : ops::Fill(b, dtype, channels, 0.0);
  Output mean = ops::Variable(b, "moving_mean", dtype, channels, {.initializer = "zeros", .trainable = false});
  Output variance = ops::Variable(b, "moving_variance", dtype, channels, {.initializer = "ones", .trainable = false});
  const ops::BatchNormalizationOptions bn = {.epsilon = options.epsilon, .momentum = options.momentum};
  Output inference = ops::BatchNormalization(b, x, gamma, beta, mean, variance, bn);
  if (!options.training_mode.valid()) return inference;
  // Both forms, selected by the flag at run time (the inference form is cheap; a
  // compiler specializing on the flag drops the unused one).
  std::vector<Output> training = ops::BatchNormalizationTraining(b, x, gamma, beta, mean, variance, bn);
  ops::Assign(b, mean, training[1], "update_moving_mean");
  ops::Assign(b, variance, training[2], "update_moving_variance");
  return ops::Where(b, options.training_mode, training[0], inference);
}

Output LayerNorm(GraphBuilder& b, Output x, const LayerNormOptions& options) {
  if (!b.ok()) return Output();
  auto scope = LayerScope(b, options.name, "layer_normalization");
  absl::StatusOr<int> axis = NormalizeAxis(options.axis, x.rank());
  if (!axis.ok())
    return LayerError(b, "LayerNorm", absl::StrCat("input is ", x.type().ToString(), ": ", axis.status().message()));
  const std::vector<int64_t>& dims = x.shape().dims();
  const Shape normalized(std::vector<int64_t>(dims.begin() + *axis, dims.end()));
  if (!normalized.is_static()) {
    return LayerError(b, "LayerNorm",
                      absl::StrCat("input is ", x.type().ToString(), " but the normalized dims ", normalized.ToString(),
                                   " must be static"));
  }
  const DType dtype = x.dtype();
  Output gamma = options.scale ? ops::Variable(b, "gamma", dtype, normalized, {.initializer = "ones"})
                               : ops::Fill(b, dtype, normalized, 1.0);
  Output beta = options.center ? ops::Variable(b, "beta", dtype, normalized, {.initializer = "zeros"}) : Output();
  return ops::LayerNormalization(b, x, gamma, beta, {.axis = *axis, .epsilon = options.epsilon});
}

Output MultiHeadAttention(GraphBuilder& b, Output query, Output key_value, int64_t num_heads,
                          const MultiHeadAttentionOptions& options) {
  if (!b.ok()) return Output();
  auto scope = LayerScope(b, options.name, "multi_head_attention");
  if (query.rank() != 3 || key_value.rank() != 3) {
    return LayerError(b, "MultiHeadAttention",
                      absl::StrCat("query is ", query.type().ToString(), " and key_value is ",
                                   key_value.type().ToString(), " but both must be [batch, time, features]"));
  }
  const int64_t q_len = query.shape().dim(1);
  const int64_t kv_len = key_value.shape().dim(1);
  const int64_t q_features = query.shape().dim(2);
  if (q_features == kBatchDim || key_value.shape().dim(2) == kBatchDim) {
    return LayerError(b, "MultiHeadAttention", "feature dims must be static");
  }
  if (num_heads <= 0) {
    return LayerError(b, "MultiHeadAttention", absl::StrCat("num_heads is ", num_heads, " but must be positive"));
  }
  int64_t key_dim = options.key_dim;
  if (key_dim == 0) {
    if (q_features % num_heads != 0) {
      return LayerError(b, "MultiHeadAttention",
                        absl::StrCat("query features (", q_features, ") are not divisible by num_heads (", num_heads,
                                     "); set key_dim"));
    }
    key_dim = q_features / num_heads;
  }
  const int64_t value_dim = options.value_dim == 0 ? key_dim : options.value_dim;
  const int64_t output_dim = options.output_dim == 0 ? q_features : options.output_dim;
  if (key_dim < 0 || value_dim < 0 || output_dim < 0) {
    return LayerError(b, "MultiHeadAttention", "key_dim, value_dim and output_dim must not be negative");
  }
  const DenseOptions projection = {.use_bias = options.use_bias,
                                   .kernel_initializer = options.kernel_initializer,
                                   .bias_initializer = options.bias_initializer};
  auto project = [&](Output x, int64_t head_dim, const char* name) {
    DenseOptions o = projection;
    o.name = name;
    return Dense(b, x, num_heads * head_dim, o);
  };
  // [N, T, H*d] -> [N, H, T, d]; Reshape's 0 copies the batch and time dims.
  auto split_heads = [&](Output x, int64_t head_dim) {
    return ops::Transpose(b, ops::Reshape(b, x, {0, 0, num_heads, head_dim}), {0, 2, 1, 3});
  };
  Output q = split_heads(project(query, key_dim, "query"), key_dim);
  Output k = split_heads(project(key_value, key_dim, "key"), key_dim);
  Output v = split_heads(project(key_value, value_dim, "value"), value_dim);

  // Scaling q (rather than the scores) touches Tq*d elements instead of Tq*Tk.
  q = ops::Mul(b, q, ops::Scalar(b, 1.0 / std::sqrt(static_cast<double>(key_dim)), query.dtype()));
  Output scores = ops::MatMul(b, q, ops::Transpose(b, k, {0, 1, 3, 2}));  // [N, H, Tq, Tk]
  if (options.causal) {
    if (q_len == kBatchDim || kv_len == kBatchDim) {
      return LayerError(b, "MultiHeadAttention", "a causal mask needs static sequence lengths");
    }
    std::vector<double> mask(static_cast<size_t>(q_len * kv_len), 0.0);
    for (int64_t i = 0; i < q_len; ++i) {
      for (int64_t j = i + 1; j < kv_len; ++j) mask[i * kv_len + j] = MaskValue(query.dtype());
    }
    scores = ops::Add(b, scores, ops::Const(b, query.dtype(), Shape({q_len, kv_len}), mask, "causal_mask"));
  }
  Output weights = ops::Softmax(b, scores, -1);
  Output context = ops::Transpose(b, ops::MatMul(b, weights, v), {0, 2, 1, 3});  // [N, Tq, H, dv]
  context = ops::Reshape(b, context, {0, 0, num_heads * value_dim});
  DenseOptions out = projection;
  out.name = "attention_output";
  return Dense(b, context, output_dim, out);
}

Output MaxPool2D(GraphBuilder& b, Output x, const std::vector<int64_t>& pool_size, const Pool2DOptions& options) {
  if (!b.ok()) return Output();
  auto fail = [&](absl::string_view message) {
    b.RecordError(absl::InvalidArgumentError(absl::StrCat(
        "layer '", b.scope_prefix(), options.name.empty() ? "MaxPool" : options.name, "' (MaxPool2D): ", message)));
    return Output();
  };
  if (x.rank() != 4) return fail(absl::StrCat("input is ", x.type().ToString(), " but NCHW (rank 4) is required"));
  const auto kernel = Pair(pool_size);
  const auto strides = Pair(options.strides.empty() ? pool_size : options.strides);
  if (!kernel || !strides) {
    return fail(absl::StrCat("pool_size ", IntsToString(pool_size), " and strides ", IntsToString(options.strides),
                             " must each hold one or two positive values"));
  }
  std::vector<int64_t> pads;
  if (options.padding == "same") {
    absl::StatusOr<std::vector<int64_t>> same = SamePads(x.shape(), *kernel, *strides, {1, 1});
    if (!same.ok()) return fail(same.status().message());
    pads = *std::move(same);
  } else if (options.padding != "valid") {
    return fail(absl::StrCat("padding is \"", options.padding, "\" but \"valid\" or \"same\" is required"));
  }
  return ops::MaxPool(
      b, x,
      {.kernel_shape = {kernel->first, kernel->second}, .strides = {strides->first, strides->second}, .pads = pads},
      options.name);
}

Output MaxPool2D(GraphBuilder& b, Output x, int64_t pool_size, const Pool2DOptions& options) {
  return MaxPool2D(b, x, std::vector<int64_t>{pool_size}, options);
}

Output Flatten(GraphBuilder& b, Output x, absl::string_view name) { return ops::Flatten(b, x, 1, name); }

Output Dropout(GraphBuilder& b, Output x, double rate, const DropoutOptions& options) {
  return ops::Dropout(
      b, x, {.ratio = rate, .training = options.training, .training_mode = options.training_mode, .seed = options.seed},
      options.name);
}

Output TrainingFlag(GraphBuilder& b) { return ops::Placeholder(b, DType::kBool, tsr::Shape(), kTrainingFlagName); }

}  // namespace tsr::nn
