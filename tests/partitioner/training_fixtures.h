// Training fixtures for the partitioning tests: a model's training graph (autodiff +
// optimizer) with its update nodes and Variables, random batches, and the relative
// error between two tensors.
#ifndef TESSERA_TESTS_PARTITIONER_TRAINING_FIXTURES_H_
#define TESSERA_TESTS_PARTITIONER_TRAINING_FIXTURES_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graph/builder/graph_builder.h"
#include "graph/builder/optimizers.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"

namespace tsr {

struct TrainingGraph {
  Graph graph;
  std::vector<std::string> updates;
  std::vector<std::string> variables;
};

inline TrainingGraph Training(Graph model, OptimizerKind kind) {
  TensorRef loss_ref;
  for (const SignatureEntry& e : model.outputs()) {
    if (e.name == "loss") loss_ref = e.ref;
  }
  GraphBuilder b(std::move(model));
  TrainingOps train = Minimize(b, b.Wrap(loss_ref), TrainableVariables(b), {.kind = kind});
  absl::StatusOr<Graph> graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  TrainingGraph t{*std::move(graph), train.update_nodes, {}};
  for (const Node* node : t.graph.nodes()) {
    if (node->op() == "Variable") t.variables.push_back(node->name());
  }
  return t;
}

struct TrainingBatch {
  Tensor image;
  Tensor labels;
};

inline std::vector<TrainingBatch> RandomBatches(const Shape& image_shape, int steps, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> pixel(0.f, 1.f);
  std::uniform_int_distribution<int64_t> label(0, 9);
  std::vector<TrainingBatch> batches;
  for (int s = 0; s < steps; ++s) {
    std::vector<float> x(image_shape.num_elements());
    for (float& v : x) v = pixel(rng);
    std::vector<int64_t> y(image_shape.dim(0));
    for (int64_t& v : y) v = label(rng);
    batches.push_back(
        {Tensor::FromVector<float>(image_shape, x), Tensor::FromVector<int64_t>(Shape{image_shape.dim(0)}, y)});
  }
  return batches;
}

inline double RelativeError(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const double d = a.GetAsDouble(i) - b.GetAsDouble(i);
    num += d * d;
    den += b.GetAsDouble(i) * b.GetAsDouble(i);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

}  // namespace tsr

#endif  // TESSERA_TESTS_PARTITIONER_TRAINING_FIXTURES_H_
