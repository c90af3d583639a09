// The expectations file of a conformance suite, and how a run compares with it.
//
// One case per line, sorted by name:
//
//   test_abs pass
//   test_bernoulli known-fail: random op; the outputs depend on the generator
//
// Blank lines and lines starting with '#' are comments. Parsing is strict — a typo must
// not silently drop a case from CI — so every other line that is not exactly one of
// those two forms is an error naming the file and line.
//
// Reasons the runner writes itself start with one of its category words followed by
// ':' ("import: ...", "mismatch: ...", see kGeneratedReasonCategories). Any other
// reason was written by an engineer; --update keeps it while the case still fails and
// replaces generated ones with the current error.
#ifndef TESSERA_TESTS_CONFORMANCE_EXPECTATIONS_H_
#define TESSERA_TESTS_CONFORMANCE_EXPECTATIONS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr::conformance {

// The first word of every reason the runner produces; compile, load and disagree come
// from its compiled mode only (compiled_case.h).
inline constexpr absl::string_view kGeneratedReasonCategories[] = {
    "import", "type", "data", "run", "output", "mismatch", "crash", "timeout", "compile", "load", "disagree"};

struct Expectation {
  bool pass = false;
  std::string reason;  // known failures only; one line, non-empty
};

// Case name -> expectation, sorted by name.
using Expectations = std::map<std::string, Expectation>;

// Parses the file's text; errors read "FILE:LINE: ..." with `file_name` as given.
absl::StatusOr<Expectations> ParseExpectations(absl::string_view text, absl::string_view file_name);

// `header` (each line already starting with '#') followed by one line per case.
std::string FormatExpectations(const Expectations& expectations, absl::string_view header);

// Whether `reason` starts with one of kGeneratedReasonCategories and ':'.
bool IsGeneratedReason(absl::string_view reason);

// The outcome of one case in a run.
struct CaseOutcome {
  std::string name;
  bool pass = false;
  std::string reason;  // failures only; one line
};

// A run (possibly of a filtered subset) against the expectations.
struct ConformanceReport {
  int passed = 0;                         // cases that passed
  int known_failures = 0;                 // failed and listed as known-fail
  int total = 0;                          // cases run
  std::vector<CaseOutcome> regressions;   // listed as pass, failed
  std::vector<std::string> new_passes;    // listed as known-fail, passed
  std::vector<CaseOutcome> unlisted;      // run but absent from the expectations
  std::vector<std::string> missing_data;  // listed, selected by the filter, but not in the data

  // Whether CI may pass: no regression and the file and the data list the same cases.
  bool ok() const { return regressions.empty() && unlisted.empty() && missing_data.empty(); }
};

// Compares `outcomes` with `expectations`. `selected` lists the expectation names the
// run was meant to cover (those matching the filter); any of them without an outcome is
// missing from the data.
ConformanceReport CompareWithExpectations(const Expectations& expectations, const std::vector<CaseOutcome>& outcomes,
                                          const std::vector<std::string>& selected);

// `old` with the cases of `outcomes` set from this run: passes become pass, failures
// known-fail with their reason — except that a hand-written reason (not
// IsGeneratedReason) of a case that still fails is kept. Cases not run keep their line.
Expectations UpdateExpectations(const Expectations& old, const std::vector<CaseOutcome>& outcomes);

}  // namespace tsr::conformance

#endif  // TESSERA_TESTS_CONFORMANCE_EXPECTATIONS_H_
