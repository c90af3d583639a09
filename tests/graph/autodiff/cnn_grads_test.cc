// End to end: a small CNN in f32 with a symbolic batch — Conv (padded, with bias) ->
// BatchNormalization (training form) -> Relu -> MaxPool -> grouped strided Conv ->
// Dropout -> GlobalAveragePool -> Flatten -> Gemm -> SoftmaxCrossEntropyLoss — gets
// its gradients from Gradients(), and plain SGD on the cpu device (falling back to
// reference kernels) drives the loss on a fixed batch down.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/autodiff/gradients.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace tsr {
namespace {

Tensor RandomF32(std::mt19937& rng, const Shape& shape, double scale) {
  Tensor t(DType::kF32, shape);
  std::normal_distribution<float> dist(0.0f, static_cast<float>(scale));
  for (float& v : t.flat<float>()) v = dist(rng);
  return t;
}

TEST(CnnGradsTest, SgdLowersTheLoss) {
  const uint32_t seed = 6000;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937 rng(seed);
  const int64_t batch = 8, classes = 3;
  GraphBuilder b;
  const Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 1, 8, 8}));
  const Output labels = b.Input("labels", DType::kI64, Shape({kBatchDim}));
  std::vector<std::pair<std::string, Tensor>> params = {
      {"w1", RandomF32(rng, {4, 1, 3, 3}, 0.5)},
      {"b1", RandomF32(rng, {4}, 0.1)},
      {"gamma", Tensor::FromVector<float>(Shape({4}), {1, 1, 1, 1})},
      {"beta", RandomF32(rng, {4}, 0.1)},
      {"w2", RandomF32(rng, {6, 2, 3, 3}, 0.5)},
      {"w3", RandomF32(rng, {6, classes}, 0.5)},
      {"b3", RandomF32(rng, {classes}, 0.1)},
  };
  std::vector<Output> p;
  for (const auto& [name, value] : params) p.push_back(b.Input(name, DType::kF32, value.shape()));
  const Output zeros = ops::Const(b, Tensor::FromVector<float>(Shape({4}), {0, 0, 0, 0}));
  const Output ones = ops::Const(b, Tensor::FromVector<float>(Shape({4}), {1, 1, 1, 1}));
  Output h = ops::Conv(b, x, p[0], p[1], {.pads = {1, 1, 1, 1}});
  h = b.Op("BatchNormalization", {h, p[2], p[3], zeros, ones}, {{"training_mode", AttrValue::Int(1)}})[0];
  h = ops::MaxPool(b, ops::Relu(b, h), {.kernel_shape = {2, 2}, .strides = {2, 2}});
  h = ops::Conv(b, h, p[4], {.strides = {2, 2}, .pads = {1, 1, 1, 1}, .group = 2});
  h = b.Op("Dropout", {h, ops::Scalar(b, 0.2f), ops::Const(b, Tensor::Scalar<bool>(true))})[0];
  h = ops::Flatten(b, ops::GlobalAveragePool(b, h));
  const Output logits = ops::Gemm(b, h, p[5], p[6]);
  const Output loss = ops::SoftmaxCrossEntropyLoss(b, logits, labels);
  std::vector<Output> grads = Gradients(b, loss, p);
  ASSERT_TRUE(b.ok()) << b.status();
  b.MarkOutput("loss", loss);
  for (size_t i = 0; i < grads.size(); ++i) b.MarkOutput(absl::StrCat("d", params[i].first), grads[i]);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(*std::move(graph), {.num_threads = 2});
  ASSERT_TRUE(session.ok()) << session.status();

  // Class k: a bright blob in quadrant k, plus noise.
  Tensor images(DType::kF32, Shape({batch, 1, 8, 8}));
  std::vector<int64_t> label_values(batch);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  for (int64_t n = 0; n < batch; ++n) {
    label_values[n] = n % classes;
    for (int64_t i = 0; i < 64; ++i) {
      const int64_t row = i / 8, col = i % 8, quadrant = (row >= 4) * 2 + (col >= 4);
      images.flat<float>()[n * 64 + i] = (quadrant == label_values[n] ? 1.5f : 0.0f) + noise(rng);
    }
  }
  const Tensor label_tensor = Tensor::FromVector<int64_t>(Shape({batch}), label_values);
  std::vector<std::string> fetches = {"loss"};
  for (const auto& param : params) fetches.push_back(absl::StrCat("d", param.first));

  double first = 0, last = 0;
  for (int step = 0; step < 40; ++step) {
    std::vector<std::pair<std::string, Tensor>> feeds = {{"x", images}, {"labels", label_tensor}};
    for (const auto& param : params) feeds.push_back(param);
    absl::StatusOr<std::vector<Tensor>> out = (*session)->Run(feeds, fetches);
    ASSERT_TRUE(out.ok()) << out.status();
    const double value = (*out)[0].GetAsDouble(0);
    ASSERT_TRUE(std::isfinite(value)) << "step " << step;
    if (step == 0) first = value;
    last = value;
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor& g = (*out)[i + 1];
      ASSERT_EQ(g.shape(), params[i].second.shape()) << params[i].first;
      for (int64_t e = 0; e < g.num_elements(); ++e) params[i].second.flat<float>()[e] -= 0.3f * g.flat<float>()[e];
    }
  }
  EXPECT_LT(last, 0.5 * first) << "loss " << first << " -> " << last;
}

}  // namespace
}  // namespace tsr
