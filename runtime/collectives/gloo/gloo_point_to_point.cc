// GlooHealth and GlooPointToPoint: the header / acknowledgement / data protocol of
// Send and Recv over Gloo's unbound buffers, one thread per transfer.
#include "runtime/collectives/gloo/gloo_point_to_point.h"

#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "graph/status_macros.h"
#include "runtime/collectives/cross_process/collective_descriptor.h"

namespace tsr {

absl::Status GlooHealth::Check(absl::string_view where) const {
  absl::MutexLock lock(&mu_);
  if (reason_.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(where, ": the communicator is unusable since ", reason_));
}

bool GlooHealth::poisoned() const {
  absl::MutexLock lock(&mu_);
  return !reason_.empty();
}

absl::Status GlooHealth::Poison(absl::Status failure) {
  std::function<void()> action;
  {
    absl::MutexLock lock(&mu_);
    if (!reason_.empty()) return failure;
    reason_ = std::string(failure.message());
    action = std::move(on_poison_);
  }
  if (action) action();
  return failure;
}

void GlooHealth::OnPoison(std::function<void()> action) {
  absl::MutexLock lock(&mu_);
  on_poison_ = std::move(action);
}

absl::Status GlooHealth::Failure(absl::string_view where, int rank, absl::Time deadline, absl::string_view timed_out,
                                 const std::exception& e) {
  // Gloo's own timer and ours may disagree by a few milliseconds.
  if (absl::Now() >= deadline - absl::Milliseconds(20)) {
    return Poison(absl::DeadlineExceededError(absl::StrCat(where, ": ", timed_out)));
  }
  return Poison(absl::UnavailableError(
      absl::StrCat(where, ": rank ", rank,
                   " lost its connections to the other ranks (a rank that gives up waiting closes them): ", e.what())));
}

// Transfers of a rank to itself, matched in memory like the in-process backend's.
class GlooPointToPoint::SelfChannel : public std::enable_shared_from_this<SelfChannel> {
 public:
  SelfChannel(int rank, absl::Duration timeout) : rank_(rank), timeout_(timeout) {}

  CollectiveHandle Post(bool is_send, int64_t seq, absl::string_view name, Tensor tensor) {
    Pending send, recv;
    {
      absl::MutexLock lock(&mu_);
      std::map<int64_t, Pending>& others = is_send ? recvs_ : sends_;
      auto it = others.find(seq);
      if (it == others.end()) {
        std::weak_ptr<SelfChannel> weak = weak_from_this();
        Pending mine{std::string(name), std::move(tensor),
                     CollectiveHandle::Pending(absl::Now() + timeout_, [weak, is_send, seq] {
                       if (auto channel = weak.lock()) channel->Expire(is_send, seq);
                     })};
        CollectiveHandle handle = mine.handle;
        (is_send ? sends_ : recvs_).emplace(seq, std::move(mine));
        return handle;
      }
      (is_send ? recv : send) = std::move(it->second);
      others.erase(it);
    }
    CollectiveHandle handle = CollectiveHandle::Pending();
    (is_send ? send : recv) = Pending{std::string(name), std::move(tensor), handle};
    absl::Status status =
        CheckTransfer(rank_, rank_, seq, MakeDescriptor(CollectiveKind::kSend, send.name, send.tensor.type()),
                      MakeDescriptor(CollectiveKind::kRecv, recv.name, recv.tensor.type()));
    if (status.ok() && send.tensor.num_bytes() > 0) {
      std::memcpy(recv.tensor.raw_data(), send.tensor.raw_data(), send.tensor.num_bytes());
    }
    send.handle.Complete(status);
    recv.handle.Complete(status);
    return handle;
  }

  // Completes what is still waiting with Cancelled.
  void Close() {
    absl::MutexLock lock(&mu_);
    for (auto* pending : {&sends_, &recvs_}) {
      for (auto& [seq, p] : *pending) {
        p.handle.Complete(absl::CancelledError(absl::StrCat("'", p.name, "' rank ", rank_, " -> rank ", rank_, " (seq ",
                                                            seq, "): the communicator was destroyed")));
      }
      pending->clear();
    }
  }

 private:
  struct Pending {
    std::string name;
    Tensor tensor;
    CollectiveHandle handle = CollectiveHandle::Pending();
  };

  void Expire(bool is_send, int64_t seq) {
    Pending expired;
    {
      absl::MutexLock lock(&mu_);
      std::map<int64_t, Pending>& pending = is_send ? sends_ : recvs_;
      auto it = pending.find(seq);
      if (it == pending.end()) return;  // matched meanwhile
      expired = std::move(it->second);
      pending.erase(it);
    }
    expired.handle.Complete(absl::DeadlineExceededError(absl::StrCat(
        is_send ? "send '" : "recv '", expired.name, "' rank ", rank_, " -> rank ", rank_, " (seq ", seq, "): rank ",
        rank_, " did not post the matching ", is_send ? "recv" : "send", " within ", absl::FormatDuration(timeout_))));
  }

  const int rank_;
  const absl::Duration timeout_;
  absl::Mutex mu_;
  std::map<int64_t, Pending> sends_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, Pending> recvs_ ABSL_GUARDED_BY(mu_);
};

struct GlooPointToPoint::Transfer {
  bool is_send = false;
  int peer = 0;
  int64_t seq = 0;
  CollectiveDescriptor descriptor;
  Tensor tensor;
  CollectiveHandle handle = CollectiveHandle::Pending();
  absl::Time deadline;
  std::thread thread;

  absl::Mutex mu;
  bool cancelled ABSL_GUARDED_BY(mu) = false;
  bool finished ABSL_GUARDED_BY(mu) = false;
  gloo::transport::UnboundBuffer* waiting ABSL_GUARDED_BY(mu) = nullptr;
};

GlooPointToPoint::GlooPointToPoint(std::shared_ptr<gloo::Context> context, std::shared_ptr<GlooHealth> health,
                                   absl::Duration timeout)
    : context_(std::move(context)),
      health_(std::move(health)),
      rank_(context_->rank),
      timeout_(timeout),
      self_(std::make_shared<SelfChannel>(context_->rank, timeout)) {}

GlooPointToPoint::~GlooPointToPoint() {
  std::list<std::unique_ptr<Transfer>> transfers;
  {
    absl::MutexLock lock(&mu_);
    transfers.swap(transfers_);
  }
  for (std::unique_ptr<Transfer>& t : transfers) {
    absl::MutexLock lock(&t->mu);
    t->cancelled = true;
    if (t->waiting != nullptr) {
      t->waiting->abortWaitRecv();
      t->waiting->abortWaitSend();
    }
  }
  for (std::unique_ptr<Transfer>& t : transfers) t->thread.join();
  self_->Close();
}

CollectiveHandle GlooPointToPoint::Post(bool is_send, int peer, absl::string_view name, Tensor tensor) {
  const int world_size = context_->size;
  if (peer < 0 || peer >= world_size) {
    return CollectiveHandle::Ready(
        absl::InvalidArgumentError(absl::StrCat(is_send ? "send" : "recv", " '", name, "' on rank ", rank_, ": peer ",
                                                peer, " is not a rank of a world of size ", world_size)));
  }
  int64_t seq;
  std::list<std::unique_ptr<Transfer>> finished;
  absl::MutexLock lock(&mu_);
  seq = next_seq_[{peer, is_send}]++;
  if (peer == rank_) return self_->Post(is_send, seq, name, std::move(tensor));
  // Threads of transfers that are done are joined here, as new ones start.
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    bool done;
    {
      absl::MutexLock t_lock(&(*it)->mu);
      done = (*it)->finished;
    }
    if (done) {
      (*it)->thread.join();
      it = transfers_.erase(it);
    } else {
      ++it;
    }
  }
  auto t = std::make_unique<Transfer>();
  t->is_send = is_send;
  t->peer = peer;
  t->seq = seq;
  t->descriptor = MakeDescriptor(is_send ? CollectiveKind::kSend : CollectiveKind::kRecv, name, tensor.type());
  t->tensor = std::move(tensor);
  t->deadline = absl::Now() + timeout_;
  CollectiveHandle handle = t->handle;
  Transfer* raw = t.get();
  transfers_.push_back(std::move(t));
  raw->thread = std::thread([this, raw] {
    absl::Status status = Run(*raw);
    raw->handle.Complete(status);
    absl::MutexLock t_lock(&raw->mu);
    raw->finished = true;
  });
  return handle;
}

absl::Status GlooPointToPoint::Run(Transfer& t) {
  const int src = t.is_send ? rank_ : t.peer;
  const int dst = t.is_send ? t.peer : rank_;
  const std::string where = absl::StrCat(t.is_send ? "send '" : "recv '", t.descriptor.name, "' rank ", src,
                                         " -> rank ", dst, " (seq ", t.seq, ")");
  if (absl::Status health = health_->Check(where); !health.ok()) return health;
  // The two directions between a pair use different tags.
  const uint32_t tag = static_cast<uint32_t>(t.seq * 2 + (src < dst ? 0 : 1));
  std::vector<char> header(kDescriptorWireBytes), ack(kDescriptorWireBytes);
  EncodeDescriptor(t.descriptor, t.seq, header.data());
  const absl::string_view cancelled_message = "the communicator was destroyed";
  // Waits for `buffer`'s pending receive or send, unless the communicator is going away.
  auto wait = [&](gloo::transport::UnboundBuffer* buffer, bool recv, absl::string_view what) -> absl::Status {
    {
      absl::MutexLock lock(&t.mu);
      if (t.cancelled) {
        return absl::CancelledError(absl::StrCat("'", t.descriptor.name, "' rank ", src, " -> rank ", dst, " (seq ",
                                                 t.seq, "): ", cancelled_message));
      }
      t.waiting = buffer;
    }
    bool completed = false;
    absl::Status failure;
    try {
      const std::chrono::milliseconds timeout = GlooMillis(t.deadline - absl::Now());
      completed = recv ? buffer->waitRecv(timeout) : buffer->waitSend(timeout);
    } catch (const std::exception& e) {
      failure = health_->Failure(where, rank_, t.deadline, what, e);
    }
    absl::MutexLock lock(&t.mu);
    t.waiting = nullptr;
    if (!failure.ok()) return failure;
    if (!completed) {
      return absl::CancelledError(absl::StrCat("'", t.descriptor.name, "' rank ", src, " -> rank ", dst, " (seq ",
                                               t.seq, "): ", cancelled_message));
    }
    return absl::OkStatus();
  };
  const std::string within = absl::StrCat(" within ", absl::FormatDuration(timeout_));
  const std::string peer_side =
      absl::StrCat("rank ", t.peer, " did not post the matching ", t.is_send ? "recv" : "send", within);
  try {
    auto header_buffer = context_->createUnboundBuffer(header.data(), header.size());
    auto ack_buffer = context_->createUnboundBuffer(ack.data(), ack.size());
    std::unique_ptr<gloo::transport::UnboundBuffer> data_buffer;
    if (t.tensor.num_bytes() > 0)
      data_buffer = context_->createUnboundBuffer(t.tensor.raw_data(), t.tensor.num_bytes());
    const uint64_t header_slot = gloo::Slot::build(kGlooHeaderSlot, tag);
    const uint64_t ack_slot = gloo::Slot::build(kGlooAckSlot, tag);
    const uint64_t data_slot = gloo::Slot::build(kGlooDataSlot, tag);
    int64_t seq = 0;
    if (t.is_send) {
      ack_buffer->recv(t.peer, ack_slot);
      header_buffer->send(t.peer, header_slot);
      TSR_RETURN_IF_ERROR(wait(ack_buffer.get(), /*recv=*/true, peer_side));
      absl::StatusOr<CollectiveDescriptor> theirs = DecodeDescriptor(ack.data(), &seq);
      if (!theirs.ok())
        return health_->Poison(absl::DataLossError(absl::StrCat(where, ": ", theirs.status().message())));
      absl::Status status = absl::OkStatus();
      if (!theirs->accepted) {
        status = CheckTransfer(src, dst, t.seq, t.descriptor, *theirs);
        if (status.ok()) status = absl::InternalError(absl::StrCat(where, ": the receiver refused a matching header"));
      } else if (data_buffer != nullptr) {
        data_buffer->send(t.peer, data_slot);
        TSR_RETURN_IF_ERROR(wait(data_buffer.get(), /*recv=*/false, absl::StrCat("the data did not leave", within)));
      }
      TSR_RETURN_IF_ERROR(wait(header_buffer.get(), /*recv=*/false, absl::StrCat("the header did not leave", within)));
      return status;
    }
    header_buffer->recv(t.peer, header_slot);
    TSR_RETURN_IF_ERROR(wait(header_buffer.get(), /*recv=*/true, peer_side));
    absl::StatusOr<CollectiveDescriptor> theirs = DecodeDescriptor(header.data(), &seq);
    if (!theirs.ok()) return health_->Poison(absl::DataLossError(absl::StrCat(where, ": ", theirs.status().message())));
    absl::Status agreed = CheckTransfer(src, dst, t.seq, *theirs, t.descriptor);
    CollectiveDescriptor reply = t.descriptor;
    reply.accepted = agreed.ok();
    EncodeDescriptor(reply, t.seq, ack.data());
    ack_buffer->send(t.peer, ack_slot);
    if (agreed.ok() && data_buffer != nullptr) {
      data_buffer->recv(t.peer, data_slot);
      TSR_RETURN_IF_ERROR(wait(data_buffer.get(), /*recv=*/true, absl::StrCat("the data did not arrive", within)));
    }
    TSR_RETURN_IF_ERROR(
        wait(ack_buffer.get(), /*recv=*/false, absl::StrCat("the acknowledgement did not leave", within)));
    return agreed;
  } catch (const std::exception& e) {
    // Posting failed: the connections are gone already.
    return health_->Failure(where, rank_, absl::InfiniteFuture(), "", e);
  }
}

}  // namespace tsr
