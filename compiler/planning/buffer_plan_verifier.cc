// VerifyBufferPlan: proves a plan safe by sweeping the steps in order with the arena's
// claimed byte ranges in an ordered map, so each new range is checked against its two
// neighbours only (live ranges are disjoint by induction).
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/planning/buffer_plan.h"

namespace tsr {
namespace {

std::string Label(const BufferProblem& problem, int id) {
  const std::string& name = problem.values[id].name;
  return name.empty() ? absl::StrCat("value ", id) : absl::StrCat("value ", id, " ('", name, "')");
}

std::string Extent(const BufferProblem& problem, const BufferPlan& plan, int id) {
  const BufferValue& v = problem.values[id];
  return absl::StrCat("bytes [", plan.offsets[id], ", ", plan.offsets[id] + v.size, ") steps [", v.def_step, ", ",
                      v.last_use_step, "]");
}

// A claimed byte range: a value and the values that took its buffer over in place.
struct Claim {
  int64_t end = 0;
  int64_t death = 0;  // the last step any value of the chain is read
  int owner = 0;      // the value that placed the range
  int tail = 0;       // the chain's last value
};

}  // namespace

absl::Status VerifyBufferPlan(const BufferProblem& problem, const BufferPlan& plan) {
  if (absl::Status s = ValidateBufferProblem(problem); !s.ok()) return s;
  const int n = static_cast<int>(problem.values.size());
  if (static_cast<int>(plan.offsets.size()) != n || static_cast<int>(plan.reused_from.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("the plan has ", plan.offsets.size(), " offsets and ",
                                                   plan.reused_from.size(), " reuse entries for ", n, " values"));
  }
  if (plan.arena_bytes < 0 || plan.arena_bytes > kMaxBufferBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("arena size ", plan.arena_bytes, " is outside [0, ", kMaxBufferBytes, "]"));
  }
  std::vector<int> order;
  std::vector<int> reused_by(n, -1);
  for (int i = 0; i < n; ++i) {
    const BufferValue& v = problem.values[i];
    const int64_t offset = plan.offsets[i];
    const int from = plan.reused_from[i];
    if (v.external) {
      if (offset != -1 || from != -1) {
        return absl::InvalidArgumentError(
            absl::StrCat(Label(problem, i), " is external but the plan places it at ", offset));
      }
      continue;
    }
    if (offset < 0 || offset % v.alignment != 0 || offset > plan.arena_bytes - v.size) {
      return absl::InvalidArgumentError(
          absl::StrCat(Label(problem, i), " at offset ", offset, " (", v.size, " bytes, alignment ", v.alignment,
                       ") is not an aligned place inside the arena of ", plan.arena_bytes, " bytes"));
    }
    if (from != -1) {
      if (from < 0 || from >= n || !InPlaceAllowed(problem, i, from)) {
        return absl::InvalidArgumentError(
            absl::StrCat(Label(problem, i), " reuses value ", from, " in place, which the problem does not allow"));
      }
      if (plan.offsets[from] != offset) {
        return absl::InvalidArgumentError(absl::StrCat(Label(problem, i), " reuses ", Label(problem, from),
                                                       " in place but sits at ", offset, ", not ", plan.offsets[from]));
      }
      if (reused_by[from] != -1) {
        return absl::InvalidArgumentError(absl::StrCat(Label(problem, from), " is taken over in place by both value ",
                                                       reused_by[from], " and value ", i));
      }
      reused_by[from] = i;
    }
    if (v.size > 0) order.push_back(i);
  }
  // Takers after plain values of the same step: the buffer they take must be claimed.
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const BufferValue& x = problem.values[a];
    const BufferValue& y = problem.values[b];
    if (x.def_step != y.def_step) return x.def_step < y.def_step;
    const bool xr = plan.reused_from[a] != -1;
    const bool yr = plan.reused_from[b] != -1;
    if (xr != yr) return !xr;
    return a < b;
  });

  std::map<int64_t, Claim> claims;                 // by offset
  std::set<std::pair<int64_t, int64_t>> by_death;  // (death, offset)
  for (int i : order) {
    const BufferValue& v = problem.values[i];
    while (!by_death.empty() && by_death.begin()->first < v.def_step) {
      claims.erase(by_death.begin()->second);
      by_death.erase(by_death.begin());
    }
    const int64_t offset = plan.offsets[i];
    const int from = plan.reused_from[i];
    if (from != -1) {
      auto it = claims.find(offset);
      if (it == claims.end() || it->second.tail != from) {
        return absl::InvalidArgumentError(absl::StrCat(Label(problem, i), " reuses ", Label(problem, from),
                                                       " in place, but that buffer is no longer claimed by it"));
      }
      by_death.erase({it->second.death, offset});
      it->second.death = std::max(it->second.death, v.last_use_step);
      it->second.tail = i;
      by_death.insert({it->second.death, offset});
      continue;
    }
    const int64_t end = offset + v.size;
    auto next = claims.lower_bound(offset);
    if (next != claims.end() && next->first < end) {
      return absl::InvalidArgumentError(absl::StrCat(Label(problem, i), " (", Extent(problem, plan, i), ") overlaps ",
                                                     Label(problem, next->second.owner), " (",
                                                     Extent(problem, plan, next->second.owner), ")"));
    }
    if (next != claims.begin()) {
      auto prev = std::prev(next);
      if (prev->second.end > offset) {
        return absl::InvalidArgumentError(absl::StrCat(Label(problem, i), " (", Extent(problem, plan, i), ") overlaps ",
                                                       Label(problem, prev->second.owner), " (",
                                                       Extent(problem, plan, prev->second.owner), ")"));
      }
    }
    claims.emplace(offset, Claim{end, v.last_use_step, i, i});
    by_death.insert({v.last_use_step, offset});
  }
  return absl::OkStatus();
}

}  // namespace tsr
