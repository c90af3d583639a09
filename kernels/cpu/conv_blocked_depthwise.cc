// The channel-blocked depthwise convolution (conv_blocked_kernels.h): the weights packed
// per channel block as [kernel_h][kernel_w][16], the outputs' bands of equal valid taps,
// the split of the work over (image, channel block, output rows), the epilogue, and the
// portable path that computes the AVX-512 kernel's floats (conv_blocked_depthwise_avx512.cc).
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

// BlockedDepthwiseRowsAvx512's floats, lane by lane.
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
                const float* x = x_block + (ih * r.in_w + iw) * kChannelBlock;
                const float* w = w_block + (kh * r.kernel_w + kw) * kChannelBlock;
                for (int64_t l = 0; l < kChannelBlock; ++l) acc[l] = std::fma(w[l], x[l], acc[l]);
              }
            }
            const int64_t at = (oh * r.out_w + ow) * kChannelBlock;
            for (int64_t l = 0; l < kChannelBlock; ++l) {
              y[at + l] = residual != nullptr ? acc[l] + residual[at + l] : acc[l];
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

void BlockedDepthwiseConv(const ConvGeometry& g, const float* packed, int64_t batch, const float* x, const float* bias,
                          const float* residual, const FusedActivation& activation, float* y,
                          const ParallelForFn& parallel_for) {
  const Window3d& w = g.window;
  const int64_t channels = g.channels, blocks = ChannelBlocks(channels);
  const int64_t out_h = w.out[1], out_w = w.out[2], out_pixels = out_h * out_w, taps = w.taps();
  const int64_t in_block = w.in[1] * w.in[2] * kChannelBlock, out_block = out_pixels * kChannelBlock;
  const std::vector<BlockedDepthwiseBand> row_bands = Bands(w, 1), col_bands = Bands(w, 2);
  const CpuIsa isa = ActiveCpuIsa();
  const auto rows_fn = isa >= CpuIsa::kAvx512 ? BlockedDepthwiseRowsAvx512 : BlockedDepthwiseRowsPortable;
  // Each block's bias as sixteen lanes, zeros past the channels.
  std::vector<float> bias_lanes(static_cast<size_t>(blocks * kChannelBlock), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + channels, bias_lanes.begin());
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
                     BlockedDepthwiseRows r;
                     r.x = x + nb * in_block;
                     r.weights = packed + b * taps * kChannelBlock;
                     r.bias = bias_lanes.data() + b * kChannelBlock;
                     r.residual = residual != nullptr ? residual + nb * out_block : nullptr;
                     r.y = y + nb * out_block;
                     r.blocks = n_blocks;
                     r.x_block = in_block;
                     r.weights_block = taps * kChannelBlock;
                     r.y_block = out_block;
                     r.in_w = w.in[2];
                     r.out_w = out_w;
                     r.kernel_w = w.kernel[2];
                     r.stride_h = w.stride[1];
                     r.stride_w = w.stride[2];
                     r.pad_top = w.pad_begin[1];
                     r.pad_left = w.pad_begin[2];
                     r.row_bands = row_bands.data();
                     r.n_row_bands = static_cast<int64_t>(row_bands.size());
                     r.col_bands = col_bands.data();
                     r.n_col_bands = static_cast<int64_t>(col_bands.size());
                     r.oh_begin = row_item * item_rows;
                     r.oh_end = std::min(out_h, r.oh_begin + item_rows);
                     rows_fn(r);
                     // The epilogue on the outputs just written, while they are in cache (one run: an
                     // item has either one block or whole blocks); then the lanes past the channels
                     // back to zero (Sigmoid(0) and Clip's min are not).
                     float* run = r.y + r.oh_begin * out_w * kChannelBlock;
                     const int64_t pixels = (r.blocks - 1) * out_pixels + (r.oh_end - r.oh_begin) * out_w;
                     if (activation.kind != FusedActivationKind::kNone) {
                       ApplyFusedEpilogue(activation, nullptr, run, pixels * kChannelBlock, isa);
                     }
                     const int64_t lanes = channels - (blocks - 1) * kChannelBlock;
                     if (lanes < kChannelBlock && b + r.blocks == blocks) {
                       float* last = r.y + (r.blocks - 1) * out_block + r.oh_begin * out_w * kChannelBlock;
                       for (int64_t p = 0; p < (r.oh_end - r.oh_begin) * out_w; ++p) {
                         std::fill(last + p * kChannelBlock + lanes, last + (p + 1) * kChannelBlock, 0.0f);
                       }
                     }
                   }
                 });
}

}  // namespace tsr
