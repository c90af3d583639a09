// OrderStepsForCollectiveOverlap (see collective_overlap.h): Kahn's algorithm over the
// steps' dependences with two ready queues, each by old position.
#include "compiler/pipeline/collective_overlap.h"

#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "graph/op_registry.h"

namespace tsr {

void OrderStepsForCollectiveOverlap(Executable& e) {
  const int n = static_cast<int>(e.steps.size());
  const int values = static_cast<int>(e.values.size());
  std::vector<int> writer(values, -1);
  for (int s = 0; s < n; ++s) {
    for (int v : e.steps[s].outputs) {
      if (v >= 0 && v < values) writer[v] = s;
    }
  }
  std::vector<std::vector<int>> successors(n);
  std::vector<int> pending(n, 0);
  const auto edge = [&](int from, int to) {
    if (from < 0 || from == to) return;
    successors[from].push_back(to);
    ++pending[to];
  };
  // Whether a step needs an all-reduce's result; steps come in a valid order, so a
  // writer's flag is known before its readers'.
  std::vector<bool> deferred(n, false), all_reduce(n, false);
  int previous_collective = -1;
  for (int s = 0; s < n; ++s) {
    const ExecutableStep& step = e.steps[s];
    for (int v : step.inputs) {
      if (v < 0 || v >= values) continue;
      const int w = writer[v];
      if (e.values[v].location == ValueLocation::kVariable) {
        // The old value: read before its writer runs (a step updating it in place
        // reads it itself).
        if (w >= 0 && w != s) edge(s, w);
        continue;
      }
      if (w < 0) continue;
      edge(w, s);
      if (all_reduce[w] || deferred[w]) deferred[s] = true;
    }
    if (step.kind != ExecutableStep::Kind::kKernel) continue;
    const OpDef* def = OpRegistry::Global().Find(step.name);
    if (def != nullptr && def->collective) {
      edge(previous_collective, s);
      previous_collective = s;
      all_reduce[s] = step.name == "AllReduce";
    }
  }
  // A duplicate edge (a step reading one value twice) counts twice on both sides.
  using Queue = std::priority_queue<int, std::vector<int>, std::greater<int>>;
  Queue now, later;
  for (int s = 0; s < n; ++s) {
    if (pending[s] == 0) (deferred[s] ? later : now).push(s);
  }
  std::vector<ExecutableStep> ordered;
  ordered.reserve(n);
  while (!now.empty() || !later.empty()) {
    Queue& from = now.empty() ? later : now;
    const int s = from.top();
    from.pop();
    ordered.push_back(std::move(e.steps[s]));
    for (int t : successors[s]) {
      if (--pending[t] == 0) (deferred[t] ? later : now).push(t);
    }
  }
  e.steps = std::move(ordered);
}

}  // namespace tsr
