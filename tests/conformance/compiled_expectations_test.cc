// Tests of the compiled mode's bookkeeping: which outcomes are acceptable, the known-
// failures file (its parsing, stale entries, --update) and the summary line.
#include "tests/conformance/compiled_expectations.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr::conformance {
namespace {

using ::testing::HasSubstr;

constexpr char kNotStatic[] =
    "compile: binding the batch: with batch size 1, output 0 of node 'y' (NonZero) has the shape [1,N], which is "
    "not static; only static graphs compile";

TEST(ClassifyCompiledOutcomeTest, SortsReasonsIntoKinds) {
  EXPECT_EQ(ClassifyCompiledOutcome(""), CompiledOutcomeKind::kAgree);
  EXPECT_EQ(ClassifyCompiledOutcome(kNotStatic), CompiledOutcomeKind::kAllowedRefusal);
  EXPECT_EQ(ClassifyCompiledOutcome("compile: importing the graph: node 'y' (Foo): no tsr op"),
            CompiledOutcomeKind::kNotCompiled);
  EXPECT_EQ(ClassifyCompiledOutcome("load: step 3: symbol not found"), CompiledOutcomeKind::kNotCompiled);
  EXPECT_EQ(ClassifyCompiledOutcome("mismatch: output 'y': 1 of 4 values differ"), CompiledOutcomeKind::kDisagree);
  EXPECT_EQ(ClassifyCompiledOutcome("disagree: output 'y' vs the interpreter: 1 of 4 values differ"),
            CompiledOutcomeKind::kDisagree);
  EXPECT_EQ(ClassifyCompiledOutcome("run: shape mismatch"), CompiledOutcomeKind::kFailed);
  EXPECT_EQ(ClassifyCompiledOutcome("crash: signal 11 (Segmentation fault)"), CompiledOutcomeKind::kFailed);
  EXPECT_EQ(ClassifyCompiledOutcome("timeout: still running after 60 s"), CompiledOutcomeKind::kFailed);
}

TEST(ClassifyCompiledOutcomeTest, TheAllowedMarkerCountsOnlyInARefusal) {
  // A run error quoting the same words is not a refusal by the compiler.
  EXPECT_EQ(ClassifyCompiledOutcome("run: which is not static; only static graphs compile"),
            CompiledOutcomeKind::kFailed);
  EXPECT_EQ(AllowedRefusalDescription(kNotStatic), "data-dependent output shapes");
  EXPECT_EQ(AllowedRefusalDescription("compile: importing the graph: x"), "");
}

TEST(RefusalGroupTest, KeepsTheCategoryAndTheStage) {
  EXPECT_EQ(RefusalGroup("compile: importing the graph: node 'y' (Foo): no tsr op"), "compile: importing the graph");
  EXPECT_EQ(RefusalGroup("load: no kernel"), "load: no kernel");
  EXPECT_EQ(RefusalGroup("load"), "load");
}

TEST(ParseCompiledKnownFailuresTest, AcceptsKnownFailuresOnly) {
  absl::StatusOr<Expectations> ok =
      ParseCompiledKnownFailures("# header\ntest_a known-fail: compile: importing the graph: x\n", "known.txt");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->at("test_a").reason, "compile: importing the graph: x");

  absl::StatusOr<Expectations> pass = ParseCompiledKnownFailures("test_a pass\n", "known.txt");
  ASSERT_FALSE(pass.ok());
  EXPECT_THAT(pass.status().message(), HasSubstr("known.txt: lists test_a as pass"));
}

Expectations Interpreter() {
  Expectations e;
  e["test_a"] = {.pass = true, .reason = ""};
  e["test_b"] = {.pass = true, .reason = ""};
  e["test_c"] = {.pass = false, .reason = "import: unsupported"};
  return e;
}

TEST(CompiledExpectationsTest, InterpreterPassesAreExpectedUnlessListed) {
  Expectations known;
  known["test_b"] = {.pass = false, .reason = "disagree: output 'y'"};
  absl::StatusOr<Expectations> e = CompiledExpectations(Interpreter(), known, "known.txt");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->size(), 2u);  // test_c is not run: the interpreter fails it
  EXPECT_TRUE(e->at("test_a").pass);
  EXPECT_FALSE(e->at("test_b").pass);
}

TEST(CompiledExpectationsTest, EntriesForCasesTheInterpreterFailsAreStale) {
  Expectations known;
  known["test_c"] = {.pass = false, .reason = "compile: x"};
  known["test_z"] = {.pass = false, .reason = "compile: x"};
  absl::StatusOr<Expectations> e = CompiledExpectations(Interpreter(), known, "known.txt");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("known.txt lists cases that the interpreter's expectations do not "
                                              "list as pass: test_c, test_z"));
}

TEST(UpdatedCompiledKnownFailuresTest, KeepsOnlyTheFailures) {
  Expectations known;
  known["test_b"] = {.pass = false, .reason = "compile: old"};
  absl::StatusOr<Expectations> e = CompiledExpectations(Interpreter(), known, "known.txt");
  ASSERT_TRUE(e.ok()) << e.status();
  const std::vector<CaseOutcome> outcomes = {{.name = "test_a", .pass = false, .reason = "crash: signal 11"},
                                             {.name = "test_b", .pass = true, .reason = ""}};
  const Expectations updated = UpdatedCompiledKnownFailures(*e, outcomes);
  ASSERT_EQ(updated.size(), 1u);
  EXPECT_EQ(updated.at("test_a").reason, "crash: signal 11");
}

TEST(FormatCompiledSummaryTest, GivesEveryCount) {
  CompiledRunCounts counts;
  for (const char* reason : {"", "", kNotStatic, "compile: importing the graph: a", "compile: importing the graph: b",
                             "disagree: output 'y'", "crash: signal 11"}) {
    CountCompiledOutcome(reason, counts);
  }
  EXPECT_EQ(counts.interpreter_passing, 7);
  ConformanceReport report;
  report.known_failures = 3;
  report.regressions.push_back({.name = "test_x", .pass = false, .reason = "crash: signal 11"});
  EXPECT_EQ(FormatCompiledSummary(counts, report),
            "onnx conformance (compiled): 7 interpreter-passing cases: 2 agree, 1 disagree, 1 failed to run, 3 not "
            "compiled (allowed: data-dependent output shapes 1; refused: compile: importing the graph 2); 3 known "
            "failures, 1 regressions, 0 new passes");
}

}  // namespace
}  // namespace tsr::conformance
