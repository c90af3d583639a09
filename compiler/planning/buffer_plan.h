// Static buffer planning: `PlanBuffers` places the temporary values of a static
// program in ONE arena so that no two values live at the same time share bytes, reusing
// an input's buffer for a step's output where the caller allows it ("in place").
//
// The problem is a list of values, each with a byte size, an alignment, the step that
// defines it and the last step that reads it. A value lives during [def_step,
// last_use_step], both ends included: the step that reads it last still reads it while
// it writes its own outputs. Values that live outside the arena (inputs, outputs,
// constants: `external`) are not placed but are counted nowhere.
//
// In place: an output o of step s may take the buffer of an input v listed in
// o.inplace_candidates when v dies at s (v.last_use_step == s == o.def_step, v defined
// before s), is not external, holds at least o's bytes and its offset suits o's
// alignment; each buffer is handed on to at most one output. A buffer handed on stays
// claimed, at v's size, until the last value of the chain dies.
//
// The heuristic is greedy by size with best-fit offsets (as TensorFlow Lite's arena
// planner and XLA's heap simulator use): in-place chains are merged into buffers, the
// buffers are placed largest first, each at the smallest aligned gap between the
// buffers already placed whose lifetimes intersect its own, or above them all when no
// gap fits. Ties are broken by definition step, then value id, so the plan is
// deterministic.
#ifndef TESSERA_COMPILER_PLANNING_BUFFER_PLAN_H_
#define TESSERA_COMPILER_PLANNING_BUFFER_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tsr {

// Largest alignment a value may ask for (a page: more is a mistake, not a need).
inline constexpr int64_t kMaxBufferAlignment = 4096;
// Largest size of one value and of the arena (2^50 bytes); keeps offset arithmetic
// far from overflow.
inline constexpr int64_t kMaxBufferBytes = int64_t{1} << 50;

struct BufferValue {
  std::string name;       // for messages; may be empty
  int64_t size = 0;       // bytes
  int64_t alignment = 1;  // a power of two in [1, kMaxBufferAlignment]
  int64_t def_step = 0;
  int64_t last_use_step = 0;  // >= def_step; == def_step when nothing reads it
  bool external = false;      // input, output or constant: not in the arena
  // Values whose buffer this one may take over in place (see the file comment).
  std::vector<int> inplace_candidates;
};

struct BufferProblem {
  std::vector<BufferValue> values;
};

struct BufferPlan {
  // Per value: its offset in the arena; -1 for external values. Zero-size values get 0.
  std::vector<int64_t> offsets;
  // Per value: the value whose buffer it took over in place, else -1.
  std::vector<int> reused_from;
  // Bytes the arena needs: the highest end of a placed value.
  int64_t arena_bytes = 0;
};

// Checks the problem (sizes, alignments, steps, candidate ids) and plans it.
absl::StatusOr<BufferPlan> PlanBuffers(const BufferProblem& problem);

// A lower bound on the arena bytes of any plan: the maximum over steps of the bytes of
// the arena values live at that step, less, for each value dying there, the largest
// candidate output that could take it over in place. Alignment padding is not counted.
// The problem must be valid (PlanBuffers' checks).
int64_t LiveBytesLowerBound(const BufferProblem& problem);

// Checks a plan against its problem: one offset and one reuse entry per value, external
// values at -1, placed values aligned and inside arena_bytes, every in-place reuse one
// the problem allows (as in the file comment), and no two values whose lifetimes
// intersect sharing a byte unless one took over the other's buffer. The error names
// both values. Runs in O(n log n).
absl::Status VerifyBufferPlan(const BufferProblem& problem, const BufferPlan& plan);

// Validation shared by PlanBuffers and VerifyBufferPlan.
absl::Status ValidateBufferProblem(const BufferProblem& problem);

// Whether output `o` may take over the buffer of `v` in place (everything but offsets
// and whether v was already handed on). The problem must be valid.
bool InPlaceAllowed(const BufferProblem& problem, int o, int v);

}  // namespace tsr

#endif  // TESSERA_COMPILER_PLANNING_BUFFER_PLAN_H_
