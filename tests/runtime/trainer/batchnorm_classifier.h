// A small classifier with BatchNorm for Trainer tests: image f32 [N, 8] -> Dense 16 ->
// BatchNorm (momentum 0.9, nn::TrainingFlag's "training" input) -> Relu -> Dense 3
// "logits", with labels i64 [N] and the mean softmax cross-entropy "loss". Its moving
// statistics are the model's own updates, run beside the optimizer's.
#ifndef TESSERA_TESTS_RUNTIME_TRAINER_BATCHNORM_CLASSIFIER_H_
#define TESSERA_TESTS_RUNTIME_TRAINER_BATCHNORM_CLASSIFIER_H_

#include "absl/status/statusor.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/nn.h"
#include "graph/builder/ops.h"
#include "graph/graph.h"

namespace tsr {

inline absl::StatusOr<Graph> BatchNormClassifier() {
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, 8});
  Output training = nn::TrainingFlag(b);
  x = nn::Dense(b, x, 16);
  x = ops::Relu(b, nn::BatchNorm(b, x, {.momentum = 0.9, .training_mode = training}));
  Output logits = nn::Dense(b, x, 3, {.name = "logits"});
  b.MarkOutput("logits", logits);
  Output labels = b.Input("labels", DType::kI64, {kBatchDim});
  b.MarkOutput("loss", ops::SoftmaxCrossEntropyLoss(b, logits, labels, {}, "loss"));
  return b.Finish();
}

}  // namespace tsr

#endif  // TESSERA_TESTS_RUNTIME_TRAINER_BATCHNORM_CLASSIFIER_H_
