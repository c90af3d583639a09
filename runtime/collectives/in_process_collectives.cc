// InProcessCommunicator: ranks as threads of one process, data through shared memory.
#include "runtime/collectives/in_process_collectives.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "platform/spin_wait.h"

namespace tsr {
namespace {

enum class OpKind { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kAllToAll, kBarrier };

absl::string_view OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kAllReduce:
      return "all_reduce";
    case OpKind::kReduceScatter:
      return "reduce_scatter";
    case OpKind::kAllGather:
      return "all_gather";
    case OpKind::kBroadcast:
      return "broadcast";
    case OpKind::kAllToAll:
      return "all_to_all";
    case OpKind::kBarrier:
      return "barrier";
  }
  return "unknown";
}

bool IsReduction(OpKind kind) { return kind == OpKind::kAllReduce || kind == OpKind::kReduceScatter; }
bool HasOutput(OpKind kind) {
  return kind == OpKind::kReduceScatter || kind == OpKind::kAllGather || kind == OpKind::kAllToAll;
}

// What one rank passed to one collective. Tensors are copies sharing the caller's
// buffers, which keeps those alive until the collective is done.
struct CollectiveCall {
  OpKind kind = OpKind::kBarrier;
  ReduceOp reduce_op = ReduceOp::kSum;
  std::string name;
  Tensor input;  // AllReduce and Broadcast: the in/out tensor
  Tensor output;
  int root = 0;
};

// "all_reduce(sum) 'grad/w1' f32[10]", "all_gather 'x' f32[2,3] -> f32[5,3]".
std::string Describe(const CollectiveCall& c) {
  std::string out(OpKindName(c.kind));
  if (IsReduction(c.kind)) absl::StrAppend(&out, "(", ReduceOpName(c.reduce_op), ")");
  if (c.kind == OpKind::kBroadcast) absl::StrAppend(&out, "(root ", c.root, ")");
  absl::StrAppend(&out, " '", c.name, "'");
  if (c.kind != OpKind::kBarrier) absl::StrAppend(&out, " ", c.input.type().ToString());
  if (HasOutput(c.kind)) absl::StrAppend(&out, " -> ", c.output.type().ToString());
  return out;
}

// "all_reduce 'grad/w1' (seq 7)": where an error happened.
std::string Where(const CollectiveCall& c, int64_t seq) {
  return absl::StrCat(OpKindName(c.kind), " '", c.name, "' (seq ", seq, ")");
}

// Shape `s` with dim 0 replaced by `rows`.
Shape WithRows(const Shape& s, int64_t rows) {
  Shape out = s;
  out.set_dim(0, rows);
  return out;
}

bool SameTrailingDims(const Shape& a, const Shape& b) {
  return a.rank() == b.rank() && std::equal(a.dims().begin() + 1, a.dims().end(), b.dims().begin() + 1);
}

// Checks what every rank passed to collective #seq. Every rank runs this on the same
// calls, so every rank reports the same error.
absl::Status CheckCalls(int64_t seq, const std::vector<CollectiveCall>& calls) {
  const int world = static_cast<int>(calls.size());
  const CollectiveCall& first = calls[0];
  for (int r = 1; r < world; ++r) {
    const CollectiveCall& c = calls[r];
    if (c.kind != first.kind || c.name != first.name || (IsReduction(c.kind) && c.reduce_op != first.reduce_op) ||
        (c.kind == OpKind::kBroadcast && c.root != first.root)) {
      return absl::InvalidArgumentError(absl::StrCat("collective seq ", seq, " differs across ranks: rank ", r,
                                                     " issued ", Describe(c), " but rank 0 issued ", Describe(first)));
    }
  }
  if (first.kind == OpKind::kBarrier) return absl::OkStatus();
  const std::string where = Where(first, seq);
  for (int r = 1; r < world; ++r) {
    const Tensor& in = calls[r].input;
    const bool same_type = in.dtype() == first.input.dtype() &&
                           ((first.kind == OpKind::kAllGather || first.kind == OpKind::kAllToAll)
                                ? in.shape().rank() >= 1 && SameTrailingDims(in.shape(), first.input.shape())
                                : in.shape() == first.input.shape());
    if (!same_type) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": rank ", r, " passed ", in.type().ToString(),
                                                     " but rank 0 passed ", first.input.type().ToString()));
    }
  }
  const DType dtype = first.input.dtype();
  if (IsReduction(first.kind) && !IsReducibleDType(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": dtype ", DTypeName(dtype), " cannot be reduced (f32, f64, i32 and i64 can)"));
  }
  if (first.kind == OpKind::kBroadcast && (first.root < 0 || first.root >= world)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": root ", first.root, " is not a rank of a world of size ", world));
  }
  if (!HasOutput(first.kind)) return absl::OkStatus();
  if (first.input.shape().rank() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": input ", first.input.type().ToString(), " has no dim 0 to split or concatenate"));
  }
  int64_t gathered_rows = 0;
  for (const CollectiveCall& c : calls) gathered_rows += c.input.shape().dim(0);
  for (int r = 0; r < world; ++r) {
    const Shape& in = calls[r].input.shape();
    int64_t rows = 0;
    switch (first.kind) {
      case OpKind::kReduceScatter:
        rows = SplitBegin(in.dim(0), world, r + 1) - SplitBegin(in.dim(0), world, r);
        break;
      case OpKind::kAllGather:
        rows = gathered_rows;
        break;
      default:  // all_to_all: rank r receives part r of every rank's input
        for (const CollectiveCall& c : calls) {
          const int64_t n = c.input.shape().dim(0);
          rows += SplitBegin(n, world, r + 1) - SplitBegin(n, world, r);
        }
        break;
    }
    const TensorType want(dtype, WithRows(in, rows));
    if (calls[r].output.type() != want) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": rank ", r, "'s output is ",
                                                     calls[r].output.type().ToString(), " but ", want.ToString(),
                                                     " is needed"));
    }
  }
  return absl::OkStatus();
}

// dst[i] = op over q of srcs[q][i] for i in [begin, end), in rank order, for every dst
// of dsts. A dst may be one of the sources: each tile is reduced into a local buffer
// before it is written.
template <typename T>
void ReduceRange(ReduceOp op, const std::vector<const T*>& srcs, const std::vector<T*>& dsts, int64_t begin,
                 int64_t end) {
  constexpr int64_t kTile = 1024;
  T acc[kTile];
  const int world = static_cast<int>(srcs.size());
  for (int64_t t = begin; t < end; t += kTile) {
    const int64_t n = std::min(kTile, end - t);
    std::copy(srcs[0] + t, srcs[0] + t + n, acc);
    for (int q = 1; q < world; ++q) {
      const T* s = srcs[q] + t;
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kMean:
          for (int64_t i = 0; i < n; ++i) acc[i] += s[i];
          break;
        case ReduceOp::kMax:
          for (int64_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], s[i]);
          break;
        case ReduceOp::kMin:
          for (int64_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], s[i]);
          break;
      }
    }
    if (op == ReduceOp::kMean) {
      for (int64_t i = 0; i < n; ++i) acc[i] /= static_cast<T>(world);  // integers truncate
    }
    for (T* dst : dsts) std::copy(acc, acc + n, dst + t);
  }
}

// The `count` elements of every dst of `dsts` = the reduction of the elements of `srcs`
// from `src_offset` on (reduce-scatter reads rows further into its input).
void Reduce(DType dtype, ReduceOp op, const std::vector<const void*>& srcs, int64_t src_offset,
            const std::vector<void*>& dsts, int64_t count) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<const T*> typed;
    for (const void* s : srcs) typed.push_back(static_cast<const T*>(s) + src_offset);
    std::vector<T*> typed_dsts;
    for (void* d : dsts) typed_dsts.push_back(static_cast<T*>(d));
    ReduceRange<T>(op, typed, typed_dsts, 0, count);
  };
  switch (dtype) {
    case DType::kF32:
      return run(float{});
    case DType::kF64:
      return run(double{});
    case DType::kI32:
      return run(int32_t{});
    case DType::kI64:
      return run(int64_t{});
    default:
      return;  // CheckCalls refused it
  }
}

void CopyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

char* Bytes(Tensor& t) { return static_cast<char*>(t.raw_data()); }
const char* Bytes(const Tensor& t) { return static_cast<const char*>(t.raw_data()); }

// The meeting of every rank at one collective.
// Counts are atomics so that a rank can spin on them without the communicator's lock;
// they change under it (arrived) or are followed by taking it (work_done), so a rank
// asleep in Mutex::Await on them is woken.
struct Slot {
  explicit Slot(int world) : calls(world), present(world, false) {}
  std::vector<CollectiveCall> calls;
  std::vector<bool> present;
  std::atomic<int> arrived{0};
  absl::Status failure;             // set by a rank that gave up waiting for the others
  std::atomic<bool> failed{false};  // failure is set
  std::atomic<int> work_done{0};  // ranks whose share of the work is done
  int departed = 0;
};

// One pending side of a Send/Recv pair.
struct PendingTransfer {
  std::string name;
  Tensor tensor;
  CollectiveHandle handle = CollectiveHandle::Ready(absl::OkStatus());
};

struct Channel {
  int64_t next_send = 0;
  int64_t next_recv = 0;
  std::map<int64_t, PendingTransfer> sends;
  std::map<int64_t, PendingTransfer> recvs;
};

class InProcessCommunicatorImpl final : public InProcessCommunicator {
 public:
  InProcessCommunicatorImpl(int world_size, CollectivesOptions options) : world_size_(world_size), options_(options) {}
  // A Send or Recv still waiting for its peer would otherwise never complete.
  ~InProcessCommunicatorImpl() override {
    for (auto& [key, channel] : channels_) {
      for (auto* pending : {&channel.sends, &channel.recvs}) {
        for (auto& [seq, transfer] : *pending) {
          transfer.handle.Complete(
              absl::CancelledError(absl::StrCat("'", transfer.name, "' rank ", key.first, " -> rank ", key.second,
                                                " (seq ", seq, "): the communicator was destroyed")));
        }
      }
    }
  }

  int world_size() const override { return world_size_; }
  std::unique_ptr<Collectives> ForRank(int rank) override;

  // Runs collective #seq for `rank`: waits for the others, checks, does rank's share.
  absl::Status RunCollective(int rank, int64_t seq, CollectiveCall call);
  CollectiveHandle PostTransfer(bool is_send, int rank, int peer, absl::string_view name, Tensor tensor);

 private:
  void AwaitWorkDone(Slot& slot);
  void Depart(int64_t seq, Slot& slot);
  void DoWork(int rank, Slot& slot);
  void ExpireTransfer(bool is_send, int src, int dst, int64_t seq);

  const int world_size_;
  const CollectivesOptions options_;
  absl::Mutex mu_;
  absl::flat_hash_map<int64_t, std::shared_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
  // Keyed by (sender, receiver).
  std::map<std::pair<int, int>, Channel> channels_ ABSL_GUARDED_BY(mu_);
};

absl::Status InProcessCommunicatorImpl::RunCollective(int rank, int64_t seq, CollectiveCall call) {
  std::shared_ptr<Slot> slot;
  const std::string where = Where(call, seq);
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<Slot>& entry = slots_[seq];
    if (entry == nullptr) entry = std::make_shared<Slot>(world_size_);
    slot = entry;
    slot->calls[rank] = std::move(call);
    slot->present[rank] = true;
    slot->arrived.fetch_add(1);
  }
  SpinUntil([&] { return slot->arrived.load() == world_size_ || slot->failed.load(); });
  {
    absl::MutexLock lock(&mu_);
    // Everyone is here, or a rank gave up (then nobody may go on to the data).
    auto ready = [&] { return slot->arrived.load() == world_size_ || !slot->failure.ok(); };
    if (!mu_.AwaitWithDeadline(absl::Condition(&ready), absl::Now() + options_.timeout)) {
      std::vector<int> missing;
      for (int r = 0; r < world_size_; ++r) {
        if (!slot->present[r]) missing.push_back(r);
      }
      slot->failure = absl::DeadlineExceededError(absl::StrCat(
          where, ": rank ", rank, " waited ", absl::FormatDuration(options_.timeout), " but rank",
          missing.size() > 1 ? "s " : " ", absl::StrJoin(missing, ", "), " of ", world_size_, " did not arrive"));
      slot->failed = true;
    }
    if (!slot->failure.ok()) {
      // Nobody touches data once a collective failed; the slot stays until every rank
      // has seen it, so late ranks get the same error instead of waiting again.
      ++slot->departed;
      if (slot->departed == world_size_) slots_.erase(seq);
      return slot->failure;
    }
  }
  // Everyone has arrived: the calls are read-only from here on.
  absl::Status status = CheckCalls(seq, slot->calls);
  if (status.ok()) DoWork(rank, *slot);
  Depart(seq, *slot);
  return status;
}

void InProcessCommunicatorImpl::DoWork(int rank, Slot& slot) {
  const int world = world_size_;
  std::vector<CollectiveCall>& calls = slot.calls;
  CollectiveCall& mine = calls[rank];
  const DType dtype = mine.input.dtype();
  const size_t esize = DTypeSize(dtype);
  switch (mine.kind) {
    case OpKind::kBarrier:
      return;
    case OpKind::kAllReduce: {
      // Rank r reduces its part of every buffer and writes the result into every buffer
      // (tile by tile, while the tile is in cache): reduce-scatter and all-gather in one
      // pass, each element read and written once per rank (an all-gather pass after
      // the reduction read and wrote the parts once more: 16 MiB over 2 ranks went
      // 2.8-3.0 -> 5.6-8.0 GB/s busbw on a machine whose one core moves 15-17 GB/s). No
      // rank touches another's part, so the only wait is the one every collective ends
      // with, for every part to be written.
      const int64_t n = mine.input.num_elements();
      const int64_t begin = SplitBegin(n, world, rank);
      const int64_t end = SplitBegin(n, world, rank + 1);
      std::vector<const void*> srcs;
      std::vector<void*> dsts;
      for (CollectiveCall& c : calls) {
        srcs.push_back(c.input.raw_data());
        dsts.push_back(Bytes(c.input) + begin * esize);
      }
      Reduce(dtype, mine.reduce_op, srcs, begin, dsts, end - begin);
      break;
    }
    case OpKind::kReduceScatter: {
      const int64_t rows = mine.input.shape().dim(0);
      const int64_t row_elems = rows == 0 ? 0 : mine.input.num_elements() / rows;
      std::vector<const void*> srcs;
      for (const CollectiveCall& c : calls) srcs.push_back(c.input.raw_data());
      const int64_t begin = SplitBegin(rows, world, rank) * row_elems;
      Reduce(dtype, mine.reduce_op, srcs, begin, {mine.output.raw_data()}, mine.output.num_elements());
      break;
    }
    case OpKind::kAllGather: {
      size_t offset = 0;
      for (const CollectiveCall& c : calls) {
        CopyBytes(Bytes(mine.output) + offset, Bytes(c.input), c.input.num_bytes());
        offset += c.input.num_bytes();
      }
      break;
    }
    case OpKind::kBroadcast:
      if (rank != mine.root) {
        CopyBytes(mine.input.raw_data(), calls[mine.root].input.raw_data(), mine.input.num_bytes());
      }
      break;
    case OpKind::kAllToAll: {
      size_t offset = 0;
      for (const CollectiveCall& c : calls) {
        const int64_t rows = c.input.shape().dim(0);
        const size_t row_bytes = rows == 0 ? 0 : c.input.num_bytes() / rows;
        const int64_t b = SplitBegin(rows, world, rank);
        const int64_t e = SplitBegin(rows, world, rank + 1);
        CopyBytes(Bytes(mine.output) + offset, Bytes(c.input) + b * row_bytes, (e - b) * row_bytes);
        offset += (e - b) * row_bytes;
      }
      break;
    }
  }
  // Nobody may reuse its buffers while another rank still reads or writes them.
  AwaitWorkDone(slot);
}

void InProcessCommunicatorImpl::AwaitWorkDone(Slot& slot) {
  // Once every rank has arrived, the remaining steps are bounded copies and reductions
  // by the ranks' own threads, so this wait needs no deadline.
  if (slot.work_done.fetch_add(1) + 1 == world_size_) {
    absl::MutexLock wake(&mu_);  // its release re-checks the conditions of the ranks asleep below
    return;
  }
  auto all_done = [&] { return slot.work_done.load() == world_size_; };
  if (SpinUntil(all_done)) return;
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&all_done));
}

void InProcessCommunicatorImpl::Depart(int64_t seq, Slot& slot) {
  absl::MutexLock lock(&mu_);
  if (++slot.departed == world_size_) slots_.erase(seq);
}

CollectiveHandle InProcessCommunicatorImpl::PostTransfer(bool is_send, int rank, int peer, absl::string_view name,
                                                         Tensor tensor) {
  const absl::string_view verb = is_send ? "send" : "recv";
  if (peer < 0 || peer >= world_size_) {
    return CollectiveHandle::Ready(absl::InvalidArgumentError(absl::StrCat(
        verb, " '", name, "' on rank ", rank, ": peer ", peer, " is not a rank of a world of size ", world_size_)));
  }
  const int src = is_send ? rank : peer;
  const int dst = is_send ? peer : rank;
  PendingTransfer send;
  PendingTransfer recv;
  int64_t seq;
  {
    absl::MutexLock lock(&mu_);
    Channel& channel = channels_[{src, dst}];
    seq = is_send ? channel.next_send++ : channel.next_recv++;
    std::map<int64_t, PendingTransfer>& others = is_send ? channel.recvs : channel.sends;
    auto it = others.find(seq);
    if (it == others.end()) {
      // The peer has not posted its side: wait for it, up to the timeout (enforced when
      // the handle is waited on).
      std::weak_ptr<InProcessCommunicator> weak = weak_from_this();
      PendingTransfer mine{std::string(name), std::move(tensor),
                           CollectiveHandle::Pending(absl::Now() + options_.timeout, [weak, is_send, src, dst, seq] {
                             if (auto comm = weak.lock()) {
                               static_cast<InProcessCommunicatorImpl&>(*comm).ExpireTransfer(is_send, src, dst, seq);
                             }
                           })};
      CollectiveHandle handle = mine.handle;
      (is_send ? channel.sends : channel.recvs).emplace(seq, std::move(mine));
      return handle;
    }
    (is_send ? recv : send) = std::move(it->second);
    others.erase(it);
  }
  // This side came second: match the two and copy.
  CollectiveHandle handle = CollectiveHandle::Pending();
  (is_send ? send : recv) = PendingTransfer{std::string(name), std::move(tensor), handle};
  absl::Status status;
  if (send.name != recv.name || send.tensor.type() != recv.tensor.type()) {
    status = absl::InvalidArgumentError(absl::StrCat("send/recv rank ", src, " -> rank ", dst, " (seq ", seq,
                                                     "): rank ", src, " sends '", send.name, "' ",
                                                     send.tensor.type().ToString(), " but rank ", dst, " receives '",
                                                     recv.name, "' ", recv.tensor.type().ToString()));
  } else {
    CopyBytes(recv.tensor.raw_data(), send.tensor.raw_data(), send.tensor.num_bytes());
  }
  send.handle.Complete(status);
  recv.handle.Complete(status);
  return handle;
}

void InProcessCommunicatorImpl::ExpireTransfer(bool is_send, int src, int dst, int64_t seq) {
  PendingTransfer expired;
  {
    absl::MutexLock lock(&mu_);
    Channel& channel = channels_[{src, dst}];
    std::map<int64_t, PendingTransfer>& pending = is_send ? channel.sends : channel.recvs;
    auto it = pending.find(seq);
    if (it == pending.end()) return;  // matched meanwhile
    expired = std::move(it->second);
    pending.erase(it);
  }
  expired.handle.Complete(absl::DeadlineExceededError(
      absl::StrCat(is_send ? "send '" : "recv '", expired.name, "' rank ", src, " -> rank ", dst, " (seq ", seq,
                   "): rank ", is_send ? dst : src, " did not post the matching ", is_send ? "recv" : "send",
                   " within ", absl::FormatDuration(options_.timeout))));
}

// One rank's Collectives: its collectives run in issue order, on the thread that waits
// for them or on the rank's worker thread.
//
// A collective issued while none is queued or running is held for the thread that will
// wait for it: Wait runs it right there (as a plain blocking call would), with no
// hand-off to the worker and back, which cost two thread wake-ups per collective -- a
// mirrored step's gradient all-reduces mostly waited for the scheduler. The worker takes
// it instead when another collective is issued behind it (those run in order, while the
// rank goes on computing), when its handle is polled (a poll never blocks in a
// collective), when the rank posts a Send or Recv (whose peer may first need this
// collective to finish), and at destruction.
class InProcessCollectives final : public Collectives {
 public:
  InProcessCollectives(std::shared_ptr<InProcessCommunicatorImpl> comm, int rank)
      : comm_(std::move(comm)), rank_(rank), worker_([this] { WorkerLoop(); }) {}
  ~InProcessCollectives() override {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      held_ = false;
    }
    worker_.join();  // after the queued collectives ran
  }

  int rank() const override { return rank_; }
  int world_size() const override { return comm_->world_size(); }

  CollectiveHandle AllReduce(Tensor& inout, ReduceOp op, absl::string_view name) override {
    return Issue({OpKind::kAllReduce, op, std::string(name), inout, Tensor(), 0});
  }
  CollectiveHandle ReduceScatter(const Tensor& input, Tensor& output, ReduceOp op, absl::string_view name) override {
    return Issue({OpKind::kReduceScatter, op, std::string(name), input, output, 0});
  }
  CollectiveHandle AllGather(const Tensor& input, Tensor& output, absl::string_view name) override {
    return Issue({OpKind::kAllGather, ReduceOp::kSum, std::string(name), input, output, 0});
  }
  CollectiveHandle Broadcast(Tensor& inout, int root, absl::string_view name) override {
    return Issue({OpKind::kBroadcast, ReduceOp::kSum, std::string(name), inout, Tensor(), root});
  }
  CollectiveHandle AllToAll(const Tensor& input, Tensor& output, absl::string_view name) override {
    return Issue({OpKind::kAllToAll, ReduceOp::kSum, std::string(name), input, output, 0});
  }
  CollectiveHandle Send(const Tensor& input, int peer, absl::string_view name) override {
    HandOver();
    return comm_->PostTransfer(/*is_send=*/true, rank_, peer, name, input);
  }
  CollectiveHandle Recv(Tensor& output, int peer, absl::string_view name) override {
    HandOver();
    return comm_->PostTransfer(/*is_send=*/false, rank_, peer, name, output);
  }
  CollectiveHandle Barrier(absl::string_view name) override {
    return Issue({OpKind::kBarrier, ReduceOp::kSum, std::string(name), Tensor(), Tensor(), 0});
  }

 private:
  struct Task {
    int64_t seq;
    std::function<void()> run;
  };

  CollectiveHandle Issue(CollectiveCall call) {
    absl::MutexLock lock(&mu_);
    const int64_t seq = next_seq_++;
    CollectiveHandle handle = CollectiveHandle::Pending(
        absl::InfiniteFuture(), nullptr, [this, seq](bool wait) { wait ? RunThrough(seq) : HandOver(); });
    // Held for its waiter when nothing is ahead of it; one issued behind others makes
    // the worker run them all.
    held_ = queue_.empty() && !running_;
    queue_.push_back({seq, [this, seq, handle, call = std::move(call)]() mutable {
                        handle.Complete(comm_->RunCollective(rank_, seq, std::move(call)));
                      }});
    return handle;
  }

  // On the waiting thread: runs the queued collectives up to and including `seq`, unless
  // a collective is running (then the worker finishes them, and Wait waits for it).
  void RunThrough(int64_t seq) {
    std::vector<Task> mine;
    {
      absl::MutexLock lock(&mu_);
      if (running_ || queue_.empty() || queue_.front().seq > seq) return;
      while (!queue_.empty() && queue_.front().seq <= seq) {
        mine.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      running_ = true;
      held_ = false;
    }
    for (Task& task : mine) task.run();
    absl::MutexLock lock(&mu_);
    running_ = false;  // the worker takes what was issued meanwhile
  }

  void HandOver() {
    absl::MutexLock lock(&mu_);
    held_ = false;
  }

  void WorkerLoop() {
    while (true) {
      Task task;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return !running_ && ((!queue_.empty() && !held_) || (stopping_ && queue_.empty()));
        };
        mu_.Await(absl::Condition(&ready));
        if (queue_.empty()) return;  // stopping
        task = std::move(queue_.front());
        queue_.pop_front();
        running_ = true;
      }
      task.run();
      absl::MutexLock lock(&mu_);
      running_ = false;
    }
  }

  const std::shared_ptr<InProcessCommunicatorImpl> comm_;
  const int rank_;
  absl::Mutex mu_;
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;  // a collective runs (on the worker or a waiter)
  bool held_ ABSL_GUARDED_BY(mu_) = false;     // queue_'s only entry waits for its waiter
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;  // last: starts once the members above exist
};

std::unique_ptr<Collectives> InProcessCommunicatorImpl::ForRank(int rank) {
  if (rank < 0 || rank >= world_size_) return nullptr;
  return std::make_unique<InProcessCollectives>(std::static_pointer_cast<InProcessCommunicatorImpl>(shared_from_this()),
                                                rank);
}

}  // namespace

absl::StatusOr<std::shared_ptr<InProcessCommunicator>> InProcessCommunicator::Create(int world_size,
                                                                                     CollectivesOptions options) {
  if (world_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("in-process communicator: world size ", world_size, " < 1"));
  }
  return std::make_shared<InProcessCommunicatorImpl>(world_size, options);
}

}  // namespace tsr
