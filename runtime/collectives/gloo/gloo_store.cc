// GlooStore: KeyValueStore calls behind Gloo's rendezvous store interface.
#include "runtime/collectives/gloo/gloo_store.h"

#include <algorithm>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"

namespace tsr {

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  absl::Status status = store_.Set(key, absl::string_view(data.data(), data.size()));
  if (!status.ok()) throw GlooStoreError(std::move(status));
}

std::vector<char> GlooStore::get(const std::string& key) {
  absl::StatusOr<std::string> value = store_.Get(key, timeout_);
  if (!value.ok()) throw GlooStoreError(value.status());
  return std::vector<char>(value->begin(), value->end());
}

void GlooStore::wait(const std::vector<std::string>& keys) {
  wait(keys, std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout_)));
}

void GlooStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  const absl::Time deadline = absl::Now() + absl::FromChrono(timeout);
  for (const std::string& key : keys) {
    absl::StatusOr<std::string> value = store_.Get(key, std::max(absl::ZeroDuration(), deadline - absl::Now()));
    if (!value.ok()) throw GlooStoreError(value.status());
  }
}

}  // namespace tsr
