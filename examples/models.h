// The example models, built with the GraphBuilder API: an MLP and a LeNet-5 style
// CNN for 28x28 single-channel images (MNIST, Fashion-MNIST), and a GPT-2 block. `tessera example`
// and the tests build them from here; examples/mlp.cc and examples/lenet.cc show the
// same models as standalone programs.
#ifndef TESSERA_EXAMPLES_MODELS_H_
#define TESSERA_EXAMPLES_MODELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tsr::examples {

struct MlpOptions {
  int64_t input_features = 784;
  std::vector<int64_t> hidden_units = {256, 256};
  int64_t num_classes = 10;
  std::string activation = "relu";
  // Dropout rate after each hidden layer (0: none). Active only in training steps:
  // with the training head the graph gets nn::TrainingFlag's "training" input.
  double dropout = 0;
  // Adds input "labels" (i64 [N]) and output "loss" (mean softmax cross-entropy).
  bool training_head = false;
};
// Input "image" f32 [N, input_features] -> Dense layers -> output "logits" f32
// [N, num_classes]. The default 784-256-256-10 has 269,322 parameters.
absl::StatusOr<Graph> BuildMlp(const MlpOptions& options = {});

struct LeNetOptions {
  int64_t num_classes = 10;
  double dropout = 0;          // after the dense 120 and 84 layers; as in MlpOptions
  bool training_head = false;  // as in MlpOptions
};
// Input "image" f32 [N, 1, 28, 28] -> conv 6@5x5 "same" + relu -> max pool 2 ->
// conv 16@5x5 + relu -> max pool 2 -> flatten -> dense 120, 84 (relu) ->
// output "logits" f32 [N, num_classes]; 61,706 parameters for 10 classes.
absl::StatusOr<Graph> BuildLeNet(const LeNetOptions& options = {});

struct GptBlockOptions {
  int64_t sequence = 16;  // tokens
  int64_t width = 64;     // features per token (GPT-2 small: 768)
  int64_t heads = 4;      // attention heads (GPT-2 small: 12)
  int64_t num_classes = 10;
  bool training_head = false;  // as in MlpOptions
};
// A GPT-2 transformer block as a sequence classifier. Input "image" f32 [N, sequence,
// width] (token embeddings) -> x + attention(LayerNorm(x)) (causal multi-head,
// projections "attention/query|key|value|attention_output") -> x + mlp(LayerNorm(x))
// (Dense 4*width with GELU "mlp/fc", Dense width "mlp/proj") -> LayerNorm -> mean over
// the tokens -> Dense "logits" -> output "logits" f32 [N, num_classes].
absl::StatusOr<Graph> BuildGptBlock(const GptBlockOptions& options = {});

}  // namespace tsr::examples

#endif  // TESSERA_EXAMPLES_MODELS_H_
