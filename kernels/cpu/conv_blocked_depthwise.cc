// The channel-blocked depthwise convolution (conv_blocked_kernels.h): the weights packed
// per channel block as [kernel_h][kernel_w][16], the outputs' bands of equal valid taps,
// the split of the work over (image, channel block, output rows), the epilogue, and the
// portable path that computes the vector kernels' floats (conv_blocked_depthwise_simd.h).
//
// Every output is bias + the sum of its valid taps -- those reading inside the input;
// taps on the padding are skipped, not multiplied by zero -- kh outer, kw inner, one
// fused multiply-add each, then + residual: a definition fixed by the geometry alone, so
// every path and split gives the same floats.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_blocked_depthwise_row.h"
#include "kernels/cpu/conv_blocked_kernels.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

namespace {

// Output pixels of one block a work item covers when a block has more (at least one
// row): 16 KiB of output, which the epilogue then reads from L1.
constexpr int64_t kItemPixels = 256;

// Smaller blocks go whole, several to a kernel call -- each tile of the kernel runs
// through them, which pays its setup (and mispredicted loop exits) once for all --, up
// to this many output pixels per call.
constexpr int64_t kMergedPixels = 4096;

// Estimated cycles per output pixel (16 channels) and per tap, and per pixel for the
// rest (setup, stores, borders): the work items' cost for the ParallelFor.
constexpr int64_t kCyclesPerTap = 2;
constexpr int64_t kCyclesPerPixel = 16;

// The least cost worth a work item of its own (ThreadPool's kMinCostPerChunk).
constexpr int64_t kMinItemCost = 20000;

// The outputs along spatial dimension d in bands of equal valid taps, in order.
std::vector<BlockedDepthwiseBand> Bands(const Window3d& w, int d) {
  std::vector<BlockedDepthwiseBand> bands;
  for (int64_t o = 0; o < w.out[d]; ++o) {
    int64_t lo, hi;
    w.ValidTaps(d, o, lo, hi);
    if (!bands.empty() && bands.back().tap_begin == lo && bands.back().tap_end == hi) {
      bands.back().end = o + 1;
    } else {
      bands.push_back({o, o + 1, lo, hi});
    }
  }
  return bands;
}

// The vector kernels' floats, lane by lane.
void BlockedDepthwiseRowsPortable(const BlockedDepthwiseRows& r) {
  for (int64_t b = 0; b < r.blocks; ++b) {
    const float* x_block = r.x + b * r.x_block;
    const float* w_block = r.weights + b * r.weights_block;
    const float* bias = r.bias + b * kChannelBlock;
    const float* residual = r.residual != nullptr ? r.residual + b * r.y_block : nullptr;
    float* y = r.y + b * r.y_block;
    for (int64_t rb = 0; rb < r.n_row_bands; ++rb) {
      const BlockedDepthwiseBand& rows = r.row_bands[rb];
      const int64_t oh_begin = std::max(rows.first, r.oh_begin), oh_end = std::min(rows.end, r.oh_end);
      for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
        for (int64_t cb = 0; cb < r.n_col_bands; ++cb) {
          const BlockedDepthwiseBand& cols = r.col_bands[cb];
          for (int64_t ow = cols.first; ow < cols.end; ++ow) {
            float acc[kChannelBlock];
            std::copy(bias, bias + kChannelBlock, acc);
            for (int64_t kh = rows.tap_begin; kh < rows.tap_end; ++kh) {
              const int64_t ih = oh * r.stride_h - r.pad_top + kh;
              for (int64_t kw = cols.tap_begin; kw < cols.tap_end; ++kw) {
                const int64_t iw = ow * r.stride_w - r.pad_left + kw;
                const float* x = x_block + ((ih - r.x_row0) * r.in_w + iw) * kChannelBlock;
                const float* w = w_block + (kh * r.kernel_w + kw) * kChannelBlock;
                for (int64_t l = 0; l < kChannelBlock; ++l) acc[l] = std::fma(w[l], x[l], acc[l]);
              }
            }
            const int64_t at = ((oh - r.y_row0) * r.out_w + ow) * kChannelBlock;
            for (int64_t l = 0; l < kChannelBlock; ++l) {
              const float v = residual != nullptr ? acc[l] + residual[at + l] : acc[l];
              y[at + l] = ClampLikeRegisters(r.clamp, r.clamp_lo, r.clamp_hi, v);
            }
          }
        }
      }
    }
  }
}

}  // namespace

int64_t BlockedDepthwiseWeightFloats(const ConvGeometry& g) {
  return ChannelBlocks(g.channels) * g.window.taps() * kChannelBlock;
}

void PackBlockedDepthwiseWeights(const ConvGeometry& g, const float* weights, float* packed) {
  const int64_t taps = g.window.taps();
  std::fill_n(packed, BlockedDepthwiseWeightFloats(g), 0.0f);
  for (int64_t c = 0; c < g.channels; ++c) {
    float* block = packed + (c / kChannelBlock) * taps * kChannelBlock + c % kChannelBlock;
    for (int64_t t = 0; t < taps; ++t) block[t * kChannelBlock] = weights[c * taps + t];
  }
}

BlockedDepthwisePlan::BlockedDepthwisePlan(const ConvGeometry& g, const float* packed, const float* bias,
                                           const FusedActivation& activation)
    : geometry_(g),
      packed_(packed),
      activation_(activation),
      clamp_(ClampInRegisters(activation)),
      row_bands_(Bands(g.window, 1)),
      col_bands_(Bands(g.window, 2)),
      bias_lanes_(static_cast<size_t>(ChannelBlocks(g.channels) * kChannelBlock), 0.0f),
      isa_(ActiveCpuIsa()) {
  if (bias != nullptr) std::copy(bias, bias + g.channels, bias_lanes_.begin());
}

void BlockedDepthwisePlan::Run(const BlockedDepthwiseSlice& s) const {
  const Window3d& w = geometry_.window;
  const int64_t taps = w.taps(), out_w = w.out[2];
  BlockedDepthwiseRows r;
  r.x = s.x;
  r.weights = packed_ + s.block * taps * kChannelBlock;
  r.bias = bias_lanes_.data() + s.block * kChannelBlock;
  r.residual = s.residual;
  r.y = s.y;
  r.blocks = s.blocks;
  r.x_block = s.x_block;
  r.weights_block = taps * kChannelBlock;
  r.y_block = s.y_block;
  r.in_w = w.in[2];
  r.out_w = out_w;
  r.kernel_w = w.kernel[2];
  r.stride_h = w.stride[1];
  r.stride_w = w.stride[2];
  r.pad_top = w.pad_begin[1];
  r.pad_left = w.pad_begin[2];
  r.row_bands = row_bands_.data();
  r.n_row_bands = static_cast<int64_t>(row_bands_.size());
  r.col_bands = col_bands_.data();
  r.n_col_bands = static_cast<int64_t>(col_bands_.size());
  r.oh_begin = s.oh_begin;
  r.oh_end = s.oh_end;
  r.x_row0 = s.x_row0;
  r.y_row0 = s.y_row0;
  r.clamp = clamp_;
  r.clamp_lo = activation_.min;
  r.clamp_hi = activation_.max;
  if (isa_ >= CpuIsa::kAvx512) {
    BlockedDepthwiseRowsAvx512(r);
  } else if (isa_ >= CpuIsa::kAvx2) {
    BlockedDepthwiseRowsAvx2(r);
  } else {
    BlockedDepthwiseRowsPortable(r);
  }
  // The activations not applied in registers (all but Relu and Clip) on the outputs just
  // written, while they are in cache (one run: the slice has one block, or all the rows of
  // its blocks); then the lanes past the channels back to zero (Sigmoid(0) and Clip's min
  // are not).
  const int64_t rows = s.oh_end - s.oh_begin, y_rows = s.y_block / (out_w * kChannelBlock);
  const int64_t lanes = geometry_.channels - (ChannelBlocks(geometry_.channels) - 1) * kChannelBlock;
  const bool last_block_partial = lanes < kChannelBlock && s.block + s.blocks == ChannelBlocks(geometry_.channels);
  if (activation_.kind != FusedActivationKind::kNone && clamp_ == BlockedDirectClamp::kNone) {
    float* run = s.y + (s.oh_begin - s.y_row0) * out_w * kChannelBlock;
    const int64_t pixels = (s.blocks - 1) * y_rows * out_w + rows * out_w;
    ApplyFusedEpilogue(activation_, nullptr, run, pixels * kChannelBlock, isa_);
  }
  if (last_block_partial) {
    float* last = s.y + (s.blocks - 1) * s.y_block + (s.oh_begin - s.y_row0) * out_w * kChannelBlock;
    for (int64_t p = 0; p < rows * out_w; ++p) {
      std::fill(last + p * kChannelBlock + lanes, last + (p + 1) * kChannelBlock, 0.0f);
    }
  }
}

void BlockedDepthwiseConv(const ConvGeometry& g, const float* packed, int64_t batch, const float* x, const float* bias,
                          const float* residual, const FusedActivation& activation, float* y,
                          const ParallelForFn& parallel_for) {
  const Window3d& w = g.window;
  const int64_t channels = g.channels, blocks = ChannelBlocks(channels);
  const int64_t out_h = w.out[1], out_w = w.out[2], out_pixels = out_h * out_w, taps = w.taps();
  const int64_t in_block = w.in[1] * w.in[2] * kChannelBlock, out_block = out_pixels * kChannelBlock;
  const BlockedDepthwisePlan plan(g, packed, bias, activation);
  // Work items: a block's rows, kItemPixels outputs at a time; or, for smaller
  // outputs, whole blocks, split into a power of two of equal items per image -- the
  // most that keeps items above kMinItemCost, at most 16 -- so that two threads (or
  // four...) get equal shares, not the pool's uneven split of a small op.
  const int64_t pixel_cost = kCyclesPerTap * taps + kCyclesPerPixel;
  const int64_t item_rows = std::min(out_h, std::max<int64_t>(1, kItemPixels / out_w));
  const int64_t row_items = (out_h + item_rows - 1) / item_rows;
  int64_t block_items = 1;
  if (row_items == 1) {
    while (2 * block_items <= std::min<int64_t>(blocks, 16) &&
           blocks * out_pixels * pixel_cost >= 2 * block_items * kMinItemCost) {
      block_items *= 2;
    }
  }
  const int64_t item_blocks = row_items > 1 ? 1 : (blocks + block_items - 1) / block_items;
  block_items = (blocks + item_blocks - 1) / item_blocks;
  const int64_t items_per_image = block_items * row_items;
  // Whole-block items next to each other in one image go to the kernel together.
  const int64_t merged_blocks = std::max(item_blocks, kMergedPixels / out_pixels);
  RunParallelFor(parallel_for, batch * items_per_image, item_blocks * item_rows * out_w * pixel_cost,
                 [&](int64_t begin, int64_t end) {
                   for (int64_t u = begin; u < end;) {
                     // Rows outer: a thread's share is a band of rows of every block, the
                     // band the pointwise convolutions around it split their pixels into.
                     const int64_t n = u / items_per_image, row_item = u % items_per_image / block_items,
                                   b = u % items_per_image % block_items * item_blocks;
                     int64_t n_blocks = std::min(item_blocks, blocks - b);
                     ++u;
                     if (row_items == 1) {
                       for (; u < end && u / items_per_image == n && n_blocks + item_blocks <= merged_blocks; ++u) {
                         n_blocks = std::min(n_blocks + item_blocks, blocks - b);
                       }
                     }
                     const int64_t nb = n * blocks + b;
                     BlockedDepthwiseSlice s;
                     s.x = x + nb * in_block;
                     s.x_block = in_block;
                     s.y = y + nb * out_block;
                     s.residual = residual != nullptr ? residual + nb * out_block : nullptr;
                     s.y_block = out_block;
                     s.block = b;
                     s.blocks = n_blocks;
                     s.oh_begin = row_item * item_rows;
                     s.oh_end = std::min(out_h, s.oh_begin + item_rows);
                     plan.Run(s);
                   }
                 });
}

}  // namespace tsr
