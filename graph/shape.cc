// Shape helpers: validation, element counts, broadcasting.
#include "graph/shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tsr {

bool Shape::is_static() const {
  return std::none_of(dims_.begin(), dims_.end(), [](int64_t d) { return d == kBatchDim; });
}

absl::Status Shape::Validate() const {
  if (rank() > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat("shape has rank ", rank(), ", above the limit of ", kMaxRank));
  }
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0 && d != kBatchDim) {
      return absl::InvalidArgumentError(absl::StrCat("shape ", ToString(), " has a negative dimension ", d));
    }
    if (d == kBatchDim || d == 0) continue;
    if (n > kMaxElements / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", ToString(), " has more than 2^40 elements (limit of one tensor)"));
    }
    n *= d;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Shape::NumElements() const {
  if (!is_static()) {
    return absl::FailedPreconditionError(
        absl::StrCat("shape ", ToString(), " has a symbolic batch dimension; bind it first"));
  }
  if (absl::Status s = Validate(); !s.ok()) return s;
  return num_elements();
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

Shape Shape::BindBatch(int64_t batch) const {
  Shape out = *this;
  for (int64_t& d : out.dims_) {
    if (d == kBatchDim) d = batch;
  }
  return out;
}

std::string DimToString(int64_t d) { return d == kBatchDim ? std::string("N") : absl::StrCat(d); }

std::string Shape::ToString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ",", [](std::string* out, int64_t d) { out->append(DimToString(d)); }),
                      "]");
}

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> out(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i;
    const int ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a.dim(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da == db) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da == kBatchDim) {
      out[i] = db;
    } else if (db == kBatchDim) {
      out[i] = da;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("shapes ", a.ToString(), " and ", b.ToString(),
                                                     " cannot be broadcast (dimension ", i, ": ", da, " vs ", db, ")"));
    }
  }
  return Shape(std::move(out));
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank, " (expected [", -rank, ", ", rank, "))"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace tsr
