// GlooCollectives: rendezvous through the job's KeyValueStore, then a thread that runs
// the communicator's collectives in order — descriptor exchange over the frame mesh,
// then Gloo's algorithms (and a ring reduce-scatter of our own) on the tensors' buffers.
// A small collective moves its data inside the descriptor exchange instead (see
// kPiggybackBytes), and a larger collective of two ranks streams over the frame mesh
// (kStreamReduceBytes).
#include "runtime/collectives/gloo/gloo_collectives.h"

#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "graph/status_macros.h"
#include "runtime/collectives/cross_process/collective_descriptor.h"
#include "runtime/collectives/cross_process/described_collectives.h"
#include "runtime/collectives/cross_process/elementwise_reduce.h"
#include "runtime/collectives/cross_process/frame_mesh.h"
#include "runtime/collectives/cross_process/loopback_mesh.h"
#include "runtime/collectives/cross_process/stream_point_to_point.h"
#include "runtime/collectives/gloo/gloo_health.h"
#include "runtime/collectives/gloo/gloo_store.h"

namespace tsr {
namespace {

using gloo::transport::UnboundBuffer;

// A small collective rides on the descriptor exchange: each rank's input follows its
// descriptor in the frame it sends to every other, and once the descriptors are checked
// each rank takes its result from the frames itself -- an all-reduce or reduce-scatter
// reducing them in rank order (so every rank computes the same bits), an all-gather,
// all-to-all or broadcast copying. That is one round of messages where the exchange
// followed by Gloo's algorithm takes 1 + 2(W-1) for a ring, which is what a small
// collective's time is made of (each round of Gloo's costs its transport's wake-ups,
// tens of microseconds on loopback and up to a scheduler tick on a busy machine; the
// frame mesh's round spins instead). The price is bandwidth: W-1 copies of the input
// leave each rank where the ring sends 2(W-1)/W, so only inputs of at most
// kPiggybackBytes / (W-1) bytes go this way. Every rank's frame has room for the largest
// frame, since a rank that issued a different collective (a mismatch, reported after
// the exchange) may send a frame of another size.
constexpr size_t kPiggybackBytes = size_t{256} << 10;

// Between two ranks, a collective too large to ride on the exchange goes as a stream:
// one frame each way over the frame mesh with what the other rank needs, from the
// tensors' own buffers (StreamBetweenTwo). For an all-reduce that is the bytes a ring
// sends (W - 1 copies of the input, for W = 2 the ring's 2(W-1)/W) in one round instead
// of a reduce-scatter and an all-gather, reduced in pieces of at least this many bytes
// while the rest is under way, in place, no further than this rank has sent. On this
// machine's loopback, all-reduces of 512 KiB-64 MiB ran at 1.3-2.6x Gloo's ring, and
// reduce-scatter, all-gather, broadcast and all-to-all of 1-4 MiB at 2-4x the Gloo
// algorithms they replace (the wake-ups of Gloo's transport again). With more ranks,
// streaming every input to every rank would send W/2 times a ring's bytes: Gloo's
// algorithms move those.
constexpr size_t kStreamReduceBytes = size_t{64} << 10;

// What one rank issued: the descriptor everyone sees, and the tensors (copies sharing
// the caller's buffers, which keeps those alive until the collective is done).
struct CollectiveCall {
  int64_t seq = 0;
  CollectiveDescriptor descriptor;
  Tensor input;  // AllReduce and Broadcast: the in/out tensor
  Tensor output;
  CollectiveHandle handle = CollectiveHandle::Pending();
};

// Bytes of one dim-0 row of `type`.
size_t RowBytes(const TensorType& type) {
  int64_t n = 1;
  for (int i = 1; i < type.shape.rank(); ++i) n *= type.shape.dim(i);
  return static_cast<size_t>(n) * DTypeSize(type.dtype);
}

template <typename T>
void RingAllReduce(const std::shared_ptr<gloo::Context>& context, Tensor& inout, ReduceOp op, uint32_t tag,
                   absl::Duration timeout) {
  gloo::AllreduceOptions options(context);
  options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  options.setOutput<T>(static_cast<T*>(inout.raw_data()), static_cast<size_t>(inout.num_elements()));
  const DType dtype = inout.dtype();
  options.setReduceFunction(
      [dtype, op](void* c, const void* a, const void* b, size_t n) { ReduceElementwise(dtype, op, c, a, b, n); });
  options.setTag(tag);
  options.setTimeout(GlooMillis(timeout));
  gloo::allreduce(options);
}

class GlooCommunicator final : public DescribedCollectives<GlooCollectives> {
 public:
  GlooCommunicator(std::shared_ptr<gloo::Context> context, std::unique_ptr<FrameMesh> mesh, std::vector<int> p2p_fds,
                   CollectivesOptions options)
      : context_(std::move(context)),
        mesh_(std::move(mesh)),
        rank_(context_->rank),
        world_size_(context_->size),
        // A multiple of 64, so that every rank's frame (and the tensor in it) stays aligned
        // for its element type.
        piggyback_limit_(world_size_ > 1 ? kPiggybackBytes / (world_size_ - 1) / 64 * 64 : 0),
        send_frame_(FrameBytes()),
        receive_frames_(static_cast<size_t>(world_size_) * FrameBytes()),
        options_(options),
        health_(std::make_shared<GlooHealth>()),
        p2p_(rank_, std::move(p2p_fds), options.timeout,
             {.check = [health = health_](absl::string_view where) { return health->Check(where); },
              .poison = [health = health_](absl::Status failure) { return health->Poison(std::move(failure)); }}),
        worker_([this] { WorkerLoop(); }) {
    // A rank that gives up closes its connections, so that the other ranks' waits for it
    // end at once (Unavailable) instead of at their own timeouts.
    health_->OnPoison([mesh = mesh_.get(), p2p = &p2p_, context = context_] {
      mesh->Close();
      p2p->Close();
      context->closeConnections();
    });
  }

  ~GlooCommunicator() override {
    health_->OnPoison(nullptr);  // the mesh goes with this object
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    worker_.join();                     // after the queued collectives ran
    absl::MutexLock hold(&alive_->mu);  // after a handle's DriveInline returned
    alive_->communicator = nullptr;
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  bool poisoned() const override { return health_->poisoned(); }

  CollectiveHandle Send(const Tensor& input, int peer, absl::string_view name) override {
    return p2p_.Post(/*is_send=*/true, peer, name, input);
  }
  CollectiveHandle Recv(Tensor& output, int peer, absl::string_view name) override {
    return p2p_.Post(/*is_send=*/false, peer, name, output);
  }

 private:
  // Queues the call for the communicator's thread. Whoever gets to it first runs it: the
  // worker, or the thread that waits for its handle (DriveInline), which then does not
  // wait for two wake-ups (the worker's, then its own), ~50 us each on this machine.
  CollectiveHandle Issue(CollectiveDescriptor descriptor, const Tensor& input, const Tensor& output) override {
    CollectiveCall call;
    call.descriptor = std::move(descriptor);
    call.input = input;
    call.output = output;
    absl::MutexLock lock(&mu_);
    call.seq = next_seq_++;
    call.handle =
        CollectiveHandle::Pending(absl::InfiniteFuture(), nullptr, [alive = alive_, seq = call.seq](bool wait) {
          if (!wait) return;
          absl::MutexLock hold(&alive->mu);
          if (alive->communicator != nullptr) alive->communicator->DriveInline(seq);
        });
    CollectiveHandle handle = call.handle;
    queue_.push_back(std::move(call));
    return handle;
  }

  // Takes the next queued call when no other runs (the caller decides whether).
  CollectiveCall TakeNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    CollectiveCall call = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    return call;
  }

  // Runs `call` and completes its handle, freeing the communicator for the next call
  // first (its waiter may issue one at once).
  void RunAndComplete(CollectiveCall call) {
    absl::Status status = Run(call);
    {
      absl::MutexLock lock(&mu_);
      running_ = false;
    }
    call.handle.Complete(std::move(status));
  }

  void WorkerLoop() {
    while (true) {
      CollectiveCall call;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]()
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !running_ && (stopping_ || !queue_.empty()); };
        mu_.Await(absl::Condition(&ready));
        if (queue_.empty()) return;  // stopping
        call = TakeNext();
      }
      RunAndComplete(std::move(call));
    }
  }

  // On the thread that waits for collective `seq`: runs the queued calls up to it, in
  // order, unless the worker has taken it.
  void DriveInline(int64_t seq) {
    while (true) {
      CollectiveCall call;
      {
        absl::MutexLock lock(&mu_);
        auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !running_; };
        mu_.Await(absl::Condition(&idle));
        if (queue_.empty() || queue_.front().seq > seq) return;  // it ran, or runs on the worker
        call = TakeNext();
      }
      RunAndComplete(std::move(call));
    }
  }

  absl::Status Run(const CollectiveCall& call) {
    const std::string where = Where(call.descriptor, call.seq);
    TSR_RETURN_IF_ERROR(health_->Check(where));
    std::vector<CollectiveDescriptor> all;
    TSR_RETURN_IF_ERROR(ExchangeDescriptors(call, where, &all));
    TSR_RETURN_IF_ERROR(CheckDescriptors(call.seq, all));
    if (call.descriptor.kind == CollectiveKind::kBarrier) return absl::OkStatus();  // the exchange was one
    if (MovedWithExchange(all)) {
      TakeCarriedData(call, all);
      return absl::OkStatus();
    }
    const absl::Time deadline = absl::Now() + options_.timeout;
    if (world_size_ == 2) return StreamBetweenTwo(call, all, where, deadline);
    try {
      return MoveData(call, all, deadline);
    } catch (const std::exception& e) {
      return health_->Failure(where, rank_, deadline,
                              absl::StrCat("rank ", rank_, " waited ", absl::FormatDuration(options_.timeout),
                                           " for the data movement after every rank had arrived (", e.what(), ")"),
                              e);
    }
  }

  uint32_t Tag(int64_t seq) const { return static_cast<uint32_t>(seq); }

  // The largest frame of the exchange: a descriptor and a piggybacked tensor.
  size_t FrameBytes() const { return kDescriptorWireBytes + piggyback_limit_; }

  // Whether the rank that issued `d` as rank `q` sends its input inside its exchange
  // frame: the input of any collective but a barrier, when it has at most
  // piggyback_limit_ bytes (a broadcast's, from its root only). Every rank can tell for
  // every other from the descriptors.
  bool CarriesInput(const CollectiveDescriptor& d, int q) const {
    if (world_size_ < 2) return false;
    switch (d.kind) {
      case CollectiveKind::kAllReduce:
      case CollectiveKind::kReduceScatter:
      case CollectiveKind::kAllGather:
      case CollectiveKind::kAllToAll:
        break;
      case CollectiveKind::kBroadcast:
        if (q != d.root) return false;
        break;
      default:
        return false;
    }
    return static_cast<size_t>(d.input.shape.num_elements()) * DTypeSize(d.input.dtype) <= piggyback_limit_;
  }

  // Whether a checked collective's data came with the exchange: every rank with data to
  // give carried it (the same answer on every rank).
  bool MovedWithExchange(const std::vector<CollectiveDescriptor>& all) const {
    if (world_size_ < 2) return false;
    if (all[0].kind == CollectiveKind::kBroadcast) return CarriesInput(all[all[0].root], all[0].root);
    for (int q = 0; q < world_size_; ++q) {
      if (!CarriesInput(all[q], q)) return false;
    }
    return true;
  }

  // Rank q's input as carried in its frame.
  char* CarriedInput(int q) { return receive_frames_.data() + q * FrameBytes() + kDescriptorWireBytes; }

  // Sends this rank's descriptor (and a piggybacked tensor) to every other rank over the
  // frame mesh and waits (up to the timeout) for theirs, so that a timeout can tell who
  // did not arrive. Rank q's frame lands at receive_frames_ + q * FrameBytes().
  absl::Status ExchangeDescriptors(const CollectiveCall& call, const std::string& where,
                                   std::vector<CollectiveDescriptor>* all) {
    const absl::Time deadline = absl::Now() + options_.timeout;
    char* mine = send_frame_.data();
    char* theirs = receive_frames_.data();
    const size_t frame = FrameBytes();
    EncodeDescriptor(call.descriptor, call.seq, mine);
    size_t mine_bytes = kDescriptorWireBytes;
    if (CarriesInput(call.descriptor, rank_)) {
      std::memcpy(mine + kDescriptorWireBytes, call.input.raw_data(), call.input.num_bytes());
      mine_bytes += call.input.num_bytes();
    }
    std::vector<int> missing;
    const absl::Status exchanged =
        mesh_->Exchange(absl::string_view(mine, mine_bytes), theirs, frame, &frame_lengths_, deadline, &missing);
    if (absl::IsDeadlineExceeded(exchanged)) {
      return health_->Poison(MissingRanksError(where, rank_, options_.timeout, missing, world_size_));
    }
    TSR_RETURN_IF_ERROR(MeshFailure(exchanged, where));
    all->resize(world_size_);
    for (int q = 0; q < world_size_; ++q) {
      if (q == rank_) {
        (*all)[q] = call.descriptor;
        continue;
      }
      int64_t seq = 0;
      if (frame_lengths_[q] < kDescriptorWireBytes) {
        return health_->Poison(absl::DataLossError(
            absl::StrCat(where, ": rank ", q, " sent a frame of ", frame_lengths_[q], " bytes, not a descriptor")));
      }
      absl::StatusOr<CollectiveDescriptor> d = DecodeDescriptor(theirs + q * frame, &seq);
      if (!d.ok()) {
        return health_->Poison(absl::DataLossError(absl::StrCat(where, ": from rank ", q, ": ", d.status().message())));
      }
      if (seq != call.seq) {
        return health_->Poison(absl::InternalError(absl::StrCat(where, ": rank ", q, " sent the descriptor of seq ",
                                                                seq, " (the communicator's ranks are out of step)")));
      }
      (*all)[q] = *std::move(d);
    }
    return absl::OkStatus();
  }

  // A frame mesh exchange that failed other than by its deadline, as the communicator's
  // error (OK for OK).
  absl::Status MeshFailure(const absl::Status& exchanged, const std::string& where) {
    if (absl::IsCancelled(exchanged)) {
      // Another thread of this rank (a Send or Recv) poisoned the communicator meanwhile.
      TSR_RETURN_IF_ERROR(health_->Check(where));
    }
    if (exchanged.ok()) return exchanged;
    return health_->Poison(absl::UnavailableError(absl::StrCat(
        where, ": rank ", rank_,
        " lost its connections to the other ranks (a rank that gives up waiting closes them): ", exchanged.message())));
  }

  // Scratch of at least `bytes` for the other rank's half of a two-rank reduction.
  char* StreamScratch(size_t bytes) {
    if (stream_capacity_ < bytes) {
      stream_scratch_.reset();  // before the next, so that both are never held
      stream_scratch_.reset(new char[bytes]);
      stream_capacity_ = bytes;
    }
    return stream_scratch_.get();
  }

  // Of a two-rank reduction: `out` (this rank's input, becoming the result) reduced in rank
  // order with the other rank's bytes at `theirs` from *reduced up to `ready` (rounded down
  // to whole elements), in pieces of at least kStreamReduceBytes until `bytes` are ready.
  void ReduceArrived(const CollectiveDescriptor& d, size_t ready, size_t bytes, char* theirs, char* out,
                     size_t* reduced) {
    const size_t esize = DTypeSize(d.input.dtype);
    ready = ready / esize * esize;
    if (ready < bytes && ready - *reduced < kStreamReduceBytes) return;
    ReduceInRankOrder(
        d.input.dtype, d.reduce_op, world_size_, rank_, [&](int) -> const void* { return theirs + *reduced; },
        out + *reduced, /*scratch=*/nullptr, (ready - *reduced) / esize);
    *reduced = ready;
  }

  // A checked collective of two ranks that did not ride on the exchange: one frame each
  // way over the frame mesh (see kStreamReduceBytes), carrying only what the other rank
  // needs (its rows of a reduce-scatter or all-to-all; nothing from a broadcast's
  // receiver), sent from the tensors' own buffers and received straight into the output
  // where no reduction needs it beside this rank's input. Reductions run in rank order as
  // the bytes arrive (the same bits on both ranks); an all-reduce, in place, no further
  // than this rank has sent.
  absl::Status StreamBetweenTwo(const CollectiveCall& call, const std::vector<CollectiveDescriptor>& all,
                                const std::string& where, absl::Time deadline) {
    const CollectiveDescriptor& d = call.descriptor;
    const int peer = 1 - rank_;
    const char* input = static_cast<const char*>(call.input.raw_data());
    Tensor output = call.output;  // (invalid for an all-reduce or a broadcast)
    char* out = output.valid() ? static_cast<char*>(output.raw_data()) : nullptr;
    absl::string_view mine;   // what this rank sends
    char nothing = 0;         // where a frame of no bytes lands
    char* theirs = &nothing;  // where the other rank's frame lands
    size_t expected = 0;      // its length
    char* result = nullptr;   // a reduction's result
    size_t reduced = 0;       // its bytes done
    FrameMesh::OnProgress on_progress;
    // Bytes of `rows` rows of the input.
    const size_t row_bytes = RowBytes(d.input);
    auto rows_bytes = [&](int64_t rows) { return static_cast<size_t>(rows) * row_bytes; };
    // Rank r's part of this rank's input split by SplitBegin's rule (reduce-scatter, all-to-all).
    auto part = [&](int r) {
      const int64_t rows = d.input.shape.dim(0);
      return absl::string_view(input + rows_bytes(SplitBegin(rows, 2, r)), rows_bytes(SplitRows(rows, 2, r)));
    };
    switch (d.kind) {
      case CollectiveKind::kAllReduce: {
        Tensor inout = call.input;
        char* data = static_cast<char*>(inout.raw_data());
        const size_t bytes = inout.num_bytes();
        mine = absl::string_view(data, bytes);
        theirs = StreamScratch(bytes);
        expected = bytes;
        result = data;
        on_progress = [&](size_t sent, size_t received) {
          ReduceArrived(d, std::min(sent, received), expected, theirs, result, &reduced);
        };
        break;
      }
      case CollectiveKind::kReduceScatter: {
        const absl::string_view own = part(rank_);
        mine = part(peer);
        theirs = StreamScratch(own.size());
        expected = own.size();
        if (!own.empty()) std::memcpy(out, own.data(), own.size());
        result = out;
        on_progress = [&](size_t, size_t received) { ReduceArrived(d, received, expected, theirs, result, &reduced); };
        break;
      }
      case CollectiveKind::kAllGather: {
        // Rank 0's rows, then rank 1's.
        const size_t own_bytes = rows_bytes(d.input.shape.dim(0));
        const size_t first_bytes = rows_bytes(all[0].input.shape.dim(0));
        mine = absl::string_view(input, own_bytes);
        expected = rows_bytes(all[peer].input.shape.dim(0));
        if (expected > 0) theirs = out + (peer == 0 ? 0 : first_bytes);
        if (own_bytes > 0) std::memcpy(out + (rank_ == 0 ? 0 : first_bytes), input, own_bytes);
        break;
      }
      case CollectiveKind::kAllToAll: {
        // This rank receives part `rank_` of each rank's input: rank 0's part, then rank 1's.
        const absl::string_view own = part(rank_);
        mine = part(peer);
        expected = rows_bytes(SplitRows(all[peer].input.shape.dim(0), 2, rank_));
        const size_t first_bytes = rank_ == 0 ? own.size() : expected;
        if (expected > 0) theirs = out + (peer == 0 ? 0 : first_bytes);
        if (!own.empty()) std::memcpy(out + (rank_ == 0 ? 0 : first_bytes), own.data(), own.size());
        break;
      }
      case CollectiveKind::kBroadcast: {
        Tensor inout = call.input;
        if (rank_ == d.root) {
          mine = absl::string_view(static_cast<const char*>(inout.raw_data()), inout.num_bytes());
        } else if (inout.num_bytes() > 0) {
          theirs = static_cast<char*>(inout.raw_data());
          expected = inout.num_bytes();
        }
        break;
      }
      default:
        return absl::OkStatus();
    }
    char* into[2];
    into[rank_] = nullptr;
    into[peer] = theirs;
    std::vector<int> missing;
    const absl::Status streamed =
        mesh_->Exchange(mine, absl::MakeConstSpan(into, 2), expected, &frame_lengths_, deadline, &missing, on_progress);
    if (absl::IsDeadlineExceeded(streamed)) {
      return health_->Poison(absl::DeadlineExceededError(
          absl::StrCat(where, ": rank ", rank_, " waited ", absl::FormatDuration(options_.timeout),
                       " for the data movement after every rank had arrived (rank ", peer, "'s data did not come)")));
    }
    TSR_RETURN_IF_ERROR(MeshFailure(streamed, where));
    if (frame_lengths_[peer] != expected) {
      return health_->Poison(absl::DataLossError(
          absl::StrCat(where, ": rank ", peer, " sent ", frame_lengths_[peer], " bytes, not ", expected)));
    }
    // (The last progress report covered every byte; a frame of none reports nothing.)
    if (result != nullptr) ReduceArrived(d, expected, expected, theirs, result, &reduced);
    return absl::OkStatus();
  }

  // The data movement of a checked collective, on the tensors' own buffers. Gloo throws
  // on failure.
  absl::Status MoveData(const CollectiveCall& call, const std::vector<CollectiveDescriptor>& all, absl::Time deadline) {
    const CollectiveDescriptor& d = call.descriptor;
    const uint32_t tag = Tag(call.seq);
    switch (d.kind) {
      case CollectiveKind::kAllReduce: {
        Tensor inout = call.input;
        if (inout.num_elements() == 0) return absl::OkStatus();
        switch (inout.dtype()) {
          case DType::kF32:
            RingAllReduce<float>(context_, inout, d.reduce_op, tag, options_.timeout);
            break;
          case DType::kF64:
            RingAllReduce<double>(context_, inout, d.reduce_op, tag, options_.timeout);
            break;
          case DType::kI32:
            RingAllReduce<int32_t>(context_, inout, d.reduce_op, tag, options_.timeout);
            break;
          default:
            RingAllReduce<int64_t>(context_, inout, d.reduce_op, tag, options_.timeout);
            break;
        }
        if (d.reduce_op == ReduceOp::kMean) {
          DivideForMean(inout.dtype(), inout.raw_data(), inout.num_elements(), world_size_);
        }
        return absl::OkStatus();
      }
      case CollectiveKind::kReduceScatter:
        RingReduceScatter(call, tag, deadline);
        return absl::OkStatus();
      case CollectiveKind::kAllGather: {
        const size_t row_bytes = RowBytes(d.input);
        std::vector<size_t> bytes(world_size_);
        size_t total = 0;
        for (int q = 0; q < world_size_; ++q) {
          bytes[q] = static_cast<size_t>(all[q].input.shape.dim(0)) * row_bytes;
          total += bytes[q];
        }
        if (total == 0) return absl::OkStatus();
        Tensor output = call.output;
        gloo::AllgathervOptions options(context_);
        options.setInput<uint8_t>(static_cast<uint8_t*>(const_cast<void*>(call.input.raw_data())), bytes[rank_]);
        options.setOutput<uint8_t>(static_cast<uint8_t*>(output.raw_data()), bytes);
        options.setTag(tag);
        options.setTimeout(GlooMillis(options_.timeout));
        gloo::allgatherv(options);
        return absl::OkStatus();
      }
      case CollectiveKind::kAllToAll: {
        const size_t row_bytes = RowBytes(d.input);
        if (row_bytes == 0) return absl::OkStatus();
        const int64_t my_rows = d.input.shape.dim(0);
        std::vector<int64_t> sent(world_size_), received(world_size_);
        for (int q = 0; q < world_size_; ++q) {
          sent[q] = SplitRows(my_rows, world_size_, q) * static_cast<int64_t>(row_bytes);
          received[q] = SplitRows(all[q].input.shape.dim(0), world_size_, rank_) * static_cast<int64_t>(row_bytes);
        }
        Tensor output = call.output;
        gloo::AlltoallvOptions options(context_);
        options.setInput<uint8_t>(static_cast<uint8_t*>(const_cast<void*>(call.input.raw_data())), sent);
        options.setOutput<uint8_t>(static_cast<uint8_t*>(output.raw_data()), received);
        options.setTag(tag);
        options.setTimeout(GlooMillis(options_.timeout));
        gloo::alltoallv(options);
        return absl::OkStatus();
      }
      case CollectiveKind::kBroadcast: {
        Tensor inout = call.input;
        if (inout.num_bytes() == 0) return absl::OkStatus();
        gloo::BroadcastOptions options(context_);
        options.setOutput<uint8_t>(static_cast<uint8_t*>(inout.raw_data()), inout.num_bytes());
        options.setRoot(d.root);
        options.setTag(tag);
        options.setTimeout(GlooMillis(options_.timeout));
        gloo::broadcast(options);
        return absl::OkStatus();
      }
      default:
        return absl::OkStatus();
    }
  }

  // The result of a collective whose data came with the exchange, from the frames:
  // reductions in rank order (the same bits on every rank), copies for the rest.
  void TakeCarriedData(const CollectiveCall& call, const std::vector<CollectiveDescriptor>& all) {
    const CollectiveDescriptor& d = call.descriptor;
    const char* input = static_cast<const char*>(call.input.raw_data());
    switch (d.kind) {
      case CollectiveKind::kAllReduce: {
        Tensor inout = call.input;
        ReduceInRankOrder(
            d.input.dtype, d.reduce_op, world_size_, rank_, [&](int q) -> const void* { return CarriedInput(q); },
            inout.raw_data(), /*scratch=*/CarriedInput(0), static_cast<size_t>(inout.num_elements()));
        return;
      }
      case CollectiveKind::kReduceScatter: {
        Tensor output = call.output;
        if (output.num_bytes() == 0) return;
        const size_t offset =
            static_cast<size_t>(SplitBegin(d.input.shape.dim(0), world_size_, rank_)) * RowBytes(d.input);
        std::memcpy(output.raw_data(), input + offset, output.num_bytes());
        ReduceInRankOrder(
            d.input.dtype, d.reduce_op, world_size_, rank_,
            [&](int q) -> const void* { return CarriedInput(q) + offset; }, output.raw_data(),
            /*scratch=*/CarriedInput(0) + offset, static_cast<size_t>(output.num_elements()));
        return;
      }
      case CollectiveKind::kAllGather: {
        Tensor output = call.output;
        char* out = static_cast<char*>(output.raw_data());
        const size_t row_bytes = RowBytes(d.input);
        for (int q = 0; q < world_size_; ++q) {
          const size_t bytes = static_cast<size_t>(all[q].input.shape.dim(0)) * row_bytes;
          if (bytes > 0) std::memcpy(out, q == rank_ ? input : CarriedInput(q), bytes);
          out += bytes;
        }
        return;
      }
      case CollectiveKind::kAllToAll: {
        Tensor output = call.output;
        char* out = static_cast<char*>(output.raw_data());
        const size_t row_bytes = RowBytes(d.input);
        for (int q = 0; q < world_size_; ++q) {
          const int64_t rows = all[q].input.shape.dim(0);
          const size_t begin = static_cast<size_t>(SplitBegin(rows, world_size_, rank_)) * row_bytes;
          const size_t bytes = static_cast<size_t>(SplitRows(rows, world_size_, rank_)) * row_bytes;
          if (bytes > 0) std::memcpy(out, (q == rank_ ? input : CarriedInput(q)) + begin, bytes);
          out += bytes;
        }
        return;
      }
      case CollectiveKind::kBroadcast: {
        Tensor inout = call.input;
        if (rank_ != d.root && inout.num_bytes() > 0) {
          std::memcpy(inout.raw_data(), CarriedInput(d.root), inout.num_bytes());
        }
        return;
      }
      default:
        return;
    }
  }

  // Reduce-scatter as a ring: block b (rank b's rows) is summed along the ring starting
  // after rank b, each rank adding its own rows of the block to the partial sum it
  // receives and passing it on; after W-1 steps rank b receives the sum of every other
  // rank's block b and adds its own into `output`. Only blocks travel; two scratch
  // buffers of one block alternate between the partial being sent and the one received.
  void RingReduceScatter(const CollectiveCall& call, uint32_t tag, absl::Time deadline) {
    const CollectiveDescriptor& d = call.descriptor;
    const int64_t rows = d.input.shape.dim(0);
    const int64_t elements = d.input.shape.num_elements();
    Tensor output = call.output;
    if (elements == 0) return;
    const int64_t row_elems = elements / rows;
    const size_t esize = DTypeSize(d.input.dtype);
    const char* input = static_cast<const char*>(call.input.raw_data());
    auto begin = [&](int b) { return SplitBegin(rows, world_size_, b) * row_elems; };
    auto count = [&](int b) { return SplitRows(rows, world_size_, b) * row_elems; };
    if (world_size_ == 1) {
      std::memcpy(output.raw_data(), input, output.num_bytes());
    } else {
      int64_t largest = 0;
      for (int b = 0; b < world_size_; ++b) largest = std::max(largest, count(b));
      std::vector<char> scratch(2 * largest * esize);
      std::unique_ptr<UnboundBuffer> partial[2] = {
          context_->createUnboundBuffer(scratch.data(), largest * esize),
          context_->createUnboundBuffer(scratch.data() + largest * esize, largest * esize)};
      std::unique_ptr<UnboundBuffer> own =
          context_->createUnboundBuffer(const_cast<char*>(input), static_cast<size_t>(elements) * esize);
      const uint64_t slot = gloo::Slot::build(kGlooReduceScatterSlot, tag);
      const int next = (rank_ + 1) % world_size_;
      const int prev = (rank_ + world_size_ - 1) % world_size_;
      for (int step = 0; step < world_size_ - 1; ++step) {
        const int send_block = (rank_ - step - 1 + 2 * world_size_) % world_size_;
        const int recv_block = (rank_ - step - 2 + 2 * world_size_) % world_size_;
        UnboundBuffer* into = partial[step % 2].get();
        // The first step sends this rank's own rows; later ones the partial just made.
        UnboundBuffer* from = step == 0 ? own.get() : partial[(step + 1) % 2].get();
        const size_t from_offset = step == 0 ? begin(send_block) * esize : 0;
        if (count(recv_block) > 0) into->recv(prev, slot, 0, count(recv_block) * esize);
        if (count(send_block) > 0) from->send(next, slot, from_offset, count(send_block) * esize);
        if (count(recv_block) > 0) {
          into->waitRecv(GlooMillis(deadline - absl::Now()));
          void* sum = step == world_size_ - 2 ? output.raw_data() : into->ptr;
          ReduceElementwise(d.input.dtype, d.reduce_op, sum, into->ptr, input + begin(recv_block) * esize,
                            count(recv_block));
        }
        if (count(send_block) > 0) from->waitSend(GlooMillis(deadline - absl::Now()));
      }
    }
    if (d.reduce_op == ReduceOp::kMean) {
      DivideForMean(d.input.dtype, output.raw_data(), output.num_elements(), world_size_);
    }
  }

  const std::shared_ptr<gloo::Context> context_;
  const std::unique_ptr<FrameMesh> mesh_;
  const int rank_;
  const int world_size_;
  const size_t piggyback_limit_;  // bytes of the largest input a frame carries (CarriesInput)
  // The exchange's frames (worker only): this rank's, and one slot per rank for theirs.
  std::vector<char> send_frame_;
  std::vector<char> receive_frames_;
  std::vector<size_t> frame_lengths_;  // of the frames received, by rank
  // The other rank's share of a streamed all-reduce or reduce-scatter (the thread running
  // the call), kept for the next.
  std::unique_ptr<char[]> stream_scratch_;
  size_t stream_capacity_ = 0;
  const CollectivesOptions options_;
  const std::shared_ptr<GlooHealth> health_;
  StreamPointToPoint p2p_;

  // What the handles' DriveInline reaches this communicator through, while it exists.
  struct Alive {
    explicit Alive(GlooCommunicator* c) : communicator(c) {}
    absl::Mutex mu;
    GlooCommunicator* communicator ABSL_GUARDED_BY(mu);
  };
  const std::shared_ptr<Alive> alive_ = std::make_shared<Alive>(this);

  absl::Mutex mu_;
  std::deque<CollectiveCall> queue_ ABSL_GUARDED_BY(mu_);
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool running_ ABSL_GUARDED_BY(mu_) = false;  // a call runs, on the worker or inline
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;  // last: starts once the members above exist
};

// A rendezvous key of Gloo's full mesh ("<name>/<rank>" or "<name>/rank_<rank>") names
// the rank that did not publish it; -1 for other keys.
int RankOfKey(absl::string_view message, absl::string_view name) {
  const std::string prefix = absl::StrCat("'", name, "/");
  size_t at = message.find(prefix);
  if (at == absl::string_view::npos) return -1;
  absl::string_view rest = message.substr(at + prefix.size());
  if (absl::StartsWith(rest, "rank_")) rest.remove_prefix(5);
  int rank = 0;
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
    rank = rank * 10 + (rest[digits] - '0');
    ++digits;
  }
  return digits > 0 && digits < rest.size() && rest[digits] == '\'' ? rank : -1;
}

// Gloo writes to its TCP connections without MSG_NOSIGNAL. When a peer has closed its
// end (a rank that timed out, failed or died), the write raises SIGPIPE, whose default
// action kills this process before Gloo can report the error -- a late rank then dies
// of signal 13 instead of returning "lost its connections". So SIGPIPE is ignored
// (the write fails with EPIPE, which Gloo reports) unless the program installed a
// handler of its own. Python does the same at startup, which is why PyTorch's Gloo
// users never see it.
void IgnoreSigpipeUnlessHandled() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GlooCollectives>> GlooCollectives::Create(int rank, int world_size, KeyValueStore& store,
                                                                         absl::string_view name,
                                                                         CollectivesOptions options) {
  const std::string who = absl::StrCat("gloo communicator '", name, "' rank ", rank, " of ", world_size);
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": the rank must be in [0, world size)"));
  }
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(who, ": the name must not be empty"));
  IgnoreSigpipeUnlessHandled();
  try {
    GlooStore adapter(store, options.timeout);
    gloo::rendezvous::PrefixStore prefixed(std::string(name), adapter);
    // Listening sockets bind to the loopback address only, and peers connect to what
    // they find in the store: every connection stays on this machine.
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    attr.ai_family = AF_INET;
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, world_size);
    context->setTimeout(GlooMillis(options.timeout));
    context->connectFullMesh(prefixed, device);
    absl::StatusOr<std::unique_ptr<FrameMesh>> mesh =
        FrameMesh::Connect(rank, world_size, store, name, options.timeout);
    if (!mesh.ok()) {
      return absl::Status(mesh.status().code(), absl::StrCat(who, ": ", mesh.status().message()));
    }
    absl::StatusOr<std::vector<int>> p2p =
        ConnectLoopbackMesh(rank, world_size, store, absl::StrCat(name, "/p2p"), options.timeout);
    if (!p2p.ok()) {
      return absl::Status(p2p.status().code(), absl::StrCat(who, ": point-to-point streams: ", p2p.status().message()));
    }
    return std::unique_ptr<GlooCollectives>(
        new GlooCommunicator(std::move(context), *std::move(mesh), *std::move(p2p), options));
  } catch (const GlooStoreError& e) {
    if (e.status().code() == absl::StatusCode::kDeadlineExceeded) {
      const int missing = RankOfKey(e.status().message(), name);
      if (missing >= 0) {
        return absl::DeadlineExceededError(absl::StrCat(who, ": rank ", missing, " did not arrive within ",
                                                        absl::FormatDuration(options.timeout), " (",
                                                        e.status().message(), ")"));
      }
    }
    return absl::Status(e.status().code(), absl::StrCat(who, ": rendezvous: ", e.status().message()));
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(who, ": connecting to the other ranks failed: ", e.what()));
  }
}

}  // namespace tsr
