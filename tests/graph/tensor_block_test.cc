// ExtractBlock / InsertBlock: blocks of 1-3 dimensional tensors out and back in, and
// blocks that do not fit.
#include "graph/tensor_block.h"

#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(TensorBlockTest, ExtractsAndInsertsBlocks) {
  std::vector<float> values(2 * 3 * 4);
  std::iota(values.begin(), values.end(), 0.f);
  const Tensor whole = Tensor::FromVector<float>(Shape{2, 3, 4}, values);
  absl::StatusOr<Tensor> block = ExtractBlock(whole, {1, 1, 2}, Shape{1, 2, 2});
  ASSERT_TRUE(block.ok()) << block.status();
  // [1][1][2..3] = 18, 19; [1][2][2..3] = 22, 23.
  EXPECT_EQ(std::vector<float>(block->flat<float>().begin(), block->flat<float>().end()),
            (std::vector<float>{18, 19, 22, 23}));
  Tensor target(DType::kF32, Shape{2, 3, 4});
  ASSERT_TRUE(InsertBlock(target, {1, 1, 2}, *block).ok());
  EXPECT_EQ(target.flat<float>()[18], 18);
  EXPECT_EQ(target.flat<float>()[23], 23);
  EXPECT_EQ(target.flat<float>()[17], 0);
  // Rank 1 and a whole-tensor block.
  const Tensor row = Tensor::FromVector<int64_t>(Shape{5}, {1, 2, 3, 4, 5});
  absl::StatusOr<Tensor> tail = ExtractBlock(row, {3}, Shape{2});
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->flat<int64_t>()[0], 4);
  absl::StatusOr<Tensor> all = ExtractBlock(whole, {0, 0, 0}, whole.shape());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->flat<float>()[23], 23);
}

TEST(TensorBlockTest, RejectsBlocksOutside) {
  const Tensor whole(DType::kF32, Shape{2, 3});
  EXPECT_FALSE(ExtractBlock(whole, {1, 2}, Shape{1, 2}).ok());
  EXPECT_FALSE(ExtractBlock(whole, {0}, Shape{1, 2}).ok());
  EXPECT_FALSE(ExtractBlock(whole, {-1, 0}, Shape{1, 2}).ok());
  Tensor target(DType::kF32, Shape{2, 3});
  EXPECT_FALSE(InsertBlock(target, {0, 0}, Tensor(DType::kF64, Shape{1, 1})).ok());
  const absl::Status s = InsertBlock(target, {2, 0}, Tensor(DType::kF32, Shape{1, 1}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("does not lie inside [2,3]"), std::string::npos) << s;
}

}  // namespace
}  // namespace tsr
