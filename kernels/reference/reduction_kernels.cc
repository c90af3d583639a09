// Reference kernels for reduction_ops.cc: ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL2 (ONNX opset 18: axes as an optional input,
// keepdims, noop_with_empty_axes) and ArgMax.
//
// Floating types accumulate in double and round once. Integer sums and products
// wrap around at 64 bits and are then narrowed (so they equal wrapping arithmetic in
// the type); an integer mean is that sum divided by the count, truncated. ReduceL2
// of integers is sqrt(sum of squares) computed in double, truncated. Max/Min
// propagate NaN; bool orders false < true. Empty reductions give ONNX's identities:
// sum 0, product 1, L2 0, max -inf (or the type's lowest), min +inf (or its highest);
// a float mean of nothing is NaN and an integer one is an error. ArgMax treats NaN
// as larger than everything (as numpy does).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/reference/dtype_list.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

using reference::ConvertScalar;
using reference::FromDouble;
using reference::kIsFloatLike;
using reference::NumericTypes;
using reference::RegisterForTypes;
using reference::TypeList;
using reference::WidenToDouble;

using ArithmeticTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;
using OrderedTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t, int32_t, int64_t, bool>;

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL2 };

// Which input dims a Reduce* node reduces; nullopt-like empty vector means identity.
absl::StatusOr<std::vector<bool>> ReducedDims(KernelContext& ctx, int rank, bool* noop) {
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) axes = ctx.input(1).ToInt64Vector();
  *noop = axes.empty() && ctx.GetInt("noop_with_empty_axes") == 1;
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return ctx.Error(absl::StrCat("axis ", a, " is out of range for rank ", rank));
    }
    reduced[a < 0 ? a + rank : a] = true;
  }
  return reduced;
}

template <typename T>
KernelFn ReduceKernel(ReduceKind kind) {
  return [kind](KernelContext& ctx) -> absl::Status {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    const int rank = in.shape().rank();
    bool noop = false;
    TSR_ASSIGN_OR_RETURN(std::vector<bool> reduced, ReducedDims(ctx, rank, &noop));
    const T* pi = in.data<T>();
    T* po = out.data<T>();
    if (noop) {
      if (out.num_elements() != in.num_elements()) return ctx.Error("identity reduction changes the element count");
      for (int64_t i = 0; i < in.num_elements(); ++i) po[i] = pi[i];
      return absl::OkStatus();
    }
    // Output dims with keepdims=1; the output's linear order is the same either way.
    std::vector<int64_t> kept(rank);
    int64_t out_count = 1;
    int64_t count = 1;  // elements reduced into each output
    for (int d = 0; d < rank; ++d) {
      kept[d] = reduced[d] ? 1 : in.shape().dim(d);
      out_count *= kept[d];
      if (reduced[d]) count *= in.shape().dim(d);
    }
    if (out_count != out.num_elements()) {
      return ctx.Error(
          absl::StrCat("output has ", out.num_elements(), " elements but the reduction gives ", out_count));
    }
    if constexpr (!kIsFloatLike<T>) {
      if (kind == ReduceKind::kMean && count == 0 && out_count > 0) {
        return ctx.Error("integer mean over an empty set of values is undefined");
      }
    }

    constexpr bool kFloat = kIsFloatLike<T>;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double d_init = 0;
    int64_t i_init = 0;
    if (kind == ReduceKind::kProd) d_init = 1, i_init = 1;
    if (kind == ReduceKind::kMax) {
      d_init = -kInf;
      if constexpr (!kFloat) i_init = static_cast<int64_t>(std::numeric_limits<T>::lowest());
    }
    if (kind == ReduceKind::kMin) {
      d_init = kInf;
      if constexpr (!kFloat) i_init = static_cast<int64_t>(std::numeric_limits<T>::max());
    }
    // Doubles for float types and for integer L2; int64 (wrapping) otherwise.
    std::vector<double> dacc(out_count, d_init);
    std::vector<int64_t> iacc(out_count, i_init);

    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      // Row-major decomposition of i; the output position drops the reduced coordinates.
      int64_t rest = i;
      for (int d = rank - 1; d >= 0; --d) {
        index[d] = rest % in.shape().dim(d);
        rest /= in.shape().dim(d);
      }
      int64_t o = 0;
      for (int d = 0; d < rank; ++d) o = o * kept[d] + (reduced[d] ? 0 : index[d]);
      const T v = pi[i];
      if constexpr (kFloat) {
        const double x = WidenToDouble(v);
        double& a = dacc[o];
        switch (kind) {
          case ReduceKind::kSum:
          case ReduceKind::kMean:
            a += x;
            break;
          case ReduceKind::kProd:
            a *= x;
            break;
          case ReduceKind::kL2:
            a += x * x;
            break;
          case ReduceKind::kMax:
            if (std::isnan(x) || x > a) a = x;  // once NaN, nothing compares greater
            break;
          case ReduceKind::kMin:
            if (std::isnan(x) || x < a) a = x;
            break;
        }
      } else {
        const int64_t x = static_cast<int64_t>(v);
        int64_t& a = iacc[o];
        switch (kind) {
          case ReduceKind::kSum:
          case ReduceKind::kMean:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(x));
            break;
          case ReduceKind::kProd:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(x));
            break;
          case ReduceKind::kL2:
            dacc[o] += static_cast<double>(x) * static_cast<double>(x);
            break;
          case ReduceKind::kMax:
            if (x > a) a = x;
            break;
          case ReduceKind::kMin:
            if (x < a) a = x;
            break;
        }
      }
    }
    for (int64_t o = 0; o < out_count; ++o) {
      if constexpr (kFloat) {
        double r = dacc[o];
        if (kind == ReduceKind::kMean) r /= static_cast<double>(count);  // 0/0 = NaN when empty
        if (kind == ReduceKind::kL2) r = std::sqrt(r);
        po[o] = FromDouble<T>(r);
      } else if (kind == ReduceKind::kL2) {
        po[o] = FromDouble<T>(std::sqrt(dacc[o]));
      } else if (kind == ReduceKind::kMean) {
        po[o] = ConvertScalar<T>(iacc[o] / count);
      } else {
        po[o] = ConvertScalar<T>(iacc[o]);  // modular narrowing; bool: nonzero
      }
    }
    return absl::OkStatus();
  };
}

// True when `v` should replace `best` as the maximum: NaN beats numbers; ties move
// only with select_last_index.
template <typename T>
bool ArgMaxReplaces(T v, T best, bool last) {
  if constexpr (kIsFloatLike<T>) {
    const double x = WidenToDouble(v), b = WidenToDouble(best);
    if (std::isnan(b)) return last && std::isnan(x);
    if (std::isnan(x)) return true;
    return last ? x >= b : x > b;
  } else {
    return last ? v >= best : v > best;
  }
}

template <typename T>
KernelFn ArgMaxKernel() {
  return [](KernelContext& ctx) -> absl::Status {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    const int rank = in.shape().rank();
    const int64_t axis_attr = ctx.GetInt("axis");
    if (axis_attr < -rank || axis_attr >= rank) {
      return ctx.Error(absl::StrCat("axis ", axis_attr, " is out of range for rank ", rank));
    }
    const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + rank : axis_attr);
    const bool last = ctx.GetInt("select_last_index") == 1;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= in.shape().dim(d);
    for (int d = axis + 1; d < rank; ++d) inner *= in.shape().dim(d);
    const int64_t n = in.shape().dim(axis);
    if (n == 0) return ctx.Error("ArgMax over an empty axis");
    if (out.num_elements() != outer * inner) return ctx.Error("output element count does not match the input");
    const T* pi = in.data<T>();
    int64_t* po = out.data<int64_t>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        int64_t best = 0;
        for (int64_t k = 1; k < n; ++k) {
          if (ArgMaxReplaces(pi[(o * n + k) * inner + j], pi[(o * n + best) * inner + j], last)) best = k;
        }
        po[o * inner + j] = best;
      }
    }
    return absl::OkStatus();
  };
}

template <typename Types>
absl::Status RegisterReduce(KernelRegistry& registry, absl::string_view op, ReduceKind kind) {
  return RegisterForTypes(registry, op, Types{}, [kind](auto t) { return ReduceKernel<decltype(t)>(kind); });
}

}  // namespace

absl::Status RegisterReferenceReductionKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterReduce<ArithmeticTypes>(registry, "ReduceSum", ReduceKind::kSum));
  TSR_RETURN_IF_ERROR(RegisterReduce<ArithmeticTypes>(registry, "ReduceMean", ReduceKind::kMean));
  TSR_RETURN_IF_ERROR(RegisterReduce<OrderedTypes>(registry, "ReduceMax", ReduceKind::kMax));
  TSR_RETURN_IF_ERROR(RegisterReduce<OrderedTypes>(registry, "ReduceMin", ReduceKind::kMin));
  TSR_RETURN_IF_ERROR(RegisterReduce<ArithmeticTypes>(registry, "ReduceProd", ReduceKind::kProd));
  TSR_RETURN_IF_ERROR(RegisterReduce<ArithmeticTypes>(registry, "ReduceL2", ReduceKind::kL2));
  TSR_RETURN_IF_ERROR(
      RegisterForTypes(registry, "ArgMax", NumericTypes{}, [](auto t) { return ArgMaxKernel<decltype(t)>(); }));
  return absl::OkStatus();
}

}  // namespace tsr
