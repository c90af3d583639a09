// The checkpoint file format: round trips of every dtype, zero-size and scalar tensors
// and metadata; rejection (with the file and tensor named) of every single-bit flip,
// every truncation, appended bytes, a wrong magic or version, and bad inputs to Encode.
#include "runtime/checkpoint/checkpoint_file.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"
#include "platform/crc32c.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

Tensor RandomTensor(DType dtype, Shape shape, std::mt19937& rng) {
  Tensor t(dtype, std::move(shape));
  auto* bytes = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.num_bytes(); ++i) bytes[i] = static_cast<unsigned char>(rng());
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < t.num_bytes(); ++i) bytes[i] &= 1;
  }
  return t;
}

Checkpoint SampleCheckpoint(uint32_t seed) {
  std::mt19937 rng(seed);
  Checkpoint c;
  c.step = 1234;
  c.metadata = {{"epoch", "3"}, {"data_position", "17/900"}, {"empty", ""}};
  int i = 0;
  for (DType dtype : kAllDTypes) {
    c.tensors.emplace_back(absl::StrCat("layer", i++, "/", DTypeName(dtype)), RandomTensor(dtype, Shape({3, 2}), rng));
  }
  c.tensors.emplace_back("dense/kernel/momentum", RandomTensor(DType::kF32, Shape({4, 5}), rng));
  c.tensors.emplace_back("global_step", Tensor::Scalar<int64_t>(1234));
  c.tensors.emplace_back("empty", Tensor(DType::kF32, Shape({0, 7})));
  return c;
}

void ExpectSame(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.metadata, b.metadata);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
    EXPECT_TRUE(a.tensors[i].second.BitwiseEquals(b.tensors[i].second)) << a.tensors[i].first;
  }
}

TEST(CheckpointFileTest, RoundTripsEveryDTypeAndMetadata) {
  const Checkpoint c = SampleCheckpoint(7);
  absl::StatusOr<std::string> bytes = EncodeCheckpoint(c);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->substr(0, 8), std::string("TSRCKPT\n"));
  absl::StatusOr<Checkpoint> back = DecodeCheckpoint(*bytes, "mem");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSame(c, *back);
  ASSERT_NE(back->Find("global_step"), nullptr);
  EXPECT_EQ(back->Find("global_step")->GetAsInt64(0), 1234);
  EXPECT_EQ(back->Find("nope"), nullptr);
}

TEST(CheckpointFileTest, EmptyCheckpointRoundTrips) {
  Checkpoint c;
  absl::StatusOr<Checkpoint> back = DecodeCheckpoint(*EncodeCheckpoint(c), "mem");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSame(c, *back);
}

TEST(CheckpointFileTest, WritesAndReadsFiles) {
  const std::string dir = ::testing::TempDir() + "/ckpt_file_test";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/one";
  const Checkpoint c = SampleCheckpoint(8);
  ASSERT_TRUE(WriteCheckpointFile(path, c).ok());
  absl::StatusOr<Checkpoint> back = ReadCheckpointFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSame(c, *back);
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpointFile(dir + "/missing").status()));
  absl::Status small = ReadCheckpointFile(path, 16).status();
  EXPECT_TRUE(absl::IsResourceExhausted(small)) << small;
}

// Every byte is under a checksum, so flipping any single bit anywhere must be caught.
TEST(CheckpointFileTest, RejectsEverySingleBitFlip) {
  Checkpoint c = SampleCheckpoint(9);
  c.tensors.resize(4);  // keep the file small enough to try every bit
  const std::string good = *EncodeCheckpoint(c);
  ASSERT_TRUE(DecodeCheckpoint(good, "f").ok());
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      absl::StatusOr<Checkpoint> r = DecodeCheckpoint(bad, "f");
      ASSERT_FALSE(r.ok()) << "flip of bit " << bit << " of byte " << byte << " went unnoticed";
      EXPECT_THAT(r.status().message(), HasSubstr("checkpoint 'f'"));
    }
  }
}

TEST(CheckpointFileTest, DataFlipNamesTheTensor) {
  const Checkpoint c = SampleCheckpoint(10);
  std::string bad = *EncodeCheckpoint(c);
  // The file ends with global_step (8 bytes) then the zero-size "empty".
  ASSERT_EQ(c.tensors.back().second.num_bytes(), 0u);
  bad[bad.size() - 3] ^= 0x10;
  absl::Status s = DecodeCheckpoint(bad, "dir/ckpt-5").status();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("checkpoint 'dir/ckpt-5'"));
  EXPECT_THAT(s.message(), HasSubstr("tensor 'global_step'"));
  EXPECT_THAT(s.message(), HasSubstr("checksum"));
}

TEST(CheckpointFileTest, RejectsEveryTruncationAndAppendedBytes) {
  const std::string good = *EncodeCheckpoint(SampleCheckpoint(11));
  for (size_t n = 0; n < good.size(); ++n) {
    absl::Status s = DecodeCheckpoint(good.substr(0, n), "t").status();
    ASSERT_FALSE(s.ok()) << "truncation to " << n << " bytes accepted";
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  }
  EXPECT_THAT(DecodeCheckpoint(good.substr(0, 10), "t").status().message(), HasSubstr("truncated"));
  EXPECT_THAT(DecodeCheckpoint(good.substr(0, good.size() - 1), "t").status().message(), HasSubstr("size mismatch"));
  EXPECT_FALSE(DecodeCheckpoint(good + "x", "t").ok());
}

// Rewrites the header's crc after an edit, so that the check under test is reached.
void ResealHeader(std::string& bytes) {
  const uint32_t crc = crc32c::Value(bytes.data(), 28);
  for (int i = 0; i < 4; ++i) bytes[28 + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
}

TEST(CheckpointFileTest, RejectsWrongMagicAndVersion) {
  const std::string good = *EncodeCheckpoint(SampleCheckpoint(12));
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_THAT(DecodeCheckpoint(magic, "m").status().message(), HasSubstr("bad magic"));
  std::string version = good;
  version[8] = 2;
  ResealHeader(version);
  absl::Status s = DecodeCheckpoint(version, "v").status();
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("version 2"));
  EXPECT_FALSE(DecodeCheckpoint(std::string(100, '\0'), "z").ok());
}

TEST(CheckpointFileTest, EncodeRejectsBadNames) {
  Checkpoint dup;
  dup.tensors = {{"a", Tensor::Scalar<float>(1)}, {"a", Tensor::Scalar<float>(2)}};
  EXPECT_THAT(EncodeCheckpoint(dup).status().message(), HasSubstr("'a' appears twice"));
  Checkpoint unnamed;
  unnamed.tensors = {{"", Tensor::Scalar<float>(1)}};
  EXPECT_FALSE(EncodeCheckpoint(unnamed).ok());
  Checkpoint invalid;
  invalid.tensors = {{"x", Tensor()}};
  EXPECT_FALSE(EncodeCheckpoint(invalid).ok());
}

}  // namespace
}  // namespace tsr
