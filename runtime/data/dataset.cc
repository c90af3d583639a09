// Dataset validation and the row gather that builds batches.
#include "runtime/data/dataset.h"

#include <cassert>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace tsr {

absl::StatusOr<Dataset> Dataset::Create(Batch features, absl::string_view source) {
  auto error = [&](absl::string_view what) { return absl::InvalidArgumentError(absl::StrCat(source, ": ", what)); };
  if (features.empty()) return error("the dataset has no features");
  absl::flat_hash_set<std::string> names;
  int64_t n = -1;
  std::string first_name;
  for (const auto& [name, tensor] : features) {
    if (name.empty()) return error("a feature has an empty name");
    if (!names.insert(name).second) return error(absl::StrCat("feature '", name, "' appears twice"));
    if (!tensor.valid()) return error(absl::StrCat("feature '", name, "' is an invalid tensor"));
    if (tensor.shape().rank() < 1) {
      return error(absl::StrCat("feature '", name, "' is a scalar; it needs a leading example dimension"));
    }
    const int64_t rows = tensor.shape().dim(0);
    if (n < 0) {
      n = rows;
      first_name = name;
    } else if (rows != n) {
      return error(absl::StrCat("feature '", name, "' has ", rows, " examples but feature '", first_name, "' has ", n,
                                "; every feature needs one entry per example"));
    }
  }
  if (n == 0) return error("the dataset is empty (0 examples)");
  Dataset d;
  d.features_ = std::move(features);
  d.num_examples_ = n;
  d.source_ = std::string(source);
  return d;
}

const Tensor* Dataset::Find(absl::string_view name) const {
  for (const auto& [feature_name, tensor] : features_) {
    if (feature_name == name) return &tensor;
  }
  return nullptr;
}

Batch Dataset::Gather(absl::Span<const int64_t> indices) const {
  Batch batch;
  batch.reserve(features_.size());
  for (const auto& [name, tensor] : features_) {
    Shape shape = tensor.shape();
    shape.set_dim(0, static_cast<int64_t>(indices.size()));
    Tensor out(tensor.dtype(), shape);
    const size_t row_bytes = num_examples_ == 0 ? 0 : tensor.num_bytes() / static_cast<size_t>(num_examples_);
    const char* src = static_cast<const char*>(tensor.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    for (size_t i = 0; i < indices.size(); ++i) {
      assert(indices[i] >= 0 && indices[i] < num_examples_);
      std::memcpy(dst + i * row_bytes, src + static_cast<size_t>(indices[i]) * row_bytes, row_bytes);
    }
    batch.emplace_back(name, std::move(out));
  }
  return batch;
}

}  // namespace tsr
