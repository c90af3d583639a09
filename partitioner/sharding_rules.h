// `OpShardingRule`: what the partitioner knows about one op, in the factor form of
// GSPMD/Shardy. The op's iteration space has *factors* (MatMul [M,K]x[K,N]->[M,N] has
// M, N and K); each dimension of each operand and result is one factor or none. A
// factor may be split over mesh axes: every tensor dimension of that factor is then
// split the same way and each device computes its block. Splitting a *reduction*
// factor (K) leaves each device a partial sum of the result; splitting a *mean* factor
// (the batch of a mean loss) leaves a partial mean that the partitioner rescales by the
// device's share so that the sum over devices is the global mean. Dimensions of no
// factor (a convolution's spatial dims, a softmax's axis) stay whole: a split operand
// is gathered first.
//
// An op is *linear* in a set of operands when partial sums on exactly that set (over
// the same axes) give a partial sum of the result (Add in {A, B}; Mul in {A} or {B};
// MatMul in {A} or {B}): the partitioner then defers the all-reduce.
//
// Ops without a rule get the safe one: every dimension whole (their operands are
// gathered, their results replicated). Correct for any op, fast for none: the rules
// cover the ops of real training graphs (elementwise, matmul, convolution, pooling,
// reductions, softmax and losses, reshapes, the optimizer updates, and their
// gradients).
#ifndef TESSERA_PARTITIONER_SHARDING_RULES_H_
#define TESSERA_PARTITIONER_SHARDING_RULES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tsr {

enum class FactorKind {
  kParallel,   // independent blocks
  kReduction,  // summed over: split -> partial sums
  kMean,       // averaged over: split -> partial means, rescaled into partial sums
};

struct OpShardingRule {
  std::vector<int64_t> factor_sizes;
  std::vector<FactorKind> factor_kinds;
  // Per input slot (absent optional inputs: empty), per dimension: a factor or -1.
  std::vector<std::vector<int>> operands;
  // Per output, per dimension: a factor or -1.
  std::vector<std::vector<int>> results;
  // Operand sets the op is linear in (see above).
  std::vector<std::vector<int>> linear_sets;
  // Per factor: whether it may only be split evenly (its size a multiple of the devices
  // splitting it) — a reshape's factor that is the major part of a merged or split
  // dimension (a [T, H*d] <-> [T, H, d] head split) lines up with that dimension's
  // blocks only then.
  std::vector<bool> factor_even_only;

  int AddFactor(int64_t size, FactorKind kind, bool even_only = false) {
    factor_sizes.push_back(size);
    factor_kinds.push_back(kind);
    factor_even_only.push_back(even_only);
    return static_cast<int>(factor_sizes.size()) - 1;
  }
};

// The rule of `node`, whose types (with a bound batch) are inferred in `graph`.
absl::StatusOr<OpShardingRule> ShardingRuleFor(const Graph& graph, const Node& node);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_SHARDING_RULES_H_
