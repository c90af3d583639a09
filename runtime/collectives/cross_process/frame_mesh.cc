// The frame mesh of frame_mesh.h: its loopback rendezvous and the exchange's
// non-blocking pump over every peer's stream.
#include "runtime/collectives/cross_process/frame_mesh.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/status_macros.h"
#include "runtime/launch/loopback_socket.h"

namespace tsr {
namespace {

constexpr char kHelloMagic[8] = {'T', 'S', 'R', '-', 'F', 'R', 'M', '1'};
constexpr size_t kHeaderBytes = sizeof(uint64_t);
// Sent in place of a frame's length by a rank that gives up on the mesh.
constexpr uint64_t kAbortMark = ~uint64_t{0};

// What a connecting rank presents: the magic, its rank and the secret the accepting rank
// published.
struct Hello {
  char magic[8];
  uint32_t rank;
  uint32_t reserved;
  uint64_t secret;
};

std::string Key(absl::string_view prefix, int rank) { return absl::StrCat(prefix, "/frames/", rank); }

uint64_t RandomSecret() {
  std::random_device device;  // /dev/urandom
  return (uint64_t{device()} << 32) | device();
}

// Closes the descriptors it holds unless they were released.
class FdGuard {
 public:
  ~FdGuard() {
    for (int fd : fds_) close(fd);
  }
  int Hold(int fd) {
    fds_.push_back(fd);
    return fd;
  }
  void Forget(int fd) { std::erase(fds_, fd); }

 private:
  std::vector<int> fds_;
};

void SetNoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Reads exactly `n` bytes from the non-blocking `fd` by `deadline`.
bool ReadExactly(int fd, char* out, size_t n, absl::Time deadline) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = recv(fd, out + got, n - got, MSG_DONTWAIT);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0 || (errno != EAGAIN && errno != EINTR)) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, PollTimeoutMs(deadline)) == 0) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<FrameMesh>> FrameMesh::Connect(int rank, int world_size, KeyValueStore& store,
                                                              absl::string_view prefix, absl::Duration timeout) {
  const std::string who = absl::StrCat("frame mesh '", prefix, "' rank ", rank, " of ", world_size);
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": the rank must be in [0, world size)"));
  }
  const absl::Time deadline = absl::Now() + timeout;
  FdGuard guard;
  std::vector<Peer> peers(world_size);
  if (world_size > 1) {
    const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listener < 0) return absl::UnavailableError(absl::StrCat(who, ": socket: ", ErrnoText(errno)));
    guard.Hold(listener);
    sockaddr_in addr = LoopbackAddress(0);
    socklen_t size = sizeof(addr);
    if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(listener, SOMAXCONN) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
      return absl::UnavailableError(absl::StrCat(who, ": cannot listen on 127.0.0.1: ", ErrnoText(errno)));
    }
    const uint64_t secret = RandomSecret();
    TSR_RETURN_IF_ERROR(store.Set(Key(prefix, rank), absl::StrCat(ntohs(addr.sin_port), " ", secret)));

    // Connect to every rank below this one.
    for (int q = 0; q < rank; ++q) {
      absl::StatusOr<std::string> published = store.Get(Key(prefix, q), deadline - absl::Now());
      if (!published.ok()) {
        if (published.status().code() == absl::StatusCode::kDeadlineExceeded) {
          return absl::DeadlineExceededError(
              absl::StrCat(who, ": rank ", q, " did not arrive within ", absl::FormatDuration(timeout)));
        }
        return published.status();
      }
      std::vector<absl::string_view> fields = absl::StrSplit(*published, ' ');
      int port = 0;
      uint64_t their_secret = 0;
      if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &port) || port < 1 || port > 65535 ||
          !absl::SimpleAtoi(fields[1], &their_secret)) {
        return absl::DataLossError(
            absl::StrCat(who, ": rank ", q, " published '", *published, "' where '<port> <secret>' was expected"));
      }
      const int fd = guard.Hold(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in to = LoopbackAddress(port);
      if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
        return absl::UnavailableError(
            absl::StrCat(who, ": cannot connect to rank ", q, " at 127.0.0.1:", port, ": ", ErrnoText(errno)));
      }
      Hello hello{};
      std::memcpy(hello.magic, kHelloMagic, sizeof(kHelloMagic));
      hello.rank = static_cast<uint32_t>(rank);
      hello.secret = their_secret;
      if (send(fd, &hello, sizeof(hello), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(hello))) {
        return absl::UnavailableError(absl::StrCat(who, ": greeting rank ", q, " failed: ", ErrnoText(errno)));
      }
      SetNoDelay(fd);
      peers[q].fd = fd;
    }

    // Accept every rank above this one; a connection whose hello is wrong is dropped.
    int expected = world_size - 1 - rank;
    while (expected > 0) {
      pollfd p{listener, POLLIN, 0};
      if (poll(&p, 1, PollTimeoutMs(deadline)) == 0) {
        std::vector<int> missing;
        for (int q = rank + 1; q < world_size; ++q) {
          if (peers[q].fd < 0) missing.push_back(q);
        }
        return absl::DeadlineExceededError(absl::StrCat(who, ": rank", missing.size() > 1 ? "s " : " ",
                                                        absl::StrJoin(missing, ", "), " did not connect within ",
                                                        absl::FormatDuration(timeout)));
      }
      const int fd = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) continue;
      Hello hello{};
      // A stray client that connects and says nothing holds the rendezvous up for at most
      // a second.
      const bool read = ReadExactly(fd, reinterpret_cast<char*>(&hello), sizeof(hello),
                                    std::min(deadline, absl::Now() + absl::Seconds(1)));
      const int from = static_cast<int>(hello.rank);
      if (!read || std::memcmp(hello.magic, kHelloMagic, sizeof(kHelloMagic)) != 0 || from <= rank ||
          from >= world_size || peers[from].fd >= 0 ||
          !SecretsEqual(absl::string_view(reinterpret_cast<const char*>(&hello.secret), sizeof(secret)),
                        absl::string_view(reinterpret_cast<const char*>(&secret), sizeof(secret)))) {
        close(fd);
        continue;
      }
      guard.Hold(fd);
      SetNoDelay(fd);
      peers[from].fd = fd;
      --expected;
    }
  }
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) return absl::UnavailableError(absl::StrCat(who, ": eventfd: ", ErrnoText(errno)));
  for (int q = 0; q < world_size; ++q) {
    if (peers[q].fd < 0) continue;
    guard.Forget(peers[q].fd);
    // Non-blocking from here on: the exchange pumps every stream in turn.
    const int flags = fcntl(peers[q].fd, F_GETFL);
    fcntl(peers[q].fd, F_SETFL, flags | O_NONBLOCK);
  }
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

absl::Status FrameMesh::Pump(absl::string_view mine, char* theirs, size_t capacity, std::vector<size_t>* lengths,
                             bool* finished) {
  const uint64_t header = mine.size();
  *finished = true;
  for (int q = 0; q < static_cast<int>(peers_.size()); ++q) {
    Peer& p = peers_[q];
    if (q == rank_) continue;
    auto broke = [&](int error) {
      return absl::UnavailableError(absl::StrCat("the connection to rank ", q, " broke: ", ErrnoText(error)));
    };
    while (p.sent < p.send_total) {
      iovec iov[2];
      int n = 0;
      if (p.sent < kHeaderBytes) {
        iov[n++] = {reinterpret_cast<char*>(const_cast<uint64_t*>(&header)) + p.sent, kHeaderBytes - p.sent};
      }
      const size_t offset = p.sent > kHeaderBytes ? p.sent - kHeaderBytes : 0;
      if (offset < mine.size()) iov[n++] = {const_cast<char*>(mine.data()) + offset, mine.size() - offset};
      msghdr message{};
      message.msg_iov = iov;
      message.msg_iovlen = n;
      const ssize_t w = sendmsg(p.fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        return broke(errno);
      }
      p.sent += static_cast<size_t>(w);
    }
    while (true) {
      char* into;
      size_t want;
      if (p.received < kHeaderBytes) {
        into = reinterpret_cast<char*>(&p.header) + p.received;
        want = kHeaderBytes - p.received;
      } else {
        const size_t got = p.received - kHeaderBytes;
        if (got == p.header) break;
        into = theirs + static_cast<size_t>(q) * capacity + got;
        want = p.header - got;
      }
      const ssize_t r = recv(p.fd, into, want, MSG_DONTWAIT);
      if (r == 0) return absl::UnavailableError(absl::StrCat("rank ", q, " closed its connection"));
      if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        return broke(errno);
      }
      p.received += static_cast<size_t>(r);
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
  const absl::Time spin_until = absl::Now() + kSpin;
  std::vector<pollfd> polled;
  absl::Status status;
  while (true) {
    bool finished = false;
    status = Pump(mine, theirs, capacity, lengths, &finished);
    if (!status.ok() || finished) break;
    if (closing_.load(std::memory_order_relaxed)) {
      status = absl::CancelledError("the frame mesh was closed");
      break;
    }
    const absl::Time now = absl::Now();
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
