// Tests of the conformance expectations file: parsing (and its errors), formatting, the
// comparison of a run with the file and --update's rewrite.
#include "tests/conformance/expectations.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr::conformance {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

CaseOutcome Pass(const std::string& name) { return {.name = name, .pass = true, .reason = ""}; }
CaseOutcome Fail(const std::string& name, const std::string& reason) {
  return {.name = name, .pass = false, .reason = reason};
}

TEST(ParseExpectationsTest, ReadsPassesKnownFailuresAndSkipsComments) {
  const std::string text =
      "# header\n"
      "\n"
      "test_abs pass\n"
      "  test_bernoulli known-fail: random op: outputs depend on the generator  \n"
      "test_cast_FLOAT_to_STRING known-fail:   type: string\n";
  absl::StatusOr<Expectations> e = ParseExpectations(text, "f.txt");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->size(), 3u);
  EXPECT_TRUE(e->at("test_abs").pass);
  EXPECT_FALSE(e->at("test_bernoulli").pass);
  EXPECT_EQ(e->at("test_bernoulli").reason, "random op: outputs depend on the generator");
  EXPECT_EQ(e->at("test_cast_FLOAT_to_STRING").reason, "type: string");
}

TEST(ParseExpectationsTest, EmptyTextIsEmpty) {
  absl::StatusOr<Expectations> e = ParseExpectations("# only a comment\n\n", "f.txt");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->empty());
}

TEST(ParseExpectationsTest, MalformedLinesNameFileAndLine) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"test_a pass\ntest_b\n", "f.txt:2: no outcome after the case name"},
      {"test_a passes\n", "f.txt:1: unknown outcome 'passes'"},
      {"# c\ntest_a known-fail\n", "f.txt:2: unknown outcome 'known-fail'"},
      {"test_a known-fail:   \n", "f.txt:1: a known-fail without a reason"},
      {"test_a pass\n\ntest_a known-fail: x\n", "f.txt:3: case 'test_a' is listed twice"},
      {"test/a pass\n", "f.txt:1: invalid case name 'test/a'"},
      {"test_a PASS\n", "f.txt:1: unknown outcome 'PASS'"},
      {"test_a pass extra\n", "f.txt:1: unknown outcome 'pass extra'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<Expectations> e = ParseExpectations(c.text, "f.txt");
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(e.status().message(), HasSubstr(c.message));
  }
}

TEST(FormatExpectationsTest, RoundTripsSortedWithHeader) {
  Expectations e;
  e["test_b"] = {.pass = false, .reason = "import: op type 'B' is not supported"};
  e["test_a"] = {.pass = true, .reason = ""};
  const std::string text = FormatExpectations(e, "# regenerate with --update");
  EXPECT_EQ(text,
            "# regenerate with --update\n"
            "test_a pass\n"
            "test_b known-fail: import: op type 'B' is not supported\n");
  absl::StatusOr<Expectations> parsed = ParseExpectations(text, "f.txt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->at("test_b").reason, "import: op type 'B' is not supported");
  EXPECT_TRUE(parsed->at("test_a").pass);
}

TEST(IsGeneratedReasonTest, RecognizesTheRunnersCategories) {
  EXPECT_TRUE(IsGeneratedReason("import: op type 'X' is not supported"));
  EXPECT_TRUE(IsGeneratedReason("mismatch: output 'y': 1 of 4 values differ"));
  EXPECT_TRUE(IsGeneratedReason("crash: signal 11"));
  EXPECT_FALSE(IsGeneratedReason("random op; outputs depend on the generator"));
  EXPECT_FALSE(IsGeneratedReason("imports: not a category"));
  EXPECT_FALSE(IsGeneratedReason("import"));
  EXPECT_FALSE(IsGeneratedReason(""));
}

Expectations Sample() {
  Expectations e;
  e["test_a"] = {.pass = true, .reason = ""};
  e["test_b"] = {.pass = true, .reason = ""};
  e["test_c"] = {.pass = false, .reason = "import: unsupported"};
  e["test_d"] = {.pass = false, .reason = "hand-written: needs sequences"};
  return e;
}

TEST(CompareWithExpectationsTest, AllAsExpectedIsOk) {
  const std::vector<CaseOutcome> run = {Pass("test_a"), Pass("test_b"), Fail("test_c", "import: x"),
                                        Fail("test_d", "type: y")};
  ConformanceReport r = CompareWithExpectations(Sample(), run, {"test_a", "test_b", "test_c", "test_d"});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.passed, 2);
  EXPECT_EQ(r.known_failures, 2);
  EXPECT_EQ(r.total, 4);
  EXPECT_TRUE(r.regressions.empty());
  EXPECT_TRUE(r.new_passes.empty());
}

TEST(CompareWithExpectationsTest, ARegressionFailsAndANewPassDoesNot) {
  const std::vector<CaseOutcome> run = {Pass("test_a"), Fail("test_b", "mismatch: z"), Pass("test_c"),
                                        Fail("test_d", "type: y")};
  ConformanceReport r = CompareWithExpectations(Sample(), run, {"test_a", "test_b", "test_c", "test_d"});
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.regressions.size(), 1u);
  EXPECT_EQ(r.regressions[0].name, "test_b");
  EXPECT_EQ(r.regressions[0].reason, "mismatch: z");
  EXPECT_THAT(r.new_passes, ElementsAre("test_c"));
  EXPECT_EQ(r.passed, 2);
  EXPECT_EQ(r.known_failures, 1);

  // A new pass alone keeps the run green.
  const std::vector<CaseOutcome> better = {Pass("test_a"), Pass("test_b"), Pass("test_c"), Fail("test_d", "t")};
  ConformanceReport r2 = CompareWithExpectations(Sample(), better, {"test_a", "test_b", "test_c", "test_d"});
  EXPECT_TRUE(r2.ok());
  EXPECT_THAT(r2.new_passes, ElementsAre("test_c"));
}

TEST(CompareWithExpectationsTest, CasesMissingFromFileOrDataFail) {
  // test_e is in the data but not the file; test_d is listed and selected but not run.
  const std::vector<CaseOutcome> run = {Pass("test_a"), Pass("test_b"), Fail("test_c", "x"), Pass("test_e")};
  ConformanceReport r = CompareWithExpectations(Sample(), run, {"test_a", "test_b", "test_c", "test_d"});
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.unlisted.size(), 1u);
  EXPECT_EQ(r.unlisted[0].name, "test_e");
  EXPECT_THAT(r.missing_data, ElementsAre("test_d"));
  EXPECT_TRUE(r.regressions.empty());
}

TEST(CompareWithExpectationsTest, AFilteredRunChecksOnlyTheSelectedCases) {
  ConformanceReport r = CompareWithExpectations(Sample(), {Pass("test_a")}, {"test_a"});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.total, 1);
  EXPECT_TRUE(r.missing_data.empty());
}

TEST(UpdateExpectationsTest, RewritesFromTheRunAndKeepsHandWrittenReasons) {
  const std::vector<CaseOutcome> run = {Pass("test_a"), Fail("test_b", "mismatch: new"), Pass("test_c"),
                                        Fail("test_d", "type: y"), Fail("test_e", "import: e")};
  Expectations u = UpdateExpectations(Sample(), run);
  ASSERT_EQ(u.size(), 5u);
  EXPECT_TRUE(u.at("test_a").pass);
  EXPECT_FALSE(u.at("test_b").pass);
  EXPECT_EQ(u.at("test_b").reason, "mismatch: new");
  EXPECT_TRUE(u.at("test_c").pass);
  EXPECT_EQ(u.at("test_c").reason, "");
  EXPECT_EQ(u.at("test_d").reason, "hand-written: needs sequences");  // still fails: kept
  EXPECT_EQ(u.at("test_e").reason, "import: e");                      // new case

  // A generated reason is replaced by the current error.
  Expectations u2 = UpdateExpectations(Sample(), {Fail("test_c", "mismatch: now imports")});
  EXPECT_EQ(u2.at("test_c").reason, "mismatch: now imports");
  // Cases not run keep their line.
  EXPECT_TRUE(u2.at("test_a").pass);
  EXPECT_EQ(u2.at("test_d").reason, "hand-written: needs sequences");
}

}  // namespace
}  // namespace tsr::conformance
