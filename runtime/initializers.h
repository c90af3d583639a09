// Variable initializers (graph/ops/source_ops.cc names them): zeros, ones,
// constant(init_value), uniform(init_min, init_max), normal(init_mean, init_stddev),
// truncated_normal (redrawn beyond 2 stddev), glorot_uniform/normal and
// he_uniform/normal with fans computed as Keras does; an explicit `value` wins.
//
// Random values come from Philox4x32-10 keyed by (session seed, the variable's `seed`
// attribute, a stable hash of the variable's name) and counted by element index, so a
// variable's initial value does not depend on creation order, thread count or other
// variables.
#ifndef TESSERA_RUNTIME_INITIALIZERS_H_
#define TESSERA_RUNTIME_INITIALIZERS_H_

#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/stable_hash.h"  // StableHash64, which keys the random values
#include "graph/tensor.h"

namespace tsr {

// (fan_in, fan_out) of a weight shape: rank 0 (1, 1); rank 1 (d0, d0); rank 2
// [fan_in, fan_out] (Dense); rank >= 3 [out, in, k...] (Conv) with the receptive field
// multiplied in.
std::pair<int64_t, int64_t> ComputeFans(const Shape& shape);

// The initial value of Variable `node` (its attributes with the op's defaults).
absl::StatusOr<Tensor> InitializeVariable(const Node& node, uint64_t session_seed);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_INITIALIZERS_H_
