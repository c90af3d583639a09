// Whole models on the cpu device (optimized kernels, several threads, poisoned
// buffers) against the reference device (the oracle kernels, one thread): the
// example MLP and LeNet, with their training heads, at several batch sizes.
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "examples/models.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace tsr {
namespace {

std::unique_ptr<Session> Open(const Graph& graph, SessionOptions options) {
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(graph.Clone(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// Feeds random images and labels of `batch` and compares every output of the
// graph's signature between the two devices.
void ExpectDevicesAgree(const Graph& graph, const Shape& image_shape, int64_t batch, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("batch=", batch, " seed=", seed));
  std::mt19937 rng(seed);
  Tensor image(DType::kF32, image_shape.BindBatch(batch));
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  for (float& x : image.flat<float>()) x = pixel(rng);
  Tensor labels(DType::kI64, Shape({batch}));
  for (int64_t& l : labels.flat<int64_t>()) l = static_cast<int64_t>(rng() % 10);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"image", image}, {"labels", labels}};
  const std::vector<std::string> fetches = {"logits", "loss"};

  std::unique_ptr<Session> reference = Open(graph, {.num_threads = 1, .device = "reference", .seed = 7});
  ASSERT_NE(reference, nullptr);
  absl::StatusOr<std::vector<Tensor>> want = reference->Run(feeds, fetches);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int threads : {1, 2, 4}) {
    std::unique_ptr<Session> cpu =
        Open(graph, {.num_threads = threads, .device = "cpu", .seed = 7, .poison_memory = true});
    ASSERT_NE(cpu, nullptr);
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second run reuses cached buffers
      absl::StatusOr<std::vector<Tensor>> got = cpu->Run(feeds, fetches);
      ASSERT_TRUE(got.ok()) << got.status();
      for (size_t o = 0; o < fetches.size(); ++o) {
        const Tensor& g = (*got)[o];
        const Tensor& w = (*want)[o];
        ASSERT_EQ(g.type(), w.type()) << fetches[o];
        for (int64_t i = 0; i < g.num_elements(); ++i) {
          const double gv = g.GetAsDouble(i), wv = w.GetAsDouble(i);
          ASSERT_TRUE(std::isfinite(gv)) << fetches[o] << "[" << i << "] threads=" << threads;
          ASSERT_NEAR(gv, wv, 1e-4 * std::max(1.0, std::fabs(wv)))
              << fetches[o] << "[" << i << "] threads=" << threads << " repeat=" << repeat;
        }
      }
    }
  }
}

TEST(ModelRunTest, MlpCpuMatchesReference) {
  absl::StatusOr<Graph> g = examples::BuildMlp({.training_head = true});
  ASSERT_TRUE(g.ok()) << g.status();
  uint32_t seed = 1;
  for (int64_t batch : {1, 5, 64}) ExpectDevicesAgree(*g, Shape({kBatchDim, 784}), batch, seed++);
}

TEST(ModelRunTest, LeNetCpuMatchesReference) {
  absl::StatusOr<Graph> g = examples::BuildLeNet({.training_head = true});
  ASSERT_TRUE(g.ok()) << g.status();
  uint32_t seed = 10;
  for (int64_t batch : {1, 3, 32}) ExpectDevicesAgree(*g, Shape({kBatchDim, 1, 28, 28}), batch, seed++);
}

}  // namespace
}  // namespace tsr
