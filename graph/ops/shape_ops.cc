// Shape ops: Reshape, Flatten, Squeeze, Unsqueeze, Expand, Shape, Size, Range (ONNX
// semantics, latest opset). The layout ops of the same family (Transpose, Concat,
// Split, Slice, Pad, Tile) live in layout_ops.cc and are registered from here.
//
// Reshape, Flatten, Squeeze and Unsqueeze only relabel a buffer, so they cost no
// FLOPs; Expand and Range write their outputs (one per element).
//
// Shape-determining inputs (Reshape's shape, Unsqueeze's axes, ...) must be
// constants: graphs are static, so an output shape may not depend on run-time data.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/ops/layout_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// An element count written as (static count) * N^batch_dims: batch dims are all the
// same N, so element counts compare as such pairs.
struct ElementCount {
  int batch_dims = 0;
  int64_t count = 1;
};

// Inputs were validated (static part <= kMaxElements), so no overflow here.
ElementCount CountElements(absl::Span<const int64_t> dims) {
  ElementCount c;
  for (int64_t d : dims) {
    if (d == kBatchDim) {
      ++c.batch_dims;
    } else {
      c.count *= d;
    }
  }
  return c;
}

std::string ToString(const ElementCount& c) {
  if (c.batch_dims == 0 || c.count == 0) return absl::StrCat(c.count);
  const std::string n = c.batch_dims == 1 ? std::string("N") : absl::StrCat("N^", c.batch_dims);
  return c.count == 1 ? n : absl::StrCat(c.count, "*", n);
}

// The single dimension holding `c` elements: static, N itself, or none (e.g. 3*N).
std::optional<int64_t> AsSingleDim(const ElementCount& c) {
  if (c.batch_dims == 0 || c.count == 0) return c.count;
  if (c.batch_dims == 1 && c.count == 1) return kBatchDim;
  return std::nullopt;
}

absl::Status InferReshape(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> target, ReadConstantInts(ctx, 1));
  const bool allowzero = ctx.GetInt("allowzero") != 0;
  const std::string target_str = IntsToString(target);
  std::vector<int64_t> out(target.size());
  int infer_at = -1;
  bool has_zero = false;
  ElementCount known;  // of the output dims other than the -1
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == -1) {
      if (infer_at >= 0) return ctx.Error(absl::StrCat("shape ", target_str, " has more than one -1"));
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < -1) return ctx.Error(absl::StrCat("shape ", target_str, " holds ", d, "; dims must be >= -1"));
    if (d == 0) {
      has_zero = true;
      if (!allowzero) {
        // ONNX: 0 copies the input dim at the same index (N included).
        if (static_cast<int>(i) >= in.rank()) {
          return ctx.Error(absl::StrCat("shape ", target_str, " copies input dim ", i, " (a 0) but the input ",
                                        in.ToString(), " has rank ", in.rank()));
        }
        d = in.dim(static_cast<int>(i));
      }
    }
    out[i] = d;
    if (d == kBatchDim) {
      ++known.batch_dims;
    } else if (d > 0 && known.count > kMaxElements / d) {
      return ctx.Error(absl::StrCat("shape ", target_str, " has more than 2^40 elements (limit of one tensor)"));
    } else {
      known.count *= d;
    }
  }
  if (allowzero && has_zero && infer_at >= 0) {
    return ctx.Error(absl::StrCat("shape ", target_str, " holds both 0 and -1, which allowzero=1 forbids"));
  }
  const ElementCount have = CountElements(in.dims());
  const std::string prefix =
      absl::StrCat("cannot reshape ", in.ToString(), " (", ToString(have), " elements) to ", target_str);
  if (infer_at < 0) {
    const bool both_empty = have.count == 0 && known.count == 0;
    if (!both_empty && (have.batch_dims != known.batch_dims || have.count != known.count)) {
      return ctx.Error(absl::StrCat(prefix, " (", ToString(known), " elements)"));
    }
  } else {
    if (known.count == 0) {
      return ctx.Error(absl::StrCat(prefix, ": the -1 cannot be inferred when the other dims hold no elements"));
    }
    if (have.count % known.count != 0) {
      return ctx.Error(absl::StrCat(prefix, ": ", have.count, " is not a multiple of ", known.count));
    }
    // Copies (0s) take input dims at distinct indices, so the target never holds more
    // batch dims than the input: rest.batch_dims >= 0.
    const ElementCount rest{have.batch_dims - known.batch_dims, have.count / known.count};
    const std::optional<int64_t> dim = AsSingleDim(rest);
    if (!dim.has_value()) {
      return ctx.Error(absl::StrCat(prefix, ": the -1 would stand for ", ToString(rest),
                                    ", which is not a single dimension; keep the batch dimension on its own axis "
                                    "(e.g. copy it with 0)"));
    }
    out[infer_at] = *dim;
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape(std::move(out)));
  return absl::OkStatus();
}

absl::Status InferFlatten(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  const int rank = in.rank();
  int64_t axis = ctx.GetInt("axis");
  if (axis < -rank || axis > rank) {
    return ctx.Error(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank, " (expected [", -rank, ", ", rank, "])"));
  }
  if (axis < 0) axis += rank;
  const auto& dims = in.dims();
  const ElementCount lead = CountElements(absl::MakeConstSpan(dims).subspan(0, axis));
  const ElementCount trail = CountElements(absl::MakeConstSpan(dims).subspan(axis));
  const std::optional<int64_t> d0 = AsSingleDim(lead);
  const std::optional<int64_t> d1 = AsSingleDim(trail);
  if (!d0.has_value() || !d1.has_value()) {
    return ctx.Error(absl::StrCat("flattening ", in.ToString(), " at axis ", axis, " would give a dimension of ",
                                  ToString(d0.has_value() ? trail : lead),
                                  " elements, which is not a single dimension; the batch dimension can only be "
                                  "merged with dims of size 1"));
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape{*d0, *d1});
  return absl::OkStatus();
}

absl::Status InferSqueeze(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  std::vector<bool> drop(in.rank(), false);
  if (ctx.has_input(1)) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> raw, ReadConstantInts(ctx, 1));
    TSR_ASSIGN_OR_RETURN(std::vector<int> axes, NormalizeAxes(ctx, raw, in.rank()));
    for (int a : axes) {
      if (in.dim(a) == kBatchDim) {
        return ctx.Error(absl::StrCat("cannot squeeze axis ", a, " of ", in.ToString(),
                                      ": it is the batch dimension N, whose size is not known to be 1"));
      }
      if (in.dim(a) != 1) {
        return ctx.Error(
            absl::StrCat("cannot squeeze axis ", a, " of ", in.ToString(), ": its size is ", in.dim(a), ", not 1"));
      }
      drop[a] = true;
    }
  } else {
    // Without axes every static 1 goes; N stays, since it may be bound to more than 1.
    for (int i = 0; i < in.rank(); ++i) drop[i] = in.dim(i) == 1;
  }
  Shape out;
  for (int i = 0; i < in.rank(); ++i) {
    if (!drop[i]) out.AddDim(in.dim(i));
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

absl::Status InferUnsqueeze(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> raw, ReadConstantInts(ctx, 1));
  // Axes refer to the output, whose rank is the input's plus one per axis.
  if (in.rank() + raw.size() > static_cast<size_t>(kMaxRank)) {
    return ctx.Error(absl::StrCat("unsqueezing ", in.ToString(), " by ", raw.size(), " axes gives rank ",
                                  in.rank() + raw.size(), ", above the limit of ", kMaxRank));
  }
  const int out_rank = in.rank() + static_cast<int>(raw.size());
  TSR_ASSIGN_OR_RETURN(std::vector<int> axes, NormalizeAxes(ctx, raw, out_rank));
  std::vector<int64_t> out(out_rank, 0);
  for (int a : axes) out[a] = 1;
  int next = 0;
  for (int i = 0; i < out_rank; ++i) {
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) out[i] = in.dim(next++);
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape(std::move(out)));
  return absl::OkStatus();
}

absl::Status InferExpand(InferenceContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> target, ReadConstantInts(ctx, 1));
  for (int64_t d : target) {
    if (d < 0) return ctx.Error(absl::StrCat("shape ", IntsToString(target), " holds the negative dim ", d));
  }
  Shape target_shape(target);
  if (absl::Status s = target_shape.Validate(); !s.ok()) return ctx.Error(s.message());
  absl::StatusOr<Shape> out = BroadcastShapes(ctx.input_shape(0), target_shape);
  if (!out.ok()) return ctx.Error(out.status().message());
  ctx.set_output(0, ctx.input_dtype(0), *std::move(out));
  return absl::OkStatus();
}

absl::Status InferShape(InferenceContext& ctx) {
  const int64_t rank = ctx.input_rank(0);
  // ONNX: negative bounds count from the end, then both are clamped to [0, rank].
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(ctx.GetInt("start"));
  const int64_t end = ctx.has_attr("end") ? clamp(ctx.GetInt("end")) : rank;
  ctx.set_output(0, DType::kI64, Shape{std::max<int64_t>(0, end - start)});
  return absl::OkStatus();
}

absl::Status InferSize(InferenceContext& ctx) {
  ctx.set_output(0, DType::kI64, Shape{});
  return absl::OkStatus();
}

// max(ceil((limit - start) / delta), 0), computed in the inputs' own type as ONNX does.
template <typename T>
absl::StatusOr<int64_t> RangeLength(const InferenceContext& ctx, T start, T limit, T delta) {
  if (delta == T{0}) return ctx.Error("delta is 0");
  if constexpr (std::is_floating_point_v<T>) {
    const T n = std::ceil((limit - start) / delta);
    if (std::isnan(n) || n > static_cast<T>(kMaxElements)) {
      return ctx.Error(absl::StrCat("range(", start, ", ", limit, ", ", delta, ") has ", n,
                                    " elements, above the limit of one tensor"));
    }
    return n <= 0 ? int64_t{0} : static_cast<int64_t>(n);
  } else {
    int64_t diff;
    if (__builtin_sub_overflow(static_cast<int64_t>(limit), static_cast<int64_t>(start), &diff)) {
      return ctx.Error(absl::StrCat("range(", start, ", ", limit, ", ", delta, ") is too long"));
    }
    if (delta > 0 ? diff <= 0 : diff >= 0) return int64_t{0};
    // |diff| and |delta| as unsigned are exact even for INT64_MIN.
    const uint64_t a = diff > 0 ? static_cast<uint64_t>(diff) : uint64_t{0} - static_cast<uint64_t>(diff);
    const int64_t d = delta;
    const uint64_t b = d > 0 ? static_cast<uint64_t>(d) : uint64_t{0} - static_cast<uint64_t>(d);
    const uint64_t n = 1 + (a - 1) / b;
    if (n > static_cast<uint64_t>(kMaxElements)) {
      return ctx.Error(absl::StrCat("range(", start, ", ", limit, ", ", delta, ") has ", n,
                                    " elements, above the limit of one tensor"));
    }
    return static_cast<int64_t>(n);
  }
}

absl::Status InferRange(InferenceContext& ctx) {
  const Tensor* args[3];  // start, limit, delta
  for (int i = 0; i < 3; ++i) {
    TSR_ASSIGN_OR_RETURN(args[i], ConstantInput(ctx, i, "the output length depends on it"));
    if (ctx.input_rank(i) != 0 || args[i]->num_elements() != 1) {
      return ctx.Error(absl::StrCat("input '", ctx.op_def().inputs[i].name, "' must be a scalar but has shape ",
                                    ctx.input_shape(i).ToString()));
    }
  }
  const DType dtype = ctx.input_dtype(0);
  absl::StatusOr<int64_t> n;
  switch (dtype) {
    case DType::kF32:
      n = RangeLength<float>(ctx, static_cast<float>(args[0]->GetAsDouble(0)),
                             static_cast<float>(args[1]->GetAsDouble(0)), static_cast<float>(args[2]->GetAsDouble(0)));
      break;
    case DType::kF64:
      n = RangeLength<double>(ctx, args[0]->GetAsDouble(0), args[1]->GetAsDouble(0), args[2]->GetAsDouble(0));
      break;
    default:
      n = RangeLength<int64_t>(ctx, args[0]->GetAsInt64(0), args[1]->GetAsInt64(0), args[2]->GetAsInt64(0));
      break;
  }
  if (!n.ok()) return n.status();
  ctx.set_output(0, dtype, Shape{*n});
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterShapeOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Reshape")
                                            .Summary("Gives the data a new shape with the same elements; in 'shape' "
                                                     "0 copies the input dim (unless allowzero=1) and one -1 is "
                                                     "inferred.")
                                            .Input("data", "T")
                                            .Input("shape", "Tshape")
                                            .Output("reshaped", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tshape", {DType::kI64})
                                            .Attr("allowzero", AttrType::kInt, AttrValue::Int(0))
                                            .Infer(InferReshape)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Flatten")
                                            .Summary("Reshapes to 2-D: dims before 'axis' form the rows, the rest "
                                                     "the columns.")
                                            .Input("input", "T")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .Attr("axis", AttrType::kInt, AttrValue::Int(1))
                                            .Infer(InferFlatten)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Squeeze")
                                            .Summary("Removes the size-1 dims listed in 'axes' (all static ones when "
                                                     "absent).")
                                            .Input("data", "T")
                                            .OptionalInput("axes", "Taxes")
                                            .Output("squeezed", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Taxes", {DType::kI64})
                                            .Infer(InferSqueeze)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Unsqueeze")
                                            .Summary("Inserts size-1 dims at 'axes' (positions in the output).")
                                            .Input("data", "T")
                                            .Input("axes", "Taxes")
                                            .Output("expanded", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Taxes", {DType::kI64})
                                            .Infer(InferUnsqueeze)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Expand")
                                            .Summary("Broadcasts the input with 'shape' (bidirectionally, as in "
                                                     "numpy).")
                                            .Input("input", "T")
                                            .Input("shape", "Tshape")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tshape", {DType::kI64})
                                            .Infer(InferExpand)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Shape")
                                            .Summary("The input's dims [start, end) as a 1-D i64 tensor.")
                                            .Input("data", "T")
                                            .Output("shape", "T1")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("T1", {DType::kI64})
                                            .Attr("start", AttrType::kInt, AttrValue::Int(0))
                                            .OptionalAttr("end", AttrType::kInt)
                                            .Infer(InferShape)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Size")
                                            .Summary("The input's number of elements as an i64 scalar.")
                                            .Input("data", "T")
                                            .Output("size", "T1")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("T1", {DType::kI64})
                                            .Infer(InferSize)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Range")
                                            .Summary("start, start + delta, ... up to (excluding) limit.")
                                            .Input("start", "T")
                                            .Input("limit", "T")
                                            .Input("delta", "T")
                                            .Output("output", "T")
                                            .TypeConstraint("T", {DType::kF32, DType::kF64, DType::kI32, DType::kI64})
                                            .Infer(InferRange)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  return RegisterLayoutOps(registry);
}

}  // namespace tsr
