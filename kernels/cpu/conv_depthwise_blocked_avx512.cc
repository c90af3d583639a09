// The channel-blocked depthwise convolution (AVX-512F; see DepthwiseChannelBlock in
// conv_depthwise_row.h): sixteen channels at once, one per vector lane, as oneDNN runs
// depthwise layers in its nChw16c layout -- every tap one multiply-add per output pixel
// of all sixteen channels, with no edge columns, short rows or padding masks inside the
// loops. The planes are moved in and out of that layout here, through 16x16 register
// transposes: into a zero-padded [rows][columns][16] copy of the input, and from
// sixteen pixel vectors back to sixteen output planes.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cpu/avx512_transpose.h"
#include "kernels/cpu/conv_depthwise_row.h"

namespace tsr {

namespace {

constexpr int kLanes = 16;

__mmask16 FirstLanes16(int64_t n) { return n >= kLanes ? 0xFFFF : static_cast<__mmask16>((1u << n) - 1); }

// Outputs [ow0, ow0 + W) of output rows [oh, oh + R) -- R > 1 only for whole rows
// (ow0 == 0, W == out_w), so that the W * R outputs lie together in each plane: W * R
// independent sums, each bias + the taps in order, every tap one multiply-add of the
// sixteen channels; then stored to the sixteen output planes through one transpose.
template <int W, int R>
void Chunk(const DepthwiseChannelBlock& b, const float* scratch, int64_t cols, const float* tap_lanes,
           const int64_t* tap_offsets, int64_t n_taps, const float* bias_lanes, int64_t oh, int64_t ow0) {
  static_assert(W * R <= kLanes);
  __m512 acc[kLanes];
  const __m512 bias = _mm512_load_ps(bias_lanes);
#pragma GCC unroll 16
  for (int i = 0; i < W * R; ++i) acc[i] = bias;
  const float* origin = scratch + ((oh * b.stride_h) * cols + ow0 * b.stride_w) * kLanes;
  const int64_t column_step = b.stride_w * kLanes, row_step = b.stride_h * cols * kLanes;
  for (int64_t t = 0; t < n_taps; ++t) {
    const __m512 w = _mm512_load_ps(tap_lanes + t * kLanes);
    const float* src = origin + tap_offsets[t];
#pragma GCC unroll 16
    for (int i = 0; i < W * R; ++i) {
      acc[i] = _mm512_fmadd_ps(w, _mm512_loadu_ps(src + (i / W) * row_step + (i % W) * column_step), acc[i]);
    }
  }
#pragma GCC unroll 16
  for (int i = W * R; i < kLanes; ++i) acc[i] = _mm512_setzero_ps();
  Transpose16x16Avx512(acc);
  const int64_t plane = b.out_h * b.out_w;
  float* y = b.y + oh * b.out_w + ow0;
#pragma GCC unroll 16
  for (int c = 0; c < kLanes; ++c) {
    if (c < b.channels) _mm512_mask_storeu_ps(y + c * plane, FirstLanes16(W * R), acc[c]);
  }
}

using ChunkFn = void (*)(const DepthwiseChannelBlock&, const float*, int64_t, const float*, const int64_t*, int64_t,
                         const float*, int64_t, int64_t);

// Chunks of one row: widths 1 to 16.
template <int... Ws>
constexpr std::array<ChunkFn, sizeof...(Ws)> RowChunks(std::integer_sequence<int, Ws...>) {
  return {&Chunk<Ws + 1, 1>...};
}
// Chunks of whole rows of width W: 1 to 16 / W rows.
template <int W, int... Rs>
constexpr std::array<ChunkFn, sizeof...(Rs)> WholeRowChunks(std::integer_sequence<int, Rs...>) {
  return {&Chunk<W, Rs + 1>...};
}
template <int W>
ChunkFn WholeRows(int64_t rows) {
  static constexpr auto kTable = WholeRowChunks<W>(std::make_integer_sequence<int, kLanes / W>());
  return kTable[rows - 1];
}

// Rows of at most 8 outputs go several to a chunk, so that the chunk's transpose and
// stores serve more than 8 of its 16 lanes.
constexpr int64_t kMaxWholeRowWidth = 8;

// WholeRows<W> for widths 1 to kMaxWholeRowWidth.
template <int... Ws>
constexpr std::array<ChunkFn (*)(int64_t), sizeof...(Ws)> WholeRowsByWidth(std::integer_sequence<int, Ws...>) {
  return {&WholeRows<Ws + 1>...};
}

ChunkFn WholeRowsChunk(int64_t width, int64_t rows) {
  static constexpr auto kByWidth = WholeRowsByWidth(std::make_integer_sequence<int, kMaxWholeRowWidth>());
  return kByWidth[width - 1](rows);
}

}  // namespace

void DepthwiseChannelBlockAvx512(const DepthwiseChannelBlock& b) {
  // The padded rows and columns the outputs read (and no more of the input).
  const int64_t rows = (b.out_h - 1) * b.stride_h + b.kernel_h;
  const int64_t cols = (b.out_w - 1) * b.stride_w + b.kernel_w;
  thread_local std::vector<float> scratch;
  thread_local int64_t last_layout[7] = {-1};
  const size_t floats = static_cast<size_t>(rows * cols * kLanes);
  if (scratch.size() < floats) scratch.resize(floats);
  // The padding stays zero from one block to the next of the same layout: only the
  // input's pixels are written.
  const int64_t layout[7] = {
      reinterpret_cast<int64_t>(scratch.data()), rows, cols, b.pad_top, b.pad_left, b.in_h, b.in_w};
  if (!std::equal(layout, layout + 7, last_layout)) {
    std::fill_n(scratch.data(), floats, 0.0f);
    std::copy(layout, layout + 7, last_layout);
  }
  float* s = scratch.data();
  const int64_t in_plane = b.in_h * b.in_w;

  // Input rows into pixel vectors, sixteen columns at a time.
  const int64_t ih_end = std::min(b.in_h, rows - b.pad_top);
  const int64_t iw_end = std::min(b.in_w, cols - b.pad_left);
  for (int64_t ih = 0; ih < ih_end; ++ih) {
    float* dst_row = s + ((ih + b.pad_top) * cols + b.pad_left) * kLanes;
    for (int64_t iw0 = 0; iw0 < iw_end; iw0 += kLanes) {
      const int64_t n = std::min<int64_t>(kLanes, iw_end - iw0);
      __m512 r[kLanes];
#pragma GCC unroll 16
      for (int c = 0; c < kLanes; ++c) {
        r[c] = c < b.channels ? _mm512_maskz_loadu_ps(FirstLanes16(n), b.x + c * in_plane + ih * b.in_w + iw0)
                              : _mm512_setzero_ps();
      }
      Transpose16x16Avx512(r);
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) {
        if (i < n) _mm512_storeu_ps(dst_row + (iw0 + i) * kLanes, r[i]);
      }
    }
  }

  // Each tap's sixteen weights as one vector, and where the tap reads.
  const int64_t n_taps = b.kernel_h * b.kernel_w;
  alignas(64) float tap_lanes[kMaxDepthwiseBlockTaps * kLanes] = {};
  int64_t tap_offsets[kMaxDepthwiseBlockTaps];
  for (int64_t t = 0; t < n_taps; ++t) {
    for (int64_t c = 0; c < b.channels; ++c) tap_lanes[t * kLanes + c] = b.weights[c * n_taps + t];
    tap_offsets[t] = ((t / b.kernel_w) * cols + t % b.kernel_w) * kLanes;
  }
  alignas(64) float bias_lanes[kLanes] = {};
  for (int64_t c = 0; c < b.channels && b.bias != nullptr; ++c) bias_lanes[c] = b.bias[c];

  if (b.out_w <= kMaxWholeRowWidth) {
    const int64_t per_chunk = kLanes / b.out_w;
    for (int64_t oh = 0; oh < b.out_h; oh += per_chunk) {
      WholeRowsChunk(b.out_w, std::min(per_chunk, b.out_h - oh))(b, s, cols, tap_lanes, tap_offsets, n_taps, bias_lanes,
                                                                 oh, 0);
    }
    return;
  }
  static constexpr auto kRowChunks = RowChunks(std::make_integer_sequence<int, kLanes>());
  for (int64_t oh = 0; oh < b.out_h; ++oh) {
    for (int64_t ow0 = 0; ow0 < b.out_w; ow0 += kLanes) {
      kRowChunks[std::min<int64_t>(kLanes, b.out_w - ow0) - 1](b, s, cols, tap_lanes, tap_offsets, n_taps, bias_lanes,
                                                               oh, ow0);
    }
  }
}

}  // namespace tsr
