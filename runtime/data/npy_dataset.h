// A Dataset from .npy files, one per feature — the usual features/labels pair written by
// numpy.save(). Reading and validation of each file is runtime/npy.h's ReadNpy; this
// adds the cross-file checks (one entry per example in every file).
#ifndef TESSERA_RUNTIME_DATA_NPY_DATASET_H_
#define TESSERA_RUNTIME_DATA_NPY_DATASET_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/data/data_file.h"
#include "runtime/data/dataset.h"

namespace tsr {

// Loads each (feature name, .npy path); every array needs rank >= 1 and the same
// leading dimension. `max_bytes` bounds each file. Errors name the file.
absl::StatusOr<Dataset> LoadNpyDataset(const std::vector<std::pair<std::string, std::string>>& files,
                                       int64_t max_bytes = kDefaultMaxDataBytes);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DATA_NPY_DATASET_H_
