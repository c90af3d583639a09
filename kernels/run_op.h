// Runs one op on concrete tensors, outside any graph: infers the output types from
// the inputs (their values count as constants), allocates the outputs and calls the
// kernel. Used by kernel tests, constant folding and debugging; the executor does
// the same with planned buffers. Outputs are poisoned (kernels/poison.h) before the
// kernel runs, so one that leaves elements unwritten fails its tests.
#ifndef TESSERA_KERNELS_RUN_OP_H_
#define TESSERA_KERNELS_RUN_OP_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"

namespace tsr {

struct RunOpOptions {
  // Kernel device: kReferenceDevice or kCpuDevice. With `fall_back_to_reference`,
  // a missing cpu kernel runs the reference one.
  absl::string_view device = kReferenceDevice;
  bool fall_back_to_reference = true;
  ParallelForFn parallel_for;  // null: single-threaded
  uint64_t seed = 0;
  uint64_t step = 0;
  // Only the op's first `outputs` outputs exist (as in a graph whose node leaves its
  // optional trailing outputs out: MaxPool without Indices); unset: all of them.
  std::optional<int> outputs;
};

// `inputs[i]` == std::nullopt is an absent optional input.
absl::StatusOr<std::vector<Tensor>> RunOp(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs,
                                          const AttrMap& attrs = {}, const RunOpOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_KERNELS_RUN_OP_H_
