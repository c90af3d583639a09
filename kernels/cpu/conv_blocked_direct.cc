// The channel-blocked direct convolution (group 1; conv_blocked_kernels.h): the weight
// packing, the choice of register blocking, the thread split, and the portable
// fallback of the row kernels (conv_blocked_direct_simd.h: AVX-512 and AVX2).
//
// Packed weights: [out block][in block][kh][kw][in lane][out lane 16], zeros past the
// output channel count, so that one tap's input channels are consecutive output-lane
// vectors. The last input block holds only its channels (3 for an RGB image, not 16):
// a network's first convolution then reads its weights from one compact run (7x7 x 3 x
// 64 channels: 37 KB) instead of one 64-byte line per KB, which mapped every line of a
// tap to the same few L1 sets and reloaded them from L2 for every strip.
//
// Every output element is bias + its taps in (input block, kh, kw, input channel)
// order, one fused multiply-add each, skipping taps in the padding, then + residual
// (one add), then the activation: the AVX-512 kernel's strips of any width, its edge
// strips and the fallback compute the same floats, whatever the thread split.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_blocked_direct_row.h"
#include "kernels/cpu/conv_blocked_kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/transpose.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = kChannelBlock;
constexpr int64_t kTapFloats = kLanes * kLanes;

// The floats of one output block's packed weights: every tap of the full input blocks
// (16 x 16 each) and of the last one (its channels x 16).
int64_t WeightBlockFloats(const ConvGeometry& g) {
  const int64_t in_blocks = ChannelBlocks(g.channels);
  const int64_t last_channels = g.channels - (in_blocks - 1) * kLanes;
  return g.window.kernel[1] * g.window.kernel[2] * ((in_blocks - 1) * kTapFloats + last_channels * kLanes);
}

// A register blocking: the output blocks a strip holds and its widest width.
struct RegisterBlocking {
  int64_t out_blocks;
  int64_t max_width;
};

// The widest strips of the ISA's row kernel by output blocks at once.
const int64_t* MaxWidths(CpuIsa isa) {
  return isa >= CpuIsa::kAvx512 ? kBlockedDirectMaxWidthAvx512 : kBlockedDirectMaxWidthAvx2;
}

// The blocking that keeps the most accumulators busy on rows of `width` pixels with
// `out_blocks` output blocks in all: strips and groups are balanced, so a row of 7
// with 8-wide strips uses 7 of them, and 5 output blocks in groups of 4 use 2.5 of
// 4 on average. In AVX-512 one output block at a time (each broadcast feeding one
// FMA) only when there is one; in AVX2 a block is two vectors, so each broadcast
// feeds two FMAs even then. Ties go to the wider strips (fewer strips, less overhead
// per FMA).
RegisterBlocking ChooseBlocking(int64_t width, int64_t out_blocks, CpuIsa isa) {
  const int64_t* max_widths = MaxWidths(isa);
  if (out_blocks == 1) return {1, max_widths[1]};
  const int64_t min_blocks = isa >= CpuIsa::kAvx512 ? 2 : 1;
  RegisterBlocking best{min_blocks, max_widths[min_blocks]};
  double best_score = -1;
  for (int64_t b = min_blocks; b <= 4; ++b) {
    const int64_t max_width = max_widths[b];
    if (max_width == 0) continue;
    const int64_t strips = (width + max_width - 1) / max_width;
    const int64_t groups = (out_blocks + b - 1) / b;
    const double used = static_cast<double>(width) / strips * static_cast<double>(out_blocks) / groups;
    if (used > best_score + 1e-9) {
      best_score = used;
      best = {b, max_width};
    }
  }
  return best;
}

// The fallback of the vector row kernels: the same sums, one output at a time. std::fma
// keeps each term fused as the vector kernels' (in generic x86-64 code a libm call:
// this path is for correctness on CPUs without AVX2, not for speed).
void BlockedDirectRowPortable(const BlockedDirectRow& r) {
  float acc[kLanes];
  for (int64_t o = 0; o < r.out_blocks; ++o) {
    const int64_t lanes = o + 1 == r.out_blocks ? r.last_block_lanes : kLanes;
    for (int64_t ow = r.ow_begin; ow < r.ow_end; ++ow) {
      for (int64_t l = 0; l < kLanes; ++l) acc[l] = r.bias != nullptr ? r.bias[o * kLanes + l] : 0.0f;
      const int64_t col0 = ow * r.stride_w - r.pad_left;
      const int64_t kw_begin = std::max<int64_t>(0, -col0);
      const int64_t kw_end = std::min(r.kernel_w, r.in_w - col0);
      for (int64_t b = 0; b < r.in_blocks; ++b) {
        const int64_t channels = b + 1 == r.in_blocks ? r.last_block_channels : kLanes;
        const float* wb = r.weights + o * r.weight_block_stride + b * r.kernel_h * r.kernel_w * kTapFloats;
        for (int64_t kh = r.kh_begin; kh < r.kh_end; ++kh) {
          const float* x_row = r.x + b * r.block_stride + (r.in_row0 + kh) * r.row_stride;
          for (int64_t kw = kw_begin; kw < kw_end; ++kw) {
            const float* xp = x_row + (col0 + kw) * r.pixel_stride;
            const float* wp = wb + (kh * r.kernel_w + kw) * channels * kLanes;
            for (int64_t i = 0; i < channels; ++i) {
              const float v = xp[i * r.channel_stride];
              for (int64_t l = 0; l < kLanes; ++l) acc[l] = std::fma(wp[i * kLanes + l], v, acc[l]);
            }
          }
        }
      }
      float* y = r.y + o * r.y_block_stride + ow * kLanes;
      const float* z = r.residual != nullptr ? r.residual + o * r.y_block_stride + ow * kLanes : nullptr;
      for (int64_t l = 0; l < kLanes; ++l) {
        const float v = ClampLikeRegisters(r.clamp, r.clamp_lo, r.clamp_hi, z != nullptr ? acc[l] + z[l] : acc[l]);
        y[l] = l < lanes ? v : 0.0f;
      }
    }
  }
}

// A 1x1 convolution, group 1, without leading padding: output pixel (oh, ow) reads input
// (oh * stride_h, ow * stride_w).
bool IsUnpadded1x1(const ConvGeometry& g) {
  const Window3d& w = g.window;
  return g.group == 1 && w.kernel[0] == 1 && w.kernel[1] == 1 && w.kernel[2] == 1 && w.pad_begin[1] == 0 &&
         w.pad_begin[2] == 0;
}

// One with a stride above 1 whose every output pixel reads inside the input.
bool IsStridedPointwise(const ConvGeometry& g) {
  const Window3d& w = g.window;
  return IsUnpadded1x1(g) && (w.stride[1] > 1 || w.stride[2] > 1) && (w.out[1] - 1) * w.stride[1] < w.in[1] &&
         (w.out[2] - 1) * w.stride[2] < w.in[2];
}

// The blocked input of a strided 1x1 convolution, read as the dense image of the pixels
// it reads: each work item copies the pixels of its row of the flattened output image
// into a buffer of its thread ([in block][pixel][16], the row's blocks row_w pixels
// apart), which the next items of that thread reuse while they run the same row (for
// the other groups of output blocks).
class StridedRows {
 public:
  StridedRows(const ConvGeometry& g, const float* x)
      : x_(x),
        in_h_(g.window.in[1]),
        in_w_(g.window.in[2]),
        stride_h_(g.window.stride[1]),
        stride_w_(g.window.stride[2]),
        out_w_(g.window.out[2]),
        in_blocks_(ChannelBlocks(g.channels)),
        call_(next_call_.fetch_add(1, std::memory_order_relaxed)) {}

  // Pixels [p0, p0 + width) of image n, each block `row_w` pixels after the last.
  const float* Row(int64_t n, int64_t p0, int64_t width, int64_t row_w) const {
    thread_local AlignedFloatBuffer buffer;
    thread_local uint64_t cached_call = 0;
    thread_local int64_t cached_n = -1, cached_p0 = -1, cached_width = -1;
    float* rows = buffer.Get(in_blocks_ * row_w * kLanes);
    if (cached_call == call_ && cached_n == n && cached_p0 == p0 && cached_width == width) return rows;
    for (int64_t b = 0; b < in_blocks_; ++b) {
      const float* image = x_ + (n * in_blocks_ + b) * in_h_ * in_w_ * kLanes;
      float* dst = rows + b * row_w * kLanes;
      int64_t oh = p0 / out_w_, ow = p0 % out_w_;
      for (int64_t p = 0; p < width; ++p) {
        std::memcpy(dst + p * kLanes, image + (oh * stride_h_ * in_w_ + ow * stride_w_) * kLanes,
                    kLanes * sizeof(float));
        if (++ow == out_w_) {
          ow = 0;
          ++oh;
        }
      }
    }
    cached_call = call_;
    cached_n = n;
    cached_p0 = p0;
    cached_width = width;
    return rows;
  }

 private:
  static inline std::atomic<uint64_t> next_call_{1};
  const float* x_;
  const int64_t in_h_, in_w_, stride_h_, stride_w_, out_w_, in_blocks_;
  const uint64_t call_;  // tells this call's rows from an earlier call's in the buffers
};

// The dense form of a strided 1x1 convolution: its output's pixels as the input.
ConvGeometry DenseOfStrided(const ConvGeometry& g) {
  ConvGeometry dense = g;
  dense.window.in[1] = g.window.out[1];
  dense.window.in[2] = g.window.out[2];
  dense.window.stride[1] = dense.window.stride[2] = 1;
  dense.window.pad_end[1] = dense.window.pad_end[2] = 0;
  return dense;
}

// BlockedDirectConv; with `strided` (a strided 1x1 convolution's rows; `g` is its dense
// form, `x` its input, which only `strided` reads), the pointwise rows read through it.
void RunBlockedDirectConv(const ConvGeometry& g, const float* packed, int64_t batch, const float* x, bool x_blocked,
                          const float* bias, const float* residual, const FusedActivation& activation, float* y,
                          const ParallelForFn& parallel_for, const StridedRows* strided);

}  // namespace

int64_t BlockedDirectWeightFloats(const ConvGeometry& g) {
  return ChannelBlocks(g.out_channels) * WeightBlockFloats(g);
}

void PackBlockedDirectWeights(const ConvGeometry& g, const float* weights, float* packed) {
  const int64_t in_blocks = ChannelBlocks(g.channels);
  const int64_t kh_n = g.window.kernel[1], kw_n = g.window.kernel[2], taps = kh_n * kw_n;
  const int64_t block_floats = WeightBlockFloats(g);
  std::memset(packed, 0, static_cast<size_t>(BlockedDirectWeightFloats(g)) * sizeof(float));
  for (int64_t m = 0; m < g.out_channels; ++m) {
    for (int64_t c = 0; c < g.channels; ++c) {
      const float* src = weights + (m * g.channels + c) * taps;
      const int64_t b = c / kLanes;
      const int64_t tap_floats = (b + 1 == in_blocks ? g.channels - b * kLanes : kLanes) * kLanes;
      float* dst = packed + (m / kLanes) * block_floats + b * taps * kTapFloats + (c % kLanes) * kLanes + m % kLanes;
      for (int64_t t = 0; t < taps; ++t) dst[t * tap_floats] = src[t];
    }
  }
}

BlockedDirectPlan::BlockedDirectPlan(const ConvGeometry& g, const float* packed, const float* bias,
                                     const FusedActivation& activation, int64_t width)
    : packed_(packed),
      activation_(activation),
      out_blocks_(ChannelBlocks(g.out_channels)),
      last_lanes_(g.out_channels - (out_blocks_ - 1) * kLanes),
      weight_block_stride_(WeightBlockFloats(g)),
      isa_(ActiveCpuIsa()),
      clamp_(ClampInRegisters(activation)),
      zero_lanes_after_activation_(last_lanes_ < kLanes && ActivationMovesZero(activation)) {
  const RegisterBlocking blocking = ChooseBlocking(width, out_blocks_, isa_);
  group_blocks_ = blocking.out_blocks;
  max_width_ = blocking.max_width;
  groups_ = (out_blocks_ + group_blocks_ - 1) / group_blocks_;
  if (bias != nullptr) {
    bias_lanes_.assign(static_cast<size_t>(out_blocks_ * kLanes), 0.0f);
    std::copy(bias, bias + g.out_channels, bias_lanes_.begin());
  }
  pointwise_.in_blocks = ChannelBlocks(g.channels);
  pointwise_.last_block_channels = g.channels - (pointwise_.in_blocks - 1) * kLanes;
  pointwise_.channel_stride = 1;
  pointwise_.pixel_stride = kLanes;
  pointwise_.row_stride = 0;
  pointwise_.in_row0 = 0;
  pointwise_.kernel_h = pointwise_.kernel_w = 1;
  pointwise_.kh_begin = 0;
  pointwise_.kh_end = 1;
  pointwise_.stride_w = 1;
  pointwise_.pad_left = 0;
}

void BlockedDirectPlan::RunGroup(int64_t group, BlockedDirectRow& r) const {
  const int64_t ob0 = group * group_blocks_;
  const int64_t ob_count = std::min(group_blocks_, out_blocks_ - ob0);
  r.weights = packed_ + ob0 * weight_block_stride_;
  r.weight_block_stride = weight_block_stride_;
  r.bias = bias_lanes_.empty() ? nullptr : bias_lanes_.data() + ob0 * kLanes;
  r.y += ob0 * r.y_block_stride;
  if (r.residual != nullptr) r.residual += ob0 * r.y_block_stride;
  r.out_blocks = ob_count;
  r.last_block_lanes = ob0 + ob_count == out_blocks_ ? last_lanes_ : kLanes;
  r.max_width = max_width_;
  r.clamp = clamp_;
  r.clamp_lo = activation_.min;
  r.clamp_hi = activation_.max;
  if (isa_ >= CpuIsa::kAvx512) {
    BlockedDirectRowAvx512(r);
  } else if (isa_ >= CpuIsa::kAvx2) {
    BlockedDirectRowAvx2(r);
  } else {
    BlockedDirectRowPortable(r);
  }
  if (clamp_ != BlockedDirectClamp::kNone || activation_.kind == FusedActivationKind::kNone) return;
  // The other activations as a pass over the stored row, then the lanes past the
  // channels back to zero where act(0) is not 0.
  const int64_t floats = (r.ow_end - r.ow_begin) * kLanes;
  for (int64_t o = 0; o < ob_count; ++o) {
    float* run = r.y + o * r.y_block_stride + r.ow_begin * kLanes;
    ApplyFusedEpilogue(activation_, nullptr, run, floats, isa_);
    if (zero_lanes_after_activation_ && ob0 + o + 1 == out_blocks_) {
      for (int64_t p = 0; p < r.ow_end - r.ow_begin; ++p) {
        std::fill(run + p * kLanes + last_lanes_, run + (p + 1) * kLanes, 0.0f);
      }
    }
  }
}

void BlockedDirectPlan::RunPointwise(const float* x, int64_t x_block, int64_t pixels, const float* residual, float* y,
                                     int64_t y_block) const {
  const int64_t row_w = pointwise_row_width();
  for (int64_t p0 = 0; p0 < pixels; p0 += row_w) {
    const int64_t width = std::min(row_w, pixels - p0);
    for (int64_t group = 0; group < groups_; ++group) {
      BlockedDirectRow r = pointwise_;
      r.x = x + p0 * kLanes;
      r.block_stride = x_block;
      r.in_w = width;
      r.y = y + p0 * kLanes;
      r.residual = residual != nullptr ? residual + p0 * kLanes : nullptr;
      r.y_block_stride = y_block;
      r.ow_begin = 0;
      r.ow_end = width;
      RunGroup(group, r);
    }
  }
}

void BlockedDirectConv(const ConvGeometry& g, const float* packed, int64_t batch, const float* x, bool x_blocked,
                       const float* bias, const float* residual, const FusedActivation& activation, float* y,
                       const ParallelForFn& parallel_for) {
  RunBlockedDirectConv(g, packed, batch, x, x_blocked, bias, residual, activation, y, parallel_for, nullptr);
}

namespace {

void RunBlockedDirectConv(const ConvGeometry& g, const float* packed, int64_t batch, const float* x, bool x_blocked,
                          const float* bias, const float* residual, const FusedActivation& activation, float* y,
                          const ParallelForFn& parallel_for, const StridedRows* strided) {
  const Window3d& w = g.window;
  const int64_t in_h = w.in[1], in_w = w.in[2], out_h = w.out[1], out_w = w.out[2];
  const int64_t kernel_h = w.kernel[1], kernel_w = w.kernel[2];
  const int64_t in_blocks = ChannelBlocks(g.channels), out_blocks = ChannelBlocks(g.out_channels);
  const int64_t in_pixels = in_h * in_w, out_pixels = out_h * out_w;

  // A strided 1x1 convolution in AVX2 runs as a pointwise convolution over the dense
  // image of the pixels it reads (1 / (stride_h * stride_w) of the input), in strips of
  // full width however narrow the output rows (a 7-pixel row fills 3.5 of AVX2's 6
  // strip pixels and leaves the multiply-adds waiting on their latency). A thread's
  // consecutive work items then run the groups of one row, whose pixels the thread
  // copies once, in the convolution's one parallel loop, into a buffer that stays in its
  // cache -- unless the weights outweigh both the image and half of an L2 (ResNet's
  // 256-512 shortcut: 512 KB), which then go group by group over the rows of a dense
  // image copied first. Same terms in the same order: same floats.
  constexpr int64_t kRowOrderMaxWeightFloats = int64_t{64} << 10;  // 256 KB: half of a Zen core's L2
  if (x_blocked && IsStridedPointwise(g) && ActiveCpuIsa() == CpuIsa::kAvx2) {
    const ConvGeometry dense = DenseOfStrided(g);
    if (BlockedDirectWeightFloats(g) <= std::max(in_blocks * kLanes * out_pixels, kRowOrderMaxWeightFloats)) {
      const StridedRows rows(g, x);
      RunBlockedDirectConv(dense, packed, batch, x, true, bias, residual, activation, y, parallel_for, &rows);
      return;
    }
    thread_local AlignedFloatBuffer gathered_buffer;
    float* const gathered = gathered_buffer.Get(batch * in_blocks * out_pixels * kLanes);
    RunParallelFor(parallel_for, batch * in_blocks * w.out[1], w.out[2] * kLanes, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t oh = u % w.out[1], nb = u / w.out[1];
        const float* src = x + (nb * in_h + oh * w.stride[1]) * in_w * kLanes;
        float* dst = gathered + (nb * w.out[1] + oh) * w.out[2] * kLanes;
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          std::memcpy(dst + ow * kLanes, src + ow * w.stride[2] * kLanes, kLanes * sizeof(float));
        }
      }
    });
    RunBlockedDirectConv(dense, packed, batch, gathered, true, bias, residual, activation, y, parallel_for, nullptr);
    return;
  }

  // Input strides (floats) for blocked [blocks][h][w][16] or plain [channels][h][w].
  const float* xs = x;
  int64_t channel_stride = x_blocked ? 1 : in_pixels;
  int64_t pixel_stride = x_blocked ? kLanes : 1;
  int64_t row_stride = in_w * pixel_stride;
  const int64_t block_stride = kLanes * in_pixels;
  int64_t image_stride = x_blocked ? in_blocks * kLanes * in_pixels : g.channels * in_pixels;
  // What the row kernel sees of a kernel row: its columns, each of tap_channels channels
  // (the last block's), on rows of row_in_w valid tap starts after pad_left.
  int64_t tap_w = kernel_w, tap_channels = g.channels - (in_blocks - 1) * kLanes;
  int64_t row_in_w = in_w, pad_left = w.pad_begin[2];

  // A plain input of at most 16 channels under a kernel wider than one column (a
  // network's first convolution on an RGB image), in AVX2: the image is copied once,
  // channels interleaved and the row padding filled with zeros ([h][pad + w + pad][c]),
  // so that one kernel row's taps (kw, c) lie at consecutive floats, as the packed
  // weights' do: the row kernel runs each kernel row as one 1-column tap of
  // kernel_w * channels channels (7x7 on 3 channels: 21 multiply-adds per loop trip
  // instead of 3, no strip at a row's ends taking the edge path, the channels in one
  // cache line rather than three planes that share L1 sets). The taps in the padding
  // now add products with zero: the same sums, but for the sign of a zero sum. The copy
  // costs about as much as 20-26 multiply-adds per input element (2-3% of conv1's time
  // in perf's profile), so it is taken only where each input element feeds at least
  // 384 (conv1: 64 x 49 / 4 = 784; MobileNetV2's 3x3/2 stem to 32 channels, 72, ran
  // at 0.73 of oneDNN with it and 0.85-0.87 without).
  constexpr int64_t kInterleaveMinMacsPerInput = 384;
  const int64_t macs_per_input = g.out_channels * kernel_h * kernel_w / (w.stride[1] * w.stride[2]);
  if (!x_blocked && in_blocks == 1 && kernel_w > 1 && macs_per_input >= kInterleaveMinMacsPerInput &&
      ActiveCpuIsa() == CpuIsa::kAvx2) {
    const int64_t c_n = g.channels, stride_w = w.stride[2];
    const int64_t pad_right = std::max<int64_t>(0, (out_w - 1) * stride_w + kernel_w - pad_left - in_w);
    const int64_t padded_w = pad_left + in_w + pad_right;
    thread_local AlignedFloatBuffer interleaved_buffer;
    float* const interleaved = interleaved_buffer.Get(batch * in_h * padded_w * c_n);
    RunParallelFor(parallel_for, batch * in_h, padded_w * c_n, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t n = u / in_h, ih = u % in_h;
        const float* src = x + n * image_stride + ih * in_w;
        float* dst = interleaved + u * padded_w * c_n;
        std::fill(dst, dst + pad_left * c_n, 0.0f);
        // dst[iw * c_n + c] = src[c * in_pixels + iw]: the row's [c_n, in_w] transposed.
        TransposeBlock(sizeof(float), CpuIsa::kAvx2, src, in_pixels, dst + pad_left * c_n, c_n, in_w, c_n);
        std::fill(dst + (pad_left + in_w) * c_n, dst + padded_w * c_n, 0.0f);
      }
    });
    xs = interleaved;
    channel_stride = 1;
    pixel_stride = c_n;
    row_stride = padded_w * c_n;
    image_stride = in_h * row_stride;
    tap_w = 1;
    tap_channels = kernel_w * c_n;
    row_in_w = padded_w - kernel_w + 1;
    pad_left = 0;
  }

  // A 1x1 convolution with stride 1 and no padding reads pixel p for output pixel p:
  // the image is one long row, cut into rows of `row_w` so that each row's output is
  // still in cache for the epilogue and the rows split over threads.
  const bool pointwise = IsBlockedPointwise(g);

  const BlockedDirectPlan plan(g, packed, bias, activation, pointwise ? std::min<int64_t>(out_pixels, 4096) : out_w);
  int64_t row_w = out_w, rows = out_h;
  if (pointwise) {
    row_w = std::min(out_pixels, plan.pointwise_row_width());
    rows = (out_pixels + row_w - 1) / row_w;
  }
  const int64_t groups = plan.groups();

  // Each work item is one row of one image for one group of output blocks; with few
  // of them (small images, few output blocks), rows are cut into segments, so that
  // two threads get even shares.
  constexpr int64_t kMinItems = 16;
  int64_t segments = 1;
  const int64_t row_items = batch * groups * rows;
  if (row_items < kMinItems) {
    segments = std::min((kMinItems + row_items - 1) / row_items, std::max<int64_t>(1, row_w / plan.max_width()));
  }
  const int64_t items = row_items * segments;
  // Consecutive items (one thread's share) run the rows of one group, reusing its
  // weights, when those outweigh the image; else the groups of one row, reusing it.
  const bool groups_outer = strided == nullptr && BlockedDirectWeightFloats(g) > image_stride;
  const int64_t item_cost =
      (row_w / segments) * plan.group_blocks() * kLanes * in_blocks * kLanes * kernel_h * kernel_w;
  const int64_t y_block_stride = out_pixels * kLanes;

  RunParallelFor(parallel_for, items, item_cost, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t segment = u % segments, n = u / (segments * rows * groups);
      const int64_t outer = (u / segments) % (rows * groups);
      const int64_t row = groups_outer ? outer % rows : outer / groups;
      const int64_t group = groups_outer ? outer / rows : outer % groups;

      BlockedDirectRow r;
      r.channel_stride = channel_stride;
      r.pixel_stride = pixel_stride;
      r.block_stride = block_stride;
      r.in_blocks = in_blocks;
      r.last_block_channels = tap_channels;
      r.y_block_stride = y_block_stride;
      int64_t y_offset = n * out_blocks * y_block_stride;
      const float* x_image = xs + n * image_stride;
      int64_t width;
      if (pointwise) {
        // Row `row` of the flattened image: pixels [row * row_w, ...) as columns.
        const int64_t p0 = row * row_w;
        width = std::min(row_w, out_pixels - p0);
        if (strided != nullptr) {
          r.x = strided->Row(n, p0, width, row_w);
          r.block_stride = row_w * kLanes;
        } else {
          r.x = x_image + p0 * pixel_stride;
        }
        r.row_stride = 0;
        r.in_row0 = 0;
        r.in_w = width;
        r.kernel_h = r.kernel_w = 1;
        r.kh_begin = 0;
        r.kh_end = 1;
        r.stride_w = 1;
        r.pad_left = 0;
        y_offset += p0 * kLanes;
      } else {
        width = out_w;
        r.x = x_image;
        r.row_stride = row_stride;
        r.in_row0 = row * w.stride[1] - w.pad_begin[1];
        r.in_w = row_in_w;
        r.kernel_h = kernel_h;
        r.kernel_w = tap_w;
        w.ValidTaps(1, row, r.kh_begin, r.kh_end);
        r.stride_w = w.stride[2];
        r.pad_left = pad_left;
        y_offset += row * out_w * kLanes;
      }
      r.y = y + y_offset;
      r.residual = residual != nullptr ? residual + y_offset : nullptr;
      r.ow_begin = width * segment / segments;
      r.ow_end = width * (segment + 1) / segments;
      plan.RunGroup(group, r);
    }
  });
}

}  // namespace

bool IsBlockedPointwise(const ConvGeometry& g) {
  const Window3d& w = g.window;
  return IsUnpadded1x1(g) && w.stride[1] == 1 && w.stride[2] == 1 && w.out[1] == w.in[1] && w.out[2] == w.in[2];
}

}  // namespace tsr
