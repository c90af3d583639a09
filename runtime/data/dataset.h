// `Dataset`: the examples of a training or evaluation set held in memory, as named
// feature tensors ("image" [n, 1, 28, 28], "labels" [n]) that share the leading example
// dimension n. Readers (idx_reader.h, csv_reader.h, npy_dataset.h) produce one;
// `Pipeline` (pipeline.h) shuffles, shards and batches it.
//
// Why in memory rather than streaming: the formats we read (IDX, .npy, CSV) are whole
// arrays — gzip and CSV cannot be seeked to example i — and the datasets they hold fit
// in memory (Fashion-MNIST's training images are 47 MB as f32). Holding the examples
// gives exact, cheap global shuffling that is deterministic in (seed, epoch) and
// independent of the worker count, which a streaming shuffle buffer does not. A
// streaming source for datasets larger than memory would be a second producer of
// batches behind the same EpochIterator interface; nothing here prevents it.
//
// A Dataset is immutable once created, so a Pipeline and its prefetch thread can share
// it without locks.
#ifndef TESSERA_RUNTIME_DATA_DATASET_H_
#define TESSERA_RUNTIME_DATA_DATASET_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/tensor.h"

namespace tsr {

// Named tensors, in the form Session::Run takes as feeds.
using Batch = std::vector<std::pair<std::string, Tensor>>;

// Feature names used by the MNIST, CSV and npy readers.
inline constexpr absl::string_view kImageFeature = "image";
inline constexpr absl::string_view kFeaturesFeature = "features";
inline constexpr absl::string_view kLabelsFeature = "labels";

class Dataset {
 public:
  // Checks that there is at least one feature, names are non-empty and distinct, every
  // tensor is valid with rank >= 1, and all share a leading dimension n >= 1.
  // `source` (a file or folder) starts every error message and is kept for later ones.
  static absl::StatusOr<Dataset> Create(Batch features, absl::string_view source);

  int64_t num_examples() const { return num_examples_; }
  const Batch& features() const { return features_; }
  const std::string& source() const { return source_; }

  // The tensor of feature `name`, or nullptr.
  const Tensor* Find(absl::string_view name) const;

  // A batch holding examples `indices` (each in [0, num_examples())) of every feature,
  // in that order: feature [n, d...] becomes [indices.size(), d...].
  Batch Gather(absl::Span<const int64_t> indices) const;

 private:
  Dataset() = default;

  Batch features_;
  int64_t num_examples_ = 0;
  std::string source_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DATA_DATASET_H_
