// Tests of runtime/data/data_file.h: plain and gzip reads, concatenated members, and
// hostile gzip input (truncated, corrupt, trailing garbage, over the size limit).
#include "runtime/data/data_file.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

std::string TempPath(absl::string_view name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/data_file_test_", ::getpid(), "_", name);
}

void WritePlain(const std::string& path, absl::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The gzip bytes of `data`, made with zlib's gzFile API as the gzip tool would.
std::string GzipBytes(absl::string_view data, absl::string_view name) {
  const std::string path = TempPath(absl::StrCat(name, ".tmp.gz"));
  gzFile f = gzopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  if (!data.empty()) {
    EXPECT_EQ(gzwrite(f, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
  }
  EXPECT_EQ(gzclose(f), Z_OK);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return bytes;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() % 7);  // compressible but not trivial
  return s;
}

TEST(DataFileTest, ReadsPlainAndGzipFiles) {
  const std::string data = RandomBytes(300000, 1);
  const std::string plain = TempPath("plain.bin"), gz = TempPath("data.gz");
  WritePlain(plain, data);
  WritePlain(gz, GzipBytes(data, "a"));
  absl::StatusOr<std::string> a = ReadDataFile(plain);
  absl::StatusOr<std::string> b = ReadDataFile(gz);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a, data);
  EXPECT_EQ(*b, data);
  std::remove(plain.c_str());
  std::remove(gz.c_str());
}

TEST(DataFileTest, GunzipsEmptyAndConcatenatedMembers) {
  absl::StatusOr<std::string> empty = Gunzip(GzipBytes("", "e"), 100);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(*empty, "");
  const std::string two = GzipBytes("hello ", "h") + GzipBytes("world", "w");
  absl::StatusOr<std::string> joined = Gunzip(two, 100);
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_EQ(*joined, "hello world");
}

TEST(DataFileTest, RefusesTruncatedGzipAtEveryLength) {
  const std::string gz = GzipBytes(RandomBytes(5000, 2), "t");
  for (size_t len = 2; len < gz.size(); len += (len < 40 ? 1 : 97)) {
    SCOPED_TRACE(absl::StrCat("length ", len, " of ", gz.size()));
    absl::StatusOr<std::string> r = Gunzip(absl::string_view(gz).substr(0, len), 1 << 20);
    ASSERT_FALSE(r.ok());
  }
  absl::StatusOr<std::string> r = Gunzip(absl::string_view(gz).substr(0, gz.size() - 1), 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("truncated"));
}

TEST(DataFileTest, RefusesCorruptGzip) {
  const std::string data = RandomBytes(5000, 3);
  std::string gz = GzipBytes(data, "c");
  // A flipped byte in the trailer's CRC-32 (bytes -8..-5): the data inflates but fails the check.
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0x40;
  absl::StatusOr<std::string> r = Gunzip(bad_crc, 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(r.status().message(), HasSubstr("corrupt"));
  // Flipped bytes in the middle of the deflate stream must never crash or be accepted.
  for (int seed = 0; seed < 20; ++seed) {
    std::string bad = gz;
    std::mt19937 rng(seed);
    bad[12 + rng() % (bad.size() - 20)] ^= static_cast<char>(1 + rng() % 255);
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    EXPECT_FALSE(Gunzip(bad, 1 << 20).ok());
  }
}

TEST(DataFileTest, RefusesTrailingGarbageAndNonGzip) {
  absl::StatusOr<std::string> r = Gunzip(GzipBytes("abc", "g") + "xyz", 100);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("trailing garbage"));
  EXPECT_FALSE(Gunzip("plain text", 100).ok());
}

TEST(DataFileTest, BoundsTheInflatedSize) {
  // 64 MiB of zeros compress to ~64 KiB: a limit of 1 MiB must stop it early.
  const std::string zeros(64 << 20, '\0');
  const std::string gz = GzipBytes(zeros, "z");
  ASSERT_LT(gz.size(), 1u << 20);
  absl::StatusOr<std::string> r = Gunzip(gz, 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("1048576"));
  // Exactly at the limit is fine.
  absl::StatusOr<std::string> exact = Gunzip(GzipBytes(std::string(1000, 'a'), "x"), 1000);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->size(), 1000u);
  EXPECT_FALSE(Gunzip(GzipBytes(std::string(1001, 'a'), "y"), 1000).ok());
}

TEST(DataFileTest, ErrorsNameThePath) {
  const std::string missing = TempPath("missing.gz");
  absl::StatusOr<std::string> r = ReadDataFile(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(missing));
  const std::string gz = TempPath("trunc.gz");
  const std::string bytes = GzipBytes(RandomBytes(1000, 4), "q");
  WritePlain(gz, bytes.substr(0, bytes.size() / 2));
  r = ReadDataFile(gz);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(gz));
  std::remove(gz.c_str());
}

}  // namespace
}  // namespace tsr
