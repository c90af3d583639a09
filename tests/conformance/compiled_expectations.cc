// The compiled mode's outcome classes, known-failures file and summary
// (compiled_expectations.h).
#include "tests/conformance/compiled_expectations.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tsr::conformance {

absl::string_view AllowedRefusalDescription(absl::string_view reason) {
  if (!absl::StartsWith(reason, "compile:") && !absl::StartsWith(reason, "load:")) return "";
  for (const AllowedCompileRefusal& allowed : kAllowedCompileRefusals) {
    if (absl::StrContains(reason, allowed.marker)) return allowed.description;
  }
  return "";
}

CompiledOutcomeKind ClassifyCompiledOutcome(absl::string_view reason) {
  if (reason.empty()) return CompiledOutcomeKind::kAgree;
  if (!AllowedRefusalDescription(reason).empty()) return CompiledOutcomeKind::kAllowedRefusal;
  if (absl::StartsWith(reason, "compile:") || absl::StartsWith(reason, "load:")) {
    return CompiledOutcomeKind::kNotCompiled;
  }
  if (absl::StartsWith(reason, "mismatch:") || absl::StartsWith(reason, "disagree:")) {
    return CompiledOutcomeKind::kDisagree;
  }
  return CompiledOutcomeKind::kFailed;
}

std::string RefusalGroup(absl::string_view reason) {
  const size_t first = reason.find(": ");
  if (first == absl::string_view::npos) return std::string(reason);
  const size_t second = reason.find(": ", first + 2);
  return std::string(reason.substr(0, second));
}

absl::StatusOr<Expectations> ParseCompiledKnownFailures(absl::string_view text, absl::string_view file_name) {
  absl::StatusOr<Expectations> parsed = ParseExpectations(text, file_name);
  if (!parsed.ok()) return parsed.status();
  std::vector<std::string> passes;
  for (const auto& [name, e] : *parsed) {
    if (e.pass) passes.push_back(name);
  }
  if (!passes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": lists ", absl::StrJoin(passes, ", "),
                     " as pass; this file lists known failures only (every case not in it must pass)"));
  }
  return parsed;
}

absl::StatusOr<Expectations> CompiledExpectations(const Expectations& interpreter, const Expectations& known_failures,
                                                  absl::string_view known_failures_file) {
  Expectations compiled;
  for (const auto& [name, e] : interpreter) {
    if (e.pass) compiled[name] = Expectation{.pass = true, .reason = ""};
  }
  std::vector<std::string> stale;
  for (const auto& [name, e] : known_failures) {
    auto it = compiled.find(name);
    if (it == compiled.end()) {
      stale.push_back(name);
    } else {
      it->second = e;
    }
  }
  if (!stale.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(known_failures_file, " lists cases that the interpreter's expectations do not list as pass: ",
                     absl::StrJoin(stale, ", "), " (remove them; --update does)"));
  }
  return compiled;
}

Expectations UpdatedCompiledKnownFailures(const Expectations& compiled, const std::vector<CaseOutcome>& outcomes) {
  Expectations known_failures;
  for (auto& [name, e] : UpdateExpectations(compiled, outcomes)) {
    if (!e.pass) known_failures.emplace(name, std::move(e));
  }
  return known_failures;
}

void CountCompiledOutcome(absl::string_view reason, CompiledRunCounts& counts) {
  ++counts.interpreter_passing;
  switch (ClassifyCompiledOutcome(reason)) {
    case CompiledOutcomeKind::kAgree:
      ++counts.agree;
      break;
    case CompiledOutcomeKind::kAllowedRefusal:
      ++counts.allowed_refusals[std::string(AllowedRefusalDescription(reason))];
      break;
    case CompiledOutcomeKind::kNotCompiled:
      ++counts.not_compiled[RefusalGroup(reason)];
      break;
    case CompiledOutcomeKind::kDisagree:
      ++counts.disagree;
      break;
    case CompiledOutcomeKind::kFailed:
      ++counts.failed;
      break;
  }
}

std::string FormatCompiledSummary(const CompiledRunCounts& counts, const ConformanceReport& report) {
  auto groups = [](const std::map<std::string, int>& by_reason) {
    int total = 0;
    std::vector<std::string> parts;
    for (const auto& [reason, n] : by_reason) {
      total += n;
      parts.push_back(absl::StrCat(reason, " ", n));
    }
    return std::make_pair(total, parts.empty() ? std::string("none") : absl::StrJoin(parts, ", "));
  };
  const auto [allowed, allowed_text] = groups(counts.allowed_refusals);
  const auto [refused, refused_text] = groups(counts.not_compiled);
  return absl::StrCat("onnx conformance (compiled): ", counts.interpreter_passing,
                      " interpreter-passing cases: ", counts.agree, " agree, ", counts.disagree, " disagree, ",
                      counts.failed, " failed to run, ", allowed + refused, " not compiled (allowed: ", allowed_text,
                      "; refused: ", refused_text, "); ", report.known_failures, " known failures, ",
                      report.regressions.size(), " regressions, ", report.new_passes.size(), " new passes");
}

}  // namespace tsr::conformance
