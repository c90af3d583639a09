// Shared shape functions, FLOP estimates and checks.
#include "graph/ops/op_helpers.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// The OpDef name of input `i` ("shape"), or its index past the declared inputs
// (the slots of a variadic input).
std::string InputName(const InferenceContext& ctx, int i) {
  const std::vector<ArgDef>& args = ctx.op_def().inputs;
  return i < static_cast<int>(args.size()) ? args[i].name : absl::StrCat(i);
}

}  // namespace

absl::Status SameAsFirstInput(InferenceContext& ctx) {
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status BroadcastAllInputs(InferenceContext& ctx) {
  Shape shape = ctx.input_shape(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    absl::StatusOr<Shape> b = BroadcastShapes(shape, ctx.input_shape(i));
    if (!b.ok()) return ctx.Error(b.status().message());
    shape = *std::move(b);
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(shape));
  return absl::OkStatus();
}

absl::Status BroadcastToBool(InferenceContext& ctx) {
  if (absl::Status s = BroadcastAllInputs(ctx); !s.ok()) return s;
  ctx.set_output(0, DType::kBool, ctx.output(0).shape);
  return absl::OkStatus();
}

int64_t OutputElements(const InferenceContext& ctx, int i) {
  if (i >= ctx.num_outputs()) return 0;
  return ctx.output(i).shape.BindBatch(1).num_elements();
}

FlopsFn PerOutputElement(int64_t per_element) {
  return [per_element](const InferenceContext& ctx) { return per_element * OutputElements(ctx, 0); };
}

int64_t SaturatingProduct(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product)) return std::numeric_limits<int64_t>::max();
  }
  return product;
}

absl::Status CheckFlagAttr(const InferenceContext& ctx, absl::string_view name) {
  const int64_t v = ctx.GetInt(name);
  if (v != 0 && v != 1) return ctx.Error(absl::StrCat("attribute '", name, "' is ", v, " but must be 0 or 1"));
  return absl::OkStatus();
}

absl::StatusOr<const Tensor*> ConstantInput(const InferenceContext& ctx, int i, absl::string_view why) {
  const Tensor* value = ctx.input_value(i);
  if (value != nullptr) return value;
  return ctx.Error(absl::StrCat("input '", InputName(ctx, i), "' must be a constant (e.g. produced by a Constant node)",
                                why.empty() ? "" : ": ", why));
}

absl::StatusOr<std::vector<int64_t>> ReadConstantInts(const InferenceContext& ctx, int i) {
  TSR_ASSIGN_OR_RETURN(const Tensor* value, ConstantInput(ctx, i));
  const Tensor& t = *value;
  if (ctx.input_rank(i) != 1 || t.shape().rank() != 1) {
    return ctx.Error(absl::StrCat("input '", InputName(ctx, i), "' must be 1-D but has shape ", t.shape().ToString()));
  }
  if (t.dtype() != DType::kI64 && t.dtype() != DType::kI32) {
    return ctx.Error(absl::StrCat("input '", InputName(ctx, i), "' holds ", DTypeName(t.dtype()),
                                  " values but i32 or i64 is required"));
  }
  return t.ToInt64Vector();
}

std::string IntsToString(const std::vector<int64_t>& values) {
  return absl::StrCat("[", absl::StrJoin(values, ","), "]");
}

absl::StatusOr<std::vector<int>> NormalizeAxes(const InferenceContext& ctx, const std::vector<int64_t>& axes,
                                               int rank) {
  std::vector<int> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    absl::StatusOr<int> n = NormalizeAxis(a, rank);
    if (!n.ok()) return ctx.Error(n.status().message());
    if (std::find(out.begin(), out.end(), *n) != out.end()) {
      return ctx.Error(absl::StrCat("axis ", a, " is repeated"));
    }
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tsr
