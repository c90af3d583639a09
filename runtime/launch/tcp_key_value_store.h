// The launcher's rendezvous store over TCP on loopback: `TcpKeyValueStoreServer`, which
// `tessera launch` runs for the job, and `TcpKeyValueStore`, the KeyValueStore its
// workers connect with (TESSERA_COORDINATOR and TESSERA_JOB_TOKEN, world_info.h).
//
// Only rendezvous metadata (addresses, a few bytes per rank) goes through it, never
// tensors. The server binds 127.0.0.1 only. Every connection must first present the
// job's token; a wrong one is answered with an error, logged and closed, and nothing is
// served on it. Messages are framed with a 4-byte length and bounded (kMaxKeyBytes,
// kMaxValueBytes; the whole store by kMaxStoreBytes), so a garbage or hostile client
// gets its connection closed without the server allocating more than one bounded frame
// for it. One thread serves every connection (poll), so a slow or silent client delays
// nobody; a waiting Get is parked until its key is set or its deadline passes.
//
// Wire format, every message a frame `u32 big-endian length, payload`:
//   client hello:  "TSR-KV1" u32 token_length token
//   request:       'S' str key, str value            (set)
//                  'G' str key, u64 timeout_ms        (get; waits until set or timeout)
//   response:      u8 code (an absl::StatusCode), then the value (ok get) or a message
// where `str` is u32 length + bytes.
#ifndef TESSERA_RUNTIME_LAUNCH_TCP_KEY_VALUE_STORE_H_
#define TESSERA_RUNTIME_LAUNCH_TCP_KEY_VALUE_STORE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "runtime/launch/key_value_store.h"
#include "runtime/launch/world_info.h"

namespace tsr {

inline constexpr size_t kMaxKeyBytes = 4096;
inline constexpr size_t kMaxValueBytes = 1 << 20;
inline constexpr size_t kMaxStoreBytes = 64 << 20;

class TcpKeyValueStoreServer {
 public:
  struct Options {
    int port = 0;  // 0: an ephemeral port, see port()
    std::string token;
    // Where refused connections and protocol errors are reported (one line each, no
    // newline); stderr when empty. Called on the server's thread.
    std::function<void(absl::string_view)> log;
    // A connection that has not presented a token by then is closed.
    absl::Duration handshake_timeout = absl::Seconds(10);
    // Connections beyond this many are closed as soon as they are accepted.
    int max_connections = 1024;
  };

  // Binds 127.0.0.1:options.port and starts serving on a thread. InvalidArgument for an
  // empty token or one longer than kMaxJobTokenBytes; Unavailable naming the address when binding fails.
  static absl::StatusOr<std::unique_ptr<TcpKeyValueStoreServer>> Start(Options options);
  // Stops the thread and closes every connection.
  ~TcpKeyValueStoreServer();
  TcpKeyValueStoreServer(const TcpKeyValueStoreServer&) = delete;
  TcpKeyValueStoreServer& operator=(const TcpKeyValueStoreServer&) = delete;

  int port() const { return port_; }
  // Connections refused for a wrong or missing token, or a malformed hello.
  int refused_connections() const;

 private:
  class Loop;
  TcpKeyValueStoreServer(int port, std::unique_ptr<Loop> loop);

  int port_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

class TcpKeyValueStore : public KeyValueStore {
 public:
  // Connects to host:port (host must be 127.0.0.1 or "localhost") and presents `token`,
  // retrying refused connections until `connect_timeout` has passed (the server may not
  // be up yet). Unavailable naming host:port and the last error; PermissionDenied when
  // the server refuses the token.
  static absl::StatusOr<std::unique_ptr<TcpKeyValueStore>> Connect(absl::string_view host, int port, std::string token,
                                                                   absl::Duration connect_timeout = absl::Seconds(30));
  ~TcpKeyValueStore() override;

  // Thread-safe; calls from several threads use separate connections, so one thread's
  // waiting Get never delays another's Set.
  absl::Status Set(absl::string_view key, absl::string_view value) override;
  absl::StatusOr<std::string> Get(absl::string_view key, absl::Duration timeout) override;

 private:
  TcpKeyValueStore(int port, std::string token, absl::Duration connect_timeout);
  // An authenticated connection: an idle one, or a new one.
  absl::StatusOr<int> Acquire();
  void Release(int fd);
  // Sends `request` and reads the response frame, waiting at most `timeout` for it.
  absl::StatusOr<std::string> Call(absl::string_view what, const std::string& request, absl::Duration timeout);
  std::string Address() const;

  const int port_;
  const std::string token_;
  const absl::Duration connect_timeout_;
  absl::Mutex mu_;
  std::vector<int> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_LAUNCH_TCP_KEY_VALUE_STORE_H_
