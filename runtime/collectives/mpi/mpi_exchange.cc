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
  return cut;
}

DescriptorExchange::DescriptorExchange(MPI_Comm comm, int rank, int world_size, int tag, int64_t seq,
                                       const CollectiveDescriptor& mine, const Tensor& payload)
    : comm_(comm),
      rank_(rank),
      world_size_(world_size),
      tag_(tag),
      seq_(seq),
      descriptors_(world_size),
      payloads_(world_size),
      requests_(static_cast<size_t>(world_size), MPI_REQUEST_NULL),
      parts_(static_cast<size_t>(world_size), Part::kFirstFrame) {
  descriptors_[rank] = mine;
  if (EagerPayloadBytes(mine, world_size) > 0) payload_ = payload;
}

void DescriptorExchange::Post() {
  mine_ = std::unique_ptr<char[]>(new char[kFrameBytes]);
  const size_t descriptor_bytes = EncodeDescriptor(descriptors_[rank_], seq_, mine_.get());
  const PayloadCut cut = CutPayload(descriptor_bytes, eager() ? payload_.num_bytes() : 0);
  const char* data = eager() ? static_cast<const char*>(payload_.raw_data()) : nullptr;
  if (cut.first > 0) std::memcpy(mine_.get() + descriptor_bytes, data, cut.first);
  theirs_.reset(new char[static_cast<size_t>(world_size_) * kFrameBytes]);
  ScopedMpiCall mpi;
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
    for (size_t offset = 0; offset < cut.rest; offset += kFrameBytes) {
      send(data + cut.first + offset, std::min(kFrameBytes, cut.rest - offset));
    }
  }
}

absl::Status DescriptorExchange::TakeFirstFrame(int q) {
  int64_t seq = 0;
  size_t descriptor_bytes = 0;
  const char* frame = theirs_.get() + q * kFrameBytes;
  absl::StatusOr<CollectiveDescriptor> d = DecodeDescriptor(frame, &seq, &descriptor_bytes);
  if (!d.ok()) return absl::DataLossError(absl::StrCat(Where(), ": from rank ", q, ": ", d.status().message()));
  if (seq != seq_) {
    return absl::InternalError(absl::StrCat(Where(), ": rank ", q, " sent the descriptor of seq ", seq,
                                            " (the communicator's ranks are out of step)"));
  }
  descriptors_[q] = *std::move(d);
  const size_t bytes = EagerPayloadBytes(descriptors_[q], world_size_);
  if (bytes == 0) return absl::OkStatus();
  const PayloadCut cut = CutPayload(descriptor_bytes, bytes);
  payloads_[q].reset(new char[bytes]);
  char* payload = payloads_[q].get();
  std::memcpy(payload, frame + descriptor_bytes, cut.first);
  for (size_t offset = 0; offset < cut.rest; offset += kFrameBytes) {
    requests_.push_back(MPI_REQUEST_NULL);
    parts_.push_back(Part::kPayload);
    MPI_Irecv(payload + cut.first + offset, static_cast<int>(std::min(kFrameBytes, cut.rest - offset)), MPI_BYTE, q,
              tag_, comm_, &requests_.back());
    ++pending_receives_;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> DescriptorExchange::Progress(bool wait, absl::Time deadline, absl::Duration timeout,
                                                  std::vector<ParkedRequests>* parked) {
  const absl::Time start = absl::Now();
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
        }
        if (!failure.ok()) break;
      }
    }
    // (Abandon takes the serializing lock itself.)
    if (!failure.ok()) return Abandon(std::move(failure), parked);
    if (pending_receives_ == 0 && !notices_checked_) {
      // Everything sent here has arrived; a rank that gave up before this one came has
      // also sent its notice (and may never take this rank's sends).
      notices_checked_ = true;
      if (absl::Status notices = CheckNotices(timeout); !notices.ok()) return Abandon(notices, parked);
    }
    if (pending_receives_ + pending_sends_ == 0) break;
    // The clock costs as much as a poll: read it every 16th.
    if (wait && ++polls % 16 != 0) continue;
    const absl::Time now = absl::Now();
    if (now >= deadline) return GiveUp(timeout, parked);
    if (!wait) return false;
    // Ranks usually arrive within microseconds of each other: poll hard at first, then
    // yield, then sleep in short steps.
    const absl::Duration waited = now - start;
    if (waited > absl::Milliseconds(2)) {
      absl::SleepFor(std::min(absl::Microseconds(200), deadline - now));
    } else if (waited > absl::Microseconds(50)) {
      std::this_thread::yield();
    }
  }
  return true;
}

// A rank that gave up on this collective before this one arrived said so with a
// message under the same tag behind the ones it had sent.
absl::Status DescriptorExchange::CheckNotices(absl::Duration timeout) {
  std::vector<int> abandoned;
  ScopedMpiCall mpi;
  for (int q = 0; q < world_size_; ++q) {
    if (q == rank_) continue;
    int flagged = 0;
    MPI_Iprobe(q, tag_, comm_, &flagged, MPI_STATUS_IGNORE);
    if (!flagged) continue;
    std::vector<char> notice(kDescriptorWireBytes);
    MPI_Recv(notice.data(), kDescriptorWireBytes, MPI_BYTE, q, tag_, comm_, MPI_STATUS_IGNORE);
    int64_t notice_seq = 0;
    absl::StatusOr<CollectiveDescriptor> n = DecodeDescriptor(notice.data(), &notice_seq);
    if (n.ok() && n->abandoned) abandoned.push_back(q);
  }
  if (abandoned.empty()) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat(
      Where(), ": rank", abandoned.size() > 1 ? "s " : " ", absl::StrJoin(abandoned, ", "), " of ", world_size_,
      " gave up waiting (timeout ", absl::FormatDuration(timeout), ") before rank ", rank_, " arrived"));
}

// The deadline passed: cancels the receives still waiting, tells every other rank that
// this one gave up, and names the ranks whose descriptor never came.
absl::Status DescriptorExchange::GiveUp(absl::Duration timeout, std::vector<ParkedRequests>* parked) {
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
      MPI_Isend(notices.buffers.back().get(), static_cast<int>(notice_bytes), MPI_BYTE, q, tag_, comm_, &request);
      notices.requests.push_back(request);
    }
  }
  parked->push_back(std::move(notices));
  return Abandon(MissingRanksError(Where(), rank_, timeout, missing, world_size_), parked);
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
  if (!left.requests.empty()) {
    left.buffers.push_back(std::move(mine_));
    left.buffers.push_back(std::move(theirs_));
    for (std::unique_ptr<char[]>& p : payloads_) {
      if (p != nullptr) left.buffers.push_back(std::move(p));
    }
    left.tensor = payload_;
    parked->push_back(std::move(left));
  }
  return status;
}

}  // namespace mpi_internal
}  // namespace tsr
