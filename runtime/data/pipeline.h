// `Pipeline`: turns a Dataset into the batches of one training epoch after another —
// shuffled, sharded across workers, batched, optionally prefetched on a background
// thread. This is what the Trainer and `tessera train` feed to Session::Run:
//
//   TSR_ASSIGN_OR_RETURN(Dataset data, LoadMnist(dir, MnistSplit::kTrain));
//   TSR_ASSIGN_OR_RETURN(Pipeline pipeline, Pipeline::Create(std::make_shared<Dataset>(std::move(data)),
//                                                             {.batch_size = 64, .seed = 1, .prefetch_batches = 2}));
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     EpochIterator it = pipeline.Epoch(epoch);             // it.num_batches() batches
//     while (std::optional<Batch> batch = it.Next()) {
//       TSR_RETURN_IF_ERROR(session->Run(*batch, {}, {"train_step"}).status());  // feeds "image", "labels"
//     }
//   }
//
// Order. Epoch e visits a permutation of all n examples that depends only on (seed, e)
// — not on the shard layout, the batch size or prefetching — drawn with our own
// SplitMix64 generator and Fisher–Yates shuffle, so it is the same on every platform
// and standard library. Without shuffling the order is 0..n-1.
//
// Sharding. Worker w of c takes positions w, w + c, w + 2c, ... of the epoch's order:
// the shards are disjoint and together cover every example. Their sizes then differ by
// at most one, and so may their batch counts; synchronous data-parallel training, where
// every worker must run the same number of steps, sets `even_shards`, which gives each
// worker floor(n / c) examples and leaves out the n mod c at the end of the order (a
// different few each shuffled epoch).
//
// Batching. Consecutive examples of the shard form batches of `batch_size`; the last,
// partial batch is returned unless `drop_remainder` is set. Each batch holds every
// feature of the dataset under its name, with the leading dimension the batch's size.
#ifndef TESSERA_RUNTIME_DATA_PIPELINE_H_
#define TESSERA_RUNTIME_DATA_PIPELINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/data/dataset.h"
#include "runtime/data/prefetch.h"

namespace tsr {

struct PipelineOptions {
  int64_t batch_size = 0;  // required: >= 1
  bool drop_remainder = false;
  bool shuffle = true;
  uint64_t seed = 0;
  int64_t shard_index = 0;  // this worker, in [0, shard_count)
  int64_t shard_count = 1;
  bool even_shards = false;
  // With > 0, a background thread keeps up to this many batches ready.
  int prefetch_batches = 0;
};

// The batches of one epoch of one shard. Destroying it early is fine (the prefetch
// thread, if any, stops).
class EpochIterator {
 public:
  // The next batch, or nullopt after the last one.
  std::optional<Batch> Next();

  int64_t num_batches() const { return num_batches_; }
  // Batches returned by Next so far.
  int64_t batches_returned() const { return returned_; }

 private:
  friend class Pipeline;
  struct Cursor;  // the synchronous producer, shared with the prefetch thread

  std::shared_ptr<Cursor> cursor_;
  std::unique_ptr<Prefetcher> prefetcher_;
  int64_t num_batches_ = 0;
  int64_t returned_ = 0;
};

class Pipeline {
 public:
  // Errors (a null or empty dataset, batch size < 1, a shard outside [0, count), a
  // shard without examples, no batches at all with drop_remainder, negative prefetch)
  // name the dataset's source and the offending option.
  static absl::StatusOr<Pipeline> Create(std::shared_ptr<const Dataset> dataset, const PipelineOptions& options);

  const Dataset& dataset() const { return *dataset_; }
  const PipelineOptions& options() const { return options_; }
  // Examples and batches each epoch, for this shard (the same every epoch).
  int64_t examples_per_epoch() const { return examples_per_epoch_; }
  int64_t batches_per_epoch() const { return batches_per_epoch_; }

  // The example indices this shard visits in `epoch`, in order (batches are consecutive
  // runs of it, the dropped remainder included).
  std::vector<int64_t> EpochOrder(int64_t epoch) const;

  EpochIterator Epoch(int64_t epoch) const;

 private:
  Pipeline() = default;

  std::shared_ptr<const Dataset> dataset_;
  PipelineOptions options_;
  int64_t examples_per_epoch_ = 0;
  int64_t batches_per_epoch_ = 0;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DATA_PIPELINE_H_
