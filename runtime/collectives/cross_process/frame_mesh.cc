// The frame mesh of frame_mesh.h: the exchange's non-blocking pump over every peer's
// stream, and the abort mark a closing rank leaves behind.
#include "runtime/collectives/cross_process/frame_mesh.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/collectives/cross_process/loopback_mesh.h"
#include "runtime/launch/loopback_socket.h"

namespace tsr {
namespace {

constexpr size_t kHeaderBytes = sizeof(uint64_t);
// Sent in place of a frame's length by a rank that gives up on the mesh.
constexpr uint64_t kAbortMark = ~uint64_t{0};

}  // namespace

absl::StatusOr<std::unique_ptr<FrameMesh>> FrameMesh::Connect(int rank, int world_size, KeyValueStore& store,
                                                              absl::string_view prefix, absl::Duration timeout) {
  const std::string who = absl::StrCat("frame mesh '", prefix, "' rank ", rank, " of ", world_size);
  absl::StatusOr<std::vector<int>> fds =
      ConnectLoopbackMesh(rank, world_size, store, absl::StrCat(prefix, "/frames"), timeout);
  if (!fds.ok()) return absl::Status(fds.status().code(), absl::StrCat(who, ": ", fds.status().message()));
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    const int error = errno;
    for (int fd : *fds) {
      if (fd >= 0) close(fd);
    }
    return absl::UnavailableError(absl::StrCat(who, ": eventfd: ", ErrnoText(error)));
  }
  std::vector<Peer> peers(world_size);
  for (int q = 0; q < world_size; ++q) peers[q].fd = (*fds)[q];
  return std::unique_ptr<FrameMesh>(new FrameMesh(rank, std::move(peers), wake));
}

FrameMesh::FrameMesh(int rank, std::vector<Peer> peers, int wake_fd)
    : rank_(rank), peers_(std::move(peers)), wake_fd_(wake_fd) {}

FrameMesh::~FrameMesh() {
  for (Peer& p : peers_) {
    if (p.fd >= 0) close(p.fd);
  }
  close(wake_fd_);
}

absl::Status FrameMesh::Pump(absl::string_view mine, absl::Span<char* const> into, size_t capacity,
                             std::vector<size_t>* lengths, bool* finished, bool* moved) {
  const uint64_t header = mine.size();
  *finished = true;
  *moved = false;
  for (int q = 0; q < static_cast<int>(peers_.size()); ++q) {
    Peer& p = peers_[q];
    if (q == rank_) continue;
    auto broke = [&](int error) {
      return absl::UnavailableError(absl::StrCat("the connection to rank ", q, " broke: ", ErrnoText(error)));
    };
    while (p.sent < p.send_total) {
      const absl::string_view pieces[] = {absl::string_view(reinterpret_cast<const char*>(&header), kHeaderBytes),
                                          mine};
      const ssize_t w = SendPieces(p.fd, pieces, p.sent);
      if (w < 0) return broke(static_cast<int>(-w));
      if (w == 0) break;
      p.sent += static_cast<size_t>(w);
      *moved = true;
    }
    while (true) {
      char* to;
      size_t want;
      if (p.received < kHeaderBytes) {
        to = reinterpret_cast<char*>(&p.header) + p.received;
        want = kHeaderBytes - p.received;
      } else {
        const size_t got = p.received - kHeaderBytes;
        if (got == p.header) break;
        to = into[q] + got;
        want = p.header - got;
      }
      const ssize_t r = ReceiveSome(p.fd, to, want);
      if (r == kPeerClosed) return absl::UnavailableError(absl::StrCat("rank ", q, " closed its connection"));
      if (r < 0) return broke(static_cast<int>(-r));
      if (r == 0) break;
      p.received += static_cast<size_t>(r);
      *moved = true;
      if (p.received == kHeaderBytes) {
        if (p.header == kAbortMark) {
          return absl::UnavailableError(absl::StrCat("rank ", q, " gave up on the communicator"));
        }
        if (p.header > capacity) {
          return absl::DataLossError(
              absl::StrCat("rank ", q, " sent a frame of ", p.header, " bytes, more than the ", capacity, " expected"));
        }
        (*lengths)[q] = p.header;
      }
    }
    if (p.sent < p.send_total || p.received < kHeaderBytes || p.received - kHeaderBytes < p.header) *finished = false;
  }
  return absl::OkStatus();
}

absl::Status FrameMesh::Exchange(absl::string_view mine, char* theirs, size_t capacity, std::vector<size_t>* lengths,
                                 absl::Time deadline, std::vector<int>* missing) {
  into_.resize(peers_.size());
  for (size_t q = 0; q < peers_.size(); ++q) into_[q] = theirs + q * capacity;
  return Exchange(mine, into_, capacity, lengths, deadline, missing, nullptr);
}

absl::Status FrameMesh::Exchange(absl::string_view mine, absl::Span<char* const> into, size_t capacity,
                                 std::vector<size_t>* lengths, absl::Time deadline, std::vector<int>* missing,
                                 const OnProgress& on_progress) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::CancelledError("the frame mesh was closed");
    exchanging_ = true;
  }
  const int world_size = static_cast<int>(peers_.size());
  lengths->assign(world_size, 0);
  for (Peer& p : peers_) {
    p.sent = p.received = 0;
    p.header = 0;
    p.send_total = kHeaderBytes + mine.size();
  }
  // The frame's bytes every peer has been sent, and the fewest any peer has delivered.
  auto report_progress = [&] {
    size_t sent = mine.size(), received = capacity;
    for (int q = 0; q < world_size; ++q) {
      const Peer& p = peers_[q];
      if (q == rank_) continue;
      sent = std::min(sent, p.sent > kHeaderBytes ? p.sent - kHeaderBytes : 0);
      received = std::min(received, p.received > kHeaderBytes ? p.received - kHeaderBytes : 0);
    }
    on_progress(sent, received);
  };
  absl::Time spin_until = absl::Now() + kSpin;
  std::vector<pollfd> polled;
  absl::Status status;
  while (true) {
    bool finished = false;
    bool moved = false;
    status = Pump(mine, into, capacity, lengths, &finished, &moved);
    if (!status.ok()) break;
    if (moved && on_progress) report_progress();
    if (finished) break;
    if (closing_.load(std::memory_order_relaxed)) {
      status = absl::CancelledError("the frame mesh was closed");
      break;
    }
    const absl::Time now = absl::Now();
    if (moved && on_progress) spin_until = now + kSpin;  // a stream under way keeps polling
    if (now >= deadline) {
      missing->clear();
      for (int q = 0; q < world_size; ++q) {
        const Peer& p = peers_[q];
        if (q != rank_ && (p.received < kHeaderBytes || p.received - kHeaderBytes < p.header)) missing->push_back(q);
      }
      status = absl::DeadlineExceededError("the exchange timed out");
      break;
    }
    if (now < spin_until) {
      sched_yield();  // a thread this one keeps from running (the rank it waits for?) goes first
      continue;
    }
    polled.clear();
    polled.push_back({wake_fd_, POLLIN, 0});
    for (int q = 0; q < world_size; ++q) {
      const Peer& p = peers_[q];
      if (q == rank_) continue;
      short events = POLLIN;  // also to see a closed connection while only sending
      if (p.sent < p.send_total) events |= POLLOUT;
      polled.push_back({p.fd, events, 0});
    }
    poll(polled.data(), polled.size(), PollTimeoutMs(deadline));
  }
  // A peer that gave up after its frame for this exchange left (it timed out waiting for
  // another rank, or for this one) has its abort mark queued behind that frame.
  for (int q = 0; status.ok() && q < world_size; ++q) {
    if (q == rank_) continue;
    uint64_t next = 0;
    if (recv(peers_[q].fd, &next, sizeof(next), MSG_PEEK | MSG_DONTWAIT) == static_cast<ssize_t>(sizeof(next)) &&
        next == kAbortMark) {
      status = absl::UnavailableError(absl::StrCat("rank ", q, " gave up on the communicator"));
    }
  }
  absl::MutexLock lock(&mu_);
  exchanging_ = false;
  if (closed_ && !shut_down_) AbortAndShutDown();
  return status;
}

void FrameMesh::Close() {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  closed_ = true;
  closing_.store(true);
  if (exchanging_) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));  // the exchange shuts down as it leaves
    return;
  }
  AbortAndShutDown();
}

void FrameMesh::AbortAndShutDown() {
  shut_down_ = true;
  for (int q = 0; q < static_cast<int>(peers_.size()); ++q) {
    Peer& p = peers_[q];
    if (q == rank_ || p.fd < 0) continue;
    if (p.sent == p.send_total) send(p.fd, &kAbortMark, sizeof(kAbortMark), MSG_DONTWAIT | MSG_NOSIGNAL);
    shutdown(p.fd, SHUT_RDWR);
  }
}

}  // namespace tsr
