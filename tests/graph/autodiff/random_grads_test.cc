// Dropout's gradient: through the mask its forward run drew, checked against the
// mask fetched from the same run (a numeric difference cannot reproduce the mask: the
// draw depends on the node), with training_mode constant or fed, and the identity
// outside training against central differences.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/graph/autodiff/gradient_check_util.h"

namespace tsr {
namespace {

using testing::ExpectGradientsMatchNumeric;
using testing::GradCheck;
using testing::RandomF64;

// loss = sum(Y * R) with Y = Dropout(X): d loss / dX = R * mask / (1 - ratio) in
// training, R otherwise; the mask is the one the same run produced.
void CheckDropout(bool training_constant, bool training, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("training=", training, training_constant ? " (constant)" : " (fed)", " seed=", seed));
  std::mt19937 rng(seed);
  const Shape shape({8, 16});
  const Tensor x = RandomF64(rng, shape), r = RandomF64(rng, shape);
  const double ratio = 0.3;
  GraphBuilder b;
  const Output xin = b.Input("x", DType::kF64, shape);
  const Output mode =
      training_constant ? ops::Const(b, Tensor::Scalar<bool>(training)) : b.Input("training", DType::kBool, Shape({}));
  std::vector<Output> outs =
      b.Op("Dropout", {xin, ops::Scalar(b, ratio, DType::kF64), mode}, {{"seed", AttrValue::Int(seed)}});
  const Output loss = ops::ReduceSum(b, ops::Mul(b, outs[0], ops::Const(b, r)), std::vector<int64_t>{}, false);
  std::vector<Output> grads = Gradients(b, loss, {xin});
  ASSERT_TRUE(b.ok()) << b.status();
  b.MarkOutput("mask", outs[1]);
  b.MarkOutput("grad", grads[0]);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Create(*std::move(graph), {.num_threads = 1, .device = "reference"});
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  if (!training_constant) feeds.push_back({"training", Tensor::Scalar<bool>(training)});
  absl::StatusOr<std::vector<Tensor>> got = (*session)->Run(feeds, {"mask", "grad"});
  ASSERT_TRUE(got.ok()) << got.status();
  const bool* mask = (*got)[0].data<bool>();
  int kept = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    kept += mask[i];
    const double expected = !training ? r.flat<double>()[i] : mask[i] ? r.flat<double>()[i] / (1 - ratio) : 0.0;
    ASSERT_NEAR((*got)[1].flat<double>()[i], expected, 1e-12) << "element " << i;
  }
  if (training) {
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, x.num_elements());
  } else {
    EXPECT_EQ(kept, x.num_elements());
  }
}

TEST(RandomGradsTest, DropoutThroughTheMask) {
  CheckDropout(/*training_constant=*/true, /*training=*/true, 5400);
  CheckDropout(/*training_constant=*/true, /*training=*/false, 5401);
  CheckDropout(/*training_constant=*/false, /*training=*/true, 5402);
  CheckDropout(/*training_constant=*/false, /*training=*/false, 5403);
}

TEST(RandomGradsTest, DropoutWithoutTrainingModeIsTheIdentity) {
  std::mt19937 rng(5410);
  ExpectGradientsMatchNumeric(GradCheck{"Dropout", {RandomF64(rng, {3, 4}), Tensor::Scalar<double>(0.5)}, {}, {0}},
                              5410);
}

}  // namespace
}  // namespace tsr
