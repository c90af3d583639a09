// Shape validation, element counts, batch binding and broadcasting.
#include "graph/shape.h"

#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(ShapeTest, BasicsAndPrinting) {
  Shape s{kBatchDim, 784};
  EXPECT_EQ(s.rank(), 2);
  EXPECT_FALSE(s.is_static());
  EXPECT_EQ(s.ToString(), "[N,784]");
  EXPECT_EQ(Shape().ToString(), "[]");
  EXPECT_TRUE(Shape().is_scalar());
  EXPECT_EQ(Shape().num_elements(), 1);
  EXPECT_EQ(s.BindBatch(32), (Shape{32, 784}));
  EXPECT_EQ(*Shape({2, 0, 5}).NumElements(), 0);
}

TEST(ShapeTest, NumElementsRejectsSymbolicAndHuge) {
  EXPECT_EQ(Shape({kBatchDim, 3}).NumElements().status().code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<int64_t> huge = Shape({1 << 20, 1 << 20, 1 << 20}).NumElements();
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("2^40"), std::string::npos);
}

TEST(ShapeTest, ValidateRejectsNegativeDimsAndHugeRank) {
  EXPECT_TRUE(Shape({kBatchDim, 3}).Validate().ok());
  absl::Status neg = Shape({3, -7}).Validate();
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.message().find("negative dimension -7"), std::string::npos);
  EXPECT_FALSE(Shape(std::vector<int64_t>(kMaxRank + 1, 1)).Validate().ok());
  // Overflow of int64 in the product must be caught, not wrap around.
  EXPECT_FALSE(Shape({int64_t{1} << 40, int64_t{1} << 40}).Validate().ok());
}

struct BroadcastCase {
  Shape a, b, expected;
};

TEST(BroadcastTest, NumpyRules) {
  const BroadcastCase cases[] = {
      {Shape(), Shape({2, 3}), Shape({2, 3})},
      {Shape({2, 3}), Shape({3}), Shape({2, 3})},
      {Shape({3, 1, 5}), Shape({4, 1}), Shape({3, 4, 5})},
      {Shape({kBatchDim, 1}), Shape({1, 5}), Shape({kBatchDim, 5})},
      {Shape({kBatchDim, 10}), Shape({kBatchDim, 10}), Shape({kBatchDim, 10})},
      {Shape({kBatchDim}), Shape({4}), Shape({4})},
      {Shape({0, 3}), Shape({1, 3}), Shape({0, 3})},
  };
  for (const BroadcastCase& c : cases) {
    absl::StatusOr<Shape> out = BroadcastShapes(c.a, c.b);
    ASSERT_TRUE(out.ok()) << c.a.ToString() << " vs " << c.b.ToString() << ": " << out.status();
    EXPECT_EQ(*out, c.expected) << c.a.ToString() << " vs " << c.b.ToString();
    // Broadcasting is symmetric.
    EXPECT_EQ(*BroadcastShapes(c.b, c.a), c.expected);
  }
}

TEST(BroadcastTest, MismatchNamesBothShapes) {
  absl::StatusOr<Shape> out = BroadcastShapes(Shape({2, 3}), Shape({4}));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("[2,3] and [4]"), std::string::npos) << out.status();
}

TEST(NormalizeAxisTest, Range) {
  EXPECT_EQ(*NormalizeAxis(-1, 3), 2);
  EXPECT_EQ(*NormalizeAxis(0, 3), 0);
  EXPECT_FALSE(NormalizeAxis(3, 3).ok());
  EXPECT_FALSE(NormalizeAxis(-4, 3).ok());
  EXPECT_FALSE(NormalizeAxis(0, 0).ok());
}

}  // namespace
}  // namespace tsr
