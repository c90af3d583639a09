// Tests of runtime/data/csv_reader.h: headers (detected, forced, absent), label columns
// by name and index, quoting and line ends, gzip files, and errors with line and column.
#include "runtime/data/csv_reader.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Dataset> Parse(absl::string_view text, const CsvOptions& options = {}) {
  return ParseCsv(text, options, "t.csv");
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}
std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.flat<int64_t>().begin(), t.flat<int64_t>().end());
}

TEST(CsvReaderTest, HeaderAndLabelByName) {
  absl::StatusOr<Dataset> d = Parse("a,label,b\n1,0,2\n3.5,2,-4e1\n", {.label_name = "label"});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->num_examples(), 2);
  EXPECT_EQ(d->Find("features")->shape(), Shape({2, 2}));
  EXPECT_EQ(Floats(*d->Find("features")), std::vector<float>({1, 2, 3.5f, -40}));
  EXPECT_EQ(d->Find("labels")->dtype(), DType::kI64);
  EXPECT_EQ(Ints(*d->Find("labels")), std::vector<int64_t>({0, 2}));
}

TEST(CsvReaderTest, NoHeaderLabelByIndexAndFromTheEnd) {
  for (int index : {2, -1}) {
    SCOPED_TRACE(index);
    absl::StatusOr<Dataset> d = Parse("1,2,7\n3,4,8\n5,6,9", {.label_index = index});
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(Floats(*d->Find("features")), std::vector<float>({1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(Ints(*d->Find("labels")), std::vector<int64_t>({7, 8, 9}));
  }
  absl::StatusOr<Dataset> d = Parse("1,2\n3,4\n");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->Find("labels"), nullptr);
  EXPECT_EQ(d->Find("features")->shape(), Shape({2, 2}));
}

TEST(CsvReaderTest, ForcedHeaderModesAndFloatLabels) {
  // A numeric first row is data under kAuto, a header under kPresent.
  absl::StatusOr<Dataset> d = Parse("10,20\n1,2\n", {.header = CsvHeader::kPresent});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->num_examples(), 1);
  d = Parse("x,y\n1,2\n", {.header = CsvHeader::kAbsent});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("t.csv:1: column 1: 'x' is not a number"));
  d = Parse("x,y\n1,2.5\n", {.label_name = "y", .label_dtype = DType::kF32});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->Find("labels")->dtype(), DType::kF32);
  EXPECT_EQ(d->Find("labels")->GetAsDouble(0), 2.5);
}

TEST(CsvReaderTest, QuotesLineEndsBomBlankLinesAndDelimiters) {
  absl::StatusOr<Dataset> d = Parse("\xEF\xBB\xBF\"a, b\", \"the \"\"label\"\"\"\r\n\r\n \"1\" , 2 \r\n\n3,+4\r\n",
                                    {.label_name = "the \"label\""});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Floats(*d->Find("features")), std::vector<float>({1, 3}));
  EXPECT_EQ(Ints(*d->Find("labels")), std::vector<int64_t>({2, 4}));
  d = Parse("1\t2\n3\t4\n", {.delimiter = '\t'});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Floats(*d->Find("features")), std::vector<float>({1, 2, 3, 4}));
}

TEST(CsvReaderTest, ErrorsNameLineAndColumn) {
  struct Case {
    std::string text;
    CsvOptions options;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"1,2\n3,4,5\n", {}, "t.csv:2: has 3 cells but line 1 has 2"},
      // A typo in the first row is not mistaken for a header.
      {"1,x\n2,3\n", {}, "t.csv:1: column 2: 'x' is not a number"},
      {"1,2\n3\n", {}, "t.csv:2: has 1 cells but line 1 has 2"},
      {"a,b\n1,2\n\n3,x\n", {}, "t.csv:4: column 2: 'x' is not a number"},
      {"1,2\n3,\n", {}, "t.csv:2: column 2: '' is empty"},
      {"1,nan\n", {.header = CsvHeader::kAbsent}, "t.csv:1: column 2: 'nan' is not finite"},
      {"1,inf\n", {.header = CsvHeader::kAbsent}, "is not finite"},
      {"1,1e400\n", {.header = CsvHeader::kAbsent}, "t.csv:1: column 2: '1e400' is out of range"},
      {"1,1e39\n", {}, "t.csv:1: column 2: '1e39' is out of range for f32"},
      {"1,2.5\n", {.label_index = 1}, "t.csv:1: column 2: the class label '2.5' is not an integer"},
      {"1,2 3\n", {}, "t.csv:1: column 2: '2 3' is not a number"},
      {"1,\"2\n", {}, "t.csv:1: column 2: unterminated quoted cell"},
      {"1,\"2\"x\n", {}, "unexpected text after a closing quote"},
      {"a,b\n1,2\n", {.label_name = "c"}, "no column named 'c'"},
      {"a,a\n1,2\n", {.label_name = "a"}, "names 'a' twice"},
      {"1,2\n", {.label_name = "a"}, "no header row"},
      {"1,2\n", {.label_index = 2}, "label column index 2 is out of range for 2 columns"},
      {"1,2\n", {.label_index = -3}, "out of range"},
      {"1,2\n", {.label_name = "a", .label_index = 0}, "not both"},
      {"1\n2\n", {.label_index = 0}, "no feature columns"},
      {"a,b\n", {}, "t.csv: no data rows"},
      {"", {}, "no data rows"},
      {"\n \n\r\n", {}, "no data rows"},
      {"1,2\n", {.label_index = 0, .label_dtype = DType::kU8}, "i64 or f32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<Dataset> d = Parse(c.text, c.options);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(d.status().message(), HasSubstr(c.message));
  }
}

TEST(CsvReaderTest, ReadsGzipFiles) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/csv_reader_test_", ::getpid(), ".csv.gz");
  const std::string text = "f,label\n0.5,1\n0.25,0\n";
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
  absl::StatusOr<Dataset> d = ReadCsv(path, {.label_name = "label"});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Floats(*d->Find("features")), std::vector<float>({0.5f, 0.25f}));
  EXPECT_EQ(Ints(*d->Find("labels")), std::vector<int64_t>({1, 0}));
  std::remove(path.c_str());
  d = ReadCsv(path);
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr(path));
}

}  // namespace
}  // namespace tsr
