// Parsing and formatting of conformance expectations files, and the comparison of a run
// with them (see expectations.h).
#include "tests/conformance/expectations.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tsr::conformance {

namespace {

constexpr absl::string_view kPass = "pass";
constexpr absl::string_view kKnownFail = "known-fail:";

// Case names are folder names of the suite: letters, digits, '_', '-' and '.'.
bool IsValidCaseName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<Expectations> ParseExpectations(absl::string_view text, absl::string_view file_name) {
  Expectations result;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", line_number, ": ", what, " in '", line,
                                                     "' (expected 'NAME pass' or 'NAME known-fail: REASON')"));
    };
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos) return error("no outcome after the case name");
    const absl::string_view name = line.substr(0, space);
    if (!IsValidCaseName(name)) return error(absl::StrCat("invalid case name '", name, "'"));
    const absl::string_view rest = absl::StripLeadingAsciiWhitespace(line.substr(space + 1));
    Expectation expectation;
    if (rest == kPass) {
      expectation.pass = true;
    } else if (absl::StartsWith(rest, kKnownFail)) {
      expectation.reason = std::string(absl::StripAsciiWhitespace(rest.substr(kKnownFail.size())));
      if (expectation.reason.empty()) return error("a known-fail without a reason");
    } else {
      return error(absl::StrCat("unknown outcome '", rest, "'"));
    }
    if (!result.emplace(std::string(name), std::move(expectation)).second) {
      return error(absl::StrCat("case '", name, "' is listed twice"));
    }
  }
  return result;
}

std::string FormatExpectations(const Expectations& expectations, absl::string_view header) {
  std::string out(header);
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  for (const auto& [name, e] : expectations) {
    if (e.pass) {
      absl::StrAppend(&out, name, " ", kPass, "\n");
    } else {
      absl::StrAppend(&out, name, " ", kKnownFail, " ", e.reason, "\n");
    }
  }
  return out;
}

bool IsGeneratedReason(absl::string_view reason) {
  for (absl::string_view category : kGeneratedReasonCategories) {
    if (absl::StartsWith(reason, category) && reason.size() > category.size() && reason[category.size()] == ':') {
      return true;
    }
  }
  return false;
}

ConformanceReport CompareWithExpectations(const Expectations& expectations, const std::vector<CaseOutcome>& outcomes,
                                          const std::vector<std::string>& selected) {
  ConformanceReport report;
  std::set<std::string> ran;
  for (const CaseOutcome& o : outcomes) {
    ran.insert(o.name);
    ++report.total;
    if (o.pass) ++report.passed;
    auto it = expectations.find(o.name);
    if (it == expectations.end()) {
      report.unlisted.push_back(o);
    } else if (it->second.pass && !o.pass) {
      report.regressions.push_back(o);
    } else if (!it->second.pass && o.pass) {
      report.new_passes.push_back(o.name);
    } else if (!o.pass) {
      ++report.known_failures;
    }
  }
  for (const std::string& name : selected) {
    if (expectations.count(name) != 0 && ran.count(name) == 0) report.missing_data.push_back(name);
  }
  return report;
}

Expectations UpdateExpectations(const Expectations& old, const std::vector<CaseOutcome>& outcomes) {
  Expectations updated = old;
  for (const CaseOutcome& o : outcomes) {
    Expectation& e = updated[o.name];
    if (o.pass) {
      e = Expectation{.pass = true, .reason = ""};
    } else if (e.pass || e.reason.empty() || IsGeneratedReason(e.reason)) {
      e = Expectation{.pass = false, .reason = o.reason};
    }
  }
  return updated;
}

}  // namespace tsr::conformance
