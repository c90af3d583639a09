// The channel-blocked layout's conversions, the geometry check, the weight preparation
// and the dispatch to the direct, Winograd or depthwise kernels (conv_blocked_kernels.h).
#include "kernels/cpu/conv_blocked.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_blocked_kernels.h"
#include "kernels/cpu/conv_blocked_layout_row.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

namespace {

// Pixels per conversion chunk: 16 channel rows of this many floats stay in L1.
constexpr int64_t kPixelChunk = 256;

// Both conversions' split: fn(lanes, p0, p1, plain_offset, blocked_offset) for every
// (image, block, chunk of pixels [p0, p1)), the block's `lanes` channels starting at
// plain_offset in the plain tensor and its pixel vectors at blocked_offset in the blocked one.
template <typename Fn>
void ForEachChunk(int64_t batch, int64_t channels, int64_t pixels, const ParallelForFn& parallel_for, Fn fn) {
  const int64_t blocks = ChannelBlocks(channels);
  const int64_t chunks = (pixels + kPixelChunk - 1) / kPixelChunk;
  RunParallelFor(parallel_for, batch * blocks * chunks, kPixelChunk * kChannelBlock, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t chunk = u % chunks, nb = u / chunks, b = nb % blocks, n = nb / blocks;
      const int64_t p0 = chunk * kPixelChunk, p1 = std::min(pixels, p0 + kPixelChunk);
      fn(std::min(kChannelBlock, channels - b * kChannelBlock), p0, p1, (n * channels + b * kChannelBlock) * pixels,
         nb * pixels * kChannelBlock);
    }
  });
}

bool Depthwise(const ConvGeometry& g) { return g.group > 1 && g.group == g.channels && g.out_channels == g.channels; }

}  // namespace

void BlockChannels(int64_t batch, int64_t channels, int64_t pixels, const float* x, float* y,
                   const ParallelForFn& parallel_for) {
  const CpuIsa isa = ActiveCpuIsa();
  ForEachChunk(batch, channels, pixels, parallel_for,
               [&](int64_t lanes, int64_t p0, int64_t p1, int64_t plain_offset, int64_t blocked_offset) {
                 const float* src = x + plain_offset;
                 float* dst = y + blocked_offset;
                 if (isa >= CpuIsa::kAvx512) {
                   BlockPixelsAvx512(lanes, pixels, p0, p1, src, dst);
                   return;
                 }
                 if (isa >= CpuIsa::kAvx2) {
                   BlockPixelsAvx2(lanes, pixels, p0, p1, src, dst);
                   return;
                 }
                 for (int64_t p = p0; p < p1; ++p) {
                   float* out = dst + p * kChannelBlock;
                   int64_t l = 0;
                   for (; l < lanes; ++l) out[l] = src[l * pixels + p];
                   for (; l < kChannelBlock; ++l) out[l] = 0.0f;
                 }
               });
}

void UnblockChannels(int64_t batch, int64_t channels, int64_t pixels, const float* x, float* y,
                     const ParallelForFn& parallel_for) {
  const CpuIsa isa = ActiveCpuIsa();
  ForEachChunk(batch, channels, pixels, parallel_for,
               [&](int64_t lanes, int64_t p0, int64_t p1, int64_t plain_offset, int64_t blocked_offset) {
                 const float* src = x + blocked_offset;
                 float* dst = y + plain_offset;
                 if (isa >= CpuIsa::kAvx512) {
                   UnblockPixelsAvx512(lanes, pixels, p0, p1, src, dst);
                   return;
                 }
                 if (isa >= CpuIsa::kAvx2) {
                   UnblockPixelsAvx2(lanes, pixels, p0, p1, src, dst);
                   return;
                 }
                 for (int64_t l = 0; l < lanes; ++l) {
                   for (int64_t p = p0; p < p1; ++p) dst[l * pixels + p] = src[p * kChannelBlock + l];
                 }
               });
}

BlockedDirectClamp ClampInRegisters(const FusedActivation& act) {
  switch (act.kind) {
    case FusedActivationKind::kRelu:
      return BlockedDirectClamp::kRelu;
    case FusedActivationKind::kClip:
      return BlockedDirectClamp::kClip;
    default:
      return BlockedDirectClamp::kNone;
  }
}

bool ActivationMovesZero(const FusedActivation& act) {
  switch (act.kind) {
    case FusedActivationKind::kNone:
    case FusedActivationKind::kRelu:
    case FusedActivationKind::kLeakyRelu:
    case FusedActivationKind::kTanh:
    case FusedActivationKind::kGelu:
      return false;
    case FusedActivationKind::kClip:
      return act.min > 0.0f || act.max < 0.0f;
    case FusedActivationKind::kSigmoid:
      return true;
  }
  return true;
}

bool BlockedConvApplies(const ConvGeometry& g) {
  const Window3d& w = g.window;
  if (w.in[0] != 1 || w.out[0] != 1 || w.kernel[0] != 1 || w.pad_begin[0] != 0 || w.pad_end[0] != 0) return false;
  for (int d = 0; d < 3; ++d) {
    if (w.dilation[d] != 1 || w.stride[d] < 1 || w.kernel[d] < 1 || w.pad_begin[d] < 0 || w.pad_end[d] < 0) {
      return false;
    }
  }
  if (g.channels < 1 || g.out_channels < 1 || w.out_size() < 1) return false;
  if (g.group == 1) return true;
  return Depthwise(g) && w.taps() <= kMaxBlockedDepthwiseTaps;
}

int BlockedConvWinogradTile(const ConvGeometry& g) { return BlockedConvApplies(g) ? BlockedWinogradTile(g) : 0; }

void PreparedBlockedConv::Free::operator()(float* p) const { std::free(p); }

absl::StatusOr<PreparedBlockedConv> PrepareBlockedConv(const ConvGeometry& geometry, const float* weights,
                                                       BlockedConvAlgorithm algorithm) {
  if (!BlockedConvApplies(geometry)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PrepareBlockedConv: the blocked kernels take 1-D or 2-D convolutions without dilation, group 1 or "
        "depthwise (group == channels == out_channels, at most ",
        kMaxBlockedDepthwiseTaps, " taps); got channels ", geometry.channels, ", out_channels ", geometry.out_channels,
        ", group ", geometry.group));
  }
  PreparedBlockedConv prepared;
  prepared.geometry_ = geometry;
  prepared.depthwise_ = geometry.group > 1;
  if (!prepared.depthwise_) {
    switch (algorithm) {
      case BlockedConvAlgorithm::kAuto:
        prepared.winograd_tile_ = BlockedWinogradTile(geometry);
        break;
      case BlockedConvAlgorithm::kDirect:
        break;
      case BlockedConvAlgorithm::kWinograd2:
      case BlockedConvAlgorithm::kWinograd4: {
        // Applies at all: the geometry Winograd takes, whatever the tile count.
        ConvGeometry many_tiles = geometry;
        many_tiles.window.out[1] = many_tiles.window.out[2] = 64;
        if (BlockedWinogradTile(many_tiles) == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "PrepareBlockedConv: Winograd takes 2-D 3x3 convolutions with stride 1, group 1 and at least 16 input "
              "and output channels; got channels ",
              geometry.channels, ", out_channels ", geometry.out_channels, ", kernel ", geometry.window.kernel[1], "x",
              geometry.window.kernel[2], ", stride ", geometry.window.stride[1], "x", geometry.window.stride[2]));
        }
        prepared.winograd_tile_ = algorithm == BlockedConvAlgorithm::kWinograd2 ? 2 : 4;
        break;
      }
    }
  }
  const int64_t floats = prepared.depthwise_            ? BlockedDepthwiseWeightFloats(geometry)
                         : prepared.winograd_tile_ != 0 ? BlockedWinogradWeightFloats(geometry, prepared.winograd_tile_)
                                                        : BlockedDirectWeightFloats(geometry);
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(floats, 1)) * sizeof(float) + 63) / 64 * 64;
  prepared.weights_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (prepared.weights_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("PrepareBlockedConv: cannot allocate ", bytes, " bytes"));
  }
  if (prepared.depthwise_) {
    PackBlockedDepthwiseWeights(geometry, weights, prepared.weights_.get());
  } else if (prepared.winograd_tile_ != 0) {
    PackBlockedWinogradWeights(geometry, prepared.winograd_tile_, weights, prepared.weights_.get());
  } else {
    PackBlockedDirectWeights(geometry, weights, prepared.weights_.get());
  }
  return prepared;
}

void BlockedConvForward(const PreparedBlockedConv& prepared, int64_t batch, const float* x, bool x_blocked,
                        const float* bias, const float* residual, const FusedActivation& activation, float* y,
                        const ParallelForFn& parallel_for) {
  if (batch <= 0) return;
  if (prepared.depthwise_) {
    BlockedDepthwiseConv(prepared.geometry_, prepared.weights_.get(), batch, x, bias, residual, activation, y,
                         parallel_for);
  } else if (prepared.winograd_tile_ != 0) {
    const float* xb = x;
    if (!x_blocked) {
      // Winograd's input transform reads whole channel vectors: block a plain input first.
      const ConvGeometry& g = prepared.geometry_;
      thread_local AlignedFloatBuffer blocked;
      float* b = blocked.Get(batch * ChannelBlocks(g.channels) * kChannelBlock * g.window.in_size());
      BlockChannels(batch, g.channels, g.window.in_size(), x, b, parallel_for);
      xb = b;
    }
    BlockedWinogradConv(prepared.geometry_, prepared.winograd_tile_, prepared.weights_.get(), batch, xb, bias, residual,
                        activation, y, parallel_for);
  } else {
    BlockedDirectConv(prepared.geometry_, prepared.weights_.get(), batch, x, x_blocked, bias, residual, activation, y,
                      parallel_for);
  }
}

}  // namespace tsr
