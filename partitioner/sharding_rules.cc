// The sharding rules of the built-in ops (see sharding_rules.h).
#include "partitioner/sharding_rules.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace tsr {

namespace {

const absl::flat_hash_set<std::string>& BroadcastingOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>(
      {// binary and n-ary elementwise ops, with ONNX (numpy) broadcasting
       "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less", "LessOrEqual",
       "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Mod", "PRelu", "Clip",
       // unary elementwise ops
       "Identity", "Cast", "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal", "Tanh", "Sigmoid", "Relu", "Erf",
       "Gelu", "Silu", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu", "Floor", "Ceil",
       "Round", "Sign", "LeakyRelu", "Not", "IsNaN", "IsInf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
       "Cosh", "Asinh", "Acosh", "Atanh", "Mish", "ThresholdedRelu", "BitwiseNot"});
  return *ops;
}

// Ops that update a Variable: operands of the parameter's shape (the parameter, its
// slots, its gradient) are split like it; scalars (learning rate, step) stay whole.
const absl::flat_hash_set<std::string>& ParameterUpdateOps() {
  static const auto* ops =
      new absl::flat_hash_set<std::string>({"SGDUpdate", "MomentumUpdate", "AdamUpdate", "RMSPropUpdate", "Assign"});
  return *ops;
}

const absl::flat_hash_set<std::string>& ReshapingOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>({"Reshape", "Flatten", "Squeeze", "Unsqueeze"});
  return *ops;
}

const Shape& InputShape(const Graph& graph, const Node& node, int i) { return graph.TypeOf(node.input(i))->shape; }
const Shape& OutputShape(const Node& node, int i) { return node.output_type(i).shape; }
bool HasInput(const Node& node, int i) { return i < node.num_inputs() && node.input(i).valid(); }

int64_t IntAttr(const Node& node, const char* name, int64_t fallback) {
  const AttrValue* v = node.FindAttr(name);
  return v != nullptr && v->type() == AttrType::kInt ? v->i() : fallback;
}

std::string StringAttr(const Node& node, const char* name, std::string fallback) {
  const AttrValue* v = node.FindAttr(name);
  return v != nullptr && v->type() == AttrType::kString ? v->s() : fallback;
}

// Every dimension whole: the rule of ops the partitioner knows nothing about.
OpShardingRule WholeRule(const Graph& graph, const Node& node) {
  OpShardingRule rule;
  for (int i = 0; i < node.num_inputs(); ++i) {
    rule.operands.push_back(HasInput(node, i) ? std::vector<int>(InputShape(graph, node, i).rank(), -1)
                                              : std::vector<int>());
  }
  for (int i = 0; i < node.num_outputs(); ++i)
    rule.results.push_back(std::vector<int>(OutputShape(node, i).rank(), -1));
  return rule;
}

// One parallel factor per dimension of output 0; every output of that shape and every
// operand, aligned to the right, maps its dimensions of the same extent (not broadcast).
OpShardingRule BroadcastRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& out = OutputShape(node, 0);
  std::vector<int> factors(out.rank());
  for (int d = 0; d < out.rank(); ++d) factors[d] = rule.AddFactor(out.dim(d), FactorKind::kParallel);
  auto map = [&](const Shape& shape, std::vector<int>& dims) {
    if (shape.rank() > out.rank()) return;
    for (int k = 0; k < shape.rank(); ++k) {
      const int d = out.rank() - shape.rank() + k;
      if (shape.dim(k) == out.dim(d)) dims[k] = factors[d];
    }
  };
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (HasInput(node, i)) map(InputShape(graph, node, i), rule.operands[i]);
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (OutputShape(node, i) == out) map(OutputShape(node, i), rule.results[i]);
  }
  return rule;
}

// Reshape-like ops: input and output dimensions that start at the same element offset
// (equal products of the dimensions before them) and have the same extent are one
// factor ([N,1,28,28] -> [N,784] keeps N); everything else stays whole.
OpShardingRule ReshapeRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& in = InputShape(graph, node, 0);
  const Shape& out = OutputShape(node, 0);
  int i = 0, j = 0;
  int64_t pi = 1, pj = 1;
  while (i < in.rank() && j < out.rank()) {
    if (pi == pj && in.dim(i) == out.dim(j)) {
      const int f = rule.AddFactor(in.dim(i), FactorKind::kParallel);
      rule.operands[0][i] = f;
      rule.results[0][j] = f;
      pi *= in.dim(i++);
      pj *= out.dim(j++);
      continue;
    }
    // A dimension split into several ([H*d] -> [H, d]) or several merged into one: the
    // major ones share a factor of the smaller size, split evenly only.
    const int64_t a = in.dim(i), b = out.dim(j);
    if (pi == pj && a > 1 && b > 1 && std::max(a, b) % std::min(a, b) == 0) {
      const int f = rule.AddFactor(std::min(a, b), FactorKind::kParallel, /*even_only=*/true);
      rule.operands[0][i] = f;
      rule.results[0][j] = f;
    }
    if (pi * in.dim(i) <= pj * out.dim(j)) {
      pi *= in.dim(i++);
    } else {
      pj *= out.dim(j++);
    }
  }
  rule.linear_sets = {{0}};
  return rule;
}

OpShardingRule TransposeRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const int rank = InputShape(graph, node, 0).rank();
  std::vector<int64_t> perm(rank);
  const AttrValue* p = node.FindAttr("perm");
  if (p != nullptr && p->type() == AttrType::kInts && static_cast<int>(p->ints().size()) == rank) {
    perm = p->ints();
  } else {
    for (int d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
  }
  for (int j = 0; j < rank; ++j) {
    const int f = rule.AddFactor(OutputShape(node, 0).dim(j), FactorKind::kParallel);
    rule.results[0][j] = f;
    rule.operands[0][perm[j]] = f;
  }
  rule.linear_sets = {{0}};
  return rule;
}

// The reduced axes of a Reduce* node (constant input 1; none: all unless
// noop_with_empty_axes). Empty optional: unknown (not constant).
std::optional<std::vector<bool>> ReducedAxes(const Graph& graph, const Node& node) {
  const int rank = InputShape(graph, node, 0).rank();
  std::vector<bool> reduced(rank, false);
  const Tensor* axes = HasInput(node, 1) ? graph.ConstantValue(node.input(1)) : nullptr;
  if (HasInput(node, 1) && axes == nullptr) return std::nullopt;
  if (axes == nullptr || axes->num_elements() == 0) {
    if (IntAttr(node, "noop_with_empty_axes", 0) == 1) return reduced;
    return std::vector<bool>(rank, true);
  }
  for (int64_t k = 0; k < axes->num_elements(); ++k) {
    int64_t a = axes->GetAsInt64(k);
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return std::nullopt;
    reduced[a] = true;
  }
  return reduced;
}

OpShardingRule ReduceRule(const Graph& graph, const Node& node, FactorKind reduced_kind) {
  OpShardingRule rule = WholeRule(graph, node);
  std::optional<std::vector<bool>> reduced = ReducedAxes(graph, node);
  if (!reduced) return rule;
  const Shape& in = InputShape(graph, node, 0);
  const bool keepdims = IntAttr(node, "keepdims", 1) != 0;
  int j = 0;
  for (int d = 0; d < in.rank(); ++d) {
    if ((*reduced)[d]) {
      // Max/Min and friends: a reduced dim stays whole (no partial maximum).
      if (reduced_kind != FactorKind::kParallel) rule.operands[0][d] = rule.AddFactor(in.dim(d), reduced_kind);
      if (keepdims) ++j;
    } else {
      const int f = rule.AddFactor(in.dim(d), FactorKind::kParallel);
      rule.operands[0][d] = f;
      rule.results[0][j++] = f;
    }
  }
  if (reduced_kind == FactorKind::kReduction) rule.linear_sets = {{0}};
  return rule;
}

// MatMul with both operands of rank >= 2: batch dims (broadcast, right-aligned), M, N
// parallel and K a reduction.
OpShardingRule MatMulRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& a = InputShape(graph, node, 0);
  const Shape& b = InputShape(graph, node, 1);
  const Shape& y = OutputShape(node, 0);
  if (a.rank() < 2 || b.rank() < 2) return rule;
  const int ry = y.rank();
  for (int d = 0; d < ry - 2; ++d) {
    const int f = rule.AddFactor(y.dim(d), FactorKind::kParallel);
    rule.results[0][d] = f;
    const int da = d - (ry - a.rank()), db = d - (ry - b.rank());
    if (da >= 0 && a.dim(da) == y.dim(d)) rule.operands[0][da] = f;
    if (db >= 0 && b.dim(db) == y.dim(d)) rule.operands[1][db] = f;
  }
  const int m = rule.AddFactor(y.dim(ry - 2), FactorKind::kParallel);
  const int n = rule.AddFactor(y.dim(ry - 1), FactorKind::kParallel);
  const int k = rule.AddFactor(a.dim(a.rank() - 1), FactorKind::kReduction);
  rule.operands[0][a.rank() - 2] = m;
  rule.operands[0][a.rank() - 1] = k;
  rule.operands[1][b.rank() - 2] = k;
  rule.operands[1][b.rank() - 1] = n;
  rule.results[0][ry - 2] = m;
  rule.results[0][ry - 1] = n;
  rule.linear_sets = {{0}, {1}};
  return rule;
}

OpShardingRule GemmRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& a = InputShape(graph, node, 0);
  if (a.rank() != 2 || InputShape(graph, node, 1).rank() != 2) return rule;
  const bool ta = IntAttr(node, "transA", 0) != 0, tb = IntAttr(node, "transB", 0) != 0;
  const Shape& y = OutputShape(node, 0);
  const int m = rule.AddFactor(y.dim(0), FactorKind::kParallel);
  const int n = rule.AddFactor(y.dim(1), FactorKind::kParallel);
  const int k = rule.AddFactor(a.dim(ta ? 0 : 1), FactorKind::kReduction);
  rule.operands[0] = ta ? std::vector<int>{k, m} : std::vector<int>{m, k};
  rule.operands[1] = tb ? std::vector<int>{n, k} : std::vector<int>{k, n};
  rule.results[0] = {m, n};
  if (HasInput(node, 2)) {
    const Shape& c = InputShape(graph, node, 2);
    for (int i = 0; i < c.rank(); ++i) {
      const int d = 2 - c.rank() + i;
      if (d >= 0 && c.dim(i) == y.dim(d)) rule.operands[2][i] = d == 0 ? m : n;
    }
    rule.linear_sets = {{0, 2}, {1, 2}};
  } else {
    rule.linear_sets = {{0}, {1}};
  }
  return rule;
}

// Conv(X [N,C,...], W [M,C/g,...], B [M]) -> Y [N,M,...] and ConvTranspose(X [N,C,...],
// W [C,M/g,...], B [M]) -> Y [N,M,...] (Conv's input gradient): N and the output channels
// M parallel, the input channels C a reduction (with one group); spatial dims whole.
// `weight_out_dim` is W's dimension of M: 0 for Conv, 1 for ConvTranspose.
OpShardingRule ConvolutionRule(const Graph& graph, const Node& node, int weight_out_dim) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& x = InputShape(graph, node, 0);
  const int n = rule.AddFactor(x.dim(0), FactorKind::kParallel);
  rule.operands[0][0] = n;
  rule.results[0][0] = n;
  if (IntAttr(node, "group", 1) == 1) {
    const int m = rule.AddFactor(OutputShape(node, 0).dim(1), FactorKind::kParallel);
    const int c = rule.AddFactor(x.dim(1), FactorKind::kReduction);
    rule.operands[0][1] = c;
    rule.operands[1][weight_out_dim] = m;
    rule.operands[1][1 - weight_out_dim] = c;
    rule.results[0][1] = m;
    if (HasInput(node, 2)) rule.operands[2][0] = m;
  }
  return rule;
}

// ConvGradFilter(X [N,C,...], dY [N,M,...]) -> dW [M,C/g,...]: N is summed over.
OpShardingRule ConvGradFilterRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const int n = rule.AddFactor(InputShape(graph, node, 0).dim(0), FactorKind::kReduction);
  rule.operands[0][0] = n;
  rule.operands[1][0] = n;
  const int m = rule.AddFactor(OutputShape(node, 0).dim(0), FactorKind::kParallel);
  rule.operands[1][1] = m;
  rule.results[0][0] = m;
  if (IntAttr(node, "group", 1) == 1) {
    const int c = rule.AddFactor(OutputShape(node, 0).dim(1), FactorKind::kParallel);
    rule.operands[0][1] = c;
    rule.results[0][1] = c;
  }
  rule.linear_sets = {{1}};
  return rule;
}

// Pools and their gradients: N and C parallel, spatial dims whole. Every operand and
// result is [N, C, ...].
OpShardingRule BatchChannelRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& x = InputShape(graph, node, 0);
  if (x.rank() < 2) return rule;
  const int n = rule.AddFactor(x.dim(0), FactorKind::kParallel);
  const int c = rule.AddFactor(x.dim(1), FactorKind::kParallel);
  auto map = [&](const Shape& s, std::vector<int>& dims) {
    if (s.rank() >= 2 && s.dim(0) == x.dim(0) && s.dim(1) == x.dim(1)) {
      dims[0] = n;
      dims[1] = c;
    }
  };
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (HasInput(node, i)) map(InputShape(graph, node, i), rule.operands[i]);
  }
  for (int i = 0; i < node.num_outputs(); ++i) map(OutputShape(node, i), rule.results[i]);
  return rule;
}

// Softmax-like ops along `axis`: every other dimension parallel.
OpShardingRule AlongAxisRule(const Graph& graph, const Node& node, int64_t default_axis) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& x = InputShape(graph, node, 0);
  int64_t axis = IntAttr(node, "axis", default_axis);
  if (axis < 0) axis += x.rank();
  for (int d = 0; d < x.rank(); ++d) {
    if (d == axis) continue;
    const int f = rule.AddFactor(x.dim(d), FactorKind::kParallel);
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (HasInput(node, i) && InputShape(graph, node, i) == x) rule.operands[i][d] = f;
    }
    for (int i = 0; i < node.num_outputs(); ++i) {
      if (OutputShape(node, i) == x) rule.results[i][d] = f;
    }
  }
  return rule;
}

// SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss (scores [N,C,D...], labels
// [N,D...]): the batch (and the extra D dims) are averaged, summed or kept by the
// reduction; the class dim is whole. With class weights or ignore_index the mean is
// weighted by a sum over the batch, which a share of the batch does not know: whole.
OpShardingRule ClassificationLossRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  if (HasInput(node, 2) || node.FindAttr("ignore_index") != nullptr) return rule;
  const std::string reduction = StringAttr(node, "reduction", "mean");
  const FactorKind kind = reduction == "mean"  ? FactorKind::kMean
                          : reduction == "sum" ? FactorKind::kReduction
                                               : FactorKind::kParallel;
  const Shape& labels = InputShape(graph, node, 1);
  for (int d = 0; d < labels.rank(); ++d) {
    const int f = rule.AddFactor(labels.dim(d), kind);
    const int sd = d == 0 ? 0 : d + 1;  // the scores' dim of labels' dim d
    rule.operands[0][sd] = f;
    rule.operands[1][d] = f;
    if (kind == FactorKind::kParallel) rule.results[0][d] = f;
    if (node.num_outputs() > 1) rule.results[1][sd] = f;
  }
  return rule;
}

// OneHot(indices, depth, values) -> indices' shape with the class dim inserted at axis.
OpShardingRule OneHotRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& indices = InputShape(graph, node, 0);
  const int out_rank = indices.rank() + 1;
  int64_t axis = IntAttr(node, "axis", -1);
  if (axis < 0) axis += out_rank;
  for (int d = 0; d < indices.rank(); ++d) {
    const int f = rule.AddFactor(indices.dim(d), FactorKind::kParallel);
    rule.operands[0][d] = f;
    rule.results[0][d < axis ? d : d + 1] = f;
  }
  return rule;
}

OpShardingRule ConcatRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& out = OutputShape(node, 0);
  int64_t axis = IntAttr(node, "axis", 0);
  if (axis < 0) axis += out.rank();
  for (int d = 0; d < out.rank(); ++d) {
    if (d == axis) continue;
    const int f = rule.AddFactor(out.dim(d), FactorKind::kParallel);
    rule.results[0][d] = f;
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (HasInput(node, i)) rule.operands[i][d] = f;
    }
  }
  std::vector<int> all(node.num_inputs());
  std::iota(all.begin(), all.end(), 0);
  rule.linear_sets = {all};
  return rule;
}

OpShardingRule ParameterUpdateRule(const Graph& graph, const Node& node) {
  OpShardingRule rule = WholeRule(graph, node);
  const Shape& param = InputShape(graph, node, 0);
  std::vector<int> factors(param.rank());
  for (int d = 0; d < param.rank(); ++d) factors[d] = rule.AddFactor(param.dim(d), FactorKind::kParallel);
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (HasInput(node, i) && InputShape(graph, node, i) == param) rule.operands[i] = factors;
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (OutputShape(node, i) == param) rule.results[i] = factors;
  }
  return rule;
}

}  // namespace

absl::StatusOr<OpShardingRule> ShardingRuleFor(const Graph& graph, const Node& node) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (HasInput(node, i) && graph.TypeOf(node.input(i)) == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("node '", node.name(), "' (", node.op(), "): input ", i, " has no inferred type"));
    }
  }
  if (node.num_outputs() == 0 && node.op_def() != nullptr && !node.op_def()->outputs.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("node '", node.name(), "' (", node.op(), ") has no inferred type"));
  }
  const std::string& op = node.op();
  if (op == "Dropout") {
    // In training mode the mask is drawn per element index of the whole tensor: a device
    // holding a run of whole rows (dim 0 split, the rest whole) draws the same numbers
    // from its first element's index on (the partitioner sets element_offset). Other
    // splits would need strided draws: whole. Inference-mode Dropout is the identity.
    if (!HasInput(node, 2)) return BroadcastRule(graph, node);
    OpShardingRule rule = WholeRule(graph, node);
    const Shape& x = InputShape(graph, node, 0);
    if (x.rank() >= 1) {
      const int f = rule.AddFactor(x.dim(0), FactorKind::kParallel);
      rule.operands[0][0] = f;
      for (int i = 0; i < node.num_outputs(); ++i) {
        if (OutputShape(node, i).rank() >= 1) rule.results[i][0] = f;
      }
    }
    return rule;
  }
  if (BroadcastingOps().contains(op)) {
    OpShardingRule rule = BroadcastRule(graph, node);
    if (op == "Add" || op == "Sub" || op == "Sum") {
      std::vector<int> all(node.num_inputs());
      std::iota(all.begin(), all.end(), 0);
      rule.linear_sets = {all};
    } else if (op == "Mul") {
      rule.linear_sets = {{0}, {1}};
    } else if (op == "Div") {
      rule.linear_sets = {{0}};
    } else if (op == "Neg" || op == "Identity") {
      rule.linear_sets = {{0}};
    }
    return rule;
  }
  if (op == "Expand") {
    OpShardingRule rule = BroadcastRule(graph, node);
    rule.operands[1] = {-1};
    rule.linear_sets = {{0}};
    return rule;
  }
  if (ReshapingOps().contains(op)) return ReshapeRule(graph, node);
  if (op == "Transpose") return TransposeRule(graph, node);
  if (op == "ReduceSum" || op == "ReduceSumSquare") return ReduceRule(graph, node, FactorKind::kReduction);
  if (op == "ReduceMean") return ReduceRule(graph, node, FactorKind::kMean);
  if (op == "ReduceMax" || op == "ReduceMin" || op == "ReduceProd" || op == "ReduceL1" || op == "ReduceL2" ||
      op == "ReduceLogSum" || op == "ReduceLogSumExp") {
    return ReduceRule(graph, node, FactorKind::kParallel);  // reduced dims stay whole
  }
  if (op == "MatMul") return MatMulRule(graph, node);
  if (op == "Gemm") return GemmRule(graph, node);
  if (op == "Conv") return ConvolutionRule(graph, node, 0);
  if (op == "ConvTranspose") return ConvolutionRule(graph, node, 1);
  if (op == "ConvGradFilter") return ConvGradFilterRule(graph, node);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool" ||
      op == "MaxPoolGrad" || op == "AveragePoolGrad") {
    return BatchChannelRule(graph, node);
  }
  if (op == "Softmax" || op == "LogSoftmax") return AlongAxisRule(graph, node, -1);
  if (op == "SoftmaxCrossEntropyLoss" || op == "NegativeLogLikelihoodLoss") return ClassificationLossRule(graph, node);
  if (op == "OneHot") return OneHotRule(graph, node);
  if (op == "Concat") return ConcatRule(graph, node);
  if (ParameterUpdateOps().contains(op)) return ParameterUpdateRule(graph, node);
  return WholeRule(graph, node);
}

}  // namespace tsr
