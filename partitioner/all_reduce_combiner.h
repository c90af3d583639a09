// `CombineAllReduces`: one all-reduce of many small gradients costs one latency instead
// of many (Horovod's tensor fusion, PyTorch DDP's buckets). In a device's program, the
// sum all-reduces whose results only feed Variable updates (the gradients of data
// parallelism) are packed, in program order (the order the backward pass computes them),
// into buckets of at most `threshold_bytes` of one dtype and mesh axes each: the inputs
// flattened and concatenated, one AllReduce, the results sliced back out and reshaped.
// Results are bit-identical to the separate all-reduces (the same sums, element by
// element). Other collectives are left alone; a bucket of one stays one all-reduce, moved
// to right after its gradient.
//
// Returns the program rebuilt (nodes cannot be removed in place) with the names of the
// nodes it keeps, and counts the buckets made and the all-reduces they replaced.
#ifndef TESSERA_PARTITIONER_ALL_REDUCE_COMBINER_H_
#define TESSERA_PARTITIONER_ALL_REDUCE_COMBINER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tsr {

struct AllReduceCombination {
  int buckets = 0;
  int combined = 0;  // all-reduces now inside buckets
};

// The first bucket holds at most `first_bucket_bytes` (when > 0), as PyTorch DDP's: the
// gradients of the last layers, all-reduced while the backward pass goes on. Each bucket
// is placed right after the last of its gradients is computed.
absl::StatusOr<Graph> CombineAllReduces(const Graph& program, int64_t threshold_bytes,
                                        AllReduceCombination* combination = nullptr, int64_t first_bucket_bytes = 0);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_ALL_REDUCE_COMBINER_H_
