// The channel-blocked layout's conversions, the geometry check, the weight preparation
// and the dispatch to the direct or depthwise kernels (conv_blocked_kernels.h).
#include "kernels/cpu/conv_blocked.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
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
  const bool avx512 = ActiveCpuIsa() >= CpuIsa::kAvx512;
  ForEachChunk(batch, channels, pixels, parallel_for,
               [&](int64_t lanes, int64_t p0, int64_t p1, int64_t plain_offset, int64_t blocked_offset) {
                 const float* src = x + plain_offset;
                 float* dst = y + blocked_offset;
                 if (avx512) {
                   BlockPixelsAvx512(lanes, pixels, p0, p1, src, dst);
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
  const bool avx512 = ActiveCpuIsa() >= CpuIsa::kAvx512;
  ForEachChunk(batch, channels, pixels, parallel_for,
               [&](int64_t lanes, int64_t p0, int64_t p1, int64_t plain_offset, int64_t blocked_offset) {
                 const float* src = x + blocked_offset;
                 float* dst = y + plain_offset;
                 if (avx512) {
                   UnblockPixelsAvx512(lanes, pixels, p0, p1, src, dst);
                   return;
                 }
                 for (int64_t l = 0; l < lanes; ++l) {
                   for (int64_t p = p0; p < p1; ++p) dst[l * pixels + p] = src[p * kChannelBlock + l];
                 }
               });
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

void PreparedBlockedConv::Free::operator()(float* p) const { std::free(p); }

absl::StatusOr<PreparedBlockedConv> PrepareBlockedConv(const ConvGeometry& geometry, const float* weights) {
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
  const int64_t floats =
      prepared.depthwise_ ? BlockedDepthwiseWeightFloats(geometry) : BlockedDirectWeightFloats(geometry);
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(floats, 1)) * sizeof(float) + 63) / 64 * 64;
  prepared.weights_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (prepared.weights_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("PrepareBlockedConv: cannot allocate ", bytes, " bytes"));
  }
  if (prepared.depthwise_) {
    PackBlockedDepthwiseWeights(geometry, weights, prepared.weights_.get());
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
  } else {
    BlockedDirectConv(prepared.geometry_, prepared.weights_.get(), batch, x, x_blocked, bias, residual, activation, y,
                      parallel_for);
  }
}

}  // namespace tsr
