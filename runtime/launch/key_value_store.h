// `KeyValueStore`: the small shared dictionary that the ranks of one job use to find
// each other at start-up (rendezvous): a backend that needs addresses exchanged (Gloo's
// full mesh) publishes its own under a key and waits for the others' keys. Values are
// bytes; keys are set once per job. Implementations: a directory on a shared file system
// (file_key_value_store.h) and the launcher's TCP store on loopback
// (tcp_key_value_store.h), which only processes holding the job's token can use.
//
// Never a channel for tensors: collectives move data through MPI, Gloo or NCCL.
#ifndef TESSERA_RUNTIME_LAUNCH_KEY_VALUE_STORE_H_
#define TESSERA_RUNTIME_LAUNCH_KEY_VALUE_STORE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tsr {

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;

  // Publishes `value` under `key`; visible to every other client once this returns.
  // Setting a key again replaces its value.
  virtual absl::Status Set(absl::string_view key, absl::string_view value) = 0;
  // The value of `key`, waiting up to `timeout` for some client to set it;
  // DeadlineExceeded naming the key otherwise.
  virtual absl::StatusOr<std::string> Get(absl::string_view key, absl::Duration timeout) = 0;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_LAUNCH_KEY_VALUE_STORE_H_
