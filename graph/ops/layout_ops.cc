// Layout ops: Transpose, Concat, Split, Slice, Pad, Tile, Trilu, DepthToSpace,
// SpaceToDepth, ReverseSequence (ONNX semantics, latest opset; Split follows opset 18
// with `num_outputs`). Each one materializes its output,
// so its FLOP estimate is the number of elements it writes.
//
// The batch dimension N survives an op only where the output size along that axis is
// known without knowing N: untouched by Transpose, the one non-empty piece of a
// Concat, a full Slice, zero padding, a repeat of 1. Anything else is an error that
// says so, rather than a guessed size.
#include "graph/ops/layout_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/pad_geometry.h"
#include "graph/ops/slice_geometry.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Sum of the element counts of all outputs (Split writes several).
int64_t AllOutputElements(const InferenceContext& ctx) {
  int64_t n = 0;
  for (int i = 0; i < ctx.num_outputs(); ++i) n += OutputElements(ctx, i);
  return n;
}

// Normalizes `axes` (possibly negative) against `rank`, keeping their order, and
// rejects repeats: Slice and Pad pair each axis with other per-axis values.
absl::StatusOr<std::vector<int>> NormalizeAxesInOrder(const InferenceContext& ctx, absl::string_view input_name,
                                                      const std::vector<int64_t>& axes, int rank) {
  std::vector<int> out;
  for (int64_t a : axes) {
    absl::StatusOr<int> n = NormalizeAxis(a, rank);
    if (!n.ok()) return ctx.Error(absl::StrCat("input '", input_name, "': ", n.status().message()));
    if (std::find(out.begin(), out.end(), *n) != out.end()) {
      return ctx.Error(absl::StrCat("input '", input_name, "' ", IntsToString(axes), " repeats axis ", a));
    }
    out.push_back(*n);
  }
  return out;
}

absl::Status InferTranspose(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  const int rank = in.rank();
  std::vector<int64_t> perm;
  if (ctx.has_attr("perm")) {
    perm = ctx.GetInts("perm");
  } else {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != rank) {
    return ctx.Error(absl::StrCat("perm ", IntsToString(perm), " has ", perm.size(), " entries but the input ",
                                  in.ToString(), " has rank ", rank));
  }
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank) {
      return ctx.Error(absl::StrCat("perm ", IntsToString(perm), " holds ", p, ", outside [0, ", rank, ")"));
    }
    if (seen[p]) return ctx.Error(absl::StrCat("perm ", IntsToString(perm), " repeats axis ", p));
    seen[p] = true;
    out.AddDim(in.dim(static_cast<int>(p)));
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

absl::Status InferConcat(InferenceContext& ctx) {
  const Shape& first = ctx.input_shape(0);
  const int rank = first.rank();
  if (rank == 0) return ctx.Error("cannot concatenate scalars (inputs need rank >= 1)");
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), rank);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  // Along the axis the output size is (#inputs with N there) * N + (sum of static sizes).
  int batch_parts = 0;
  int64_t static_sum = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input_shape(i);
    if (s.rank() != rank) {
      return ctx.Error(absl::StrCat("input ", i, " has shape ", s.ToString(), " (rank ", s.rank(), ") but input 0 has ",
                                    first.ToString(), " (rank ", rank, ")"));
    }
    for (int d = 0; d < rank; ++d) {
      if (d != *axis && s.dim(d) != first.dim(d)) {
        return ctx.Error(absl::StrCat("input ", i, " has shape ", s.ToString(), " but input 0 has ", first.ToString(),
                                      "; all dims but axis ", *axis, " must match"));
      }
    }
    if (s.dim(*axis) == kBatchDim) {
      ++batch_parts;
    } else {
      static_sum += s.dim(*axis);
    }
  }
  Shape out = first;
  if (batch_parts == 0) {
    out.set_dim(*axis, static_sum);
  } else if (batch_parts == 1 && static_sum == 0) {
    out.set_dim(*axis, kBatchDim);
  } else {
    return ctx.Error(absl::StrCat("concatenating along the batch axis ", *axis, " would give a size of ",
                                  batch_parts == 1 ? "" : absl::StrCat(batch_parts, "*"), "N",
                                  static_sum == 0 ? "" : absl::StrCat("+", static_sum),
                                  ", which is not a single dimension"));
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

// Output sizes along the split axis, from the 'split' input or ONNX 18's
// `num_outputs` (chunks of ceil(d / n), the last one smaller).
absl::StatusOr<std::vector<int64_t>> SplitSizes(const InferenceContext& ctx, const Shape& in, int axis) {
  const int64_t d = in.dim(axis);
  const bool has_split = ctx.has_input(1);
  const bool has_num = ctx.has_attr("num_outputs");
  if (has_split && has_num) return ctx.Error("give either input 'split' or attribute 'num_outputs', not both");
  if (!has_split && !has_num) {
    return ctx.Error("needs input 'split' or attribute 'num_outputs': the number of outputs is not known otherwise");
  }
  if (has_split) {
    TSR_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ReadConstantInts(ctx, 1));
    if (sizes.empty()) return ctx.Error("input 'split' is empty; at least one output is required");
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0 || s > kMaxElements) {
        return ctx.Error(absl::StrCat("input 'split' ", IntsToString(sizes), " holds the invalid size ", s));
      }
      sum += s;
      if (sum > kMaxElements) {
        return ctx.Error(absl::StrCat("input 'split' ", IntsToString(sizes), " sums to more than 2^40"));
      }
    }
    if (d == kBatchDim) {
      return ctx.Error(absl::StrCat("cannot split the batch dimension N (axis ", axis, " of ", in.ToString(),
                                    ") into the fixed sizes ", IntsToString(sizes)));
    }
    if (sum != d) {
      return ctx.Error(absl::StrCat("input 'split' ", IntsToString(sizes), " sums to ", sum, " but axis ", axis, " of ",
                                    in.ToString(), " has size ", d));
    }
    return sizes;
  }
  const int64_t n = ctx.GetInt("num_outputs");
  if (n < 1) return ctx.Error(absl::StrCat("num_outputs is ", n, "; it must be >= 1"));
  if (d == kBatchDim) {
    if (n == 1) return std::vector<int64_t>{kBatchDim};
    return ctx.Error(absl::StrCat("cannot split the batch dimension N (axis ", axis, " of ", in.ToString(), ") into ",
                                  n, " outputs: their sizes depend on the batch"));
  }
  if (n > d) {
    return ctx.Error(
        absl::StrCat("num_outputs ", n, " is larger than axis ", axis, " of ", in.ToString(), " (size ", d, ")"));
  }
  const int64_t chunk = (d + n - 1) / n;
  const int64_t last = d - chunk * (n - 1);
  if (last < 0) {
    return ctx.Error(absl::StrCat("num_outputs ", n, " cannot split size ", d, " (axis ", axis, " of ", in.ToString(),
                                  ") into chunks of ceil(", d, "/", n, ")=", chunk, " with a last chunk >= 0"));
  }
  std::vector<int64_t> sizes(n, chunk);
  sizes.back() = last;
  return sizes;
}

absl::Status InferSplit(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  if (in.rank() == 0) return ctx.Error("cannot split a scalar");
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, SplitSizes(ctx, in, *axis));
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape out = in;
    out.set_dim(*axis, sizes[i]);
    ctx.set_output(static_cast<int>(i), ctx.input_dtype(0), std::move(out));
  }
  return absl::OkStatus();
}

// Whether slicing an axis of unknown size N keeps all of it (forwards or reversed),
// whatever N is. Any start/end beyond kMaxElements is past every possible N.
bool IsFullSlice(int64_t start, int64_t end, int64_t step) {
  if (step == 1) return (start == 0 || start <= -kMaxElements) && end >= kMaxElements;
  if (step == -1) return (start == -1 || start >= kMaxElements) && end < -kMaxElements;
  return false;
}

absl::Status InferSlice(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  const int rank = in.rank();
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ReadConstantInts(ctx, 1));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> ends, ReadConstantInts(ctx, 2));
  const size_t k = starts.size();
  std::vector<int64_t> raw_axes;
  if (ctx.has_input(3)) {
    TSR_ASSIGN_OR_RETURN(raw_axes, ReadConstantInts(ctx, 3));
  } else {
    for (size_t i = 0; i < k; ++i) raw_axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> steps(k, 1);
  if (ctx.has_input(4)) {
    TSR_ASSIGN_OR_RETURN(steps, ReadConstantInts(ctx, 4));
  }
  if (ends.size() != k || raw_axes.size() != k || steps.size() != k) {
    return ctx.Error(absl::StrCat("starts, ends, axes and steps must have the same length but have ", k, ", ",
                                  ends.size(), ", ", raw_axes.size(), " and ", steps.size()));
  }
  TSR_ASSIGN_OR_RETURN(std::vector<int> axes, NormalizeAxesInOrder(ctx, "axes", raw_axes, rank));
  Shape out = in;
  for (size_t i = 0; i < k; ++i) {
    const int a = axes[i];
    if (steps[i] == 0) return ctx.Error(absl::StrCat("steps ", IntsToString(steps), " holds 0 (axis ", a, ")"));
    if (in.dim(a) == kBatchDim) {
      if (!IsFullSlice(starts[i], ends[i], steps[i])) {
        return ctx.Error(absl::StrCat("slicing the batch dimension N (axis ", a, " of ", in.ToString(), ") with start ",
                                      starts[i], ", end ", ends[i], ", step ", steps[i],
                                      " gives a size that depends on the batch; only a full slice keeps it"));
      }
      continue;
    }
    out.set_dim(a, ResolveSlice(in.dim(a), starts[i], ends[i], steps[i]).size);
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

absl::Status InferPad(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  const int rank = in.rank();
  const std::string mode = ctx.GetString("mode");
  if (absl::Status s = ParsePadMode(mode).status(); !s.ok()) return ctx.Error(s.message());
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ReadConstantInts(ctx, 1));
  std::vector<int64_t> raw_axes;
  if (ctx.has_input(3)) {
    TSR_ASSIGN_OR_RETURN(raw_axes, ReadConstantInts(ctx, 3));
  } else {
    for (int i = 0; i < rank; ++i) raw_axes.push_back(i);
  }
  TSR_ASSIGN_OR_RETURN(std::vector<int> axes, NormalizeAxesInOrder(ctx, "axes", raw_axes, rank));
  const size_t n = axes.size();
  if (pads.size() != 2 * n) {
    return ctx.Error(absl::StrCat("input 'pads' ", IntsToString(pads), " has ", pads.size(), " entries but ", n,
                                  " padded axes need ", 2 * n, " (all begins, then all ends)"));
  }
  if (ctx.has_input(2)) {
    const Shape& v = ctx.input_shape(2);
    if (!(v.is_scalar() || v == Shape{1})) {
      return ctx.Error(absl::StrCat("input 'constant_value' must be a scalar but has shape ", v.ToString()));
    }
  }
  Shape out = in;
  for (size_t j = 0; j < n; ++j) {
    const int a = axes[j];
    const int64_t begin = pads[j];
    const int64_t end = pads[j + n];
    if (begin < -kMaxElements || begin > kMaxElements || end < -kMaxElements || end > kMaxElements) {
      return ctx.Error(absl::StrCat("pads (", begin, ", ", end, ") on axis ", a, " exceed the size limit of a tensor"));
    }
    const int64_t d = in.dim(a);
    if (d == kBatchDim) {
      if (begin != 0 || end != 0) {
        return ctx.Error(absl::StrCat("cannot pad the batch dimension N (axis ", a, " of ", in.ToString(), ") by (",
                                      begin, ", ", end, "): the result size would depend on the batch"));
      }
      continue;
    }
    const int64_t size = d + begin + end;
    if (size < 0) {
      return ctx.Error(absl::StrCat("pads (", begin, ", ", end, ") on axis ", a, " of ", in.ToString(),
                                    " give the negative size ", size));
    }
    const int64_t max_pad = std::max(begin, end);
    // Reflection mirrors around the edge element, so it can add at most d - 1.
    if (mode == "reflect" && max_pad > 0 && max_pad >= d) {
      return ctx.Error(absl::StrCat("reflect padding of ", max_pad, " on axis ", a, " of ", in.ToString(),
                                    " needs pads < the axis size ", d));
    }
    if ((mode == "edge" || mode == "wrap") && max_pad > 0 && d == 0) {
      return ctx.Error(
          absl::StrCat(mode, " padding needs a non-empty axis but axis ", a, " of ", in.ToString(), " is empty"));
    }
    out.set_dim(a, size);
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

absl::Status InferTile(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ReadConstantInts(ctx, 1));
  if (static_cast<int>(repeats.size()) != in.rank()) {
    return ctx.Error(absl::StrCat("input 'repeats' ", IntsToString(repeats), " has ", repeats.size(),
                                  " entries but the input ", in.ToString(), " has rank ", in.rank()));
  }
  Shape out = in;
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t r = repeats[i];
    const int64_t d = in.dim(i);
    if (r < 0) return ctx.Error(absl::StrCat("input 'repeats' ", IntsToString(repeats), " holds the negative ", r));
    if (d == kBatchDim) {
      if (r > 1) {
        return ctx.Error(absl::StrCat("cannot repeat the batch dimension N (axis ", i, " of ", in.ToString(), ") ", r,
                                      " times: the result would be ", r, "*N"));
      }
      out.set_dim(i, r == 0 ? 0 : kBatchDim);
      continue;
    }
    if (r > 0 && d > kMaxElements / r) {
      return ctx.Error(absl::StrCat("repeating axis ", i, " of ", in.ToString(), " ", r,
                                    " times exceeds the size limit of a tensor"));
    }
    out.set_dim(i, d * r);
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

absl::Status InferTrilu(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "upper"));
  if (ctx.input_rank(0) < 2) {
    return ctx.Error(
        absl::StrCat("input 'input' has shape ", ctx.input_shape(0).ToString(), " but rank >= 2 is required"));
  }
  // k is run-time data (it does not change the shape) but must be one value.
  if (ctx.has_input(1) && ctx.input_shape(1).BindBatch(1).num_elements() != 1) {
    return ctx.Error(absl::StrCat("input 'k' must hold one value but has shape ", ctx.input_shape(1).ToString()));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

// The block size of DepthToSpace / SpaceToDepth after checking that the input is 4-D.
absl::StatusOr<int64_t> BlockSize(const InferenceContext& ctx) {
  if (ctx.input_rank(0) != 4) {
    return ctx.Error(
        absl::StrCat("input 'input' has shape ", ctx.input_shape(0).ToString(), " but must be 4-D [N, C, H, W]"));
  }
  const int64_t b = ctx.GetInt("blocksize");
  if (b < 1 || b > kMaxElements) return ctx.Error(absl::StrCat("blocksize is ", b, " but must be >= 1"));
  for (int i = 1; i < 4; ++i) {
    if (ctx.input_shape(0).dim(i) == kBatchDim) {
      return ctx.Error(absl::StrCat("axis ", i, " of ", ctx.input_shape(0).ToString(),
                                    " is the batch dimension N, but only axis 0 may be"));
    }
  }
  return b;
}

absl::Status InferDepthToSpace(InferenceContext& ctx) {
  const std::string mode = ctx.GetString("mode");
  if (mode != "DCR" && mode != "CRD") return ctx.Error(absl::StrCat("unknown mode '", mode, "' (known: DCR, CRD)"));
  TSR_ASSIGN_OR_RETURN(const int64_t b, BlockSize(ctx));
  const Shape& in = ctx.input_shape(0);
  if (b > kMaxElements / b || in.dim(1) % (b * b) != 0) {
    return ctx.Error(absl::StrCat("the channels of ", in.ToString(), " are not a multiple of blocksize^2 = ", b, "^2"));
  }
  if (in.dim(2) > kMaxElements / b || in.dim(3) > kMaxElements / b) {
    return ctx.Error(absl::StrCat("the output of ", in.ToString(), " exceeds the size limit of a tensor"));
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape{in.dim(0), in.dim(1) / (b * b), in.dim(2) * b, in.dim(3) * b});
  return absl::OkStatus();
}

absl::Status InferSpaceToDepth(InferenceContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const int64_t b, BlockSize(ctx));
  const Shape& in = ctx.input_shape(0);
  if (in.dim(2) % b != 0 || in.dim(3) % b != 0) {
    return ctx.Error(absl::StrCat("the height and width of ", in.ToString(), " must be multiples of blocksize ", b));
  }
  if (b > kMaxElements / b || in.dim(1) > kMaxElements / (b * b)) {
    return ctx.Error(absl::StrCat("the output of ", in.ToString(), " exceeds the size limit of a tensor"));
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape{in.dim(0), in.dim(1) * b * b, in.dim(2) / b, in.dim(3) / b});
  return absl::OkStatus();
}

absl::Status InferReverseSequence(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  if (in.rank() < 2)
    return ctx.Error(absl::StrCat("input 'input' has shape ", in.ToString(), " but rank >= 2 is required"));
  const int64_t time_axis = ctx.GetInt("time_axis"), batch_axis = ctx.GetInt("batch_axis");
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
    return ctx.Error(
        absl::StrCat("time_axis ", time_axis, " and batch_axis ", batch_axis, " must be 0 and 1 in some order"));
  }
  const int64_t batch = in.dim(static_cast<int>(batch_axis));
  if (ctx.input_shape(1) != Shape{batch}) {
    return ctx.Error(absl::StrCat("input 'sequence_lens' has shape ", ctx.input_shape(1).ToString(), " but must be [",
                                  batch == kBatchDim ? std::string("N") : absl::StrCat(batch), "] (the batch axis of ",
                                  in.ToString(), ")"));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterLayoutOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Transpose")
                                            .Summary("Permutes the axes: output dim i is input dim perm[i].")
                                            .Input("data", "T")
                                            .Output("transposed", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .OptionalAttr("perm", AttrType::kInts)
                                            .Infer(InferTranspose)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Concat")
                                            .Summary("Joins tensors along 'axis'; all other dims must match.")
                                            .VariadicInput("inputs", "T")
                                            .Output("concat_result", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .RequiredAttr("axis", AttrType::kInt)
                                            .Infer(InferConcat)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Split")
                                            .Summary("Cuts a tensor along 'axis' into pieces of the sizes in 'split', "
                                                     "or into 'num_outputs' chunks (the last one smaller).")
                                            .Input("input", "T")
                                            .OptionalInput("split", "Tsplit")
                                            .VariadicOutput("outputs", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tsplit", {DType::kI64})
                                            .Attr("axis", AttrType::kInt, AttrValue::Int(0))
                                            .OptionalAttr("num_outputs", AttrType::kInt)
                                            .Infer(InferSplit)
                                            .Flops(AllOutputElements)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Slice")
                                            .Summary("Takes elements [starts, ends) with 'steps' along 'axes', "
                                                     "indices clamped as in ONNX.")
                                            .Input("data", "T")
                                            .Input("starts", "Tind")
                                            .Input("ends", "Tind")
                                            .OptionalInput("axes", "Tind")
                                            .OptionalInput("steps", "Tind")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tind", kIndexDTypes)
                                            .Infer(InferSlice)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Pad")
                                            .Summary("Pads (or, with negative pads, crops) each axis; 'mode' is "
                                                     "constant, reflect, edge or wrap.")
                                            .Input("data", "T")
                                            .Input("pads", "Tpads")
                                            .OptionalInput("constant_value", "T")
                                            .OptionalInput("axes", "Tind")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tpads", {DType::kI64})
                                            .TypeConstraint("Tind", kIndexDTypes)
                                            .Attr("mode", AttrType::kString, AttrValue::String("constant"))
                                            .Infer(InferPad)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Tile")
                                            .Summary("Repeats the input repeats[i] times along axis i.")
                                            .Input("input", "T")
                                            .Input("repeats", "Trepeats")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Trepeats", {DType::kI64})
                                            .Infer(InferTile)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Trilu")
                                            .Summary("Keeps the upper (upper=1: j - i >= k) or lower (j - i <= k) "
                                                     "triangle of the last two axes and zeroes the rest.")
                                            .Input("input", "T")
                                            .OptionalInput("k", "Tk")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tk", {DType::kI64})
                                            .Attr("upper", AttrType::kInt, AttrValue::Int(1))
                                            .Infer(InferTrilu)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("DepthToSpace")
                                            .Summary("Moves blocks of blocksize^2 channels into blocksize x blocksize "
                                                     "spatial tiles; mode DCR (depth-column-row) or CRD.")
                                            .Input("input", "T")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .RequiredAttr("blocksize", AttrType::kInt)
                                            .Attr("mode", AttrType::kString, AttrValue::String("DCR"))
                                            .Infer(InferDepthToSpace)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("SpaceToDepth")
                                            .Summary("Moves blocksize x blocksize spatial tiles into channels (the "
                                                     "inverse of DepthToSpace in DCR mode).")
                                            .Input("input", "T")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .RequiredAttr("blocksize", AttrType::kInt)
                                            .Infer(InferSpaceToDepth)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("ReverseSequence")
                                            .Summary("Reverses the first sequence_lens[b] elements along 'time_axis' "
                                                     "of each batch entry b (along 'batch_axis').")
                                            .Input("input", "T")
                                            .Input("sequence_lens", "Tlens")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tlens", {DType::kI64})
                                            .Attr("time_axis", AttrType::kInt, AttrValue::Int(0))
                                            .Attr("batch_axis", AttrType::kInt, AttrValue::Int(1))
                                            .Infer(InferReverseSequence)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr
