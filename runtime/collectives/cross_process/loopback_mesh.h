// ConnectLoopbackMesh: a full mesh of TCP connections on 127.0.0.1 between the ranks of
// a job, made through the job's KeyValueStore -- the sockets under the frame mesh
// (frame_mesh.h) and the point-to-point streams (stream_point_to_point.h).
//
// Each rank listens on an ephemeral loopback port and publishes "<port> <secret>" under
// "<prefix>/<rank>"; rank j connects to every rank i < j and presents (magic, j, i's
// secret), which proves that it read the store -- only the job's processes can -- so a
// stray process cannot join; rank i accepts until it holds a connection from every rank
// above it and drops any whose hello is wrong (or that says nothing for a second).
#ifndef TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_LOOPBACK_MESH_H_
#define TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_LOOPBACK_MESH_H_

#include <sys/types.h>

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "runtime/launch/key_value_store.h"

namespace tsr {

// The connected sockets by rank (-1 for `rank` itself), non-blocking, close-on-exec,
// with TCP_NODELAY; the caller closes them. Waits up to `timeout`: DeadlineExceeded
// naming a rank that did not come. `prefix` must be new in `store`. Messages do not
// name the caller; callers prefix their own.
absl::StatusOr<std::vector<int>> ConnectLoopbackMesh(int rank, int world_size, KeyValueStore& store,
                                                     absl::string_view prefix, absl::Duration timeout);

// Writes what the non-blocking socket `fd` takes of the concatenated `pieces`, from
// byte `skip` on, without raising SIGPIPE: the bytes written (0 when it is full), or
// -errno when the connection is broken.
ssize_t SendPieces(int fd, absl::Span<const absl::string_view> pieces, size_t skip);

// What ReceiveSome returns when the peer has closed the connection.
inline constexpr ssize_t kPeerClosed = -0x10000;

// Reads what has come, up to `want` bytes, from the non-blocking socket `fd` into
// `into`: the bytes read (0 when nothing is there), kPeerClosed, or -errno when the
// connection is broken.
ssize_t ReceiveSome(int fd, char* into, size_t want);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_LOOPBACK_MESH_H_
