// PlanBuffers (greedy by size, best fit), its input checks and the live-bytes lower bound.
#include "compiler/planning/buffer_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tsr {
namespace {

int64_t AlignUp(int64_t x, int64_t alignment) { return (x + alignment - 1) & ~(alignment - 1); }

bool IsPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

std::string ValueLabel(const BufferProblem& problem, int id) {
  const std::string& name = problem.values[id].name;
  return name.empty() ? absl::StrCat("value ", id) : absl::StrCat("value ", id, " ('", name, "')");
}

// A chain of values sharing one offset: the first owns the buffer, each later one took
// over its predecessor's buffer in place.
struct Buffer {
  int64_t size = 0;
  int64_t alignment = 1;
  int64_t first_step = 0;
  int64_t last_step = 0;
  int first_value = 0;
  int tail = 0;  // the last value of the chain
  int64_t offset = -1;
};

}  // namespace

absl::Status ValidateBufferProblem(const BufferProblem& problem) {
  const int n = static_cast<int>(problem.values.size());
  for (int i = 0; i < n; ++i) {
    const BufferValue& v = problem.values[i];
    if (v.size < 0 || v.size > kMaxBufferBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(ValueLabel(problem, i), ": size ", v.size, " is outside [0, ", kMaxBufferBytes, "]"));
    }
    if (!IsPowerOfTwo(v.alignment) || v.alignment > kMaxBufferAlignment) {
      return absl::InvalidArgumentError(absl::StrCat(ValueLabel(problem, i), ": alignment ", v.alignment,
                                                     " is not a power of two up to ", kMaxBufferAlignment));
    }
    if (v.def_step < 0 || v.last_use_step < v.def_step) {
      return absl::InvalidArgumentError(absl::StrCat(ValueLabel(problem, i), ": lifetime [", v.def_step, ", ",
                                                     v.last_use_step, "] is not a range of steps >= 0"));
    }
    for (int c : v.inplace_candidates) {
      if (c < 0 || c >= n || c == i) {
        return absl::InvalidArgumentError(
            absl::StrCat(ValueLabel(problem, i), ": in-place candidate ", c, " is not another value (0..", n - 1, ")"));
      }
    }
  }
  return absl::OkStatus();
}

bool InPlaceAllowed(const BufferProblem& problem, int o, int v) {
  const BufferValue& out = problem.values[o];
  const BufferValue& in = problem.values[v];
  if (out.external || in.external || out.size == 0 || in.size < out.size) return false;
  if (in.last_use_step != out.def_step || in.def_step >= out.def_step) return false;
  return std::find(out.inplace_candidates.begin(), out.inplace_candidates.end(), v) != out.inplace_candidates.end();
}

absl::StatusOr<BufferPlan> PlanBuffers(const BufferProblem& problem) {
  if (absl::Status s = ValidateBufferProblem(problem); !s.ok()) return s;
  const int n = static_cast<int>(problem.values.size());
  BufferPlan plan;
  plan.offsets.assign(n, -1);
  plan.reused_from.assign(n, -1);

  // Values by definition step (then id): a chain grows in the order its steps run.
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    if (problem.values[i].external) continue;
    if (problem.values[i].size == 0) {
      plan.offsets[i] = 0;
      continue;
    }
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return problem.values[a].def_step < problem.values[b].def_step; });

  std::vector<Buffer> buffers;
  std::vector<int> buffer_of(n, -1);
  std::vector<bool> handed_on(n, false);
  for (int i : order) {
    const BufferValue& value = problem.values[i];
    int taken = -1;
    for (int c : value.inplace_candidates) {
      // The candidate must end its chain (not yet handed on) and the chain's alignment
      // must suit this value.
      if (!InPlaceAllowed(problem, i, c) || handed_on[c] || buffer_of[c] < 0) continue;
      if (buffers[buffer_of[c]].tail != c || buffers[buffer_of[c]].alignment < value.alignment) continue;
      taken = c;
      break;
    }
    if (taken >= 0) {
      Buffer& buffer = buffers[buffer_of[taken]];
      buffer.tail = i;
      buffer.last_step = std::max(buffer.last_step, value.last_use_step);
      buffer_of[i] = buffer_of[taken];
      handed_on[taken] = true;
      plan.reused_from[i] = taken;
      continue;
    }
    buffer_of[i] = static_cast<int>(buffers.size());
    buffers.push_back({value.size, value.alignment, value.def_step, value.last_use_step, i, i, -1});
  }

  // Largest first; ties by first step, then value id.
  std::vector<int> by_size(buffers.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::sort(by_size.begin(), by_size.end(), [&](int a, int b) {
    const Buffer& x = buffers[a];
    const Buffer& y = buffers[b];
    if (x.size != y.size) return x.size > y.size;
    if (x.first_step != y.first_step) return x.first_step < y.first_step;
    return x.first_value < y.first_value;
  });

  // The placed buffers whose lifetimes intersect [s, e] are those alive at step s (a
  // stabbing query on a segment tree over the steps) plus those starting in (s, e]
  // (buckets by first step): each is found once, without scanning all placed buffers.
  std::vector<int64_t> steps;
  for (const Buffer& b : buffers) {
    steps.push_back(b.first_step);
    steps.push_back(b.last_step);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  const auto index_of = [&](int64_t step) {
    return static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  size_t leaves = 1;
  while (leaves < std::max<size_t>(steps.size(), 1)) leaves *= 2;
  std::vector<std::vector<int>> tree(2 * leaves);
  std::vector<std::vector<int>> starting(steps.size());

  std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of placed buffers live at the same time
  for (int b : by_size) {
    Buffer& buffer = buffers[b];
    const size_t first = index_of(buffer.first_step);
    const size_t last = index_of(buffer.last_step);
    busy.clear();
    for (size_t node = first + leaves; node >= 1; node /= 2) {
      for (int p : tree[node]) busy.emplace_back(buffers[p].offset, buffers[p].offset + buffers[p].size);
    }
    for (size_t t = first + 1; t <= last; ++t) {
      for (int p : starting[t]) busy.emplace_back(buffers[p].offset, buffers[p].offset + buffers[p].size);
    }
    std::sort(busy.begin(), busy.end());
    int64_t best = -1;
    int64_t best_gap = 0;
    int64_t cursor = 0;  // end of the busy bytes seen so far
    for (const auto& [start, end] : busy) {
      const int64_t candidate = AlignUp(cursor, buffer.alignment);
      if (candidate + buffer.size <= start) {
        const int64_t gap = start - candidate;
        if (best < 0 || gap < best_gap) {
          best = candidate;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, end);
    }
    buffer.offset = best >= 0 ? best : AlignUp(cursor, buffer.alignment);
    if (buffer.offset + buffer.size > kMaxBufferBytes) {
      return absl::ResourceExhaustedError(absl::StrCat("the arena would pass ", kMaxBufferBytes, " bytes placing ",
                                                       ValueLabel(problem, buffer.first_value)));
    }
    plan.arena_bytes = std::max(plan.arena_bytes, buffer.offset + buffer.size);
    for (size_t l = first + leaves, r = last + leaves + 1; l < r; l /= 2, r /= 2) {
      if (l & 1) tree[l++].push_back(b);
      if (r & 1) tree[--r].push_back(b);
    }
    starting[first].push_back(b);
  }
  for (int i : order) plan.offsets[i] = buffers[buffer_of[i]].offset;
  return plan;
}

int64_t LiveBytesLowerBound(const BufferProblem& problem) {
  const int n = static_cast<int>(problem.values.size());
  // Per step: the change of live bytes starting there, and the bytes in-place reuse may
  // save there.
  std::map<int64_t, int64_t> delta;
  std::map<int64_t, int64_t> saving;
  std::vector<int64_t> best_taker(n, 0);
  for (int i = 0; i < n; ++i) {
    const BufferValue& v = problem.values[i];
    if (v.external || v.size == 0) continue;
    delta[v.def_step] += v.size;
    delta[v.last_use_step + 1] -= v.size;
    for (int c : v.inplace_candidates) {
      if (InPlaceAllowed(problem, i, c)) best_taker[c] = std::max(best_taker[c], v.size);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (best_taker[i] > 0) saving[problem.values[i].last_use_step] += best_taker[i];
  }
  int64_t live = 0;
  int64_t bound = 0;
  auto s = saving.begin();
  for (auto d = delta.begin(); d != delta.end(); ++d) {
    live += d->second;
    const int64_t next = std::next(d) == delta.end() ? d->first + 1 : std::next(d)->first;
    // Steps in [d->first, next) all have `live` bytes; a saving only lowers its own step.
    int64_t least_saving = -1;
    int64_t steps_with_saving = 0;
    for (; s != saving.end() && s->first < next; ++s) {
      if (s->first < d->first) continue;
      ++steps_with_saving;
      least_saving = least_saving < 0 ? s->second : std::min(least_saving, s->second);
    }
    const bool every_step_saves = steps_with_saving == next - d->first;
    bound = std::max(bound, live - (every_step_saves ? least_saving : 0));
  }
  return bound;
}

}  // namespace tsr
