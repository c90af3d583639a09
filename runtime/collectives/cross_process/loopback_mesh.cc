// The loopback mesh rendezvous of loopback_mesh.h, on plain POSIX sockets.
#include "runtime/collectives/cross_process/loopback_mesh.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/status_macros.h"
#include "runtime/launch/loopback_socket.h"

namespace tsr {
namespace {

constexpr char kHelloMagic[8] = {'T', 'S', 'R', '-', 'F', 'R', 'M', '1'};
// What a connecting rank presents: the magic, its rank and the secret the accepting rank
// published.
struct Hello {
  char magic[8];
  uint32_t rank;
  uint32_t reserved;
  uint64_t secret;
};

std::string Key(absl::string_view prefix, int rank) { return absl::StrCat(prefix, "/", rank); }

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
    const ssize_t r = ReceiveSome(fd, out + got, n - got);
    if (r < 0) return false;  // closed or broken
    got += static_cast<size_t>(r);
    if (r > 0) continue;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, PollTimeoutMs(deadline)) == 0) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<int>> ConnectLoopbackMesh(int rank, int world_size, KeyValueStore& store,
                                                     absl::string_view prefix, absl::Duration timeout) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError("the rank must be in [0, world size)");
  }
  const absl::Time deadline = absl::Now() + timeout;
  FdGuard guard;
  std::vector<int> fds(world_size, -1);
  if (world_size > 1) {
    const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listener < 0) return absl::UnavailableError(absl::StrCat("socket: ", ErrnoText(errno)));
    guard.Hold(listener);
    sockaddr_in addr = LoopbackAddress(0);
    socklen_t size = sizeof(addr);
    if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(listener, SOMAXCONN) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot listen on 127.0.0.1: ", ErrnoText(errno)));
    }
    const uint64_t secret = RandomSecret();
    TSR_RETURN_IF_ERROR(store.Set(Key(prefix, rank), absl::StrCat(ntohs(addr.sin_port), " ", secret)));

    // Connect to every rank below this one.
    for (int q = 0; q < rank; ++q) {
      absl::StatusOr<std::string> published = store.Get(Key(prefix, q), deadline - absl::Now());
      if (!published.ok()) {
        if (published.status().code() == absl::StatusCode::kDeadlineExceeded) {
          return absl::DeadlineExceededError(
              absl::StrCat("rank ", q, " did not arrive within ", absl::FormatDuration(timeout)));
        }
        return published.status();
      }
      std::vector<absl::string_view> fields = absl::StrSplit(*published, ' ');
      int port = 0;
      uint64_t their_secret = 0;
      if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &port) || port < 1 || port > 65535 ||
          !absl::SimpleAtoi(fields[1], &their_secret)) {
        return absl::DataLossError(
            absl::StrCat("rank ", q, " published '", *published, "' where '<port> <secret>' was expected"));
      }
      const int fd = guard.Hold(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in to = LoopbackAddress(port);
      if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
        return absl::UnavailableError(
            absl::StrCat("cannot connect to rank ", q, " at 127.0.0.1:", port, ": ", ErrnoText(errno)));
      }
      Hello hello{};
      std::memcpy(hello.magic, kHelloMagic, sizeof(kHelloMagic));
      hello.rank = static_cast<uint32_t>(rank);
      hello.secret = their_secret;
      if (send(fd, &hello, sizeof(hello), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(hello))) {
        return absl::UnavailableError(absl::StrCat("greeting rank ", q, " failed: ", ErrnoText(errno)));
      }
      SetNoDelay(fd);
      fds[q] = fd;
    }

    // Accept every rank above this one; a connection whose hello is wrong is dropped.
    int expected = world_size - 1 - rank;
    while (expected > 0) {
      pollfd p{listener, POLLIN, 0};
      if (poll(&p, 1, PollTimeoutMs(deadline)) == 0) {
        std::vector<int> missing;
        for (int q = rank + 1; q < world_size; ++q) {
          if (fds[q] < 0) missing.push_back(q);
        }
        return absl::DeadlineExceededError(absl::StrCat("rank", missing.size() > 1 ? "s " : " ",
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
          from >= world_size || fds[from] >= 0 ||
          !SecretsEqual(absl::string_view(reinterpret_cast<const char*>(&hello.secret), sizeof(secret)),
                        absl::string_view(reinterpret_cast<const char*>(&secret), sizeof(secret)))) {
        close(fd);
        continue;
      }
      guard.Hold(fd);
      SetNoDelay(fd);
      fds[from] = fd;
      --expected;
    }
  }
  for (int q = 0; q < world_size; ++q) {
    if (fds[q] < 0) continue;
    guard.Forget(fds[q]);
    const int flags = fcntl(fds[q], F_GETFL);
    fcntl(fds[q], F_SETFL, flags | O_NONBLOCK);
  }
  return fds;
}

ssize_t SendPieces(int fd, absl::Span<const absl::string_view> pieces, size_t skip) {
  iovec iov[4];
  int n = 0;
  for (absl::string_view piece : pieces) {
    if (skip >= piece.size()) {
      skip -= piece.size();
      continue;
    }
    if (n == 4) break;
    iov[n++] = {const_cast<char*>(piece.data()) + skip, piece.size() - skip};
    skip = 0;
  }
  if (n == 0) return 0;
  msghdr message{};
  message.msg_iov = iov;
  message.msg_iovlen = n;
  while (true) {
    const ssize_t w = sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w >= 0) return w;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
  }
}

ssize_t ReceiveSome(int fd, char* into, size_t want) {
  while (true) {
    const ssize_t r = recv(fd, into, want, MSG_DONTWAIT);
    if (r > 0) return r;
    if (r == 0) return kPeerClosed;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
  }
}

}  // namespace tsr
