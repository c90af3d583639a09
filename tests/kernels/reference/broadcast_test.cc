// Tests of BroadcastIndex (kernels/reference/broadcast.h).
#include "kernels/reference/broadcast.h"

#include <vector>

#include "gtest/gtest.h"

namespace tsr::reference {
namespace {

TEST(BroadcastIndexTest, ThreeOneFiveAgainstFourOne) {
  const Shape out{3, 4, 5};
  absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(out, {Shape{3, 1, 5}, Shape{4, 1}});
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->num_elements(), 60);
  EXPECT_EQ(index->num_inputs(), 2);
  for (int64_t a = 0; a < 3; ++a) {
    for (int64_t b = 0; b < 4; ++b) {
      for (int64_t c = 0; c < 5; ++c) {
        const int64_t i = (a * 4 + b) * 5 + c;
        EXPECT_EQ(index->InputOffset(0, i), a * 5 + c) << i;
        EXPECT_EQ(index->InputOffset(1, i), b) << i;
      }
    }
  }
}

TEST(BroadcastIndexTest, ScalarAndSameShape) {
  absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(Shape{2, 3}, {Shape{}, Shape{2, 3}, Shape{1, 1}});
  ASSERT_TRUE(index.ok());
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(index->InputOffset(0, i), 0);
    EXPECT_EQ(index->InputOffset(1, i), i);
    EXPECT_EQ(index->InputOffset(2, i), 0);
  }
}

TEST(BroadcastIndexTest, ScalarOutput) {
  absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(Shape{}, {Shape{}});
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->num_elements(), 1);
  EXPECT_EQ(index->InputOffset(0, 0), 0);
}

TEST(BroadcastIndexTest, ZeroSizeDims) {
  absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(Shape{0, 3}, {Shape{0, 1}, Shape{3}});
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->num_elements(), 0);
  EXPECT_TRUE(BroadcastIndex::Create(Shape{2, 0}, {Shape{1}}).ok());
}

TEST(BroadcastIndexTest, RowBroadcastAlongLeadingDim) {
  absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(Shape{2, 3}, {Shape{2, 1}});
  ASSERT_TRUE(index.ok());
  const std::vector<int64_t> expected = {0, 0, 0, 1, 1, 1};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(index->InputOffset(0, i), expected[i]);
}

TEST(BroadcastIndexTest, RejectsIncompatibleShapes) {
  EXPECT_FALSE(BroadcastIndex::Create(Shape{3, 4}, {Shape{2, 4}}).ok());
  EXPECT_FALSE(BroadcastIndex::Create(Shape{4}, {Shape{2, 4}}).ok());
  EXPECT_FALSE(BroadcastIndex::Create(Shape{0}, {Shape{2}}).ok());
}

}  // namespace
}  // namespace tsr::reference
