// `Collectives`: the interface every collectives backend (in-process, MPI, Gloo, NCCL)
// implements — all-reduce, reduce-scatter, all-gather, broadcast, all-to-all,
// send/recv and barrier across the `world_size()` ranks of one communicator — and
// `CollectiveHandle`, the completion of one asynchronous operation.
//
// The contract every backend keeps (tests/runtime/collectives/collectives_conformance.h
// checks it):
//  - Collectives (everything but Send/Recv) are numbered per communicator in issue
//    order (the "sequence number"). Every rank must issue the same collectives in the
//    same order; when rank A's collective #k differs from rank B's in op, reduce op,
//    tensor name, dtype or shape (or root), every rank's handle fails with one
//    InvalidArgument error that names both sides.
//  - A rank that waits longer than `CollectivesOptions::timeout` for the others fails
//    with DeadlineExceeded naming the collective and the ranks that did not arrive.
//  - Several operations may be in flight from one rank; they may be waited in any order.
//    Their tensors' buffers must stay untouched until the handle completes.
//  - Uneven splits along dim 0 follow one rule: n rows split over W ranks give rank r
//    the rows [r*n/W, (r+1)*n/W) (`SplitBegin`), so the first ranks get the fewer rows.
//  - Reductions support f32, f64, i32 and i64; kMean on integers divides the integer sum
//    by world_size() truncating toward zero (C++ integer division). Data movement
//    (all-gather, broadcast, all-to-all, send/recv) supports every dtype.
//  - Inputs and outputs of one operation must not overlap (AllReduce and Broadcast are
//    in place by design).
#ifndef TESSERA_RUNTIME_COLLECTIVES_COLLECTIVES_H_
#define TESSERA_RUNTIME_COLLECTIVES_COLLECTIVES_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "graph/dtype.h"
#include "graph/tensor.h"

namespace tsr {

enum class ReduceOp { kSum, kMean, kMax, kMin };

// "sum", "mean", "max", "min".
absl::string_view ReduceOpName(ReduceOp op);

// Whether reductions (AllReduce, ReduceScatter) support `dtype`: f32, f64, i32, i64.
bool IsReducibleDType(DType dtype);

// The first of the rows that rank `rank` of `world_size` owns when `n` rows are split
// along dim 0; rank r owns [SplitBegin(n, W, r), SplitBegin(n, W, r + 1)).
inline int64_t SplitBegin(int64_t n, int world_size, int rank) { return n * rank / world_size; }

struct CollectivesOptions {
  // How long a rank waits for the others to arrive at a collective (or for the peer of
  // a Send/Recv) before it fails with DeadlineExceeded.
  absl::Duration timeout = absl::Seconds(60);
};

// The completion of one asynchronous operation. Copies refer to the same completion.
class CollectiveHandle {
 public:
  // A handle that is already complete with `status`.
  static CollectiveHandle Ready(absl::Status status);
  // A pending handle, for backends. When `Wait` is still waiting at `deadline`, it calls
  // `on_deadline` once (which must complete the handle, e.g. with DeadlineExceeded, or
  // do nothing if the operation completed meanwhile): for operations that no backend
  // thread watches, such as a posted Recv.
  // `progress`, if given, is for operations that the thread asking about them moves
  // forward itself (MPI's eager all-reduce): Wait calls progress(true) first, which
  // should complete the handle unless another thread is completing it; Done calls
  // progress(false), which should only poll.
  static CollectiveHandle Pending(absl::Time deadline = absl::InfiniteFuture(),
                                  std::function<void()> on_deadline = nullptr,
                                  std::function<void(bool wait)> progress = nullptr);

  // Blocks until the operation completes; its status.
  absl::Status Wait() const;
  bool Done() const;

  // For backends: completes the handle; later calls are ignored (the first status wins).
  void Complete(absl::Status status) const;

 private:
  struct State;
  explicit CollectiveHandle(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

// One rank's view of a communicator. An object is used from one thread at a time.
class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // Reduces `inout` element-wise over all ranks, in place. Same dtype and shape on every
  // rank.
  virtual CollectiveHandle AllReduce(Tensor& inout, ReduceOp op, absl::string_view name) = 0;
  // Reduces `input` (the same dtype and shape, rank >= 1, on every rank) and leaves this
  // rank's rows of the result, [SplitBegin(n, W, r), SplitBegin(n, W, r + 1)), in
  // `output`, whose shape must be input's with dim 0 set to that row count.
  virtual CollectiveHandle ReduceScatter(const Tensor& input, Tensor& output, ReduceOp op, absl::string_view name) = 0;
  // Concatenates every rank's `input` along dim 0, in rank order, into `output`. Inputs
  // may differ in dim 0 (not in dtype or the other dims).
  virtual CollectiveHandle AllGather(const Tensor& input, Tensor& output, absl::string_view name) = 0;
  // Copies rank `root`'s `inout` into every other rank's `inout`.
  virtual CollectiveHandle Broadcast(Tensor& inout, int root, absl::string_view name) = 0;
  // Splits `input` along dim 0 by the SplitBegin rule into world_size() parts, sends
  // part j to rank j, and concatenates the parts received, in rank order, into `output`.
  // Inputs may differ in dim 0 (not in dtype or the other dims).
  virtual CollectiveHandle AllToAll(const Tensor& input, Tensor& output, absl::string_view name) = 0;
  // Point-to-point: matched per (sender, receiver) pair in issue order, not part of the
  // collective sequence, and not ordered after this rank's pending collectives (wait for
  // a collective before sending its result). The two sides must agree on name, dtype and
  // shape; the data moves once both sides are posted, so a rank may post either first.
  virtual CollectiveHandle Send(const Tensor& input, int peer, absl::string_view name) = 0;
  virtual CollectiveHandle Recv(Tensor& output, int peer, absl::string_view name) = 0;
  // Completes once every rank has issued it.
  virtual CollectiveHandle Barrier(absl::string_view name) = 0;

  // Blocking forms: issue, then wait.
  absl::Status AllReduceSync(Tensor& inout, ReduceOp op, absl::string_view name) {
    return AllReduce(inout, op, name).Wait();
  }
  absl::Status BarrierSync(absl::string_view name) { return Barrier(name).Wait(); }
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_COLLECTIVES_H_
