// Reference kernels for reduction_ops.cc: ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
// ReduceLogSumExp (ONNX opset 18: axes as an optional input, keepdims,
// noop_with_empty_axes), ArgMax and ArgMin, and the walks along one axis: CumSum
// and TopK.
//
// Floating types accumulate in double and round once. Integer sums, products, L1
// norms and sums of squares wrap around at 64 bits and are then narrowed (so they
// equal wrapping arithmetic in the type); an integer mean is that sum divided by the
// count, truncated. ReduceL2, ReduceLogSum and ReduceLogSumExp of integers are
// computed in double and truncated (saturating). Max/Min propagate NaN; bool orders
// false < true. Empty reductions give ONNX's identities: sum 0, product 1, L1/L2/
// sum of squares 0, log-sum and log-sum-exp -inf, max -inf (or the type's lowest),
// min +inf (or its highest); a float mean of nothing is NaN and an integer one is an
// error. ArgMax treats NaN as larger than everything and ArgMin as smaller than
// everything (as numpy does).
//
// CumSum accumulates floats in double (rounding each output once) and integers in
// wrapping int64. TopK orders by value with NaN above every number, equal values
// keeping the lower index first (a stable sort); sorted=0 returns the same order,
// which ONNX allows (any order is valid then).
#include <algorithm>
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

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// Kinds whose integer form is computed in double (the others wrap in int64).
bool IntegerViaDouble(ReduceKind kind) {
  return kind == ReduceKind::kL2 || kind == ReduceKind::kLogSum || kind == ReduceKind::kLogSumExp;
}

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
    // Doubles for float types and IntegerViaDouble kinds; int64 (wrapping) otherwise.
    std::vector<double> dacc(out_count, d_init);
    std::vector<int64_t> iacc(out_count, i_init);

    // The output position of each input element: its row-major coordinates with the
    // reduced ones dropped.
    std::vector<int64_t> out_of(in.num_elements());
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      int64_t rest = i;
      for (int d = rank - 1; d >= 0; --d) {
        index[d] = rest % in.shape().dim(d);
        rest /= in.shape().dim(d);
      }
      int64_t o = 0;
      for (int d = 0; d < rank; ++d) o = o * kept[d] + (reduced[d] ? 0 : index[d]);
      out_of[i] = o;
    }
    // Log-sum-exp is shifted by the maximum of each output's elements so exp cannot
    // overflow (an all -inf or empty group keeps shift 0).
    std::vector<double> shift(out_count, 0.0);
    if (kind == ReduceKind::kLogSumExp) {
      std::vector<double> max(out_count, -kInf);
      for (int64_t i = 0; i < in.num_elements(); ++i) {
        max[out_of[i]] = std::max(max[out_of[i]], WidenToDouble(pi[i]));
      }
      for (int64_t o = 0; o < out_count; ++o) {
        if (std::isfinite(max[o])) shift[o] = max[o];
      }
    }
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      const int64_t o = out_of[i];
      const T v = pi[i];
      if constexpr (kFloat) {
        const double x = WidenToDouble(v);
        double& a = dacc[o];
        switch (kind) {
          case ReduceKind::kSum:
          case ReduceKind::kMean:
          case ReduceKind::kLogSum:
            a += x;
            break;
          case ReduceKind::kProd:
            a *= x;
            break;
          case ReduceKind::kL1:
            a += std::fabs(x);
            break;
          case ReduceKind::kL2:
          case ReduceKind::kSumSquare:
            a += x * x;
            break;
          case ReduceKind::kLogSumExp:
            a += std::exp(x - shift[o]);
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
        const uint64_t ux = static_cast<uint64_t>(x);
        switch (kind) {
          case ReduceKind::kSum:
          case ReduceKind::kMean:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) + ux);
            break;
          case ReduceKind::kProd:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) * ux);
            break;
          case ReduceKind::kL1:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) + (x < 0 ? uint64_t{0} - ux : ux));
            break;
          case ReduceKind::kSumSquare:
            a = static_cast<int64_t>(static_cast<uint64_t>(a) + ux * ux);
            break;
          case ReduceKind::kL2:
            dacc[o] += static_cast<double>(x) * static_cast<double>(x);
            break;
          case ReduceKind::kLogSum:
            dacc[o] += static_cast<double>(x);
            break;
          case ReduceKind::kLogSumExp:
            dacc[o] += std::exp(static_cast<double>(x) - shift[o]);
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
      if (kFloat || IntegerViaDouble(kind)) {
        double r = dacc[o];
        if (kind == ReduceKind::kMean) r /= static_cast<double>(count);  // 0/0 = NaN when empty
        if (kind == ReduceKind::kL2) r = std::sqrt(r);
        if (kind == ReduceKind::kLogSum) r = std::log(r);
        if (kind == ReduceKind::kLogSumExp) r = std::log(r) + shift[o];
        po[o] = FromDouble<T>(r);
      } else if (kind == ReduceKind::kMean) {
        po[o] = ConvertScalar<T>(iacc[o] / count);
      } else {
        po[o] = ConvertScalar<T>(iacc[o]);  // modular narrowing; bool: nonzero
      }
    }
    return absl::OkStatus();
  };
}

// True when `v` should replace `best` as the maximum (kMax) or minimum: NaN beats
// numbers either way; ties move only with select_last_index.
template <typename T, bool kMax>
bool ArgExtremumReplaces(T v, T best, bool last) {
  if constexpr (kIsFloatLike<T>) {
    const double x = WidenToDouble(v), b = WidenToDouble(best);
    if (std::isnan(b)) return last && std::isnan(x);
    if (std::isnan(x)) return true;
    if constexpr (kMax) return last ? x >= b : x > b;
    return last ? x <= b : x < b;
  } else {
    if constexpr (kMax) return last ? v >= best : v > best;
    return last ? v <= best : v < best;
  }
}

template <typename T, bool kMax>
KernelFn ArgExtremumKernel() {
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
    if (n == 0) return ctx.Error("arg-extremum over an empty axis");
    if (out.num_elements() != outer * inner) return ctx.Error("output element count does not match the input");
    const T* pi = in.data<T>();
    int64_t* po = out.data<int64_t>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        int64_t best = 0;
        for (int64_t k = 1; k < n; ++k) {
          if (ArgExtremumReplaces<T, kMax>(pi[(o * n + k) * inner + j], pi[(o * n + best) * inner + j], last)) {
            best = k;
          }
        }
        po[o * inner + j] = best;
      }
    }
    return absl::OkStatus();
  };
}

// The axis of a CumSum node, from its scalar input 1.
absl::StatusOr<int> CumSumAxis(KernelContext& ctx, int rank) {
  if (ctx.input(1).num_elements() != 1) return ctx.Error("input 1 ('axis') must hold one value");
  absl::StatusOr<int> axis = NormalizeAxis(ctx.input(1).GetAsInt64(0), rank);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  return *axis;
}

// [outer, n, inner] around `axis`.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisView ViewAround(const Shape& shape, int axis) {
  AxisView v;
  for (int d = 0; d < shape.rank(); ++d) {
    if (d < axis) v.outer *= shape.dim(d);
    if (d == axis) v.n = shape.dim(d);
    if (d > axis) v.inner *= shape.dim(d);
  }
  return v;
}

template <typename T>
KernelFn CumSumKernel() {
  return [](KernelContext& ctx) -> absl::Status {
    const Tensor& in = ctx.input(0);
    TSR_ASSIGN_OR_RETURN(int axis, CumSumAxis(ctx, in.shape().rank()));
    const AxisView v = ViewAround(in.shape(), axis);
    const bool exclusive = ctx.GetInt("exclusive") == 1;
    const bool reverse = ctx.GetInt("reverse") == 1;
    const T* pi = in.data<T>();
    T* po = ctx.output(0).data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t j = 0; j < v.inner; ++j) {
        double dsum = 0;
        uint64_t isum = 0;  // wrapping
        for (int64_t step = 0; step < v.n; ++step) {
          const int64_t k = reverse ? v.n - 1 - step : step;
          const int64_t at = (o * v.n + k) * v.inner + j;
          if constexpr (kIsFloatLike<T>) {
            if (!exclusive) dsum += WidenToDouble(pi[at]);
            po[at] = FromDouble<T>(dsum);
            if (exclusive) dsum += WidenToDouble(pi[at]);
          } else {
            const uint64_t x = static_cast<uint64_t>(static_cast<int64_t>(pi[at]));
            if (!exclusive) isum += x;
            po[at] = ConvertScalar<T>(static_cast<int64_t>(isum));
            if (exclusive) isum += x;
          }
        }
      }
    }
    return absl::OkStatus();
  };
}

// TopK's order: true when `a` ranks above `b` among the largest (`largest`) or the
// smallest. NaN is larger than every number.
template <typename T>
bool RanksAbove(T a, T b, bool largest) {
  if constexpr (kIsFloatLike<T>) {
    const double x = WidenToDouble(a), y = WidenToDouble(b);
    const bool x_nan = std::isnan(x), y_nan = std::isnan(y);
    if (x_nan || y_nan) return largest ? x_nan && !y_nan : y_nan && !x_nan;
    return largest ? x > y : x < y;
  } else {
    return largest ? a > b : a < b;
  }
}

template <typename T>
KernelFn TopKKernel() {
  return [](KernelContext& ctx) -> absl::Status {
    const Tensor& in = ctx.input(0);
    absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), in.shape().rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    const AxisView v = ViewAround(in.shape(), *axis);
    const int64_t k = ctx.input(1).GetAsInt64(0);
    if (k < 0 || k > v.n) return ctx.Error(absl::StrCat("K is ", k, " but must be in [0, ", v.n, "]"));
    const bool largest = ctx.GetInt("largest") == 1;
    const T* pi = in.data<T>();
    T* values = ctx.output(0).data<T>();
    int64_t* indices = ctx.output(1).data<int64_t>();
    std::vector<int64_t> order(v.n);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t j = 0; j < v.inner; ++j) {
        auto at = [&](int64_t i) { return pi[(o * v.n + i) * v.inner + j]; };
        for (int64_t i = 0; i < v.n; ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return RanksAbove(at(a), at(b), largest); });
        for (int64_t r = 0; r < k; ++r) {
          const int64_t out = (o * k + r) * v.inner + j;
          values[out] = at(order[r]);
          indices[out] = order[r];
        }
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
  TSR_RETURN_IF_ERROR(RegisterReduce<ArithmeticTypes>(registry, "ReduceL1", ReduceKind::kL1));
  TSR_RETURN_IF_ERROR(RegisterReduce<ArithmeticTypes>(registry, "ReduceSumSquare", ReduceKind::kSumSquare));
  TSR_RETURN_IF_ERROR(RegisterReduce<ArithmeticTypes>(registry, "ReduceLogSum", ReduceKind::kLogSum));
  TSR_RETURN_IF_ERROR(RegisterReduce<ArithmeticTypes>(registry, "ReduceLogSumExp", ReduceKind::kLogSumExp));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "ArgMax", NumericTypes{},
                                       [](auto t) { return ArgExtremumKernel<decltype(t), true>(); }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "ArgMin", NumericTypes{},
                                       [](auto t) { return ArgExtremumKernel<decltype(t), false>(); }));
  TSR_RETURN_IF_ERROR(
      RegisterForTypes(registry, "CumSum", ArithmeticTypes{}, [](auto t) { return CumSumKernel<decltype(t)>(); }));
  TSR_RETURN_IF_ERROR(
      RegisterForTypes(registry, "TopK", NumericTypes{}, [](auto t) { return TopKKernel<decltype(t)>(); }));
  return absl::OkStatus();
}

}  // namespace tsr
