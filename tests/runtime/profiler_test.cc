// Tests of runtime/profiler.h: the Chrome trace is valid JSON with the events in it,
// names are escaped, Record is thread-safe, and the top table is ordered.
#include "runtime/profiler.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

// A strict JSON validator (RFC 8259), enough to tell whether a trace would load.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  bool Valid() {
    Space();
    if (!Value()) return false;
    Space();
    return i_ == s_.size();
  }

 private:
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  bool String() {
    if (Peek() != '"') return false;
    ++i_;
    while (i_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i_;
        const char e = Peek();
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k) {
            if (!std::isxdigit(static_cast<unsigned char>(i_ + k < s_.size() ? s_[i_ + k] : 'x'))) return false;
          }
          i_ += 5;
          continue;
        }
        if (std::string("\"\\/bfnrt").find(e) == std::string::npos || e == '\0') return false;
      }
      ++i_;
    }
    return false;
  }
  bool Number() {
    const size_t start = i_;
    if (Peek() == '-') ++i_;
    if (!std::isdigit(static_cast<unsigned char>(Peek()))) return false;
    if (Peek() == '0') {
      ++i_;
    } else {
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++i_;
    }
    if (Peek() == '.') {
      ++i_;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) return false;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++i_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++i_;
      if (Peek() == '+' || Peek() == '-') ++i_;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) return false;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++i_;
    }
    return i_ > start;
  }
  bool Value() {
    switch (Peek()) {
      case '{': {
        ++i_;
        Space();
        if (Peek() == '}') return ++i_, true;
        while (true) {
          Space();
          if (!String()) return false;
          Space();
          if (Peek() != ':') return false;
          ++i_;
          Space();
          if (!Value()) return false;
          Space();
          if (Peek() == '}') return ++i_, true;
          if (Peek() != ',') return false;
          ++i_;
        }
      }
      case '[': {
        ++i_;
        Space();
        if (Peek() == ']') return ++i_, true;
        while (true) {
          Space();
          if (!Value()) return false;
          Space();
          if (Peek() == ']') return ++i_, true;
          if (Peek() != ',') return false;
          ++i_;
        }
      }
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }

  const std::string& s_;
  size_t i_ = 0;
};

TEST(JsonCheckerTest, RejectsInvalidJson) {
  for (const char* bad : {"{", "{\"a\":}", "[1,]", "\"a\nb\"", "\"\\x\"", "01", "{'a':1}", "[1] x"}) {
    EXPECT_FALSE(JsonChecker(bad).Valid()) << bad;
  }
  EXPECT_TRUE(JsonChecker("{\"a\":[1,-2.5e3,true,null,\"\\u00e9\\n\"]}").Valid());
}

TEST(ProfilerTest, JsonQuoteEscapes) {
  EXPECT_EQ(JsonQuote("plain/name:0"), "\"plain/name:0\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("x\ny\tz\r"), "\"x\\ny\\tz\\r\"");
  EXPECT_EQ(JsonQuote(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(JsonQuote(std::string("nul\0end", 7)), "\"nul\\u0000end\"");
  EXPECT_EQ(JsonQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");             // valid UTF-8 is kept
  EXPECT_EQ(JsonQuote("bad\xff\xc3"), "\"bad\\ufffd\\ufffd\"");       // invalid bytes are replaced
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate is not UTF-8
}

TEST(ProfilerTest, ChromeTraceIsValidJsonWithEveryEvent) {
  Profiler profiler;
  profiler.Record({"dense1/matmul", "MatMul", 2'000'000, 1'500'000, 0});
  profiler.Record({"weird \"name\"\\ with\ncontrol\x01", "Add", 1'000'000, 250, 2});
  profiler.Record({"relu", "Relu", 3'600'000, 1'234, 1});
  const std::string json = profiler.ChromeTraceJson();
  EXPECT_TRUE(JsonChecker(json).Valid()) << json;
  // Sorted by start, relative to the earliest, in microseconds.
  const size_t add = json.find("\"cat\":\"Add\"");
  const size_t matmul = json.find("\"cat\":\"MatMul\"");
  const size_t relu = json.find("\"cat\":\"Relu\"");
  ASSERT_NE(add, std::string::npos);
  EXPECT_LT(add, matmul);
  EXPECT_LT(matmul, relu);
  EXPECT_THAT(json, HasSubstr(R"("name":"dense1/matmul","cat":"MatMul","ph":"X","ts":1000.000,"dur":1500.000,)"
                              R"("pid":1,"tid":0,"args":{"op":"MatMul"}})"));
  EXPECT_THAT(json, HasSubstr(R"("ts":0.000,"dur":0.250,"pid":1,"tid":2)"));
  EXPECT_THAT(json, HasSubstr(R"("ts":2600.000,"dur":1.234,"pid":1,"tid":1)"));
  EXPECT_THAT(json, HasSubstr(R"("name":"weird \"name\"\\ with\ncontrol\u0001")"));

  // Cross-check with Python's json module when there is one.
  if (std::system("/usr/bin/python3 -c 'import json' >/dev/null 2>&1") == 0) {
    const std::string path = absl::StrCat("/tmp/profiler_test_", ::getpid(), ".json");
    ASSERT_TRUE(profiler.WriteChromeTrace(path).ok());
    const std::string check = absl::StrCat(
        "/usr/bin/python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); "
        "x=[e for e in t[\"traceEvents\"] if e[\"ph\"]==\"X\"]; assert len(x)==3, x; "
        "assert x[0][\"name\"]==\"weird \\\"name\\\"\\\\ with\\ncontrol\\x01\", x[0]' ",
        path);
    EXPECT_EQ(std::system(check.c_str()), 0);
    std::remove(path.c_str());
  }
}

TEST(ProfilerTest, EmptyTraceIsValid) {
  Profiler profiler;
  EXPECT_TRUE(JsonChecker(profiler.ChromeTraceJson()).Valid());
  EXPECT_THAT(profiler.TopTable(5), HasSubstr("(all)"));
}

TEST(ProfilerTest, RecordIsThreadSafe) {
  Profiler profiler;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&profiler, t] {
      for (int i = 0; i < 1000; ++i) profiler.Record({absl::StrCat("n", i), "Op", i, 1, t});
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(profiler.Events().size(), 8000u);
  EXPECT_TRUE(JsonChecker(profiler.ChromeTraceJson()).Valid());
  profiler.Clear();
  EXPECT_TRUE(profiler.Events().empty());
}

TEST(ProfilerTest, TopTableOrdersByTotalTime) {
  Profiler profiler;
  // MatMul: 2 calls, 6 ms; Relu: 3 calls, 3 ms; Add: 1 call, 1 ms. Total 10 ms.
  profiler.Record({"mm1", "MatMul", 0, 4'000'000, 0});
  profiler.Record({"mm2", "MatMul", 0, 2'000'000, 0});
  for (int i = 0; i < 3; ++i) profiler.Record({absl::StrCat("relu", i), "Relu", 0, 1'000'000, 0});
  profiler.Record({"add", "Add", 0, 1'000'000, 0});
  const std::string table = profiler.TopTable(2);
  std::vector<std::string> lines = absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << table;  // header, MatMul, Relu, (all)
  EXPECT_THAT(lines[0], HasSubstr("calls"));
  EXPECT_THAT(lines[1], ::testing::MatchesRegex(R"(MatMul +2 +6\.000 +3\.0000 +60\.0%)"));
  EXPECT_THAT(lines[2], ::testing::MatchesRegex(R"(Relu +3 +3\.000 +1\.0000 +30\.0%)"));
  EXPECT_THAT(lines[3], ::testing::MatchesRegex(R"(\(all\) +6 +10\.000 +1\.6667 +100\.0%)"));
  EXPECT_THAT(profiler.TopTable(10), HasSubstr("Add"));
}

TEST(ProfilerTest, WriteChromeTraceNamesThePathOnError) {
  Profiler profiler;
  absl::Status s = profiler.WriteChromeTrace("/nonexistent-dir/trace.json");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent-dir/trace.json"));
}

}  // namespace
}  // namespace tsr
