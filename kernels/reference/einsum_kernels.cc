// Reference Einsum kernel: one loop over every assignment of the equation's labels
// (and broadcast ellipsis dims); each adds the product of the inputs' elements at
// that assignment to the output element it names. A label repeated in one term
// steps along that input's diagonal (its strides add up); a broadcast ellipsis dim
// of size 1 has stride 0. Floats accumulate in double and round once; integers
// multiply and add in wrapping int64 and are then narrowed.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/einsum_equation.h"
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
using reference::WidenToDouble;

// Row-major element strides of `shape`.
std::vector<int64_t> StridesOf(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  for (int d = shape.rank() - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dim(d + 1);
  return strides;
}

// For one term over a tensor of `shape`: the stride along each axis of the full
// label space (letters first, then the ellipsis dims).
std::vector<int64_t> SpaceStrides(const std::vector<int>& term, const Shape& shape, const EinsumDims& dims) {
  const int letters = static_cast<int>(dims.label.size());
  std::vector<int64_t> strides(letters + dims.ellipsis.size(), 0);
  const std::vector<int64_t> own = StridesOf(shape);
  const int ellipsis_rank = shape.rank() - (static_cast<int>(term.size()) - 1);
  int d = 0;
  for (int id : term) {
    if (id != EinsumEquation::kEllipsis) {
      strides[id] += own[d++];
      continue;
    }
    const int first = letters + static_cast<int>(dims.ellipsis.size()) - ellipsis_rank;
    for (int k = 0; k < ellipsis_rank; ++k, ++d) {
      if (shape.dim(d) != 1) strides[first + k] += own[d];
    }
  }
  return strides;
}

template <typename T>
KernelFn EinsumKernel() {
  return [](KernelContext& ctx) -> absl::Status {
    absl::StatusOr<EinsumEquation> eq = EinsumEquation::Parse(ctx.GetString("equation"), ctx.num_inputs());
    if (!eq.ok()) return ctx.Error(eq.status().message());
    std::vector<Shape> shapes;
    for (int i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input(i).shape());
    absl::StatusOr<EinsumDims> dims = ResolveEinsumDims(*eq, shapes);
    if (!dims.ok()) return ctx.Error(dims.status().message());
    Tensor& out = ctx.output(0);
    if (out.shape() != dims->output) {
      return ctx.Error(absl::StrCat("output has shape ", out.shape().ToString(), " but the equation gives ",
                                    dims->output.ToString()));
    }
    std::vector<int64_t> space = dims->label;
    space.insert(space.end(), dims->ellipsis.begin(), dims->ellipsis.end());
    std::vector<std::vector<int64_t>> in_strides;
    for (int i = 0; i < ctx.num_inputs(); ++i) in_strides.push_back(SpaceStrides(eq->inputs[i], shapes[i], *dims));
    const std::vector<int64_t> out_strides = SpaceStrides(eq->output, out.shape(), *dims);

    const int64_t out_count = out.num_elements();
    std::vector<double> dacc(kIsFloatLike<T> ? out_count : 0, 0.0);
    std::vector<uint64_t> iacc(kIsFloatLike<T> ? 0 : out_count, 0);
    int64_t points = 1;
    for (int64_t d : space) points *= d;
    const int axes = static_cast<int>(space.size());
    std::vector<int64_t> index(axes, 0);
    std::vector<int64_t> offset(ctx.num_inputs(), 0);
    int64_t out_offset = 0;
    for (int64_t p = 0; p < points; ++p) {
      if constexpr (kIsFloatLike<T>) {
        double product = 1.0;
        for (int i = 0; i < ctx.num_inputs(); ++i) product *= WidenToDouble(ctx.input(i).data<T>()[offset[i]]);
        dacc[out_offset] += product;
      } else {
        uint64_t product = 1;
        for (int i = 0; i < ctx.num_inputs(); ++i) {
          product *= static_cast<uint64_t>(static_cast<int64_t>(ctx.input(i).data<T>()[offset[i]]));
        }
        iacc[out_offset] += product;
      }
      // Odometer step over the label space, moving every offset along.
      for (int a = axes - 1; a >= 0; --a) {
        const bool wrap = ++index[a] == space[a];
        const int64_t steps = wrap ? 1 - space[a] : 1;
        if (wrap) index[a] = 0;
        for (int i = 0; i < ctx.num_inputs(); ++i) offset[i] += steps * in_strides[i][a];
        out_offset += steps * out_strides[a];
        if (!wrap) break;
      }
    }
    T* po = out.data<T>();
    for (int64_t o = 0; o < out_count; ++o) {
      if constexpr (kIsFloatLike<T>) {
        po[o] = FromDouble<T>(dacc[o]);
      } else {
        po[o] = ConvertScalar<T>(static_cast<int64_t>(iacc[o]));
      }
    }
    return absl::OkStatus();
  };
}

}  // namespace

absl::Status RegisterReferenceEinsumKernels(KernelRegistry& registry) {
  return RegisterForTypes(registry, "Einsum", NumericTypes{}, [](auto t) { return EinsumKernel<decltype(t)>(); });
}

}  // namespace tsr
