// Tensor parallelism (Megatron-LM): the weights of dense layers are split over the mesh
// axis `model`, by output columns or by input rows, so that a column-split layer's
// output (split by features) feeds row-split layers without communication, and only a
// row-split layer's result is a partial sum to all-reduce — one all-reduce per column/row
// pair forward and one backward. Column layers' biases are split with their columns; row
// layers' are whole. Every optimizer slot of a weight ("<weight>/<slot>") is split like
// the weight.
//
// The dense layers are the MatMul/Gemm nodes whose weight (input 1) is a rank-2
// Variable, visited in topological order: a layer whose input the annotations so far make
// split by features (found by propagating them) splits its rows, any other its columns.
// For the MLP 784-256-256-10: 784x256 by columns, 256x256 by rows, 256x10 by columns;
// for a transformer block: query, key and value by columns (so attention runs on each
// device's heads), the attention output by rows, the MLP's up projection by columns and
// its down projection by rows.
//
//   TensorParallelStrategy(N): mesh {model=N}.
//   HybridStrategy(D, M): mesh {data=D, model=M}: the batch split over `data` (as
//     data_parallel.h) and the weights over `model`.
#ifndef TESSERA_STRATEGIES_TENSOR_PARALLEL_H_
#define TESSERA_STRATEGIES_TENSOR_PARALLEL_H_

#include <string>

#include "partitioner/device_mesh.h"
#include "strategies/strategy.h"

namespace tsr {

class TensorParallelStrategy : public Strategy {
 public:
  explicit TensorParallelStrategy(int devices) : devices_(devices) {}
  std::string name() const override;
  absl::StatusOr<StrategyPlan> Plan(const Graph& graph) const override;

 private:
  int devices_;
};

class HybridStrategy : public Strategy {
 public:
  HybridStrategy(int data, int model) : data_(data), model_(model) {}
  std::string name() const override;
  absl::StatusOr<StrategyPlan> Plan(const Graph& graph) const override;

 private:
  int data_;
  int model_;
};

// Adds the Megatron annotations of `graph`'s dense layers over mesh axis `axis` of
// `mesh` to `annotations` (which may already split the batch); InvalidArgument when the
// graph has no dense layer.
absl::Status AddTensorParallelAnnotations(const Graph& graph, const DeviceMesh& mesh, const std::string& axis,
                                          ShardingAnnotations& annotations);

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_TENSOR_PARALLEL_H_
