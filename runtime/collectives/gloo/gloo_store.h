// `GlooStore`: a tsr::KeyValueStore seen as Gloo's rendezvous store, so that Gloo's
// full-mesh connection set-up publishes and looks up addresses through the job's store.
// Gloo reports store failures by exception: a failed Set or Get throws a
// GlooStoreError that carries the store's status (a Get that times out: DeadlineExceeded
// naming the key).
#ifndef TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_STORE_H_
#define TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_STORE_H_

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "runtime/launch/key_value_store.h"

namespace tsr {

class GlooStoreError : public std::runtime_error {
 public:
  explicit GlooStoreError(absl::Status status)
      : std::runtime_error(std::string(status.message())), status_(std::move(status)) {}
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

class GlooStore : public gloo::rendezvous::Store {
 public:
  // Gets wait up to `timeout` for their key unless Gloo gives a timeout of its own.
  GlooStore(KeyValueStore& store, absl::Duration timeout) : store_(store), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  KeyValueStore& store_;
  const absl::Duration timeout_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_STORE_H_
