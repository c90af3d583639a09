// `CollectiveDescriptor`: what one rank passed to one operation — op, reduce op, root,
// tensor name, input and output types — with a fixed-size wire form, and the checks
// every rank runs on all ranks' descriptors. The backends whose ranks are processes
// (MPI, Gloo) exchange descriptors before moving any data: every rank then holds every
// rank's descriptor and runs the same check, so a mismatch is reported identically on
// every rank (the contract in collectives.h), and uneven all-gathers and all-to-alls
// learn every rank's row count without another round trip.
//
// The error messages are the in-process backend's, word for word, so that a job reads
// the same whichever backend it runs on.
#ifndef TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_COLLECTIVE_DESCRIPTOR_H_
#define TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_COLLECTIVE_DESCRIPTOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "graph/tensor_type.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

// The collectives, then the two sides of a point-to-point transfer (whose descriptors
// travel in the transfer's header and acknowledgement).
enum class CollectiveKind : uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kAllToAll,
  kBarrier,
  kSend,
  kRecv,
};

// "all_reduce", "reduce_scatter", ..., "send", "recv".
absl::string_view CollectiveKindName(CollectiveKind kind);

struct CollectiveDescriptor {
  CollectiveKind kind = CollectiveKind::kBarrier;
  ReduceOp reduce_op = ReduceOp::kSum;  // reductions only
  int root = 0;                         // broadcast only
  // The tensor name as printed in messages; names longer than the wire form holds are
  // cut (ending in "...") and compared through `name_hash`, the hash of the full name.
  std::string name;
  uint64_t name_hash = 0;
  TensorType input;   // AllReduce and Broadcast: the in/out tensor; Recv: the output
  TensorType output;  // ReduceScatter, AllGather, AllToAll
  // Set by a rank that gave up waiting for this collective (MPI: so that a rank arriving
  // late fails at once instead of starting the data movement alone).
  bool abandoned = false;
  // Point-to-point acknowledgements: whether the receiver found the sender's header
  // matching its own.
  bool accepted = false;
};

// A descriptor of `kind` with `name`'s hash filled in.
CollectiveDescriptor MakeDescriptor(CollectiveKind kind, absl::string_view name, TensorType input = {},
                                    TensorType output = {}, ReduceOp reduce_op = ReduceOp::kSum, int root = 0);

// Every encoded descriptor has exactly this size (ranks of up to kMaxRank fit).
inline constexpr size_t kDescriptorWireBytes = 1024;

// Writes the descriptor, tagged with the sequence number `seq`, to the
// kDescriptorWireBytes bytes at `out` (zeros after it) and returns how many of them it
// used: a receiver needs only those (typically under 100 bytes).
size_t EncodeDescriptor(const CollectiveDescriptor& descriptor, int64_t seq, char* out);
// Reads what EncodeDescriptor wrote; `seq` receives the sequence number and `bytes`
// (when given) the count EncodeDescriptor returned. DataLoss when the bytes are not a
// descriptor.
absl::StatusOr<CollectiveDescriptor> DecodeDescriptor(const char* in, int64_t* seq, size_t* bytes = nullptr);
// The same into *out, reusing its strings' and shapes' memory (a communicator decodes
// one per peer per collective); *out is unspecified after an error.
absl::Status DecodeDescriptorInto(const char* in, int64_t* seq, size_t* bytes, CollectiveDescriptor* out);

// "all_reduce(sum) 'grad/w1' f32[10]", "all_gather 'x' f32[2,3] -> f32[5,3]".
std::string Describe(const CollectiveDescriptor& descriptor);
// "all_reduce 'grad/w1' (seq 7)": where an error happened.
std::string Where(const CollectiveDescriptor& descriptor, int64_t seq);

// Checks what every rank passed to collective #seq (element r from rank r): the same
// op, name, reduce op and root everywhere, consistent dtypes and shapes, reducible
// dtypes, a valid root, outputs of the required shapes. InvalidArgument naming both
// sides otherwise. Every rank runs it on the same descriptors, so all report the same.
absl::Status CheckDescriptors(int64_t seq, absl::Span<const CollectiveDescriptor> all);

// Checks that the two sides of point-to-point transfer #seq from `src` to `dst` agree
// on name, dtype and shape: "send/recv rank 0 -> rank 1 (seq 0): rank 0 sends 'x'
// f32[4] but rank 1 receives 'x' f32[5]".
absl::Status CheckTransfer(int src, int dst, int64_t seq, const CollectiveDescriptor& send,
                           const CollectiveDescriptor& recv);

// DeadlineExceeded for a collective that not every rank reached: "all_reduce 'g' (seq 3):
// rank 0 waited 2s but ranks 2, 3 of 4 did not arrive".
absl::Status MissingRanksError(absl::string_view where, int rank, absl::Duration timeout,
                               const std::vector<int>& missing, int world_size);

// The rows of dim 0 that `rank` owns when `rows` rows are split over `world_size`
// ranks (SplitBegin's rule).
inline int64_t SplitRows(int64_t rows, int world_size, int rank) {
  return SplitBegin(rows, world_size, rank + 1) - SplitBegin(rows, world_size, rank);
}

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_COLLECTIVE_DESCRIPTOR_H_
