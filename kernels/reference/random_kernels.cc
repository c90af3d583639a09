// Reference kernel for Dropout (random_ops.cc).
//
// Inference (training_mode absent or false): output = data, mask all true.
// Training: element i is kept when its uniform draw u_i in (0, 1) is >= ratio; kept
// elements are scaled by 1 / (1 - ratio) (computed in double, rounded once).
//
// The draws come from Philox4x32-10 and depend only on (seed, node name, step, i):
//   key     = the two 32-bit halves of Mix(seed, StableHash64(node name)) (FNV-1a),
//   counter = (g / 4 as 64 bits, step as 64 bits), low words first,
//   u_i     = (word g % 4 of the block + 0.5) / 2^32,
// where g = element_offset + i: a device holding rows of a larger tensor draws what the
// whole tensor's draw gives those rows.
// `seed` is ctx.seed(), or the node's own 'seed' attribute when it has one (ONNX:
// the attribute pins the op's randomness). Any other kernel claiming to implement
// Dropout bit-exactly must draw the same stream.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/stable_hash.h"
#include "graph/status_macros.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/reference/dtype_list.h"
#include "kernels/reference/philox.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

using reference::FloatTypes;
using reference::FromDouble;
using reference::PhiloxCounter;
using reference::PhiloxKey;
using reference::RegisterForTypes;
using reference::WidenToDouble;

// SplitMix64's finalizer: a bijective mix of 64 bits.
uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
KernelFn DropoutKernel() {
  return [](KernelContext& ctx) -> absl::Status {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    bool* mask = ctx.num_outputs() > 1 ? ctx.output(1).data<bool>() : nullptr;
    if (y.shape() != x.shape() || (mask != nullptr && ctx.output(1).shape() != x.shape())) {
      return ctx.Error("outputs must have the input's shape");
    }
    double ratio = 0.5;
    if (ctx.has_input(1)) {
      if (ctx.input(1).num_elements() != 1) return ctx.Error("input 1 ('ratio') must hold one value");
      ratio = ctx.input(1).GetAsDouble(0);
    }
    bool training = false;
    if (ctx.has_input(2)) {
      if (ctx.input(2).num_elements() != 1) return ctx.Error("input 2 ('training_mode') must hold one value");
      training = ctx.input(2).data<bool>()[0];
    }
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const int64_t n = x.num_elements();
    if (!training) {
      for (int64_t i = 0; i < n; ++i) py[i] = px[i];
      if (mask != nullptr) {
        for (int64_t i = 0; i < n; ++i) mask[i] = true;
      }
      return absl::OkStatus();
    }
    if (!(ratio >= 0.0 && ratio < 1.0)) {
      return ctx.Error(absl::StrCat("input 1 ('ratio') is ", ratio, " but a value in [0, 1) is required"));
    }
    const uint64_t seed = ctx.has_attr("seed") ? static_cast<uint64_t>(ctx.GetInt("seed")) : ctx.seed();
    const uint64_t key64 = SplitMix64(seed ^ SplitMix64(StableHash64(ctx.node_name())));
    const PhiloxKey key = {static_cast<uint32_t>(key64), static_cast<uint32_t>(key64 >> 32)};
    const uint64_t step = ctx.step();
    const double scale = 1.0 / (1.0 - ratio);
    const int64_t offset = ctx.GetInt("element_offset");
    if (offset < 0) return ctx.Error(absl::StrCat("element_offset is ", offset, " but must not be negative"));
    PhiloxCounter block{};
    for (int64_t i = 0; i < n; ++i) {
      const int64_t g = offset + i;  // the element's index in the whole tensor
      if (i == 0 || g % 4 == 0) {
        const uint64_t b = static_cast<uint64_t>(g / 4);
        block = reference::Philox4x32_10({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32),
                                          static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32)},
                                         key);
      }
      const double u = (static_cast<double>(block[g % 4]) + 0.5) / 4294967296.0;
      const bool keep = u >= ratio;
      py[i] = keep ? FromDouble<T>(WidenToDouble(px[i]) * scale) : FromDouble<T>(0.0);
      if (mask != nullptr) mask[i] = keep;
    }
    return absl::OkStatus();
  };
}

}  // namespace

absl::Status RegisterReferenceRandomKernels(KernelRegistry& registry) {
  return RegisterForTypes(registry, "Dropout", FloatTypes{}, [](auto t) { return DropoutKernel<decltype(t)>(); });
}

}  // namespace tsr
