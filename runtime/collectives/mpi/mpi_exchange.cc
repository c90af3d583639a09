// DescriptorExchange: the descriptor (and eager payload) messages of one MPI collective,
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

std::string DescriptorExchange::Where() const { return tsr::Where(descriptors_[rank_], seq_); }

PayloadCut CutPayload(size_t descriptor_bytes, size_t payload_bytes) {
  PayloadCut cut;
  // The rest starts 64-byte aligned (MPI's copies of it run at full speed).
  cut.first = std::min(payload_bytes, (kFrameBytes - descriptor_bytes) / 64 * 64);
  cut.rest = payload_bytes - cut.first;
  cut.piece = cut.rest > kFramedRestBytes ? cut.rest : kFrameBytes;
  return cut;
}

DescriptorExchange::DescriptorExchange(MPI_Comm comm, int rank, int world_size, int notice_tag)
    : comm_(comm),
      rank_(rank),
      world_size_(world_size),
      descriptors_(world_size),
      payloads_(world_size),
      payload_capacity_(world_size, 0),
      notice_tag_(notice_tag),
      notice_requests_(world_size, MPI_REQUEST_NULL),
      gave_up_seq_(world_size, -1) {}

void DescriptorExchange::PostNoticeReceives() {
  notices_posted_ = true;
  notice_frames_.reset(new char[static_cast<size_t>(world_size_) * kDescriptorWireBytes]);
  for (int q = 0; q < world_size_; ++q) {
    if (q == rank_) continue;
    MPI_Irecv(notice_frames_.get() + q * kDescriptorWireBytes, kDescriptorWireBytes, MPI_BYTE, q, notice_tag_, comm_,
              &notice_requests_[q]);
  }
}

void DescriptorExchange::CancelNoticeReceives() {
  for (MPI_Request& r : notice_requests_) {
    if (r == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);  // a cancelled receive completes at once
  }
}

void DescriptorExchange::TakeNotice(int q) {
  int64_t seq = 0;
  absl::StatusOr<CollectiveDescriptor> n = DecodeDescriptor(notice_frames_.get() + q * kDescriptorWireBytes, &seq);
  // Anything else under the notice tag is not a notice (nothing else is sent there).
  if (n.ok() && n->abandoned) {
    gave_up_seq_[q] = seq;
    any_notice_ = true;
  }
}

absl::Status DescriptorExchange::NoticesError(bool current) const {
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

void DescriptorExchange::Start(int tag, int64_t seq, const CollectiveDescriptor& mine, const Tensor& payload,
                               absl::Duration timeout) {
  tag_ = tag;
  seq_ = seq;
  descriptors_[rank_] = mine;
  payload_ = EagerPayloadBytes(mine, world_size_) > 0 ? &payload : nullptr;
  timeout_ = timeout;
  start_ = absl::InfinitePast();
  requests_.assign(static_cast<size_t>(world_size_), MPI_REQUEST_NULL);
  parts_.assign(static_cast<size_t>(world_size_), Part::kFirstFrame);
  requests_.insert(requests_.end(), notice_requests_.begin(), notice_requests_.end());
  parts_.insert(parts_.end(), static_cast<size_t>(world_size_), Part::kNotice);
  pending_receives_ = pending_sends_ = 0;
}

void DescriptorExchange::Post() {
  // (Null after an exchange that gave up parked them with its requests.)
  if (mine_ == nullptr) mine_.reset(new char[kFrameBytes]);
  if (theirs_ == nullptr) theirs_.reset(new char[static_cast<size_t>(world_size_) * kFrameBytes]);
  const size_t descriptor_bytes = EncodeDescriptor(descriptors_[rank_], seq_, mine_.get());
  const PayloadCut cut = CutPayload(descriptor_bytes, eager() ? payload_->num_bytes() : 0);
  const char* data = eager() ? static_cast<const char*>(payload_->raw_data()) : nullptr;
  if (cut.first > 0) std::memcpy(mine_.get() + descriptor_bytes, data, cut.first);
  ScopedMpiCall mpi;
  if (!notices_posted_) {
    PostNoticeReceives();
    std::copy(notice_requests_.begin(), notice_requests_.end(), requests_.begin() + world_size_);
  }
  for (int q = 0; q < world_size_; ++q) {
    if (q == rank_) continue;
    MPI_Irecv(theirs_.get() + q * kFrameBytes, kFrameBytes, MPI_BYTE, q, tag_, comm_, &requests_[q]);
    ++pending_receives_;
  }
  for (int q = 0; q < world_size_; ++q) {
    if (q == rank_) continue;
    auto send = [&](const char* bytes, size_t n) {
      requests_.push_back(MPI_REQUEST_NULL);
      parts_.push_back(Part::kSend);
      MPI_Isend(bytes, static_cast<int>(n), MPI_BYTE, q, tag_, comm_, &requests_.back());
      ++pending_sends_;
    };
    send(mine_.get(), descriptor_bytes + cut.first);
    for (size_t offset = 0; offset < cut.rest; offset += cut.piece) {
      send(data + cut.first + offset, std::min(cut.piece, cut.rest - offset));
    }
  }
}

absl::Status DescriptorExchange::TakeFirstFrame(int q) {
  int64_t seq = 0;
  size_t descriptor_bytes = 0;
  const char* frame = theirs_.get() + q * kFrameBytes;
  if (absl::Status d = DecodeDescriptorInto(frame, &seq, &descriptor_bytes, &descriptors_[q]); !d.ok()) {
    return absl::DataLossError(absl::StrCat(Where(), ": from rank ", q, ": ", d.message()));
  }
  if (seq != seq_) {
    return absl::InternalError(absl::StrCat(Where(), ": rank ", q, " sent the descriptor of seq ", seq,
                                            " (the communicator's ranks are out of step)"));
  }
  const size_t bytes = EagerPayloadBytes(descriptors_[q], world_size_);
  if (bytes == 0) return absl::OkStatus();
  const PayloadCut cut = CutPayload(descriptor_bytes, bytes);
  if (payloads_[q] == nullptr || payload_capacity_[q] < bytes) {
    payloads_[q].reset(new char[bytes]);
    payload_capacity_[q] = bytes;
  }
  char* payload = payloads_[q].get();
  std::memcpy(payload, frame + descriptor_bytes, cut.first);
  for (size_t offset = 0; offset < cut.rest; offset += cut.piece) {
    requests_.push_back(MPI_REQUEST_NULL);
    parts_.push_back(Part::kPayload);
    MPI_Irecv(payload + cut.first + offset, static_cast<int>(std::min(cut.piece, cut.rest - offset)), MPI_BYTE, q, tag_,
              comm_, &requests_.back());
    ++pending_receives_;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> DescriptorExchange::Progress(bool wait, std::vector<ParkedRequests>* parked) {
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
    // The clock costs as much as a poll: read it every 16th.
    if (wait && ++polls % 16 != 0) continue;
    const absl::Time now = absl::Now();
    // The first clock reading starts the deadline (a small exchange usually completes
    // before one).
    if (start_ == absl::InfinitePast()) start_ = now;
    const absl::Time deadline = start_ + timeout_;
    if (now >= deadline) return GiveUp(parked);
    if (!wait) return false;
    // Ranks usually arrive within microseconds of each other: poll hard at first, then
    // yield, then sleep in short steps.
    const absl::Duration waited = now - start_;
    if (waited > absl::Milliseconds(2)) {
      absl::SleepFor(std::min(absl::Microseconds(200), deadline - now));
    } else if (waited > absl::Microseconds(50)) {
      std::this_thread::yield();
    }
  }
  // The notice receives not taken go on to the next exchange.
  std::copy(requests_.begin() + world_size_, requests_.begin() + 2 * world_size_, notice_requests_.begin());
  return true;
}

// The deadline passed: cancels the receives still waiting, tells every other rank that
// this one gave up, and names the ranks whose descriptor never came.
absl::Status DescriptorExchange::GiveUp(std::vector<ParkedRequests>* parked) {
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
absl::Status DescriptorExchange::Abandon(absl::Status status, std::vector<ParkedRequests>* parked) {
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
    // A notice receive the cancel did not complete may still write to its frame.
    if (notice_frames_ != nullptr) left.buffers.push_back(std::move(notice_frames_));
    for (int q = 0; q < world_size_; ++q) {
      if (payloads_[q] != nullptr) left.buffers.push_back(std::move(payloads_[q]));
      payload_capacity_[q] = 0;
    }
    if (payload_ != nullptr) left.tensor = *payload_;
    parked->push_back(std::move(left));
  }
  return status;
}

}  // namespace mpi_internal
}  // namespace tsr
