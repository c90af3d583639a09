// BuildMlp, BuildLeNet and BuildGptBlock.
#include "examples/models.h"

#include "graph/builder/graph_builder.h"
#include "graph/builder/nn.h"
#include "graph/builder/ops.h"

namespace tsr::examples {

namespace {

// Marks "logits" and, for training, adds the "labels" input and the "loss" output.
absl::StatusOr<Graph> FinishClassifier(GraphBuilder& b, Output logits, bool training_head) {
  b.MarkOutput("logits", logits);
  if (training_head) {
    Output labels = b.Input("labels", DType::kI64, {kBatchDim});
    b.MarkOutput("loss", ops::SoftmaxCrossEntropyLoss(b, logits, labels, {}, "loss"));
  }
  return b.Finish();
}

}  // namespace

absl::StatusOr<Graph> BuildMlp(const MlpOptions& options) {
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, options.input_features});
  Output training;
  if (options.dropout > 0 && options.training_head) training = nn::TrainingFlag(b);
  for (int64_t units : options.hidden_units) {
    x = nn::Dense(b, x, units, {.activation = options.activation});
    if (options.dropout > 0) x = nn::Dropout(b, x, options.dropout, {.training_mode = training});
  }
  Output logits = nn::Dense(b, x, options.num_classes, {.name = "logits"});
  return FinishClassifier(b, logits, options.training_head);
}

absl::StatusOr<Graph> BuildLeNet(const LeNetOptions& options) {
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, 1, 28, 28});
  x = nn::Conv2D(b, x, 6, 5, {.padding = "same", .activation = "relu"});  // [N,6,28,28]
  x = nn::MaxPool2D(b, x, 2);                                             // [N,6,14,14]
  x = nn::Conv2D(b, x, 16, 5, {.activation = "relu"});                    // [N,16,10,10]
  x = nn::MaxPool2D(b, x, 2);                                             // [N,16,5,5]
  x = nn::Flatten(b, x);                                                  // [N,400]
  Output training;
  if (options.dropout > 0 && options.training_head) training = nn::TrainingFlag(b);
  for (int64_t units : {120, 84}) {
    x = nn::Dense(b, x, units, {.activation = "relu"});
    if (options.dropout > 0) x = nn::Dropout(b, x, options.dropout, {.training_mode = training});
  }
  Output logits = nn::Dense(b, x, options.num_classes, {.name = "logits"});
  return FinishClassifier(b, logits, options.training_head);
}

absl::StatusOr<Graph> BuildGptBlock(const GptBlockOptions& options) {
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, options.sequence, options.width});
  Output normalized = nn::LayerNorm(b, x, {.epsilon = 1e-5, .name = "ln_1"});
  Output attention =
      nn::MultiHeadAttention(b, normalized, normalized, options.heads, {.causal = true, .name = "attention"});
  x = ops::Add(b, x, attention, "residual_1");
  Output h = nn::LayerNorm(b, x, {.epsilon = 1e-5, .name = "ln_2"});
  {
    auto scope = b.Scope("mlp");
    h = nn::Dense(b, h, 4 * options.width, {.activation = "gelu", .name = "fc"});
    h = nn::Dense(b, h, options.width, {.name = "proj"});
  }
  x = ops::Add(b, x, h, "residual_2");
  x = nn::LayerNorm(b, x, {.epsilon = 1e-5, .name = "ln_f"});
  Output pooled = ops::ReduceMean(b, x, std::vector<int64_t>{1}, /*keepdims=*/false);
  Output logits = nn::Dense(b, pooled, options.num_classes, {.name = "logits"});
  return FinishClassifier(b, logits, options.training_head);
}

}  // namespace tsr::examples
