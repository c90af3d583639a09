// Pipeline: the per-epoch shuffle (SplitMix64 + Fisher–Yates), sharding, batch slicing
// and the hookup of the prefetch thread.
#include "runtime/data/pipeline.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tsr {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and fully specified, unlike the
// standard library's distributions, so a (seed, epoch) gives the same order everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) without modulo bias (Lemire's multiply-and-reject).
  uint64_t Below(uint64_t bound) {
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * bound;
    if (static_cast<uint64_t>(m) < bound) {
      const uint64_t threshold = -bound % bound;
      while (static_cast<uint64_t>(m) < threshold) m = static_cast<unsigned __int128>(Next()) * bound;
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace

struct EpochIterator::Cursor {
  std::shared_ptr<const Dataset> dataset;
  std::vector<int64_t> order;  // this shard's examples, in visiting order
  int64_t batch_size = 0;
  int64_t num_batches = 0;
  int64_t next = 0;

  std::optional<Batch> Next() {
    if (next >= num_batches) return std::nullopt;
    const size_t begin = static_cast<size_t>(next * batch_size);
    const size_t end = std::min(order.size(), begin + static_cast<size_t>(batch_size));
    ++next;
    return dataset->Gather(absl::MakeConstSpan(order).subspan(begin, end - begin));
  }
};

std::optional<Batch> EpochIterator::Next() {
  if (cursor_ == nullptr) return std::nullopt;
  std::optional<Batch> batch = prefetcher_ != nullptr ? prefetcher_->Next() : cursor_->Next();
  if (batch.has_value()) ++returned_;
  return batch;
}

absl::StatusOr<Pipeline> Pipeline::Create(std::shared_ptr<const Dataset> dataset, const PipelineOptions& options) {
  if (dataset == nullptr) return absl::InvalidArgumentError("pipeline: no dataset");
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("pipeline over ", dataset->source(), ": ", what));
  };
  const int64_t n = dataset->num_examples();
  if (n < 1) return error("the dataset is empty");
  if (options.batch_size < 1) return error(absl::StrCat("batch_size must be at least 1, got ", options.batch_size));
  if (options.shard_count < 1) return error(absl::StrCat("shard_count must be at least 1, got ", options.shard_count));
  if (options.shard_index < 0 || options.shard_index >= options.shard_count) {
    return error(absl::StrCat("shard_index ", options.shard_index, " is outside [0, ", options.shard_count, ")"));
  }
  if (options.prefetch_batches < 0) {
    return error(absl::StrCat("prefetch_batches must be >= 0, got ", options.prefetch_batches));
  }
  const int64_t examples = options.even_shards
                               ? n / options.shard_count
                               : (n - options.shard_index + options.shard_count - 1) / options.shard_count;
  if (examples < 1) {
    return error(absl::StrCat("shard ", options.shard_index, " of ", options.shard_count,
                              " gets no examples: the dataset has only ", n));
  }
  const int64_t batches =
      options.drop_remainder ? examples / options.batch_size : (examples + options.batch_size - 1) / options.batch_size;
  if (batches < 1) {
    return error(absl::StrCat("batch_size ", options.batch_size, " exceeds the ", examples,
                              " examples of this shard and drop_remainder is set: an epoch would have no batches"));
  }
  Pipeline p;
  p.dataset_ = std::move(dataset);
  p.options_ = options;
  p.examples_per_epoch_ = examples;
  p.batches_per_epoch_ = batches;
  return p;
}

std::vector<int64_t> Pipeline::EpochOrder(int64_t epoch) const {
  const int64_t n = dataset_->num_examples();
  std::vector<int64_t> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), int64_t{0});
  if (options_.shuffle) {
    // Two SplitMix64 steps decorrelate nearby (seed, epoch) pairs.
    SplitMix64 mix(options_.seed);
    SplitMix64 rng(mix.Next() ^ (static_cast<uint64_t>(epoch) * 0xd1b54a32d192ed03ULL));
    rng.Next();
    for (int64_t i = n - 1; i > 0; --i) {
      std::swap(all[static_cast<size_t>(i)], all[rng.Below(static_cast<uint64_t>(i) + 1)]);
    }
  }
  std::vector<int64_t> shard;
  shard.reserve(static_cast<size_t>(examples_per_epoch_));
  for (int64_t k = 0; k < examples_per_epoch_; ++k) {
    shard.push_back(all[static_cast<size_t>(options_.shard_index + k * options_.shard_count)]);
  }
  return shard;
}

EpochIterator Pipeline::Epoch(int64_t epoch) const {
  EpochIterator it;
  it.cursor_ = std::make_shared<EpochIterator::Cursor>();
  it.cursor_->dataset = dataset_;
  it.cursor_->order = EpochOrder(epoch);
  it.cursor_->batch_size = options_.batch_size;
  it.cursor_->num_batches = batches_per_epoch_;
  it.num_batches_ = batches_per_epoch_;
  if (options_.prefetch_batches > 0) {
    // The thread holds the cursor (and through it the dataset), so it never outlives them.
    std::shared_ptr<EpochIterator::Cursor> cursor = it.cursor_;
    it.prefetcher_ = std::make_unique<Prefetcher>([cursor] { return cursor->Next(); }, options_.prefetch_batches);
  }
  return it;
}

}  // namespace tsr
