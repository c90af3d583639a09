// Small helpers for the plain POSIX TCP sockets that stay on this machine: the launcher's
// rendezvous store (tcp_key_value_store.h) and the collectives' frame mesh
// (collectives/cross_process/frame_mesh.h).
#ifndef TESSERA_RUNTIME_LAUNCH_LOOPBACK_SOCKET_H_
#define TESSERA_RUNTIME_LAUNCH_LOOPBACK_SOCKET_H_

#include <netinet/in.h>

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tsr {

// strerror(error) as a string.
std::string ErrnoText(int error);

// 127.0.0.1:port.
sockaddr_in LoopbackAddress(int port);

// Milliseconds until `deadline` for poll(): -1 for never, 0 once passed.
int PollTimeoutMs(absl::Time deadline);

// Compares without an early exit, so timing does not tell how much of a guess matched.
bool SecretsEqual(absl::string_view a, absl::string_view b);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_LAUNCH_LOOPBACK_SOCKET_H_
