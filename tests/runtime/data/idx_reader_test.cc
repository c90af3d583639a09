// Tests of runtime/data/idx_reader.h: every IDX element type, plain and gzip files,
// hostile headers and data, the MNIST folder loader, and (when installed) the real
// Fashion-MNIST files.
#include "runtime/data/idx_reader.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/idx_reader_test_", ::getpid());
  ::mkdir(path.c_str(), 0700);
  return path;
}

void WritePlain(const std::string& path, absl::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void WriteGzip(const std::string& path, absl::string_view bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  if (!bytes.empty()) {
    ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  }
  ASSERT_EQ(gzclose(f), Z_OK);
}

void AppendBigEndian(std::string& s, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// An IDX header: magic 00 00 type rank, then big-endian u32 dims.
std::string IdxHeader(uint8_t type, const std::vector<uint32_t>& dims) {
  std::string s{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) AppendBigEndian(s, d, 4);
  return s;
}

TEST(IdxReaderTest, ParsesEveryElementType) {
  {
    std::string b = IdxHeader(0x08, {2, 3}) + std::string("\x00\x01\x02\xfd\xfe\xff", 6);
    absl::StatusOr<Tensor> t = ParseIdx(b);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->BitwiseEquals(Tensor::FromVector<uint8_t>(Shape({2, 3}), {0, 1, 2, 253, 254, 255})));
  }
  {
    std::string b = IdxHeader(0x09, {3}) + std::string("\x7f\x80\xff", 3);
    absl::StatusOr<Tensor> t = ParseIdx(b);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->BitwiseEquals(Tensor::FromVector<int8_t>(Shape({3}), {127, -128, -1})));
  }
  {
    std::string b = IdxHeader(0x0B, {3});
    AppendBigEndian(b, 0x7fff, 2);
    AppendBigEndian(b, 0x8000, 2);
    AppendBigEndian(b, 0x0102, 2);
    absl::StatusOr<Tensor> t = ParseIdx(b);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->BitwiseEquals(Tensor::FromVector<int32_t>(Shape({3}), {32767, -32768, 258})));
  }
  {
    std::string b = IdxHeader(0x0C, {2});
    AppendBigEndian(b, 0x01020304, 4);
    AppendBigEndian(b, 0xfffffffe, 4);
    absl::StatusOr<Tensor> t = ParseIdx(b);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->BitwiseEquals(Tensor::FromVector<int32_t>(Shape({2}), {0x01020304, -2})));
  }
  {
    std::string b = IdxHeader(0x0D, {1, 2});
    uint32_t bits;
    for (float f : {1.5f, -0.25f}) {
      std::memcpy(&bits, &f, 4);
      AppendBigEndian(b, bits, 4);
    }
    absl::StatusOr<Tensor> t = ParseIdx(b);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->BitwiseEquals(Tensor::FromVector<float>(Shape({1, 2}), {1.5f, -0.25f})));
  }
  {
    std::string b = IdxHeader(0x0E, {2});
    uint64_t bits;
    for (double d : {3.25, -1e300}) {
      std::memcpy(&bits, &d, 8);
      AppendBigEndian(b, bits, 8);
    }
    absl::StatusOr<Tensor> t = ParseIdx(b);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->BitwiseEquals(Tensor::FromVector<double>(Shape({2}), {3.25, -1e300})));
  }
  {
    // A zero dimension is a valid (empty) array.
    absl::StatusOr<Tensor> t = ParseIdx(IdxHeader(0x08, {0, 28, 28}));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->shape(), Shape({0, 28, 28}));
  }
}

TEST(IdxReaderTest, RefusesHostileHeadersAndData) {
  struct Case {
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "truncated"},
      {std::string("\x00\x00\x08", 3), "truncated"},
      {std::string("\x1f\x8b\x08\x01", 4), "magic"},
      {std::string("\x00\x01\x08\x01", 4), "magic"},
      {std::string("\x00\x00\x0a\x01\x00\x00\x00\x01\x00", 9), "unknown element type 0x0a"},
      {std::string("\x00\x00\x08\x00", 4), "rank 0"},
      {std::string("\x00\x00\x08\x21", 4), "rank 33"},
      {std::string("\x00\x00\x08\x02\x00\x00\x00\x01", 8), "truncated header"},
      // 2^32-1 cubed overflows int64 if multiplied naively.
      {IdxHeader(0x08, {0xffffffff, 0xffffffff, 0xffffffff}), "exceed the limit"},
      {IdxHeader(0x08, {65536, 65536, 65536}), "exceed the limit"},
      // Fits the limits but claims far more data than the file has: no allocation.
      {IdxHeader(0x0E, {60000, 28, 28}) + "abc", "truncated data"},
      {IdxHeader(0x08, {2, 2}) + "abc", "truncated data"},
      {IdxHeader(0x08, {2, 2}) + "abcde", "trailing bytes"},
      {IdxHeader(0x0B, {2}) + "abc", "needs 4 bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    absl::StatusOr<Tensor> t = ParseIdx(c.bytes);
    ASSERT_FALSE(t.ok());
    EXPECT_THAT(t.status().message(), HasSubstr(c.message));
  }
}

TEST(IdxReaderTest, ReadsPlainAndGzipFilesAndNamesThemInErrors) {
  const std::string dir = TempDir();
  const std::string b = IdxHeader(0x08, {2, 2}) + "wxyz";
  WritePlain(dir + "/a.idx", b);
  WriteGzip(dir + "/a.idx.gz", b);
  for (const std::string name : {"/a.idx", "/a.idx.gz"}) {
    absl::StatusOr<Tensor> t = ReadIdx(dir + name);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->shape(), Shape({2, 2}));
    EXPECT_EQ(t->GetAsInt64(3), 'z');
  }
  WriteGzip(dir + "/bad.gz", IdxHeader(0x08, {3, 2}) + "wxyz");
  absl::StatusOr<Tensor> t = ReadIdx(dir + "/bad.gz");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr(dir + "/bad.gz: idx: truncated data"));
}

// Writes an MNIST-style folder with `n` images of h x w and `labels` labels.
void WriteMnist(const std::string& dir, absl::string_view split, int n, int h, int w, int labels, bool gzip) {
  std::string images = IdxHeader(0x08, {static_cast<uint32_t>(n), static_cast<uint32_t>(h), static_cast<uint32_t>(w)});
  for (int i = 0; i < n * h * w; ++i) images.push_back(static_cast<char>(i % 256));
  std::string label_bytes = IdxHeader(0x08, {static_cast<uint32_t>(labels)});
  for (int i = 0; i < labels; ++i) label_bytes.push_back(static_cast<char>(i % 10));
  const std::string suffix = gzip ? ".gz" : "";
  const std::string image_path = absl::StrCat(dir, "/", split, "-images-idx3-ubyte", suffix);
  const std::string label_path = absl::StrCat(dir, "/", split, "-labels-idx1-ubyte", suffix);
  if (gzip) {
    WriteGzip(image_path, images);
    WriteGzip(label_path, label_bytes);
  } else {
    WritePlain(image_path, images);
    WritePlain(label_path, label_bytes);
  }
}

TEST(IdxReaderTest, LoadsAnMnistFolder) {
  const std::string dir = TempDir() + "/mnist";
  ::mkdir(dir.c_str(), 0700);
  WriteMnist(dir, "train", 5, 4, 3, 5, /*gzip=*/true);
  WriteMnist(dir, "t10k", 2, 4, 3, 2, /*gzip=*/false);
  absl::StatusOr<Dataset> train = LoadMnist(dir, MnistSplit::kTrain);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->num_examples(), 5);
  const Tensor* image = train->Find("image");
  const Tensor* labels = train->Find("labels");
  ASSERT_NE(image, nullptr);
  ASSERT_NE(labels, nullptr);
  EXPECT_EQ(image->dtype(), DType::kF32);
  EXPECT_EQ(image->shape(), Shape({5, 1, 4, 3}));
  EXPECT_EQ(labels->dtype(), DType::kI64);
  EXPECT_EQ(labels->shape(), Shape({5}));
  for (int i = 0; i < 60; ++i) ASSERT_EQ(image->data<float>()[i], static_cast<float>(i % 256) / 255.0f) << i;
  EXPECT_EQ(image->data<float>()[59], 59.0f / 255.0f);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(labels->data<int64_t>()[i], i % 10);

  absl::StatusOr<Dataset> test = LoadMnist(dir, MnistSplit::kTest, {.flatten = true});
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->Find("image")->shape(), Shape({2, 12}));
}

TEST(IdxReaderTest, MnistLoaderRefusesMismatchesAndMissingFiles) {
  const std::string dir = TempDir() + "/mnist_bad";
  ::mkdir(dir.c_str(), 0700);
  absl::StatusOr<Dataset> d = LoadMnist(dir, MnistSplit::kTrain);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(d.status().message(), HasSubstr("train-images-idx3-ubyte"));

  WriteMnist(dir, "train", 5, 2, 2, 4, /*gzip=*/false);
  d = LoadMnist(dir, MnistSplit::kTrain);
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("holds 5 images but"));
  EXPECT_THAT(d.status().message(), HasSubstr("holds 4 labels"));

  WriteMnist(dir, "t10k", 0, 2, 2, 0, /*gzip=*/false);
  d = LoadMnist(dir, MnistSplit::kTest);
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("empty"));

  // Images that are not u8 [n, h, w].
  WritePlain(dir + "/t10k-images-idx3-ubyte", IdxHeader(0x08, {4}) + "abcd");
  d = LoadMnist(dir, MnistSplit::kTest);
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("must be u8 [n, height, width]"));
}

// The real dataset, when the Debian package dataset-fashion-mnist is installed.
TEST(IdxReaderTest, LoadsFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) GTEST_SKIP() << dir << " is not installed";
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Dataset> train = LoadMnist(dir, MnistSplit::kTrain);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(train.ok()) << train.status();
  std::printf("loading the Fashion-MNIST training set took %.3f s\n", seconds);
  absl::StatusOr<Dataset> test = LoadMnist(dir, MnistSplit::kTest, {.flatten = true});
  ASSERT_TRUE(test.ok()) << test.status();

  EXPECT_EQ(train->num_examples(), 60000);
  EXPECT_EQ(test->num_examples(), 10000);
  EXPECT_EQ(train->Find("image")->shape(), Shape({60000, 1, 28, 28}));
  EXPECT_EQ(test->Find("image")->shape(), Shape({10000, 784}));
  for (const Dataset* d : {&*train, &*test}) {
    const Tensor& labels = *d->Find("labels");
    std::vector<int64_t> counts(10, 0);
    for (int64_t label : labels.flat<int64_t>()) {
      ASSERT_GE(label, 0);
      ASSERT_LT(label, 10);
      ++counts[label];
    }
    // Fashion-MNIST is balanced: 6000 (train) / 1000 (test) of each class.
    for (int c = 0; c < 10; ++c) EXPECT_EQ(counts[c], d->num_examples() / 10) << "class " << c;
    // The widely quoted normalization constants: mean 0.2860 (train) / 0.2868 (test), std 0.3530.
    double sum = 0, sum_sq = 0;
    const Tensor& image = *d->Find("image");
    for (float v : image.flat<float>()) {
      ASSERT_GE(v, 0.0f);
      ASSERT_LE(v, 1.0f);
      sum += v;
      sum_sq += static_cast<double>(v) * v;
    }
    const double mean = sum / static_cast<double>(image.num_elements());
    const double stddev = std::sqrt(sum_sq / static_cast<double>(image.num_elements()) - mean * mean);
    EXPECT_NEAR(mean, d == &*train ? 0.2860 : 0.2868, 0.0005);
    EXPECT_NEAR(stddev, 0.353, 0.003);
  }
  // The first training example is an ankle boot (class 9).
  EXPECT_EQ(train->Find("labels")->data<int64_t>()[0], 9);
}

}  // namespace
}  // namespace tsr
