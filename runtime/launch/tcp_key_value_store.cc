// The loopback TCP rendezvous store of tcp_key_value_store.h: the server's poll loop and
// the client's framed request/response calls, on plain POSIX sockets.
#include "runtime/launch/tcp_key_value_store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/launch/loopback_socket.h"

namespace tsr {
namespace {

constexpr absl::string_view kHelloMagic = "TSR-KV1";
constexpr size_t kMaxHelloBytes = kHelloMagic.size() + 4 + kMaxJobTokenBytes;
// The largest request: 'S', then key and value with their lengths.
constexpr size_t kMaxRequestBytes = 1 + 4 + kMaxKeyBytes + 4 + kMaxValueBytes;
// The largest response: a code and a value (messages are shorter).
constexpr size_t kMaxResponseBytes = 1 + kMaxValueBytes;
// Longest Get wait a client may ask for (about 24 days); longer ones are clamped.
constexpr uint64_t kMaxWaitMs = uint64_t{1} << 31;

void AppendU32(std::string& out, uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                         static_cast<char>(v)};
  out.append(bytes, 4);
}

void AppendU64(std::string& out, uint64_t v) {
  AppendU32(out, static_cast<uint32_t>(v >> 32));
  AppendU32(out, static_cast<uint32_t>(v));
}

void AppendString(std::string& out, absl::string_view s) {
  AppendU32(out, static_cast<uint32_t>(s.size()));
  out.append(s.data(), s.size());
}

// A frame: the payload's length, then the payload.
std::string Frame(absl::string_view payload) {
  std::string frame;
  frame.reserve(4 + payload.size());
  AppendU32(frame, static_cast<uint32_t>(payload.size()));
  frame.append(payload.data(), payload.size());
  return frame;
}

uint32_t LoadU32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | uint32_t{u[3]};
}

// Reads the fields of one payload front to back; any read past the end fails.
class PayloadReader {
 public:
  explicit PayloadReader(absl::string_view payload) : rest_(payload) {}
  bool U8(uint8_t& v) {
    if (rest_.empty()) return false;
    v = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return true;
  }
  bool U32(uint32_t& v) {
    if (rest_.size() < 4) return false;
    v = LoadU32(rest_.data());
    rest_.remove_prefix(4);
    return true;
  }
  bool U64(uint64_t& v) {
    uint32_t hi = 0, lo = 0;
    if (!U32(hi) || !U32(lo)) return false;
    v = (uint64_t{hi} << 32) | lo;
    return true;
  }
  bool String(absl::string_view& s, size_t max_bytes) {
    uint32_t n = 0;
    if (!U32(n) || n > max_bytes || n > rest_.size()) return false;
    s = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }
  bool Literal(absl::string_view literal) {
    if (rest_.substr(0, literal.size()) != literal) return false;
    rest_.remove_prefix(literal.size());
    return true;
  }
  bool AtEnd() const { return rest_.empty(); }

 private:
  absl::string_view rest_;
};

std::string PeerName(const sockaddr_in& addr) {
  char host[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &addr.sin_addr, host, sizeof(host));
  return absl::StrCat(host, ":", ntohs(addr.sin_port));
}

}  // namespace

// The server's state, owned by its thread once started: the listening socket, the
// connections and the store itself.
class TcpKeyValueStoreServer::Loop {
 public:
  Loop(int listen_fd, int wake_read, int wake_write, Options options)
      : listen_fd_(listen_fd), wake_read_(wake_read), wake_write_(wake_write), options_(std::move(options)) {
    if (!options_.log) {
      options_.log = [](absl::string_view line) { std::cerr << "tessera kv store: " << line << std::endl; };
    }
  }
  ~Loop() {
    for (auto& [fd, connection] : connections_) close(fd);
    close(listen_fd_);
    close(wake_read_);
    close(wake_write_);
  }

  void Run();
  void Stop() {
    stopping_.store(true);
    const char byte = 0;
    (void)!write(wake_write_, &byte, 1);
  }
  int refused() const { return refused_.load(); }

 private:
  struct Connection {
    std::string peer;
    std::string in;   // received bytes not yet consumed as frames
    std::string out;  // the response being sent (at most one at a time)
    bool authenticated = false;
    absl::Time handshake_deadline;
    bool close_after_write = false;
    // A Get parked until its key is set or `wait_deadline`.
    bool waiting = false;
    std::string wait_key;
    absl::Time wait_deadline;
  };

  void Accept();
  // Reads what is available; false when the connection is to be closed now.
  bool Read(int fd, Connection& c);
  bool Write(int fd, Connection& c);
  // Handles complete frames while no response is pending.
  void Process(Connection& c);
  void HandleHello(Connection& c, absl::string_view payload);
  void HandleRequest(Connection& c, absl::string_view payload);
  void Respond(Connection& c, absl::StatusCode code, absl::string_view body) {
    std::string payload(1, static_cast<char>(code));
    payload.append(body.data(), body.size());
    c.out = Frame(payload);
  }
  void Refuse(Connection& c, absl::StatusCode code, absl::string_view why) {
    refused_.fetch_add(1);
    options_.log(absl::StrCat("refused a connection from ", c.peer, ": ", why));
    Respond(c, code, why);
    c.close_after_write = true;
  }
  void ProtocolError(Connection& c, absl::string_view why) {
    options_.log(absl::StrCat("closing the connection from ", c.peer, ": ", why));
    Respond(c, absl::StatusCode::kInvalidArgument, why);
    c.close_after_write = true;
  }
  // Answers the Gets parked on `key`.
  void WakeWaiters(const std::string& key, const std::string& value);
  void ExpireDeadlines();

  const int listen_fd_, wake_read_, wake_write_;
  Options options_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> refused_{0};
  absl::flat_hash_map<int, Connection> connections_;
  absl::flat_hash_map<std::string, std::string> store_;
  size_t store_bytes_ = 0;
};

void TcpKeyValueStoreServer::Loop::Run() {
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    absl::Time next_deadline = absl::InfiniteFuture();
    for (auto& [fd, c] : connections_) {
      // Input is read only between requests; a parked Get watches just for its client
      // going away (a client that sends while it waits is not read, so not buffered).
      short events = 0;
      if (!c.out.empty()) {
        events = POLLOUT;
      } else if (c.waiting) {
        events = POLLRDHUP;
      } else if (!c.close_after_write) {
        events = POLLIN;
      }
      fds.push_back({fd, events, 0});
      if (!c.authenticated) next_deadline = std::min(next_deadline, c.handshake_deadline);
      if (c.waiting) next_deadline = std::min(next_deadline, c.wait_deadline);
    }
    if (poll(fds.data(), fds.size(), PollTimeoutMs(next_deadline)) < 0 && errno != EINTR) {
      options_.log(absl::StrCat("poll failed: ", ErrnoText(errno)));
      return;
    }
    if (fds[0].revents != 0) {
      char buffer[64];
      while (read(wake_read_, buffer, sizeof(buffer)) > 0) {
      }
    }
    if (stopping_.load()) return;
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const int fd = fds[i].fd;
      auto it = connections_.find(fd);
      if (it == connections_.end()) continue;
      Connection& c = it->second;
      const short revents = fds[i].revents;
      bool keep = true;
      if (revents & POLLOUT) keep = Write(fd, c);
      if (keep && c.waiting && (revents & (POLLRDHUP | POLLHUP | POLLERR))) keep = false;
      if (keep && !c.waiting && c.out.empty() && (revents & (POLLIN | POLLHUP | POLLERR))) keep = Read(fd, c);
      if (keep) Process(c);
      if (!keep) {
        close(fd);
        connections_.erase(it);
      }
    }
    if (fds[1].revents & POLLIN) Accept();
    ExpireDeadlines();
  }
}

void TcpKeyValueStoreServer::Loop::Accept() {
  // The listening socket is non-blocking: take every pending connection.
  while (true) {
    sockaddr_in peer{};
    socklen_t peer_size = sizeof(peer);
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_size, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) options_.log(absl::StrCat("accept failed: ", ErrnoText(errno)));
      return;
    }
    if (static_cast<int>(connections_.size()) >= options_.max_connections) {
      refused_.fetch_add(1);
      options_.log(absl::StrCat("refused a connection from ", PeerName(peer), ": already ", connections_.size(),
                                " connections"));
      close(fd);
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    Connection& c = connections_[fd];
    c.peer = PeerName(peer);
    c.handshake_deadline = absl::Now() + options_.handshake_timeout;
  }
}

bool TcpKeyValueStoreServer::Loop::Read(int fd, Connection& c) {
  // Never more than one frame plus one read is buffered: the frame's length is checked
  // as soon as its header arrives (Process), before its payload is read.
  char buffer[64 * 1024];
  const ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  if (n > 0) {
    c.in.append(buffer, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  return false;  // closed by the peer, or an error: nothing to answer
}

bool TcpKeyValueStoreServer::Loop::Write(int fd, Connection& c) {
  const ssize_t n = send(fd, c.out.data(), c.out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  c.out.erase(0, static_cast<size_t>(n));
  if (!c.out.empty() || !c.close_after_write) return true;
  // Closing with unread input would reset the connection, and the client could lose the
  // answer saying why: end the stream and discard what is already there first.
  shutdown(fd, SHUT_WR);
  char discard[4096];
  for (int i = 0; i < 16 && recv(fd, discard, sizeof(discard), MSG_DONTWAIT) > 0; ++i) {
  }
  return false;
}

void TcpKeyValueStoreServer::Loop::Process(Connection& c) {
  while (c.out.empty() && !c.waiting && !c.close_after_write && c.in.size() >= 4) {
    const size_t length = LoadU32(c.in.data());
    const size_t limit = c.authenticated ? kMaxRequestBytes : kMaxHelloBytes;
    if (length > limit) {
      if (!c.authenticated) {
        Refuse(c, absl::StatusCode::kPermissionDenied, absl::StrCat("a ", length, "-byte hello, not a job token"));
      } else {
        ProtocolError(c, absl::StrCat("a ", length, "-byte request; the limit is ", limit));
      }
      c.in.clear();
      return;
    }
    if (c.in.size() < 4 + length) return;
    const std::string payload = c.in.substr(4, length);
    c.in.erase(0, 4 + length);
    if (c.authenticated) {
      HandleRequest(c, payload);
    } else {
      HandleHello(c, payload);
    }
  }
}

void TcpKeyValueStoreServer::Loop::HandleHello(Connection& c, absl::string_view payload) {
  PayloadReader reader(payload);
  absl::string_view token;
  if (!reader.Literal(kHelloMagic) || !reader.String(token, kMaxJobTokenBytes) || !reader.AtEnd()) {
    Refuse(c, absl::StatusCode::kPermissionDenied, "a malformed hello (not a Tessera store client)");
    return;
  }
  if (!SecretsEqual(token, options_.token)) {
    Refuse(c, absl::StatusCode::kPermissionDenied, "wrong job token");
    return;
  }
  c.authenticated = true;
  Respond(c, absl::StatusCode::kOk, "");
}

void TcpKeyValueStoreServer::Loop::HandleRequest(Connection& c, absl::string_view payload) {
  PayloadReader reader(payload);
  uint8_t op = 0;
  absl::string_view key;
  if (!reader.U8(op) || !reader.String(key, kMaxKeyBytes) || key.empty()) {
    ProtocolError(c, "a malformed request (expected an operation and a key of 1 to 4096 bytes)");
    return;
  }
  if (op == 'S') {
    absl::string_view value;
    if (!reader.String(value, kMaxValueBytes) || !reader.AtEnd()) {
      ProtocolError(c, absl::StrCat("a malformed set of key '", key, "'"));
      return;
    }
    auto it = store_.find(key);
    const size_t old_bytes = it == store_.end() ? 0 : key.size() + it->second.size();
    if (store_bytes_ - old_bytes + key.size() + value.size() > kMaxStoreBytes) {
      Respond(c, absl::StatusCode::kResourceExhausted,
              absl::StrCat("set of key '", key, "' refused: the store holds at most ", kMaxStoreBytes, " bytes"));
      return;
    }
    store_bytes_ = store_bytes_ - old_bytes + key.size() + value.size();
    const std::string key_string(key);
    store_[key_string] = std::string(value);
    Respond(c, absl::StatusCode::kOk, "");
    WakeWaiters(key_string, store_[key_string]);
    return;
  }
  if (op == 'G') {
    uint64_t timeout_ms = 0;
    if (!reader.U64(timeout_ms) || !reader.AtEnd()) {
      ProtocolError(c, absl::StrCat("a malformed get of key '", key, "'"));
      return;
    }
    auto it = store_.find(key);
    if (it != store_.end()) {
      Respond(c, absl::StatusCode::kOk, it->second);
      return;
    }
    c.waiting = true;
    c.wait_key = std::string(key);
    c.wait_deadline = absl::Now() + absl::Milliseconds(std::min(timeout_ms, kMaxWaitMs));
    return;  // ExpireDeadlines answers a Get that is already past its deadline
  }
  ProtocolError(c, absl::StrCat("unknown operation ", static_cast<int>(op)));
}

void TcpKeyValueStoreServer::Loop::WakeWaiters(const std::string& key, const std::string& value) {
  for (auto& [fd, c] : connections_) {
    if (!c.waiting || c.wait_key != key) continue;
    c.waiting = false;
    Respond(c, absl::StatusCode::kOk, value);
  }
}

void TcpKeyValueStoreServer::Loop::ExpireDeadlines() {
  const absl::Time now = absl::Now();
  std::vector<int> expired;
  for (auto& [fd, c] : connections_) {
    if (!c.authenticated && !c.close_after_write && now >= c.handshake_deadline) {
      refused_.fetch_add(1);
      options_.log(absl::StrCat("closed the connection from ", c.peer, ": no job token within ",
                                absl::FormatDuration(options_.handshake_timeout)));
      expired.push_back(fd);
    } else if (c.waiting && now >= c.wait_deadline) {
      c.waiting = false;
      Respond(c, absl::StatusCode::kDeadlineExceeded, absl::StrCat("key '", c.wait_key, "' was not set in time"));
    }
  }
  for (int fd : expired) {
    close(fd);
    connections_.erase(fd);
  }
}

absl::StatusOr<std::unique_ptr<TcpKeyValueStoreServer>> TcpKeyValueStoreServer::Start(Options options) {
  if (options.token.empty() || options.token.size() > kMaxJobTokenBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the store's job token has ", options.token.size(), " bytes; expected 1 to ", kMaxJobTokenBytes));
  }
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port ", options.port, " is not in [0, 65535]"));
  }
  const std::string address = absl::StrCat(kLoopbackHost, ":", options.port);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("store ", address, ": socket: ", ErrnoText(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr = LoopbackAddress(options.port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, SOMAXCONN) != 0) {
    const int error = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("store ", address, ": cannot listen: ", ErrnoText(error)));
  }
  socklen_t size = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int error = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("store ", address, ": pipe: ", ErrnoText(error)));
  }
  auto loop = std::make_unique<Loop>(fd, wake[0], wake[1], std::move(options));
  return std::unique_ptr<TcpKeyValueStoreServer>(new TcpKeyValueStoreServer(ntohs(addr.sin_port), std::move(loop)));
}

TcpKeyValueStoreServer::TcpKeyValueStoreServer(int port, std::unique_ptr<Loop> loop)
    : port_(port), loop_(std::move(loop)) {
  thread_ = std::thread([this] { loop_->Run(); });
}

TcpKeyValueStoreServer::~TcpKeyValueStoreServer() {
  loop_->Stop();
  thread_.join();
}

int TcpKeyValueStoreServer::refused_connections() const { return loop_->refused(); }

// ---------------------------------------------------------------------------------------
// The client.

namespace {

// Sends all of `bytes` before `deadline`.
absl::Status SendAll(int fd, absl::string_view bytes, absl::Time deadline) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      const int ready = poll(&p, 1, PollTimeoutMs(deadline));
      if (ready == 0) return absl::DeadlineExceededError("sending timed out");
      continue;
    }
    return absl::UnavailableError(absl::StrCat("send: ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

// Receives exactly `n` bytes into `out` before `deadline`.
absl::Status ReceiveExactly(int fd, size_t n, std::string& out, absl::Time deadline) {
  out.resize(n);
  size_t done = 0;
  while (done < n) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, PollTimeoutMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return absl::DeadlineExceededError("no answer in time");
    const ssize_t got = recv(fd, out.data() + done, n - done, MSG_DONTWAIT);
    if (got == 0) return absl::UnavailableError("the connection was closed by the store");
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("recv: ", ErrnoText(errno)));
    }
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

// One response frame (bounded), before `deadline`.
absl::StatusOr<std::string> ReceiveFrame(int fd, absl::Time deadline) {
  std::string header;
  TSR_RETURN_IF_ERROR(ReceiveExactly(fd, 4, header, deadline));
  const size_t length = LoadU32(header.data());
  if (length == 0 || length > kMaxResponseBytes) {
    return absl::DataLossError(absl::StrCat("a ", length, "-byte response; not a Tessera store"));
  }
  std::string payload;
  TSR_RETURN_IF_ERROR(ReceiveExactly(fd, length, payload, deadline));
  return payload;
}

// The status a response carries; its body (the value of a Get) when ok.
absl::StatusOr<std::string> DecodeResponse(std::string payload) {
  const int raw_code = static_cast<unsigned char>(payload[0]);
  if (raw_code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::DataLossError(absl::StrCat("a response with status code ", raw_code, "; not a Tessera store"));
  }
  const auto code = static_cast<absl::StatusCode>(raw_code);
  payload.erase(0, 1);
  if (code == absl::StatusCode::kOk) return payload;
  return absl::Status(code, payload);
}

}  // namespace

TcpKeyValueStore::TcpKeyValueStore(int port, std::string token, absl::Duration connect_timeout)
    : port_(port), token_(std::move(token)), connect_timeout_(connect_timeout) {}

TcpKeyValueStore::~TcpKeyValueStore() {
  absl::MutexLock lock(&mu_);
  for (int fd : idle_) close(fd);
}

std::string TcpKeyValueStore::Address() const { return absl::StrCat(kLoopbackHost, ":", port_); }

absl::StatusOr<std::unique_ptr<TcpKeyValueStore>> TcpKeyValueStore::Connect(absl::string_view host, int port,
                                                                            std::string token,
                                                                            absl::Duration connect_timeout) {
  if (host != kLoopbackHost && host != "localhost") {
    return absl::InvalidArgumentError(
        absl::StrCat("store ", host, ":", port, ": only the loopback address ", kLoopbackHost, " is allowed"));
  }
  if (port < 1 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("store ", host, ":", port, ": port not in [1, 65535]"));
  }
  if (token.empty() || token.size() > kMaxJobTokenBytes) {
    return absl::InvalidArgumentError(absl::StrCat("store ", host, ":", port, ": the job token has ", token.size(),
                                                   " bytes; expected 1 to ", kMaxJobTokenBytes));
  }
  std::unique_ptr<TcpKeyValueStore> store(new TcpKeyValueStore(port, std::move(token), connect_timeout));
  TSR_ASSIGN_OR_RETURN(int fd, store->Acquire());
  store->Release(fd);
  return store;
}

absl::StatusOr<int> TcpKeyValueStore::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      const int fd = idle_.back();
      idle_.pop_back();
      return fd;
    }
  }
  const absl::Time deadline = absl::Now() + connect_timeout_;
  absl::Duration backoff = absl::Milliseconds(20);
  std::string last_error;
  while (true) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::UnavailableError(absl::StrCat("store ", Address(), ": socket: ", ErrnoText(errno)));
    sockaddr_in addr = LoopbackAddress(port_);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::string hello(kHelloMagic);
      AppendString(hello, token_);
      // The handshake gets its own few seconds even when the connect deadline is near.
      const absl::Time hello_deadline = std::max(deadline, absl::Now() + absl::Seconds(5));
      absl::Status sent = SendAll(fd, Frame(hello), hello_deadline);
      absl::StatusOr<std::string> answer = sent.ok() ? ReceiveFrame(fd, hello_deadline) : sent;
      if (answer.ok()) {
        absl::StatusOr<std::string> accepted = DecodeResponse(*std::move(answer));
        if (accepted.ok()) return fd;
        close(fd);
        return absl::PermissionDeniedError(
            absl::StrCat("store ", Address(), " refused this client: ", accepted.status().message()));
      }
      last_error = absl::StrCat("handshake: ", answer.status().message());
    } else {
      last_error = absl::StrCat("connect: ", ErrnoText(errno));
    }
    close(fd);
    if (absl::Now() + backoff > deadline) break;
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Milliseconds(500));
  }
  return absl::UnavailableError(absl::StrCat("store ", Address(), ": could not connect within ",
                                             absl::FormatDuration(connect_timeout_), " (", last_error, ")"));
}

void TcpKeyValueStore::Release(int fd) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(fd);
}

absl::StatusOr<std::string> TcpKeyValueStore::Call(absl::string_view what, const std::string& request,
                                                   absl::Duration timeout) {
  TSR_ASSIGN_OR_RETURN(int fd, Acquire());
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status sent = SendAll(fd, Frame(request), deadline);
  absl::StatusOr<std::string> response = sent.ok() ? ReceiveFrame(fd, deadline) : sent;
  if (!response.ok()) {
    // The connection is in an unknown state (half a frame may be in flight): drop it.
    close(fd);
    return absl::Status(response.status().code(),
                        absl::StrCat("store ", Address(), ": ", what, ": ", response.status().message()));
  }
  Release(fd);
  absl::StatusOr<std::string> decoded = DecodeResponse(*std::move(response));
  if (!decoded.ok()) {
    return absl::Status(decoded.status().code(),
                        absl::StrCat("store ", Address(), ": ", what, ": ", decoded.status().message()));
  }
  return decoded;
}

absl::Status TcpKeyValueStore::Set(absl::string_view key, absl::string_view value) {
  if (key.empty() || key.size() > kMaxKeyBytes || value.size() > kMaxValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat("store ", Address(), ": set of key '", key.substr(0, 64),
                                                   "': keys have 1 to ", kMaxKeyBytes, " bytes, values at most ",
                                                   kMaxValueBytes));
  }
  std::string request = "S";
  AppendString(request, key);
  AppendString(request, value);
  return Call(absl::StrCat("set '", key, "'"), request, connect_timeout_).status();
}

absl::StatusOr<std::string> TcpKeyValueStore::Get(absl::string_view key, absl::Duration timeout) {
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat("store ", Address(), ": get of key '", key.substr(0, 64),
                                                   "': keys have 1 to ", kMaxKeyBytes, " bytes"));
  }
  const uint64_t timeout_ms =
      timeout <= absl::ZeroDuration()
          ? 0
          : std::min<uint64_t>(static_cast<uint64_t>(absl::ToInt64Milliseconds(timeout)), kMaxWaitMs);
  std::string request = "G";
  AppendString(request, key);
  AppendU64(request, timeout_ms);
  // The store answers DeadlineExceeded itself at `timeout`; the extra time only covers a
  // store that stopped answering.
  absl::StatusOr<std::string> value =
      Call(absl::StrCat("get '", key, "'"), request, timeout + absl::Seconds(10) + connect_timeout_);
  if (absl::IsDeadlineExceeded(value.status())) {
    return absl::DeadlineExceededError(
        absl::StrCat("store ", Address(), ": key '", key, "' was not set within ", absl::FormatDuration(timeout)));
  }
  return value;
}

}  // namespace tsr
