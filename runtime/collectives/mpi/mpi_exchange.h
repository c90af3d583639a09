// The descriptor exchange, the first step of every MPI collective: each rank gives its
// descriptor (collective_descriptor.h) to every other rank and takes theirs, polling until
// a deadline, so that a rank learns exactly which ranks did not arrive (and names them),
// and every rank then checks the same descriptors. `CollectiveExchange` is what the
// communicator uses; `MessageExchange`, here, moves the bytes in MPI messages (the
// shared-memory board of one machine's ranks is in mpi_shared_memory_exchange.h).
//
// An eager collective -- a small all-reduce, see EagerPayloadBytes -- gives its tensor
// with its descriptor, so that its data arrives in the same round trip as the check: one
// message latency per collective instead of a descriptor round trip, a hand-over to the
// communicator's thread and MPI's own all-reduce. A receiver learns from the sender's
// descriptor whether a payload follows and how long it is, so a rank takes everything
// given to it even when the two sides' descriptors disagree (the collective then fails
// the same way on both, and nothing is left behind).
//
// In messages, the payload goes under the descriptor's tag (MPI keeps the messages of one
// sender and tag in order), cut to stay within Open MPI's shared-memory eager size
// (kFrameBytes): the first frame carries the descriptor (its encoded bytes only, ~100)
// and as much of the tensor as fits, the rest follows in frames of that size -- or, when
// longer than kFramedRestBytes, as one message that Open MPI moves with one copy between
// the processes.
#ifndef TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_EXCHANGE_H_
#define TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_EXCHANGE_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "graph/tensor.h"
#include "runtime/collectives/cross_process/collective_descriptor.h"

namespace tsr {
namespace mpi_internal {

// The largest all-reduce that goes eagerly, in bytes one rank sends to all the others
// ((world_size - 1) x the tensor's bytes). Up to it the tensor behind the descriptor
// beats the descriptor round trip plus MPI's all-reduce (two processes, three
// alternations: 64 KiB 1.00-1.05 of MPI_Allreduce's rate eagerly against 0.88-0.91, 128
// KiB 0.98-0.99 against 0.91-0.97); above it MPI's tuned algorithms win (eagerly 256 KiB
// 0.91-0.92, 512 KiB 0.81-0.84 against 0.93-0.96), reducing a share each instead of the
// whole tensor on every rank.
inline constexpr size_t kEagerAllReduceBytes = size_t{128} << 10;

// The bytes a collective so described sends behind its descriptor: the tensor of an
// all-reduce small enough to go eagerly, 0 otherwise. A function of the descriptor
// alone, so every rank knows what every other rank sends.
size_t EagerPayloadBytes(const CollectiveDescriptor& descriptor, int world_size);

// The largest message the exchange sends as one. Open MPI's shared-memory transport
// copies a message of up to 4 KiB (its own header included) through a queue between the
// processes: the send completes at once and a receive costs one copy (a 4000-byte
// sendrecv takes 0.6 us on this machine). A larger message goes by rendezvous: a round
// trip, a process_vm_readv system call, and a send that completes only when the receiver
// has taken it (2.6 us at 4050 bytes).
inline constexpr size_t kFrameBytes = 3968;
static_assert(kFrameBytes >= kDescriptorWireBytes + 64, "a frame holds any descriptor");
static_assert(kFrameBytes % 64 == 0, "a payload's rest starts 64-byte aligned, at kFrameBytes");

// How the tensor of an eager collective is cut, given the first frame's descriptor bytes
// and the tensor's bytes: `first` bytes in the first frame, from `offset` on (the
// descriptor's bytes rounded up to 64), the remaining `rest` in frames of kFrameBytes
// (the last one shorter). Sender and receiver compute the same; the receiver lands the
// rest right behind the first bytes, so that the tensor lies whole, 64-byte aligned, in
// its receive area and is reduced from there.
struct PayloadCut {
  size_t offset = 0;
  size_t first = 0;
  size_t rest = 0;
  size_t piece = kFrameBytes;  // the most bytes of the rest one message carries
};

// Up to this many bytes the rest of an eager tensor goes in frames of kFrameBytes, each
// copied through the shared-memory queue; beyond, in one message, which Open MPI moves
// by rendezvous with a single copy between the processes (as its own all-reduce does).
inline constexpr size_t kFramedRestBytes = size_t{28} << 10;
PayloadCut CutPayload(size_t descriptor_bytes, size_t payload_bytes);

// Requests an abandoned exchange left in flight and the memory they use, kept until MPI
// is done with them (see MpiCommunicatorCore::Shutdown).
struct ParkedRequests {
  std::vector<std::unique_ptr<char[]>> buffers;
  Tensor tensor;  // the tensor an eager send reads
  std::vector<MPI_Request> requests;
};

// The exchange of one communicator's collectives, one at a time: each collective
// Starts it, and what it allocates stays for the next. Two transports: messages
// (MessageExchange, below: any MPI job) and a shared-memory board
// (mpi_shared_memory_exchange.h: every rank of the communicator on this machine); MakeExchange
// there picks one for a communicator.
class CollectiveExchange {
 public:
  CollectiveExchange(int rank, int world_size);
  virtual ~CollectiveExchange();
  CollectiveExchange(const CollectiveExchange&) = delete;
  CollectiveExchange& operator=(const CollectiveExchange&) = delete;

  // Begins the exchange of collective `seq` (under `tag`, for the message transport): this
  // rank's descriptor and, when EagerPayloadBytes(mine) > 0, `payload`'s bytes behind it
  // (`payload` must stay put until End). The previous exchange must be over (complete, or
  // ended by an error). Its deadline, `timeout` on, runs from the first time Progress reads
  // the clock.
  void Start(int tag, int64_t seq, const CollectiveDescriptor& mine, const Tensor& payload, absl::Duration timeout);

  // After the collective: forgets the payload tensor.
  void End() { payload_ = nullptr; }

  // The communicator is going away: nothing more will be exchanged.
  virtual void Close() = 0;

  // Whether the bytes go through shared memory (rather than MPI messages).
  virtual bool shared_memory() const = 0;

  // Whether this rank's tensor goes behind its descriptor (EagerPayloadBytes(mine) > 0).
  bool eager() const { return payload_ != nullptr; }

  // Makes this rank's descriptor (and eager payload) available to the others and gets
  // ready to receive theirs.
  virtual void Post() = 0;

  // Moves the exchange forward: with `wait`, until every descriptor (and every payload a
  // descriptor announces) has arrived and this rank's are delivered, or until the
  // deadline; without, one poll. True when complete. Errors (after which the exchange is
  // over and the communicator should be poisoned; message requests still in flight go to
  // *parked):
  //  - DeadlineExceeded naming the ranks that did not arrive, after telling every rank
  //    that this one gave up (a rank arriving later fails at once);
  //  - DataLoss / Internal for bytes that are not this collective's descriptor;
  //  - DeadlineExceeded when a rank gave up before this one arrived, on this collective
  //    or on an earlier one (the communicator is out of step).
  virtual absl::StatusOr<bool> Progress(bool wait, std::vector<ParkedRequests>* parked) = 0;

  // After completion: every rank's descriptor by rank (this rank's included), and rank
  // q's payload (q != this rank; EagerPayloadBytes(descriptors()[q]) bytes, 64-byte
  // aligned, valid until the next Start).
  const std::vector<CollectiveDescriptor>& descriptors() const { return descriptors_; }
  virtual const void* payload(int q) const = 0;

  // Room for `bytes` (at most the largest eager payload), 64-byte aligned, for the running
  // result of a reduction on ranks above 1 (ReduceInRankOrder).
  void* scratch(size_t bytes);

  // Whether the exchange moves the data of an all-reduce that is not eager itself
  // (MoveAllReduce) instead of MPI's all-reduce.
  virtual bool moves_all_reduces() const { return false; }
  // After a complete exchange of such an all-reduce (descriptors checked): reduces
  // `inout` with every rank's, in rank order (the same bits on every rank), by the
  // deadline `timeout` from now. An error leaves the ranks out of step: the communicator
  // should be poisoned.
  virtual absl::Status MoveAllReduce(Tensor& inout, ReduceOp op);

 protected:
  // Resets the transport's state for the exchange Start begins.
  virtual void Restart(int tag) = 0;

  // What a Progress loop does after a poll that left the exchange incomplete: it reads the
  // clock (every 16th poll when waiting; the first reading starts the deadline), and waits
  // as ranks usually arrive -- within microseconds: poll hard at first, then yield, then
  // sleep in short steps.
  enum class Pace { kPollAgain, kReturn, kDeadline };
  Pace AfterPoll(bool wait, int* polls);
  // How a loop that has waited `waited` so far, `left` before its deadline, waits before
  // its next poll: not at all, a yield, or a short sleep.
  static void WaitBeforePolling(absl::Duration waited, absl::Duration left);

  // The ranks that gave up (gave_up_seq_) on an earlier collective and (with `current`)
  // on this one, as an error (OK when none did).
  absl::Status NoticesError(bool current) const;

  // "all_reduce 'g' (seq 3)", for errors.
  std::string Where() const;

  const int rank_;
  const int world_size_;
  int64_t seq_ = 0;
  std::vector<CollectiveDescriptor> descriptors_;
  const Tensor* payload_ = nullptr;  // this rank's, when eager
  absl::Duration timeout_;
  // The first clock reading of the exchange (InfinitePast before); the deadline is
  // start_ + timeout_.
  absl::Time start_ = absl::InfinitePast();
  std::vector<int64_t> gave_up_seq_;  // by rank: the seq it gave up on, -1: none
  bool any_notice_ = false;           // some rank gave up

 private:
  std::unique_ptr<char[]> scratch_;
  char* scratch_start_ = nullptr;  // 64-byte aligned in scratch_
  size_t scratch_bytes_ = 0;
};

// The exchange in MPI messages: descriptors and eager payloads sent to every other rank,
// received with nonblocking receives polled until the deadline.
class MessageExchange final : public CollectiveExchange {
 public:
  // Notices (below) travel under `notice_tag`, a tag no collective uses.
  MessageExchange(MPI_Comm comm, int rank, int world_size, int notice_tag);

  // Cancels the notice receives.
  void Close() override;
  bool shared_memory() const override { return false; }
  // Posts the first-frame receives and this rank's sends.
  void Post() override;
  absl::StatusOr<bool> Progress(bool wait, std::vector<ParkedRequests>* parked) override;
  const void* payload(int q) const override { return area(q) + payload_offset_[q]; }

 private:
  void Restart(int tag) override;
  absl::Status GiveUp(std::vector<ParkedRequests>* parked);
  absl::Status Abandon(absl::Status status, std::vector<ParkedRequests>* parked);
  void PostNoticeReceives();
  void TakeNotice(int q);

  const MPI_Comm comm_;
  int tag_ = 0;
  // Takes rank q's first frame (its descriptor and the start of its payload) and posts the
  // receives of the rest. Errors for a frame that is not this collective's descriptor.
  absl::Status TakeFirstFrame(int q);

  enum class Part : uint8_t { kFirstFrame, kPayload, kSend, kNotice };

  std::unique_ptr<char[]> mine_;  // kFrameBytes: this rank's first frame
  // The receive areas, area_bytes_ each, one per rank from a 64-byte aligned start
  // (theirs_ is the allocation): rank q's first frame lands at the start of its area and
  // the rest of its payload right behind the payload's first bytes.
  std::unique_ptr<char[]> theirs_;
  char* areas_ = nullptr;  // null when theirs_ was parked
  const size_t area_bytes_;
  char* area(int q) const { return areas_ + static_cast<size_t>(q) * area_bytes_; }
  std::vector<size_t> payload_offset_;  // by rank: where its payload starts in its area
  // [0, W): the first-frame receive from each rank; [W, 2W): the notice receive from
  // each rank (notice_requests_ while the exchange runs, so that the one MPI_Testsome
  // that moves the exchange also sees a notice); then sends and payload receives (the
  // latter posted once the sender's descriptor says how long), each with its part.
  std::vector<MPI_Request> requests_;
  std::vector<Part> parts_;
  std::vector<int> completed_;
  // By rank: the index in requests_ of the receive posted for its first rest message
  // before its descriptor came (see Post), -1 when none waits.
  std::vector<int> speculative_;
  int pending_receives_ = 0;
  int pending_sends_ = 0;
  // A rank that gives up on a collective tells every other rank so, once, with a
  // notice (its descriptor marked abandoned) under notice_tag_: each rank keeps a receive
  // posted for each peer's notice from its first exchange on, instead of probing for one
  // in every collective (an MPI_Iprobe per peer cost an eighth of a 4 KiB all-reduce).
  const int notice_tag_;
  bool notices_posted_ = false;
  std::vector<MPI_Request> notice_requests_;  // by rank; null once taken
  std::unique_ptr<char[]> notice_frames_;     // world_size x kDescriptorWireBytes
};

}  // namespace mpi_internal
}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_EXCHANGE_H_
