// TcpKeyValueStoreServer and TcpKeyValueStore: values across clients and threads, Get
// waiting for a later Set, timeouts naming the key, the job token, and hostile input
// (garbage, oversized frames, silent connections) that must not crash the server.
#include "runtime/launch/tcp_key_value_store.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kToken[] = "job-token-for-tests";

class TcpKeyValueStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(absl::Seconds(10)); }

  void StartServer(absl::Duration handshake_timeout) {
    server_.reset();
    TcpKeyValueStoreServer::Options options;
    options.token = kToken;
    options.handshake_timeout = handshake_timeout;
    options.log = [this](absl::string_view line) {
      absl::MutexLock lock(&mu_);
      log_.emplace_back(line);
    };
    absl::StatusOr<std::unique_ptr<TcpKeyValueStoreServer>> server = TcpKeyValueStoreServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_GT(server_->port(), 0);
  }

  std::unique_ptr<TcpKeyValueStore> Client(const std::string& token = kToken) {
    absl::StatusOr<std::unique_ptr<TcpKeyValueStore>> client =
        TcpKeyValueStore::Connect("127.0.0.1", server_->port(), token, absl::Seconds(5));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  std::string Log() {
    absl::MutexLock lock(&mu_);
    std::string all;
    for (const std::string& line : log_) absl::StrAppend(&all, line, "\n");
    return all;
  }

  // A raw socket connected to the server.
  int RawConnection() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }

  // Sends `bytes` and reads until the server closes the connection (or 10 s pass);
  // what the server sent.
  static std::string SendAndReadUntilClosed(int fd, const std::string& bytes) {
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (!bytes.empty()) send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    std::string received;
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) received.append(buffer, n);
    close(fd);
    return received;
  }

  // The server still serves a well-behaved client.
  void ExpectServing() {
    std::unique_ptr<TcpKeyValueStore> client = Client();
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->Set("alive", "yes").ok());
    absl::StatusOr<std::string> value = client->Get("alive", absl::Seconds(5));
    ASSERT_TRUE(value.ok()) << value.status();
    EXPECT_EQ(*value, "yes");
  }

  absl::Mutex mu_;
  std::vector<std::string> log_;
  std::unique_ptr<TcpKeyValueStoreServer> server_;
};

std::string U32(uint32_t v) {
  return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
}

std::string Hello(const std::string& token) {
  return U32(7 + 4 + token.size()) + "TSR-KV1" + U32(token.size()) + token;
}

TEST_F(TcpKeyValueStoreTest, SetThenGetAcrossClients) {
  std::unique_ptr<TcpKeyValueStore> a = Client(), b = Client();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Set("rank/0", "127.0.0.1:4000").ok());
  absl::StatusOr<std::string> value = b->Get("rank/0", absl::Seconds(5));
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "127.0.0.1:4000");
  // Values are bytes, and setting again replaces.
  const std::string binary("\0\xff\n\x01", 4);
  ASSERT_TRUE(b->Set("rank/0", binary).ok());
  value = a->Get("rank/0", absl::ZeroDuration());
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, binary);
  ASSERT_TRUE(a->Set("empty", "").ok());
  value = b->Get("empty", absl::Seconds(1));
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "");
}

TEST_F(TcpKeyValueStoreTest, LargestValueRoundTrips) {
  std::unique_ptr<TcpKeyValueStore> client = Client();
  ASSERT_NE(client, nullptr);
  std::string value(kMaxValueBytes, 'v');
  value[12345] = 'w';
  ASSERT_TRUE(client->Set(std::string(kMaxKeyBytes, 'k'), value).ok());
  absl::StatusOr<std::string> got = client->Get(std::string(kMaxKeyBytes, 'k'), absl::Seconds(5));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, value);
  absl::Status too_big = client->Set("big", std::string(kMaxValueBytes + 1, 'v'));
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument) << too_big;
  EXPECT_EQ(client->Set("", "v").code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(TcpKeyValueStoreTest, GetWaitsForALaterSet) {
  std::unique_ptr<TcpKeyValueStore> waiter = Client(), setter = Client();
  ASSERT_TRUE(waiter && setter);
  absl::StatusOr<std::string> value;
  std::thread t([&] { value = waiter->Get("late", absl::Seconds(20)); });
  absl::SleepFor(absl::Milliseconds(200));
  ASSERT_TRUE(setter->Set("late", "here").ok());
  t.join();
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "here");
}

TEST_F(TcpKeyValueStoreTest, GetTimesOutNamingTheKey) {
  std::unique_ptr<TcpKeyValueStore> client = Client();
  ASSERT_NE(client, nullptr);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> value = client->Get("never/set", absl::Milliseconds(300));
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_EQ(value.status().code(), absl::StatusCode::kDeadlineExceeded) << value.status();
  EXPECT_THAT(value.status().message(),
              AllOf(HasSubstr("'never/set'"), HasSubstr(absl::StrCat("127.0.0.1:", server_->port()))));
  EXPECT_GE(elapsed, absl::Milliseconds(250));
  // The connection is still usable afterwards.
  ASSERT_TRUE(client->Set("never/set", "now").ok());
  EXPECT_EQ(*client->Get("never/set", absl::ZeroDuration()), "now");
}

TEST_F(TcpKeyValueStoreTest, ManyThreadsExchangeKeys) {
  // Every thread publishes its key and reads every other's, half of them through one
  // shared client (whose waiting Gets must not block its Sets) and half through their own.
  constexpr int kThreads = 16;
  std::unique_ptr<TcpKeyValueStore> shared = Client();
  ASSERT_NE(shared, nullptr);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<TcpKeyValueStore> own;
      KeyValueStore* store = shared.get();
      if (t % 2 == 1) {
        own = Client();
        store = own.get();
      }
      if (store == nullptr) {
        failures[t] = "no client";
        return;
      }
      // Reads first (they wait), so Sets arrive while other Gets are parked.
      std::thread setter([&] {
        absl::SleepFor(absl::Milliseconds(5 * t));
        (void)store->Set(absl::StrCat("k", t), absl::StrCat("v", t));
      });
      for (int other = 0; other < kThreads; ++other) {
        absl::StatusOr<std::string> v = store->Get(absl::StrCat("k", other), absl::Seconds(30));
        if (!v.ok() || *v != absl::StrCat("v", other)) {
          failures[t] = absl::StrCat("thread ", t, " key k", other, ": ", v.ok() ? *v : v.status().ToString());
          break;
        }
      }
      setter.join();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
}

TEST_F(TcpKeyValueStoreTest, WrongTokenIsRefusedAndLogged) {
  absl::StatusOr<std::unique_ptr<TcpKeyValueStore>> stray =
      TcpKeyValueStore::Connect("127.0.0.1", server_->port(), "not-the-token", absl::Seconds(5));
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(stray.status().code(), absl::StatusCode::kPermissionDenied) << stray.status();
  EXPECT_THAT(stray.status().message(), HasSubstr(absl::StrCat("127.0.0.1:", server_->port())));
  EXPECT_THAT(Log(), HasSubstr("wrong job token"));
  EXPECT_EQ(server_->refused_connections(), 1);
  // A raw client with a wrong token gets no service: a Get after the refused hello is
  // never answered with a value.
  std::string get = "G" + U32(5) + "alive" + std::string(8, '\0');
  const std::string answer = SendAndReadUntilClosed(RawConnection(), Hello("guess") + U32(get.size()) + get);
  EXPECT_THAT(answer, HasSubstr("wrong job token"));
  EXPECT_EQ(server_->refused_connections(), 2);
  ExpectServing();
}

TEST_F(TcpKeyValueStoreTest, RequestsBeforeTheHelloAreRefused) {
  // A Set sent as the first frame is not a hello: refused, not stored.
  std::string set = "S" + U32(3) + "key" + U32(5) + "value";
  const std::string answer = SendAndReadUntilClosed(RawConnection(), U32(set.size()) + set);
  EXPECT_THAT(answer, HasSubstr("malformed hello"));
  std::unique_ptr<TcpKeyValueStore> client = Client();
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->Get("key", absl::ZeroDuration()).status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(TcpKeyValueStoreTest, GarbageAndOversizedFramesDoNotCrashTheServer) {
  // An unauthenticated 4 GiB frame header: refused before anything is allocated.
  EXPECT_THAT(SendAndReadUntilClosed(RawConnection(), std::string("\xff\xff\xff\xff", 4) + "garbage"),
              HasSubstr("not a job token"));
  // HTTP.
  EXPECT_THAT(SendAndReadUntilClosed(RawConnection(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
              HasSubstr("not a job token"));
  // Authenticated, then an oversized request, then an unknown operation, then a request
  // whose key length points past its end.
  const std::string oversized = Hello(kToken) + U32(kMaxValueBytes + kMaxKeyBytes + 100) + "S";
  EXPECT_THAT(SendAndReadUntilClosed(RawConnection(), oversized), HasSubstr("-byte request"));
  const std::string unknown = Hello(kToken) + U32(8) + "X" + U32(3) + "key";
  EXPECT_THAT(SendAndReadUntilClosed(RawConnection(), unknown), HasSubstr("unknown operation"));
  const std::string truncated = Hello(kToken) + U32(8) + "S" + U32(1000) + "abc";
  EXPECT_THAT(SendAndReadUntilClosed(RawConnection(), truncated), HasSubstr("malformed request"));
  // Random bytes, fixed seed.
  uint32_t seed = 12345;
  std::string noise;
  for (int i = 0; i < 10000; ++i) {
    seed = seed * 1664525u + 1013904223u;
    noise.push_back(static_cast<char>(seed >> 24));
  }
  SendAndReadUntilClosed(RawConnection(), noise);
  // A client that connects and disappears mid-frame.
  close(RawConnection());
  const int half = RawConnection();
  send(half, "\x00\x00", 2, MSG_NOSIGNAL);
  close(half);
  ExpectServing();
}

TEST_F(TcpKeyValueStoreTest, SilentConnectionsAreClosedAfterTheHandshakeTimeout) {
  StartServer(absl::Milliseconds(300));
  const absl::Time start = absl::Now();
  EXPECT_EQ(SendAndReadUntilClosed(RawConnection(), ""), "");
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_THAT(Log(), HasSubstr("no job token within"));
  ExpectServing();
}

TEST_F(TcpKeyValueStoreTest, AWaitingClientThatDisappearsDoesNotDisturbTheServer) {
  // A Get that its client abandons: sent raw, the socket closed while it waits; then
  // the key it waited for is set.
  const int fd = RawConnection();
  std::string get = "G" + U32(4) + "gone" + U32(0) + U32(60000);
  std::string bytes = Hello(kToken) + U32(get.size()) + get;
  send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  absl::SleepFor(absl::Milliseconds(100));
  close(fd);
  absl::SleepFor(absl::Milliseconds(100));
  std::unique_ptr<TcpKeyValueStore> client = Client();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Set("gone", "x").ok());
  ExpectServing();
}

TEST(TcpKeyValueStoreConnectTest, ErrorsNameTheAddress) {
  // A port nothing listens on (bound and closed again): refused until the deadline.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t size = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size);
  const int port = ntohs(addr.sin_port);
  close(fd);
  absl::StatusOr<std::unique_ptr<TcpKeyValueStore>> client =
      TcpKeyValueStore::Connect("127.0.0.1", port, kToken, absl::Milliseconds(300));
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(client.status().message(),
              AllOf(HasSubstr(absl::StrCat("127.0.0.1:", port)), HasSubstr("connect"), HasSubstr("refused")));

  client = TcpKeyValueStore::Connect("10.1.2.3", 29500, kToken);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), AllOf(HasSubstr("10.1.2.3:29500"), HasSubstr("loopback")));
  EXPECT_EQ(TcpKeyValueStore::Connect("127.0.0.1", 0, kToken).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TcpKeyValueStore::Connect("127.0.0.1", 80, "").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TcpKeyValueStoreConnectTest, ConnectRetriesUntilTheServerIsUp) {
  // Reserve a port, free it, and start the server on it a little later.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t size = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size);
  const int port = ntohs(addr.sin_port);
  close(fd);
  std::unique_ptr<TcpKeyValueStoreServer> server;
  std::thread starter([&] {
    absl::SleepFor(absl::Milliseconds(300));
    TcpKeyValueStoreServer::Options options;
    options.port = port;
    options.token = kToken;
    absl::StatusOr<std::unique_ptr<TcpKeyValueStoreServer>> started = TcpKeyValueStoreServer::Start(options);
    if (started.ok()) server = *std::move(started);
  });
  absl::StatusOr<std::unique_ptr<TcpKeyValueStore>> client =
      TcpKeyValueStore::Connect("localhost", port, kToken, absl::Seconds(20));
  starter.join();
  ASSERT_NE(server, nullptr) << "port " << port << " was taken meanwhile";
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Set("k", "v").ok());
}

TEST(TcpKeyValueStoreServerTest, RejectsBadOptions) {
  TcpKeyValueStoreServer::Options options;
  EXPECT_EQ(TcpKeyValueStoreServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.token = std::string(kMaxJobTokenBytes + 1, 't');
  EXPECT_EQ(TcpKeyValueStoreServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.token = "t";
  options.port = 70000;
  EXPECT_EQ(TcpKeyValueStoreServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tsr
