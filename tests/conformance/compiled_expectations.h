// The compiled mode of the conformance runner (onnx_conformance --mode compiled): which
// outcomes of compiled_case.h are acceptable, and how a run compares with the compiled
// path's known failures.
//
// Every case the interpreter's expectations list as 'pass' must, on the compiled path,
// agree (match the expected outputs and the interpreter's), or be refused by the
// compiler for one of the reasons of kAllowedCompileRefusals (a graph the compiler
// rightly cannot take). Anything else — a wrong result, a crash, any other refusal —
// is a failure of the run unless the case is listed in the compiled known-failures file
// (onnx_node_compiled_expectations.txt): the same format as the interpreter's
// expectations file (expectations.h), holding 'NAME known-fail: REASON' lines only, so
// that the list shows every compiler bug still open and shrinks as they are fixed.
#ifndef TESSERA_TESTS_CONFORMANCE_COMPILED_EXPECTATIONS_H_
#define TESSERA_TESTS_CONFORMANCE_COMPILED_EXPECTATIONS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/conformance/expectations.h"

namespace tsr::conformance {

// A refusal the compiled path may give for a case the interpreter passes: `marker`
// occurs in the reason; `description` names it in the summary.
struct AllowedCompileRefusal {
  absl::string_view marker;
  absl::string_view description;
};

// Only graphs whose output shapes depend on input values: the compiler plans every
// buffer ahead of time (compiler/planning), so such a graph has no static executable;
// the interpreter sizes those outputs when it runs. BindBatch reports them as
// "... which is not static; only static graphs compile".
inline constexpr AllowedCompileRefusal kAllowedCompileRefusals[] = {
    {"which is not static; only static graphs compile", "data-dependent output shapes"},
};

enum class CompiledOutcomeKind {
  kAgree,           // matched the expected outputs and the interpreter's
  kAllowedRefusal,  // refused for a reason of kAllowedCompileRefusals
  kNotCompiled,     // CompileGraph or Load refused it for another reason
  kDisagree,        // a wrong output: differs from the expected one or the interpreter's
  kFailed,          // the compiled run failed, crashed or timed out (or reading failed)
};

// The kind of an outcome given compiled_case.h's reason ("" when the case agreed).
CompiledOutcomeKind ClassifyCompiledOutcome(absl::string_view reason);

// The description of the allowed refusal `reason` is, or "" when it is none.
absl::string_view AllowedRefusalDescription(absl::string_view reason);

// How refusals are grouped in the summary: the reason up to its second ": " (the
// category and the compiler stage: "compile: importing the graph").
std::string RefusalGroup(absl::string_view reason);

// Parses the compiled known-failures file: expectations.h's format, 'known-fail' lines
// only (a 'pass' line is an error: every case not listed must pass).
absl::StatusOr<Expectations> ParseCompiledKnownFailures(absl::string_view text, absl::string_view file_name);

// The expectations of the compiled run: every case `interpreter` lists as passing,
// expected to pass unless `known_failures` lists it. Fails, naming them, when
// `known_failures` lists cases that the interpreter does not pass (or that it lacks):
// those entries are stale.
absl::StatusOr<Expectations> CompiledExpectations(const Expectations& interpreter, const Expectations& known_failures,
                                                  absl::string_view known_failures_file);

// The known failures after a run: `compiled` (CompiledExpectations' result) updated
// from `outcomes` as --update does (expectations.h), its passing entries dropped.
Expectations UpdatedCompiledKnownFailures(const Expectations& compiled, const std::vector<CaseOutcome>& outcomes);

// Counts of a compiled run, for the summary line.
struct CompiledRunCounts {
  int interpreter_passing = 0;  // cases run
  int agree = 0;
  int disagree = 0;
  int failed = 0;
  std::map<std::string, int> allowed_refusals;  // by description
  std::map<std::string, int> not_compiled;      // other refusals, by RefusalGroup
};

// Adds the outcome of one case (its reason, "" when it agreed).
void CountCompiledOutcome(absl::string_view reason, CompiledRunCounts& counts);

// "onnx conformance (compiled): 760 interpreter-passing cases: 700 agree, 3 disagree,
// 1 failed to run, 56 not compiled (allowed: data-dependent output shapes 2; refused:
// compile: importing the graph 54); 58 known failures, 0 regressions, 0 new passes"
std::string FormatCompiledSummary(const CompiledRunCounts& counts, const ConformanceReport& report);

}  // namespace tsr::conformance

#endif  // TESSERA_TESTS_CONFORMANCE_COMPILED_EXPECTATIONS_H_
