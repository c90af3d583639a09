// Three Gaussian clusters for training tests: `n` examples whose image (of `image_dims`,
// flattened) has `center` on the features d with d % 3 == label and noise N(0, 0.5).
// Prints its seed.
#ifndef TESSERA_TESTS_RUNTIME_TRAINER_CLUSTERS_DATASET_H_
#define TESSERA_TESTS_RUNTIME_TRAINER_CLUSTERS_DATASET_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/data/dataset.h"

namespace tsr {

inline std::shared_ptr<const Dataset> ClustersDataset(int64_t n, uint32_t seed, const std::vector<int64_t>& image_dims,
                                                      float center) {
  std::printf("dataset seed %u, %lld examples\n", seed, static_cast<long long>(n));
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.5f);
  int64_t features = 1;
  for (int64_t d : image_dims) features *= d;
  std::vector<int64_t> dims = {n};
  dims.insert(dims.end(), image_dims.begin(), image_dims.end());
  Tensor image(DType::kF32, Shape(dims));
  Tensor labels(DType::kI64, Shape({n}));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = static_cast<int64_t>(rng() % 3);
    labels.flat<int64_t>()[i] = c;
    for (int64_t d = 0; d < features; ++d) {
      image.flat<float>()[i * features + d] = (d % 3 == c ? center : 0.0f) + noise(rng);
    }
  }
  absl::StatusOr<Dataset> d = Dataset::Create({{"image", image}, {"labels", labels}}, "clusters");
  EXPECT_TRUE(d.ok()) << d.status();
  return std::make_shared<const Dataset>(*std::move(d));
}

}  // namespace tsr

#endif  // TESSERA_TESTS_RUNTIME_TRAINER_CLUSTERS_DATASET_H_
