// Reference SoftmaxCrossEntropyLoss kernel (kernels/reference/loss_kernels.cc):
// hand-computed losses for each reduction, class weights (mean divides by the total
// weight), ignore_index, N-d scores against the 2-D form, log_prob against LogSoftmax,
// and out-of-range labels.
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::ExpectNear;
using ::tsr::testing::RunAll;

// Absolute tolerance of ExpectNear where a test gives none.
constexpr double kTol = 1e-12;

constexpr char kOp[] = "SoftmaxCrossEntropyLoss";

AttrMap Reduction(const char* r) { return {{"reduction", AttrValue::String(r)}}; }

// scores [[1,2,3],[1,1,1]], labels [2,0]: log-probabilities -log(1+e^-1+e^-2) and -log(3).
const double kL0 = std::log(1 + std::exp(-1.0) + std::exp(-2.0));
const double kL1 = std::log(3.0);

Tensor Scores() { return Tensor::FromVector<double>({2, 3}, {1, 2, 3, 1, 1, 1}); }

TEST(SoftmaxCrossEntropyLossKernelTest, ReductionsHandComputed) {
  const Tensor labels = Tensor::FromVector<int64_t>({2}, {2, 0});
  std::vector<Tensor> none = RunAll(kOp, {Scores(), labels}, Reduction("none"));
  EXPECT_EQ(none[0].shape(), (Shape{2}));
  ExpectNear(none[0], {kL0, kL1}, kTol);
  ExpectNear(RunAll(kOp, {Scores(), labels}, Reduction("sum"))[0], {kL0 + kL1}, kTol);
  std::vector<Tensor> mean = RunAll(kOp, {Scores(), labels});  // default: mean
  EXPECT_EQ(mean[0].shape(), Shape());
  ExpectNear(mean[0], {(kL0 + kL1) / 2}, kTol);
  // log_prob is the log-softmax along the classes.
  ExpectNear(mean[1], {-2 - kL0, -1 - kL0, -kL0, -kL1, -kL1, -kL1}, kTol);
}

TEST(SoftmaxCrossEntropyLossKernelTest, WeightsScaleLossesAndMeanDividesByTheirSum) {
  const Tensor labels = Tensor::FromVector<int32_t>({2}, {2, 0});
  const Tensor weights = Tensor::FromVector<double>({3}, {0.5, 7, 2});
  ExpectNear(RunAll(kOp, {Scores(), labels, weights}, Reduction("none"))[0], {2 * kL0, 0.5 * kL1}, kTol);
  ExpectNear(RunAll(kOp, {Scores(), labels, weights}, Reduction("sum"))[0], {2 * kL0 + 0.5 * kL1}, kTol);
  ExpectNear(RunAll(kOp, {Scores(), labels, weights})[0], {(2 * kL0 + 0.5 * kL1) / 2.5}, kTol);
}

TEST(SoftmaxCrossEntropyLossKernelTest, IgnoreIndexDropsSamplesFromLossAndDenominator) {
  const Tensor labels = Tensor::FromVector<int64_t>({2}, {2, -100});
  const Tensor weights = Tensor::FromVector<double>({3}, {0.5, 7, 2});
  AttrMap attrs = Reduction("none");
  attrs["ignore_index"] = AttrValue::Int(-100);
  ExpectNear(RunAll(kOp, {Scores(), labels}, attrs)[0], {kL0, 0}, kTol);
  attrs["reduction"] = AttrValue::String("mean");
  ExpectNear(RunAll(kOp, {Scores(), labels}, attrs)[0], {kL0}, kTol);
  ExpectNear(RunAll(kOp, {Scores(), labels, weights}, attrs)[0], {kL0}, kTol);  // (2 * kL0) / 2
  // ignore_index may also be a valid class.
  AttrMap ignore_two = {{"ignore_index", AttrValue::Int(2)}, {"reduction", AttrValue::String("sum")}};
  ExpectNear(RunAll(kOp, {Scores(), Tensor::FromVector<int64_t>({2}, {2, 0})}, ignore_two)[0], {kL1}, kTol);
}

TEST(SoftmaxCrossEntropyLossKernelTest, SpatialScoresMatchTheFlattenedForm) {
  constexpr uint32_t kSeed = 31;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<double> dist(-3, 3);
  // scores [2,4,3] with labels [2,3] equal the 2-D loss of the 6 rows scores[n,:,d].
  std::vector<double> s(24);
  for (double& v : s) v = dist(rng);
  const std::vector<int64_t> l = {0, 3, 1, 2, 2, 0};
  std::vector<double> rows;
  for (int n = 0; n < 2; ++n) {
    for (int d = 0; d < 3; ++d) {
      for (int c = 0; c < 4; ++c) rows.push_back(s[(n * 4 + c) * 3 + d]);
    }
  }
  const Tensor weights = Tensor::FromVector<double>({4}, {1, 2, 3, 4});
  for (const char* r : {"none", "sum", "mean"}) {
    SCOPED_TRACE(r);
    std::vector<Tensor> nd = RunAll(
        kOp, {Tensor::FromVector<double>({2, 4, 3}, s), Tensor::FromVector<int64_t>({2, 3}, l), weights}, Reduction(r));
    std::vector<Tensor> flat = RunAll(
        kOp, {Tensor::FromVector<double>({6, 4}, rows), Tensor::FromVector<int64_t>({6}, l), weights}, Reduction(r));
    ASSERT_EQ(nd[0].num_elements(), flat[0].num_elements());
    if (std::string(r) == "none") {
      EXPECT_EQ(nd[0].shape(), (Shape{2, 3}));
    }
    for (int64_t i = 0; i < nd[0].num_elements(); ++i) EXPECT_NEAR(nd[0].GetAsDouble(i), flat[0].GetAsDouble(i), 1e-12);
  }
}

TEST(SoftmaxCrossEntropyLossKernelTest, LogProbEqualsLogSoftmaxOverClasses) {
  constexpr uint32_t kSeed = 8;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<float> dist(-500, 500);  // large: needs the max shift
  std::vector<float> s(2 * 3 * 2);
  for (float& v : s) v = dist(rng);
  const Tensor scores = Tensor::FromVector<float>({2, 3, 2}, s);
  std::vector<Tensor> out = RunAll(kOp, {scores, Tensor::FromVector<int64_t>({2, 2}, {0, 1, 2, 0})});
  absl::StatusOr<std::vector<Tensor>> lsm = RunOp("LogSoftmax", {scores}, {{"axis", AttrValue::Int(1)}});
  ASSERT_TRUE(lsm.ok()) << lsm.status();
  ASSERT_EQ(out[1].shape(), scores.shape());
  for (int64_t i = 0; i < 12; ++i) {
    EXPECT_EQ(out[1].GetAsDouble(i), (*lsm)[0].GetAsDouble(i));
    EXPECT_TRUE(std::isfinite(out[1].GetAsDouble(i)));
  }
  EXPECT_TRUE(std::isfinite(out[0].GetAsDouble(0)));
}

TEST(SoftmaxCrossEntropyLossKernelTest, RejectsOutOfRangeLabels) {
  absl::StatusOr<std::vector<Tensor>> out = RunOp(kOp, {Scores(), Tensor::FromVector<int64_t>({2}, {3, 0})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "label 3 at position 0 is outside [0, 3)")) << out.status();
}

}  // namespace
}  // namespace tsr
