// LoadNpyDataset: one ReadNpy per feature, then the per-example consistency checks.
#include "runtime/data/npy_dataset.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "runtime/npy.h"

namespace tsr {

absl::StatusOr<Dataset> LoadNpyDataset(const std::vector<std::pair<std::string, std::string>>& files,
                                       int64_t max_bytes) {
  if (files.empty()) return absl::InvalidArgumentError("npy dataset: no files given");
  Batch features;
  std::string first_path;
  for (const auto& [name, path] : files) {
    TSR_ASSIGN_OR_RETURN(Tensor tensor, ReadNpy(path, max_bytes));
    if (tensor.shape().rank() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": feature '", name, "' is a scalar; it needs a leading example dimension"));
    }
    if (!features.empty() && tensor.shape().dim(0) != features.front().second.shape().dim(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": holds ", tensor.shape().dim(0), " examples of '", name, "' but ", first_path, " holds ",
                       features.front().second.shape().dim(0), " of '", features.front().first, "'"));
    }
    if (features.empty()) first_path = path;
    features.emplace_back(name, std::move(tensor));
  }
  std::vector<std::string> paths;
  for (const auto& file : files) paths.push_back(file.second);
  return Dataset::Create(std::move(features), absl::StrJoin(paths, ", "));
}

}  // namespace tsr
