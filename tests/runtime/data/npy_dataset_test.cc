// Tests of runtime/data/npy_dataset.h: a features/labels pair of .npy files and the
// cross-file checks.
#include "runtime/data/npy_dataset.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/npy.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

std::string TempPath(absl::string_view name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/npy_dataset_test_", ::getpid(), "_", name);
}

TEST(NpyDatasetTest, LoadsAFeaturesLabelsPair) {
  const std::string x = TempPath("x.npy"), y = TempPath("y.npy");
  const Tensor features = Tensor::FromVector<float>(Shape({3, 2}), {1, 2, 3, 4, 5, 6});
  const Tensor labels = Tensor::FromVector<int64_t>(Shape({3}), {2, 0, 1});
  ASSERT_TRUE(WriteNpy(x, features).ok());
  ASSERT_TRUE(WriteNpy(y, labels).ok());
  absl::StatusOr<Dataset> d = LoadNpyDataset({{"features", x}, {"labels", y}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->num_examples(), 3);
  EXPECT_TRUE(d->Find("features")->BitwiseEquals(features));
  EXPECT_TRUE(d->Find("labels")->BitwiseEquals(labels));
  std::remove(x.c_str());
  std::remove(y.c_str());
}

TEST(NpyDatasetTest, RefusesMismatchedScalarEmptyAndMissingFiles) {
  const std::string x = TempPath("mx.npy"), y = TempPath("my.npy"), s = TempPath("s.npy"), e = TempPath("e.npy");
  ASSERT_TRUE(WriteNpy(x, Tensor(DType::kF32, Shape({3, 2}))).ok());
  ASSERT_TRUE(WriteNpy(y, Tensor(DType::kI64, Shape({4}))).ok());
  ASSERT_TRUE(WriteNpy(s, Tensor::Scalar<float>(1)).ok());
  ASSERT_TRUE(WriteNpy(e, Tensor(DType::kF32, Shape({0, 2}))).ok());

  absl::StatusOr<Dataset> d = LoadNpyDataset({{"features", x}, {"labels", y}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr(absl::StrCat(y, ": holds 4 examples of 'labels' but ", x, " holds 3")));
  d = LoadNpyDataset({{"features", s}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr(absl::StrCat(s, ": feature 'features' is a scalar")));
  d = LoadNpyDataset({{"features", e}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("empty"));
  d = LoadNpyDataset({{"features", x}, {"features", x}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("appears twice"));
  d = LoadNpyDataset({{"features", TempPath("missing.npy")}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("missing.npy"));
  d = LoadNpyDataset({});
  ASSERT_FALSE(d.ok());
  for (const std::string& p : {x, y, s, e}) std::remove(p.c_str());
}

}  // namespace
}  // namespace tsr
