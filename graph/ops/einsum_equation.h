// `EinsumEquation`: a parsed ONNX/numpy Einsum equation ("ij,jk->ik", "...ii->...i",
// "bij,bjk"), with the output's labels worked out when the equation is implicit,
// and the dims of every label (and of the broadcast ellipsis) for given input shapes.
// Shared by the Einsum op's shape function and its reference kernel.
//
// Labels are the letters a-z and A-Z; "..." stands for the same broadcast dims in
// every term that has it (numpy broadcasting, right-aligned). A label repeated within
// one input term takes that input's diagonal. Implicit output ("ij,jk"): the ellipsis
// dims first, then the labels that occur exactly once over all inputs, sorted by
// character code.
#ifndef TESSERA_GRAPH_OPS_EINSUM_EQUATION_H_
#define TESSERA_GRAPH_OPS_EINSUM_EQUATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/shape.h"

namespace tsr {

struct EinsumEquation {
  // One term per input and one for the output, as label ids: >= 0 names a letter
  // label (index into `letters`), kEllipsis marks where "..." stands.
  static constexpr int kEllipsis = -1;
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  std::vector<char> letters;  // label id -> its letter

  // Parses `equation` for `num_inputs` operands; InvalidArgument naming the problem.
  static absl::StatusOr<EinsumEquation> Parse(absl::string_view equation, int num_inputs);
};

// The sizes the labels take for concrete (or batch-symbolic) input shapes.
struct EinsumDims {
  std::vector<int64_t> label;     // per letter label id
  std::vector<int64_t> ellipsis;  // the broadcast ellipsis dims (possibly none)
  // Per input: its ellipsis dims (right-aligned against `ellipsis`; a 1 broadcasts).
  std::vector<std::vector<int64_t>> input_ellipsis;
  Shape output;
};

// Checks the input ranks and that every label has one size across its uses.
absl::StatusOr<EinsumDims> ResolveEinsumDims(const EinsumEquation& eq, const std::vector<Shape>& shapes);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_EINSUM_EQUATION_H_
