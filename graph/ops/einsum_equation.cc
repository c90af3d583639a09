// Parsing of Einsum equations and resolution of their label sizes (einsum_equation.h).
#include "graph/ops/einsum_equation.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

bool IsLabel(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// One term ("ij", "...ij", "i...j") as label ids, adding new letters to `ids`.
absl::StatusOr<std::vector<int>> ParseTerm(absl::string_view term, absl::string_view equation, std::map<char, int>& ids,
                                           std::vector<char>& letters, bool add_letters) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (term.substr(i, 3) != "..." || ellipsis) {
        return absl::InvalidArgumentError(
            absl::StrCat("equation '", equation, "': term '", term, "' has a '.' outside a single '...'"));
      }
      ellipsis = true;
      labels.push_back(EinsumEquation::kEllipsis);
      i += 2;
      continue;
    }
    if (!IsLabel(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("equation '", equation, "': '", std::string(1, c), "' is not a label (a-z, A-Z) or '...'"));
    }
    auto it = ids.find(c);
    if (it == ids.end()) {
      if (!add_letters) {
        return absl::InvalidArgumentError(absl::StrCat("equation '", equation, "': output label '", std::string(1, c),
                                                       "' does not occur in any input"));
      }
      it = ids.emplace(c, static_cast<int>(letters.size())).first;
      letters.push_back(c);
    }
    labels.push_back(it->second);
  }
  return labels;
}

}  // namespace

absl::StatusOr<EinsumEquation> EinsumEquation::Parse(absl::string_view equation, int num_inputs) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq.push_back(c);
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  EinsumEquation result;
  std::map<char, int> ids;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    const std::string term = lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    TSR_ASSIGN_OR_RETURN(std::vector<int> labels, ParseTerm(term, equation, ids, result.letters, true));
    result.inputs.push_back(std::move(labels));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(result.inputs.size()) != num_inputs) {
    return absl::InvalidArgumentError(absl::StrCat("equation '", equation, "' has ", result.inputs.size(),
                                                   " input terms but the node has ", num_inputs, " inputs"));
  }
  bool any_ellipsis = false;
  for (const std::vector<int>& term : result.inputs) {
    any_ellipsis = any_ellipsis || std::count(term.begin(), term.end(), kEllipsis) > 0;
  }
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos || rhs.find(',') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("equation '", equation, "' has more than one output term"));
    }
    TSR_ASSIGN_OR_RETURN(result.output, ParseTerm(rhs, equation, ids, result.letters, false));
    for (size_t i = 0; i < result.output.size(); ++i) {
      const int id = result.output[i];
      if (id == kEllipsis && !any_ellipsis) {
        return absl::InvalidArgumentError(
            absl::StrCat("equation '", equation, "': the output has '...' but no input does"));
      }
      if (id != kEllipsis && std::count(result.output.begin(), result.output.end(), id) > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("equation '", equation, "': output label '", std::string(1, result.letters[id]), "' repeats"));
      }
    }
  } else {
    if (any_ellipsis) result.output.push_back(kEllipsis);
    std::vector<int> count(result.letters.size(), 0);
    for (const std::vector<int>& term : result.inputs) {
      for (int id : term) {
        if (id != kEllipsis) ++count[id];
      }
    }
    std::vector<int> once;
    for (size_t id = 0; id < count.size(); ++id) {
      if (count[id] == 1) once.push_back(static_cast<int>(id));
    }
    std::sort(once.begin(), once.end(), [&](int a, int b) { return result.letters[a] < result.letters[b]; });
    result.output.insert(result.output.end(), once.begin(), once.end());
  }
  return result;
}

absl::StatusOr<EinsumDims> ResolveEinsumDims(const EinsumEquation& eq, const std::vector<Shape>& shapes) {
  EinsumDims dims;
  constexpr int64_t kUnset = -2;  // kBatchDim is -1
  dims.label.assign(eq.letters.size(), kUnset);
  dims.input_ellipsis.resize(eq.inputs.size());
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const std::vector<int>& term = eq.inputs[i];
    const Shape& shape = shapes[i];
    const bool has_ellipsis = std::count(term.begin(), term.end(), EinsumEquation::kEllipsis) > 0;
    const int letters = static_cast<int>(term.size()) - (has_ellipsis ? 1 : 0);
    if (has_ellipsis ? shape.rank() < letters : shape.rank() != letters) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " has shape ", shape.ToString(), " but its term has ",
                                                     letters, " labels", has_ellipsis ? " and '...'" : ""));
    }
    const int ellipsis_rank = shape.rank() - letters;
    int d = 0;
    for (int id : term) {
      if (id == EinsumEquation::kEllipsis) {
        for (int k = 0; k < ellipsis_rank; ++k) dims.input_ellipsis[i].push_back(shape.dim(d++));
        continue;
      }
      const int64_t size = shape.dim(d++);
      if (dims.label[id] != kUnset && dims.label[id] != size) {
        return absl::InvalidArgumentError(absl::StrCat("label '", std::string(1, eq.letters[id]), "' has size ",
                                                       dims.label[id], " and ", size, " (input ", i, " shape ",
                                                       shape.ToString(), ")"));
      }
      dims.label[id] = size;
    }
    // Broadcast the ellipsis dims, right-aligned.
    const std::vector<int64_t>& mine = dims.input_ellipsis[i];
    if (mine.size() > dims.ellipsis.size()) {
      dims.ellipsis.insert(dims.ellipsis.begin(), mine.size() - dims.ellipsis.size(), 1);
    }
    for (size_t k = 0; k < mine.size(); ++k) {
      int64_t& out = dims.ellipsis[dims.ellipsis.size() - mine.size() + k];
      if (mine[k] == out || mine[k] == 1) continue;
      if (out != 1) {
        return absl::InvalidArgumentError(absl::StrCat("the '...' dims of input ", i, " (shape ", shape.ToString(),
                                                       ") do not broadcast against the others"));
      }
      out = mine[k];
    }
  }
  for (int id : eq.output) {
    if (id == EinsumEquation::kEllipsis) {
      for (int64_t d : dims.ellipsis) dims.output.AddDim(d);
    } else {
      dims.output.AddDim(dims.label[id]);
    }
  }
  return dims;
}

}  // namespace tsr
