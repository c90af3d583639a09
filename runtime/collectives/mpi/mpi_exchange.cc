// CollectiveExchange's shared part (its deadline, the ranks that gave up), and
// MessageExchange: the descriptor (and eager payload) messages of one MPI collective,
// polled until complete or until the deadline, and what a rank that gives up leaves behind.
#include "runtime/collectives/mpi/mpi_exchange.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "runtime/collectives/mpi/mpi_process.h"

namespace tsr {
namespace mpi_internal {

size_t EagerPayloadBytes(const CollectiveDescriptor& descriptor, int world_size) {
  if (descriptor.kind != CollectiveKind::kAllReduce || world_size < 2 || descriptor.abandoned) return 0;
  const size_t bytes = static_cast<size_t>(descriptor.input.shape.num_elements()) * DTypeSize(descriptor.input.dtype);
  return bytes * static_cast<size_t>(world_size - 1) <= kEagerAllReduceBytes ? bytes : 0;
}

PayloadCut CutPayload(size_t descriptor_bytes, size_t payload_bytes) {
  PayloadCut cut;
  // The payload and its rest start 64-byte aligned (MPI's copies and the reduction run
  // at full speed).
  cut.offset = (descriptor_bytes + 63) / 64 * 64;
  cut.first = std::min(payload_bytes, (kFrameBytes - cut.offset) / 64 * 64);
  cut.rest = payload_bytes - cut.first;
  // (So a rest, if any, starts at kFrameBytes whatever the descriptor's length.)
  cut.piece = cut.rest > kFramedRestBytes ? cut.rest : kFrameBytes;
  return cut;
}

namespace {

// The bytes of one rank's receive area: its first frame and, behind the payload's first
// bytes (which start before kFrameBytes), the rest of the largest eager payload.
size_t AreaBytes(int world_size) {
  const size_t largest_payload = world_size < 2 ? 0 : kEagerAllReduceBytes / static_cast<size_t>(world_size - 1);
  return (kFrameBytes + largest_payload + 63) / 64 * 64;
}

}  // namespace

CollectiveExchange::CollectiveExchange(int rank, int world_size)
    : rank_(rank), world_size_(world_size), descriptors_(world_size), gave_up_seq_(world_size, -1) {}

CollectiveExchange::~CollectiveExchange() = default;

std::string CollectiveExchange::Where() const { return tsr::Where(descriptors_[rank_], seq_); }

void CollectiveExchange::Start(int tag, int64_t seq, const CollectiveDescriptor& mine, const Tensor& payload,
                               absl::Duration timeout) {
  seq_ = seq;
  descriptors_[rank_] = mine;
  payload_ = EagerPayloadBytes(mine, world_size_) > 0 ? &payload : nullptr;
  timeout_ = timeout;
  start_ = absl::InfinitePast();
  Restart(tag);
}

void* CollectiveExchange::scratch(size_t bytes) {
  if (bytes > scratch_bytes_) {
    scratch_.reset(new char[bytes + 63]);
    scratch_start_ = scratch_.get() + (64 - reinterpret_cast<uintptr_t>(scratch_.get()) % 64) % 64;
    scratch_bytes_ = bytes;
  }
  return scratch_start_;
}

CollectiveExchange::Pace CollectiveExchange::AfterPoll(bool wait, int* polls) {
  // The clock costs as much as a poll: read it every 16th.
  if (wait && ++*polls % 16 != 0) return Pace::kPollAgain;
  const absl::Time now = absl::Now();
  // The first clock reading starts the deadline (a small exchange usually completes
  // before one).
  if (start_ == absl::InfinitePast()) start_ = now;
  const absl::Time deadline = start_ + timeout_;
  if (now >= deadline) return Pace::kDeadline;
  if (!wait) return Pace::kReturn;
  WaitBeforePolling(now - start_, deadline - now);
  return Pace::kPollAgain;
}

void CollectiveExchange::WaitBeforePolling(absl::Duration waited, absl::Duration left) {
  if (waited > absl::Milliseconds(2)) {
    absl::SleepFor(std::min(absl::Microseconds(200), left));
  } else if (waited > absl::Microseconds(50)) {
    std::this_thread::yield();
  }
}

absl::Status CollectiveExchange::MoveAllReduce(Tensor& /*inout*/, ReduceOp /*op*/) {
  return absl::UnimplementedError(absl::StrCat(Where(), ": this exchange does not move all-reduces"));
}

MessageExchange::MessageExchange(MPI_Comm comm, int rank, int world_size, int notice_tag)
    : CollectiveExchange(rank, world_size),
      comm_(comm),
      area_bytes_(AreaBytes(world_size)),
      payload_offset_(world_size, 0),
      notice_tag_(notice_tag),
      notice_requests_(world_size, MPI_REQUEST_NULL) {}

void MessageExchange::PostNoticeReceives() {
  notices_posted_ = true;
  notice_frames_.reset(new char[static_cast<size_t>(world_size_) * kDescriptorWireBytes]);
  for (int q = 0; q < world_size_; ++q) {
    if (q == rank_) continue;
    MPI_Irecv(notice_frames_.get() + q * kDescriptorWireBytes, kDescriptorWireBytes, MPI_BYTE, q, notice_tag_, comm_,
              &notice_requests_[q]);
  }
}

void MessageExchange::Close() {
  for (MPI_Request& r : notice_requests_) {
    if (r == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);  // a cancelled receive completes at once
  }
}

void MessageExchange::TakeNotice(int q) {
  int64_t seq = 0;
  absl::StatusOr<CollectiveDescriptor> n = DecodeDescriptor(notice_frames_.get() + q * kDescriptorWireBytes, &seq);
  // Anything else under the notice tag is not a notice (nothing else is sent there).
  if (n.ok() && n->abandoned) {
    gave_up_seq_[q] = seq;
    any_notice_ = true;
  }
}

absl::Status CollectiveExchange::NoticesError(bool current) const {
  std::vector<int> here, before;
  for (int q = 0; q < world_size_; ++q) {
    if (gave_up_seq_[q] < 0 || gave_up_seq_[q] > seq_) continue;  // none, or one for a later collective
    if (gave_up_seq_[q] < seq_) {
      before.push_back(q);
    } else if (current) {
      here.push_back(q);
    }
  }
  if (!here.empty()) {
    return absl::DeadlineExceededError(absl::StrCat(
        Where(), ": rank", here.size() > 1 ? "s " : " ", absl::StrJoin(here, ", "), " of ", world_size_,
        " gave up waiting (timeout ", absl::FormatDuration(timeout_), ") before rank ", rank_, " arrived"));
  }
  if (!before.empty()) {
    std::vector<std::string> which;
    for (int q : before) which.push_back(absl::StrCat(q, " (on seq ", gave_up_seq_[q], ")"));
    return absl::DeadlineExceededError(
        absl::StrCat(Where(), ": rank", before.size() > 1 ? "s " : " ", absl::StrJoin(which, ", "), " of ", world_size_,
                     " gave up waiting for an earlier collective (timeout ", absl::FormatDuration(timeout_), ")"));
  }
  return absl::OkStatus();
}

void MessageExchange::Restart(int tag) {
  tag_ = tag;
  requests_.assign(static_cast<size_t>(world_size_), MPI_REQUEST_NULL);
  parts_.assign(static_cast<size_t>(world_size_), Part::kFirstFrame);
  requests_.insert(requests_.end(), notice_requests_.begin(), notice_requests_.end());
  parts_.insert(parts_.end(), static_cast<size_t>(world_size_), Part::kNotice);
  pending_receives_ = pending_sends_ = 0;
  speculative_.assign(static_cast<size_t>(world_size_), -1);
}

void MessageExchange::Post() {
  // (Null after an exchange that gave up parked them with its requests.)
  if (mine_ == nullptr) mine_.reset(new char[kFrameBytes]);
  if (theirs_ == nullptr) {
    theirs_.reset(new char[static_cast<size_t>(world_size_) * area_bytes_ + 63]);
    areas_ = theirs_.get() + (64 - reinterpret_cast<uintptr_t>(theirs_.get()) % 64) % 64;
  }
  const size_t descriptor_bytes = EncodeDescriptor(descriptors_[rank_], seq_, mine_.get());
  const PayloadCut cut = CutPayload(descriptor_bytes, eager() ? payload_->num_bytes() : 0);
  const char* data = eager() ? static_cast<const char*>(payload_->raw_data()) : nullptr;
  size_t frame_bytes = descriptor_bytes;
  if (cut.first > 0) {
    std::memset(mine_.get() + descriptor_bytes, 0, cut.offset - descriptor_bytes);
    std::memcpy(mine_.get() + cut.offset, data, cut.first);
    frame_bytes = cut.offset + cut.first;
  }
  ScopedMpiCall mpi;
  // The sends first: the other ranks wait for them; this rank's receives are posted
  // while they are under way.
  for (int q = 0; q < world_size_; ++q) {
    if (q == rank_) continue;
    auto send = [&](const char* bytes, size_t n) {
      requests_.push_back(MPI_REQUEST_NULL);
      parts_.push_back(Part::kSend);
      MPI_Isend(bytes, static_cast<int>(n), MPI_BYTE, q, tag_, comm_, &requests_.back());
      ++pending_sends_;
    };
    send(mine_.get(), frame_bytes);
    for (size_t offset = 0; offset < cut.rest; offset += cut.piece) {
      send(data + cut.first + offset, std::min(cut.piece, cut.rest - offset));
    }
  }
  if (!notices_posted_) {
    PostNoticeReceives();
    std::copy(notice_requests_.begin(), notice_requests_.end(), requests_.begin() + world_size_);
  }
  for (int q = 0; q < world_size_; ++q) {
    if (q == rank_) continue;
    MPI_Irecv(area(q), kFrameBytes, MPI_BYTE, q, tag_, comm_, &requests_[q]);
    ++pending_receives_;
  }
  // Every rank issues the same collective, so the others' payloads are cut as this
  // rank's is: when its rest is one message, a receive for each rank's waits behind its
  // first-frame receive (MPI matches a sender's messages of one tag in posting order), so
  // that the rest lands where it belongs as it arrives instead of waiting in MPI's queue
  // of unexpected messages for the first frame to be read. It may take any length up to
  // the end of the area; TakeFirstFrame sorts out a rank whose descriptor differs.
  if (cut.rest > 0 && cut.rest <= cut.piece) {
    const size_t at = cut.offset + cut.first;
    for (int q = 0; q < world_size_; ++q) {
      if (q == rank_) continue;
      speculative_[q] = static_cast<int>(requests_.size());
      requests_.push_back(MPI_REQUEST_NULL);
      parts_.push_back(Part::kPayload);
      MPI_Irecv(area(q) + at, static_cast<int>(area_bytes_ - at), MPI_BYTE, q, tag_, comm_, &requests_.back());
      ++pending_receives_;
    }
  }
}

absl::Status MessageExchange::TakeFirstFrame(int q) {
  int64_t seq = 0;
  size_t descriptor_bytes = 0;
  char* frame = area(q);
  if (absl::Status d = DecodeDescriptorInto(frame, &seq, &descriptor_bytes, &descriptors_[q]); !d.ok()) {
    return absl::DataLossError(absl::StrCat(Where(), ": from rank ", q, ": ", d.message()));
  }
  if (seq != seq_) {
    return absl::InternalError(absl::StrCat(Where(), ": rank ", q, " sent the descriptor of seq ", seq,
                                            " (the communicator's ranks are out of step)"));
  }
  const size_t bytes = EagerPayloadBytes(descriptors_[q], world_size_);
  const PayloadCut cut = CutPayload(descriptor_bytes, bytes);
  size_t offset = 0;  // of the first rest message no receive waits for yet
  if (speculative_[q] >= 0) {
    if (cut.rest == 0) {
      // Rank q sends no rest (its descriptor differs from this rank's, and the check
      // fails): its receive completes cancelled.
      MPI_Cancel(&requests_[speculative_[q]]);
    } else {
      // The receive takes q's first rest message, which belongs where it waits: every
      // rest starts at kFrameBytes (see CutPayload). Further messages go behind it.
      offset = cut.piece;
    }
    speculative_[q] = -1;
  }
  if (bytes == 0) return absl::OkStatus();
  // The first bytes are in the frame; the rest lands behind them (within the area, as
  // bytes <= kEagerAllReduceBytes / (world_size - 1)).
  payload_offset_[q] = cut.offset;
  char* payload = frame + cut.offset;
  for (; offset < cut.rest; offset += cut.piece) {
    requests_.push_back(MPI_REQUEST_NULL);
    parts_.push_back(Part::kPayload);
    MPI_Irecv(payload + cut.first + offset, static_cast<int>(std::min(cut.piece, cut.rest - offset)), MPI_BYTE, q, tag_,
              comm_, &requests_.back());
    ++pending_receives_;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> MessageExchange::Progress(bool wait, std::vector<ParkedRequests>* parked) {
  int polls = 0;
  while (pending_receives_ + pending_sends_ > 0) {
    int count = 0;
    absl::Status failure;  // a message that is not this collective's descriptor
    {
      ScopedMpiCall mpi;
      completed_.resize(requests_.size());
      MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, completed_.data(),
                   MPI_STATUSES_IGNORE);
      for (int i = 0; i < (count == MPI_UNDEFINED ? 0 : count); ++i) {
        const int index = completed_[i];
        switch (parts_[index]) {
          case Part::kSend:
            --pending_sends_;
            break;
          case Part::kPayload:
            --pending_receives_;
            break;
          case Part::kFirstFrame:
            --pending_receives_;
            failure = TakeFirstFrame(index);
            break;
          case Part::kNotice:
            TakeNotice(index - world_size_);
            break;
        }
        if (!failure.ok()) break;
      }
    }
    // (Abandon takes the serializing lock itself.)
    if (!failure.ok()) return Abandon(std::move(failure), parked);
    if (any_notice_) {
      // A rank that gave up on an earlier collective will not come: fail now. One that
      // gave up on this one sent its frames first: fail once they are here (the notice
      // came before them), as it may never take this rank's sends.
      absl::Status notices = NoticesError(/*current=*/pending_receives_ == 0);
      if (!notices.ok()) return Abandon(notices, parked);
    }
    if (pending_receives_ + pending_sends_ == 0) break;
    switch (AfterPoll(wait, &polls)) {
      case Pace::kPollAgain:
        break;
      case Pace::kReturn:
        return false;
      case Pace::kDeadline:
        return GiveUp(parked);
    }
  }
  // The notice receives not taken go on to the next exchange.
  std::copy(requests_.begin() + world_size_, requests_.begin() + 2 * world_size_, notice_requests_.begin());
  return true;
}

// The deadline passed: cancels the receives still waiting, tells every other rank that
// this one gave up, and names the ranks whose descriptor never came.
absl::Status MessageExchange::GiveUp(std::vector<ParkedRequests>* parked) {
  std::vector<int> missing;
  for (int q = 0; q < world_size_; ++q) {
    if (q != rank_ && requests_[q] != MPI_REQUEST_NULL) missing.push_back(q);
  }
  CollectiveDescriptor notice = descriptors_[rank_];
  notice.abandoned = true;
  ParkedRequests notices;
  notices.buffers.push_back(std::make_unique<char[]>(kDescriptorWireBytes));
  const size_t notice_bytes = EncodeDescriptor(notice, seq_, notices.buffers.back().get());
  {
    ScopedMpiCall mpi;
    for (int q = 0; q < world_size_; ++q) {
      if (q == rank_) continue;
      MPI_Request request;
      MPI_Isend(notices.buffers.back().get(), static_cast<int>(notice_bytes), MPI_BYTE, q, notice_tag_, comm_,
                &request);
      notices.requests.push_back(request);
    }
  }
  parked->push_back(std::move(notices));
  return Abandon(MissingRanksError(Where(), rank_, timeout_, missing, world_size_), parked);
}

// Ends the exchange with `status`: receives nobody matched are cancelled; whatever is
// still in flight is parked with the memory it uses.
absl::Status MessageExchange::Abandon(absl::Status status, std::vector<ParkedRequests>* parked) {
  ParkedRequests left;
  {
    ScopedMpiCall mpi;
    for (size_t i = 0; i < requests_.size(); ++i) {
      MPI_Request& r = requests_[i];
      if (r == MPI_REQUEST_NULL || parts_[i] == Part::kSend) continue;
      MPI_Cancel(&r);
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);  // a cancelled receive completes at once
    }
    for (MPI_Request& r : requests_) {
      if (r != MPI_REQUEST_NULL) left.requests.push_back(r);
      r = MPI_REQUEST_NULL;
    }
  }
  pending_receives_ = pending_sends_ = 0;
  // The notice receives were cancelled with the rest: the communicator is done for.
  std::fill(notice_requests_.begin(), notice_requests_.end(), MPI_REQUEST_NULL);
  if (!left.requests.empty()) {
    left.buffers.push_back(std::move(mine_));
    left.buffers.push_back(std::move(theirs_));
    areas_ = nullptr;
    // A notice receive the cancel did not complete may still write to its frame.
    if (notice_frames_ != nullptr) left.buffers.push_back(std::move(notice_frames_));
    if (payload_ != nullptr) left.tensor = *payload_;
    parked->push_back(std::move(left));
  }
  return status;
}

}  // namespace mpi_internal
}  // namespace tsr
