// StreamPointToPoint (stream_point_to_point.h): the I/O thread's loop over the pairs'
// streams -- header, acknowledgement and data messages, matched in issue order -- and
// the in-memory channel of a rank to itself.
#include "runtime/collectives/cross_process/stream_point_to_point.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "runtime/collectives/cross_process/collective_descriptor.h"
#include "runtime/collectives/cross_process/loopback_mesh.h"
#include "runtime/launch/loopback_socket.h"

namespace tsr {
namespace {

enum MessageType : uint32_t { kHeaderMessage = 1, kAckMessage = 2, kDataMessage = 3 };

// What precedes every message: its type, the transfer's sequence number (per pair and
// direction) and the bytes that follow -- a descriptor's wire form for a header or an
// acknowledgement, the tensor's bytes for data.
struct MessageHead {
  uint32_t type;
  uint32_t reserved;
  int64_t seq;
  uint64_t bytes;
};

}  // namespace

// Transfers of a rank to itself, matched in memory like the in-process backend's.
class StreamPointToPoint::SelfChannel : public std::enable_shared_from_this<SelfChannel> {
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

struct StreamPointToPoint::Transfer {
  bool is_send = false;
  int peer = 0;
  int64_t seq = 0;
  CollectiveDescriptor descriptor;
  Tensor tensor;
  CollectiveHandle handle = CollectiveHandle::Pending();
  // Set once the handle is complete; what a waiting thread polls.
  std::shared_ptr<std::atomic<bool>> finished = std::make_shared<std::atomic<bool>>(false);
  absl::Time deadline;
  std::string where;     // "send 'x' rank 0 -> rank 1 (seq 3)"
  bool matched = false;  // the acknowledgement came (send) or went (recv)
};

// A message on its way out: the head, a descriptor or the data of `completes`.
struct StreamPointToPoint::OutMessage {
  MessageHead head{};
  std::string descriptor;
  const char* data = nullptr;
  size_t data_bytes = 0;
  size_t sent = 0;
  std::shared_ptr<Transfer> completes;  // a send whose data this is
  size_t total() const { return sizeof(head) + descriptor.size() + data_bytes; }
};

struct StreamPointToPoint::Peer {
  int fd = -1;
  bool broken = false;
  std::deque<OutMessage> out;
  // The incoming message: its head (head_bytes of it read so far), then its bytes.
  MessageHead head{};
  size_t head_bytes = 0;
  std::string descriptor;
  size_t body_bytes = 0;
  // Receives posted and not yet matched, headers arrived and not yet matched, sends
  // whose acknowledgement is due, accepted receives whose data is due: each in order.
  std::deque<std::shared_ptr<Transfer>> recvs;
  std::deque<std::pair<int64_t, std::string>> headers;
  std::deque<std::shared_ptr<Transfer>> sends;
  std::deque<std::shared_ptr<Transfer>> data_in;
};

StreamPointToPoint::StreamPointToPoint(int rank, std::vector<int> fds, absl::Duration timeout, Hooks hooks)
    : rank_(rank),
      world_size_(static_cast<int>(fds.size())),
      timeout_(timeout),
      hooks_(std::move(hooks)),
      wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      peers_(fds.size()),
      self_(std::make_shared<SelfChannel>(rank, timeout)) {
  for (size_t q = 0; q < fds.size(); ++q) peers_[q].fd = fds[q];
  io_ = std::thread([this] { Loop(); });
}

StreamPointToPoint::~StreamPointToPoint() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  Wake();
  io_.join();
  std::vector<std::shared_ptr<Transfer>> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(posted_);
  }
  left.insert(left.end(), active_.begin(), active_.end());
  for (const std::shared_ptr<Transfer>& t : left) {
    const int src = t->is_send ? rank_ : t->peer, dst = t->is_send ? t->peer : rank_;
    Finish(*t, absl::CancelledError(absl::StrCat("'", t->descriptor.name, "' rank ", src, " -> rank ", dst, " (seq ",
                                                 t->seq, "): the communicator was destroyed")));
  }
  for (Peer& p : peers_) {
    if (p.fd >= 0) close(p.fd);
  }
  if (wake_fd_ >= 0) close(wake_fd_);
  self_->Close();
}

void StreamPointToPoint::Wake() {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void StreamPointToPoint::Close() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  Wake();
}

CollectiveHandle StreamPointToPoint::Post(bool is_send, int peer, absl::string_view name, Tensor tensor) {
  if (peer < 0 || peer >= world_size_) {
    return CollectiveHandle::Ready(
        absl::InvalidArgumentError(absl::StrCat(is_send ? "send" : "recv", " '", name, "' on rank ", rank_, ": peer ",
                                                peer, " is not a rank of a world of size ", world_size_)));
  }
  int64_t seq;
  {
    absl::MutexLock lock(&mu_);
    seq = next_seq_[{peer, is_send}]++;
  }
  if (peer == rank_) return self_->Post(is_send, seq, name, std::move(tensor));
  auto t = std::make_shared<Transfer>();
  t->is_send = is_send;
  t->peer = peer;
  t->seq = seq;
  t->descriptor = MakeDescriptor(is_send ? CollectiveKind::kSend : CollectiveKind::kRecv, name, tensor.type());
  t->tensor = std::move(tensor);
  t->deadline = absl::Now() + timeout_;
  t->where = absl::StrCat(is_send ? "send '" : "recv '", name, "' rank ", is_send ? rank_ : peer, " -> rank ",
                          is_send ? peer : rank_, " (seq ", seq, ")");
  if (absl::Status health = hooks_.check(t->where); !health.ok()) return CollectiveHandle::Ready(health);
  t->handle = CollectiveHandle::Pending(absl::InfiniteFuture(), nullptr, [finished = t->finished](bool wait) {
    if (!wait) return;
    const absl::Time until = absl::Now() + kSpin;
    while (!finished->load(std::memory_order_acquire) && absl::Now() < until) sched_yield();
  });
  CollectiveHandle handle = t->handle;
  {
    absl::MutexLock lock(&mu_);
    posted_.push_back(std::move(t));
  }
  Wake();
  return handle;
}

void StreamPointToPoint::Finish(Transfer& t, absl::Status status) {
  t.handle.Complete(std::move(status));
  t.finished->store(true, std::memory_order_release);
}

void StreamPointToPoint::Start(const std::shared_ptr<Transfer>& t) {
  Peer& p = peers_[t->peer];
  if (p.broken) {
    Finish(*t, hooks_.poison(absl::UnavailableError(
                   absl::StrCat(t->where, ": rank ", rank_, " lost its connection to rank ", t->peer))));
    return;
  }
  active_.push_back(t);
  if (t->is_send) {
    OutMessage m;
    m.head = {kHeaderMessage, 0, t->seq, kDescriptorWireBytes};
    m.descriptor.resize(kDescriptorWireBytes);
    EncodeDescriptor(t->descriptor, t->seq, m.descriptor.data());
    p.out.push_back(std::move(m));
    p.sends.push_back(t);
    return;
  }
  p.recvs.push_back(t);
  Match(t->peer);
}

// Pairs the posted receives from rank q with the headers q sent, in order, and answers
// each header.
void StreamPointToPoint::Match(int q) {
  Peer& p = peers_[q];
  while (!p.recvs.empty() && !p.headers.empty()) {
    std::shared_ptr<Transfer> t = std::move(p.recvs.front());
    p.recvs.pop_front();
    auto [seq, encoded] = std::move(p.headers.front());
    p.headers.pop_front();
    int64_t decoded_seq = 0;
    absl::StatusOr<CollectiveDescriptor> theirs = DecodeDescriptor(encoded.data(), &decoded_seq);
    absl::Status agreed = theirs.status();
    if (agreed.ok() && (seq != t->seq || decoded_seq != t->seq)) {
      agreed = absl::InternalError(absl::StrCat("rank ", q, " sent the header of its send #", seq));
    }
    if (!agreed.ok()) {
      Finish(*t, hooks_.poison(absl::DataLossError(absl::StrCat(t->where, ": ", agreed.message()))));
      continue;
    }
    agreed = CheckTransfer(q, rank_, t->seq, *theirs, t->descriptor);
    CollectiveDescriptor reply = t->descriptor;
    reply.accepted = agreed.ok();
    OutMessage m;
    m.head = {kAckMessage, 0, t->seq, kDescriptorWireBytes};
    m.descriptor.resize(kDescriptorWireBytes);
    EncodeDescriptor(reply, t->seq, m.descriptor.data());
    p.out.push_back(std::move(m));
    t->matched = true;
    if (agreed.ok() && t->tensor.num_bytes() > 0) {
      p.data_in.push_back(std::move(t));
    } else {
      Finish(*t, agreed);
    }
  }
}

// Acts on the message from rank q that has just been read whole.
absl::Status StreamPointToPoint::Deliver(int q) {
  Peer& p = peers_[q];
  switch (p.head.type) {
    case kHeaderMessage:
      p.headers.emplace_back(p.head.seq, std::move(p.descriptor));
      Match(q);
      return absl::OkStatus();
    case kAckMessage: {
      if (p.sends.empty() || p.sends.front()->seq != p.head.seq) {
        return absl::DataLossError(absl::StrCat("rank ", q, " acknowledged send #", p.head.seq, ", which is not due"));
      }
      std::shared_ptr<Transfer> t = std::move(p.sends.front());
      p.sends.pop_front();
      int64_t seq = 0;
      absl::StatusOr<CollectiveDescriptor> theirs = DecodeDescriptor(p.descriptor.data(), &seq);
      if (!theirs.ok()) return theirs.status();
      t->matched = true;
      if (!theirs->accepted) {
        absl::Status status = CheckTransfer(rank_, q, t->seq, t->descriptor, *theirs);
        if (status.ok())
          status = absl::InternalError(absl::StrCat(t->where, ": the receiver refused a matching header"));
        Finish(*t, status);
      } else if (t->tensor.num_bytes() > 0) {
        OutMessage m;
        m.head = {kDataMessage, 0, t->seq, static_cast<uint64_t>(t->tensor.num_bytes())};
        m.data = static_cast<const char*>(t->tensor.raw_data());
        m.data_bytes = t->tensor.num_bytes();
        m.completes = std::move(t);
        p.out.push_back(std::move(m));
      } else {
        Finish(*t, absl::OkStatus());
      }
      return absl::OkStatus();
    }
    default: {  // kDataMessage: read into the front of data_in
      std::shared_ptr<Transfer> t = std::move(p.data_in.front());
      p.data_in.pop_front();
      Finish(*t, absl::OkStatus());
      return absl::OkStatus();
    }
  }
}

// One non-blocking pass over rank q's stream: writes what is queued, reads and acts on
// what has come. A failure is the connection's.
absl::Status StreamPointToPoint::Pump(int q, bool* activity) {
  Peer& p = peers_[q];
  auto broke = [&](int error) {
    return absl::UnavailableError(absl::StrCat("the connection to rank ", q, " broke: ", ErrnoText(error)));
  };
  while (!p.out.empty()) {
    OutMessage& m = p.out.front();
    const absl::string_view pieces[] = {absl::string_view(reinterpret_cast<const char*>(&m.head), sizeof(m.head)),
                                        m.descriptor, absl::string_view(m.data, m.data_bytes)};
    const ssize_t w = SendPieces(p.fd, pieces, m.sent);
    if (w < 0) return broke(static_cast<int>(-w));
    if (w == 0) break;
    *activity = true;
    m.sent += static_cast<size_t>(w);
    if (m.sent < m.total()) continue;
    if (m.completes != nullptr) Finish(*m.completes, absl::OkStatus());
    p.out.pop_front();
  }
  while (true) {
    char* into;
    size_t want;
    if (p.head_bytes < sizeof(p.head)) {
      into = reinterpret_cast<char*>(&p.head) + p.head_bytes;
      want = sizeof(p.head) - p.head_bytes;
    } else if (p.head.type == kDataMessage) {
      into = static_cast<char*>(p.data_in.front()->tensor.raw_data()) + p.body_bytes;
      want = p.head.bytes - p.body_bytes;
    } else {
      into = p.descriptor.data() + p.body_bytes;
      want = p.head.bytes - p.body_bytes;
    }
    if (want > 0) {
      const ssize_t r = ReceiveSome(p.fd, into, want);
      if (r == kPeerClosed) return absl::UnavailableError(absl::StrCat("rank ", q, " closed its connection"));
      if (r < 0) return broke(static_cast<int>(-r));
      if (r == 0) break;
      *activity = true;
      if (p.head_bytes < sizeof(p.head)) {
        p.head_bytes += static_cast<size_t>(r);
        if (p.head_bytes < sizeof(p.head)) continue;
        // A whole head: check it against what this side expects.
        p.body_bytes = 0;
        if (p.head.type == kDataMessage) {
          if (p.data_in.empty() || p.data_in.front()->seq != p.head.seq ||
              static_cast<uint64_t>(p.data_in.front()->tensor.num_bytes()) != p.head.bytes) {
            return absl::DataLossError(
                absl::StrCat("rank ", q, " sent ", p.head.bytes, " bytes of data for send #", p.head.seq, " unasked"));
          }
        } else if ((p.head.type != kHeaderMessage && p.head.type != kAckMessage) ||
                   p.head.bytes != kDescriptorWireBytes) {
          return absl::DataLossError(
              absl::StrCat("rank ", q, " sent a malformed message (type ", p.head.type, ", ", p.head.bytes, " bytes)"));
        } else {
          p.descriptor.assign(kDescriptorWireBytes, '\0');
        }
        if (p.head.bytes > 0) continue;
      } else {
        p.body_bytes += static_cast<size_t>(r);
        if (p.body_bytes < p.head.bytes) continue;
      }
    }
    p.head_bytes = 0;
    if (absl::Status s = Deliver(q); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void StreamPointToPoint::FailPeer(int q, const absl::Status& why) {
  Peer& p = peers_[q];
  p.broken = true;
  shutdown(p.fd, SHUT_RDWR);
  for (const std::shared_ptr<Transfer>& t : active_) {
    if (t->peer != q || t->finished->load()) continue;
    Finish(*t,
           hooks_.poison(absl::UnavailableError(absl::StrCat(
               t->where, ": rank ", rank_,
               " lost its connection to the other rank (a rank that gives up waiting closes them): ", why.message()))));
  }
}

void StreamPointToPoint::ExpireOverdue() {
  const absl::Time now = absl::Now();
  const std::string within = absl::StrCat(" within ", absl::FormatDuration(timeout_));
  for (const std::shared_ptr<Transfer>& t : active_) {
    if (t->finished->load() || now < t->deadline) continue;
    std::string what;
    if (!t->matched) {
      what = absl::StrCat("rank ", t->peer, " did not post the matching ", t->is_send ? "recv" : "send", within);
    } else {
      what = absl::StrCat(t->is_send ? "the data did not leave" : "the data did not arrive", within);
    }
    Finish(*t, hooks_.poison(absl::DeadlineExceededError(absl::StrCat(t->where, ": ", what))));
  }
}

void StreamPointToPoint::Loop() {
  absl::Time hot_until = absl::Now() + kSpin;
  bool shut = false;
  std::vector<pollfd> polled;
  while (true) {
    std::vector<std::shared_ptr<Transfer>> posted;
    bool closed;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      posted.swap(posted_);
      closed = closed_;
    }
    bool activity = !posted.empty();
    for (const std::shared_ptr<Transfer>& t : posted) Start(t);
    if (closed && !shut) {
      shut = true;
      for (int q = 0; q < world_size_; ++q) {
        if (q != rank_ && !peers_[q].broken) {
          FailPeer(q, absl::UnavailableError("this rank closed its connections"));
        }
      }
    }
    for (int q = 0; q < world_size_; ++q) {
      if (q == rank_ || peers_[q].broken) continue;
      if (absl::Status s = Pump(q, &activity); !s.ok()) FailPeer(q, s);
    }
    ExpireOverdue();
    std::erase_if(active_, [](const std::shared_ptr<Transfer>& t) { return t->finished->load(); });
    const absl::Time now = absl::Now();
    if (activity) hot_until = now + kSpin;
    if (now < hot_until) {
      sched_yield();
      continue;
    }
    polled.clear();
    polled.push_back({wake_fd_, POLLIN, 0});
    absl::Time deadline = absl::InfiniteFuture();
    for (const std::shared_ptr<Transfer>& t : active_) deadline = std::min(deadline, t->deadline);
    for (int q = 0; q < world_size_; ++q) {
      const Peer& p = peers_[q];
      if (q == rank_ || p.broken) continue;
      polled.push_back({p.fd, static_cast<short>(POLLIN | (p.out.empty() ? 0 : POLLOUT)), 0});
    }
    poll(polled.data(), polled.size(), PollTimeoutMs(deadline));
    if (polled[0].revents & POLLIN) {
      uint64_t count;
      (void)!read(wake_fd_, &count, sizeof(count));
    }
    hot_until = absl::Now() + kSpin;
  }
}

}  // namespace tsr
