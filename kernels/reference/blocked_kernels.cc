// Reference kernels of the channel-blocked layout's ops (graph/ops/blocked_ops.cc), f32
// and f64: BlockChannels and UnblockChannels as plain index loops, and BlockedConv as
// literally its definition -- X and Z unblocked, the reference FusedConv kernel, the
// result blocked -- so its oracle is FusedConv's; BlockedInvertedResidual as its three
// BlockedConvs in turn.
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/op_registry.h"
#include "graph/ops/blocked_layout.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

constexpr DType kBlockedDTypes[] = {DType::kF32, DType::kF64};

// Pixels per channel: the product of the plain shape's spatial dimensions.
int64_t Pixels(const Shape& plain) {
  int64_t p = 1;
  for (int i = 2; i < plain.rank(); ++i) p *= plain.dim(i);
  return p;
}

// Copies between a plain [N, C, P] and a blocked [N, ceil(C/16), P, 16] tensor, element
// by element (`to_blocked` picks the direction); the blocked lanes past C get zeros.
void Convert(const Tensor& from, Tensor& to, const Shape& plain, bool to_blocked) {
  const int64_t n = plain.dim(0), c = plain.dim(1), pixels = Pixels(plain), size = DTypeSize(from.dtype());
  const auto* src = static_cast<const char*>(from.raw_data());
  auto* dst = static_cast<char*>(to.raw_data());
  if (to_blocked) std::memset(dst, 0, static_cast<size_t>(to.num_bytes()));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t plain_index = (i * c + ch) * pixels + p;
        const int64_t blocked_index =
            ((i * ChannelBlocks(c) + ch / kChannelBlock) * pixels + p) * kChannelBlock + ch % kChannelBlock;
        const int64_t s = to_blocked ? plain_index : blocked_index, d = to_blocked ? blocked_index : plain_index;
        std::memcpy(dst + d * size, src + s * size, static_cast<size_t>(size));
      }
    }
  }
}

// The plain shape of `what` (blocked, holding `channels` channels), or the error.
absl::StatusOr<Shape> PlainOf(const KernelContext& ctx, const Shape& blocked, int64_t channels,
                              absl::string_view what) {
  std::optional<Shape> plain = PlainShapeOf(blocked, channels);
  if (!plain.has_value()) {
    return ctx.Error(
        absl::StrCat(what, " is ", blocked.ToString(), " but not a blocked activation of ", channels, " channels"));
  }
  return *std::move(plain);
}

absl::Status CheckOutput(KernelContext& ctx, const Shape& expected) {
  if (ctx.output(0).shape() != expected) {
    return ctx.Error(
        absl::StrCat("the output is ", ctx.output(0).shape().ToString(), " but the input gives ", expected.ToString()));
  }
  return absl::OkStatus();
}

absl::Status BlockChannelsKernel(KernelContext& ctx) {
  const Shape& plain = ctx.input(0).shape();
  TSR_RETURN_IF_ERROR(CheckOutput(ctx, BlockedShape(plain)));
  Convert(ctx.input(0), ctx.output(0), plain, /*to_blocked=*/true);
  return absl::OkStatus();
}

absl::Status UnblockChannelsKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const Shape plain, PlainOf(ctx, ctx.input(0).shape(), ctx.GetInt("channels"), "input 0 ('X')"));
  TSR_RETURN_IF_ERROR(CheckOutput(ctx, plain));
  Convert(ctx.input(0), ctx.output(0), plain, /*to_blocked=*/false);
  return absl::OkStatus();
}

absl::Status BlockedConvKernel(const KernelRegistry& kernels, KernelContext& ctx) {
  const Shape& w = ctx.input(1).shape();
  if (w.rank() < 3) return ctx.Error(absl::StrCat("input 1 ('W') is ", w.ToString(), ", not [M, C/group, kernel...]"));
  const int64_t channels = w.dim(1) * ctx.GetInt("group"), out_channels = w.dim(0);
  const DType dtype = ctx.input(0).dtype();
  const auto unblocked = [&](int i) -> absl::StatusOr<Tensor> {
    TSR_ASSIGN_OR_RETURN(const Shape shape, PlainOf(ctx, ctx.input(i).shape(), i == 0 ? channels : out_channels,
                                                    absl::StrCat("input ", i)));
    Tensor plain(dtype, shape);
    Convert(ctx.input(i), plain, plain.shape(), /*to_blocked=*/false);
    return plain;
  };
  Tensor x = ctx.input(0);
  if (ctx.GetInt("input_blocked") != 0) {
    TSR_ASSIGN_OR_RETURN(x, unblocked(0));
  }
  std::optional<Tensor> z;
  if (ctx.has_input(3)) {
    TSR_ASSIGN_OR_RETURN(z, unblocked(3));
  }
  TSR_ASSIGN_OR_RETURN(const Shape y_shape, PlainOf(ctx, ctx.output(0).shape(), out_channels, "the output"));
  Tensor y(dtype, y_shape);

  absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup("FusedConv");
  if (!def.ok()) return ctx.Error(def.status().message());
  absl::StatusOr<const KernelFn*> fn = kernels.Lookup("FusedConv", kReferenceDevice, dtype);
  if (!fn.ok()) return ctx.Error(fn.status().message());
  AttrMap attrs = ctx.attrs();
  attrs.erase("input_blocked");
  KernelContext step(**def, ctx.node_name(), attrs,
                     {&x, &ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr, z ? &*z : nullptr}, {&y});
  TSR_RETURN_IF_ERROR((**fn)(step));
  Convert(y, ctx.output(0), y.shape(), /*to_blocked=*/true);
  return absl::OkStatus();
}

// BlockedInvertedResidual as literally its definition: BlockedConv (the kernel above)
// stage after stage, the expansion only with We.
absl::Status BlockedInvertedResidualKernel(const KernelRegistry& kernels, KernelContext& ctx) {
  absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup("BlockedConv");
  if (!def.ok()) return ctx.Error(def.status().message());
  const int64_t channels = ctx.input(InvertedResidualWeightInput(InvertedResidualStage::kDepthwise)).shape().dim(0);
  const bool expand = ctx.has_input(InvertedResidualWeightInput(InvertedResidualStage::kExpand));
  Tensor stage_out[2];
  const Tensor* x = &ctx.input(0);
  for (int s = expand ? 0 : 1; s < 3; ++s) {
    const auto stage = static_cast<InvertedResidualStage>(s);
    const int w = InvertedResidualWeightInput(stage), b = InvertedResidualBiasInput(stage);
    const bool last = stage == InvertedResidualStage::kProject;
    const Tensor* z =
        last && ctx.has_input(kInvertedResidualResidualInput) ? &ctx.input(kInvertedResidualResidualInput) : nullptr;
    const AttrMap attrs = InvertedResidualStageAttrs(ctx, stage, channels);
    const std::vector<const Tensor*> inputs = {x, &ctx.input(w), ctx.has_input(b) ? &ctx.input(b) : nullptr, z};
    Tensor* y = &ctx.output(0);
    if (!last) {
      std::vector<std::optional<TensorType>> types;
      for (const Tensor* t : inputs) {
        types.push_back(t != nullptr ? std::optional<TensorType>(TensorType(t->dtype(), t->shape())) : std::nullopt);
      }
      absl::StatusOr<std::vector<TensorType>> out = InferOutputTypes(**def, ctx.node_name(), attrs, types, {});
      if (!out.ok()) return out.status();
      stage_out[s] = Tensor((*out)[0].dtype, (*out)[0].shape);
      y = &stage_out[s];
    }
    KernelContext step(**def, ctx.node_name(), attrs, inputs, {y});
    TSR_RETURN_IF_ERROR(BlockedConvKernel(kernels, step));
    x = y;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceBlockedKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("BlockChannels", kReferenceDevice, kBlockedDTypes, BlockChannelsKernel));
  TSR_RETURN_IF_ERROR(registry.Register("UnblockChannels", kReferenceDevice, kBlockedDTypes, UnblockChannelsKernel));
  // The FusedConv step runs the reference kernel registered here at the time it runs.
  const KernelRegistry* kernels = &registry;
  TSR_RETURN_IF_ERROR(registry.Register("BlockedConv", kReferenceDevice, kBlockedDTypes,
                                        [kernels](KernelContext& ctx) { return BlockedConvKernel(*kernels, ctx); }));
  return registry.Register("BlockedInvertedResidual", kReferenceDevice, kBlockedDTypes,
                           [kernels](KernelContext& ctx) { return BlockedInvertedResidualKernel(*kernels, ctx); });
}

}  // namespace tsr
