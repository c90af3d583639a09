// The channel-blocked depthwise convolution's inner loops (see BlockedDepthwiseRows in
// conv_blocked_depthwise_row.h), written once over the channel-block vector
// (channel_block_simd.h) and instantiated by conv_blocked_depthwise_avx512.cc and
// conv_blocked_depthwise_avx2.cc: every vector one pixel's sixteen channels, read
// straight from the blocked input (no transposes, no padded copy).
//
// The outputs of a channel block are cut into rectangles -- a band of rows times a band
// of columns -- whose outputs all have the same valid taps, so that each rectangle runs
// one loop over its taps with no bounds checks: the interior takes every tap, the
// borders the taps that read inside the input. A rectangle is covered by tiles of W
// columns by R rows, W * R independent sums in registers (bias first, then one
// multiply-add per tap, each tap's weights loaded once per tile), stored with the
// residual added and the clamp (Relu, Clip) applied.
//
// Included ONLY by the per-ISA files: internal linkage throughout (see
// gemm_microkernel_simd.h).
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_DEPTHWISE_SIMD_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_DEPTHWISE_SIMD_H_

#include <cstdint>
#include <utility>

#include "kernels/cpu/conv_blocked_depthwise_row.h"

namespace tsr {
namespace blocked_depthwise_internal {
namespace {

constexpr int kLanes = 16;

// What the tiles of one rectangle share.
struct Rect {
  int64_t kh_count, kw_count;  // valid taps
  int64_t x_tap_row;           // floats from one input row to the next
  int64_t w_tap_row;           // from one kernel row's weights to the next
  int64_t x_column;            // between the inputs of horizontally adjacent outputs
  int64_t x_row;               // between the inputs of vertically adjacent outputs
  int64_t y_row;               // from one output row to the next
  BlockedDirectClamp clamp;    // applied before each store
  float clamp_lo, clamp_hi;
};

// From one tile to the next (floats): the next W outputs of the rows, or the same
// outputs of the next channel block.
struct Walk {
  int64_t x, weights, bias, y;
};

// Tiles of W outputs by R rows: `groups` groups of R rows one under the other, each of
// `count` tiles `walk` apart. The first tile's outputs start at y (residual: at the same
// place, or null), its first valid tap reads x with the weights w.
struct Grid {
  const float* x;
  const float* w;
  const float* bias;
  const float* residual;
  float* y;
  int64_t groups, count;
  Walk walk;
};

// V: the channel-block vector traits.
template <class V>
struct DepthwiseKernel {
  using Vec = typename V::Vec;

  // S is the W stride when 1 or 2 (column offsets become constants), else 0 (read from
  // the rect). B tiles go at once (count a multiple of B): through the blocks, B > 1 gives
  // small tiles (the borders) more independent sums than their own few.
  template <int W, int R, int S, int B>
  static void Tiles(const Rect& a, const Grid& g) {
    constexpr int kN = W * R;
    const int64_t column = S > 0 ? S * kLanes : a.x_column;
    const int64_t y_row = a.y_row;
    const Walk& walk = g.walk;
    for (int64_t group = 0; group < g.groups; ++group) {
      const float* x = g.x + group * R * a.x_row;
      const float* w = g.w;
      const float* bias = g.bias;
      const float* residual = g.residual != nullptr ? g.residual + group * R * y_row : nullptr;
      float* y = g.y + group * R * y_row;
      for (int64_t t = 0; t < g.count; t += B) {
        Vec acc[B][kN];
#pragma GCC unroll 4
        for (int b = 0; b < B; ++b) {
          const Vec bias_b = V::LoadU(bias + b * walk.bias);
#pragma GCC unroll 16
          for (int i = 0; i < kN; ++i) acc[b][i] = bias_b;
        }
        const float* w_row = w;
        const float* x_row = x;
        for (int64_t kh = 0; kh < a.kh_count; ++kh) {
          for (int64_t kw = 0; kw < a.kw_count; ++kw) {
#pragma GCC unroll 4
            for (int b = 0; b < B; ++b) {
              const Vec wv = V::Load(w_row + b * walk.weights + kw * kLanes);
              const float* src = x_row + b * walk.x + kw * kLanes;
              // With few sums, the compiler keeps the inputs one tap shares with the next
              // (stride 1) in registers; with more, it would spill them: there src is
              // opaque to it, and every multiply-add reads its input.
              if constexpr (B * kN > kKeepInputsSums) __asm__("" : "+r"(src));
#pragma GCC unroll 16
              for (int i = 0; i < kN; ++i) {
                acc[b][i] = V::FmaV(wv, V::LoadU(src + (i / W) * a.x_row + (i % W) * column), acc[b][i]);
              }
            }
          }
          w_row += a.w_tap_row;
          x_row += a.x_tap_row;
        }
        const Vec clamp_lo = V::Set1(a.clamp_lo), clamp_hi = V::Set1(a.clamp_hi);
#pragma GCC unroll 4
        for (int b = 0; b < B; ++b) {
          float* y_b = y + b * walk.y;
          const float* residual_b = residual != nullptr ? residual + b * walk.y : nullptr;
#pragma GCC unroll 16
          for (int i = 0; i < kN; ++i) {
            const int64_t at = (i / W) * y_row + (i % W) * kLanes;
            Vec v = acc[b][i];
            if (residual_b != nullptr) v = V::Add(v, V::LoadU(residual_b + at));
            v = ClampBlock<V>(a.clamp, v, clamp_lo, clamp_hi);
            V::StoreU(y_b + at, v);
          }
        }
        if (residual != nullptr) residual += B * walk.y;
        x += B * walk.x;
        w += B * walk.weights;
        bias += B * walk.bias;
        y += B * walk.y;
      }
    }
  }

  using TilesFn = void (*)(const Rect&, const Grid&);

  // Tiles are at most kMaxTileWidth wide and hold at most kMaxSums sums (AVX-512: 16,
  // 8 for the narrowest -- enough independent chains to hide the multiply-add's latency
  // --; AVX2, where a sum takes two of the sixteen registers: 6).
  static constexpr bool kWide = V::kRegsPerVec == 1;
  static constexpr int kMaxTileWidth = kWide ? 8 : 6;
  static constexpr int kMaxRowsAny = kWide ? 8 : 6;
  static constexpr int MaxTileRows(int width) {
    return kWide ? (width <= 2 ? 8 : 16 / width) : (width <= 1 ? 6 : 6 / width);
  }
  static constexpr int kMaxTileRows[9] = {0,
                                          MaxTileRows(1),
                                          MaxTileRows(2),
                                          MaxTileRows(3),
                                          MaxTileRows(4),
                                          MaxTileRows(5),
                                          MaxTileRows(6),
                                          MaxTileRows(7),
                                          MaxTileRows(8)};
  // Through the blocks, tiles of n outputs go this many at a time.
  static constexpr int BlocksAtOnce(int n) {
    return kWide ? (n <= 2 ? 4 : n <= 8 ? 2 : 1) : (n <= 1 ? 4 : n <= 2 ? 3 : n <= 3 ? 2 : 1);
  }
  // Up to this many sums in a tile (all blocks at once), the compiler keeps the inputs
  // one tap shares with the next in registers.
  static constexpr int kKeepInputsSums = kWide ? 10 : 2;

  struct TileTable {
    TilesFn fn[kMaxTileWidth][kMaxRowsAny];  // [width - 1][rows - 1]
  };

  template <int S, bool kThroughBlocks, int W, int... Rs>
  static constexpr void FillWidth(TileTable& table, std::integer_sequence<int, Rs...>) {
    ((table.fn[W - 1][Rs] = &Tiles < W, Rs + 1, S, kThroughBlocks ? BlocksAtOnce(W * (Rs + 1)) : 1 >), ...);
  }

  template <int S, bool kThroughBlocks, int... Ws>
  static constexpr TileTable MakeTileTable(std::integer_sequence<int, Ws...>) {
    TileTable table{};
    (FillWidth<S, kThroughBlocks, Ws + 1>(table, std::make_integer_sequence<int, MaxTileRows(Ws + 1)>()), ...);
    return table;
  }

  // [through the blocks][W stride: any (read at run time), 1, 2].
  static constexpr auto kWidths = std::make_integer_sequence<int, kMaxTileWidth>();
  static constexpr TileTable kTileTables[2][3] = {
      {MakeTileTable<0, false>(kWidths), MakeTileTable<1, false>(kWidths), MakeTileTable<2, false>(kWidths)},
      {MakeTileTable<0, true>(kWidths), MakeTileTable<1, true>(kWidths), MakeTileTable<2, true>(kWidths)}};

  static void Rows(const BlockedDepthwiseRows& r) {
    const int stride_index = r.stride_w <= 2 ? static_cast<int>(r.stride_w) : 0;
    const TileTable& table = kTileTables[0][stride_index];
    const TileTable& table_through_blocks = kTileTables[1][stride_index];
    Rect a;
    a.x_tap_row = r.in_w * kLanes;
    a.w_tap_row = r.kernel_w * kLanes;
    a.x_column = r.stride_w * kLanes;
    a.x_row = r.stride_h * r.in_w * kLanes;
    a.y_row = r.out_w * kLanes;
    a.clamp = r.clamp;
    a.clamp_lo = r.clamp_lo;
    a.clamp_hi = r.clamp_hi;
    for (int64_t rb = 0; rb < r.n_row_bands; ++rb) {
      const BlockedDepthwiseBand& rows = r.row_bands[rb];
      const int64_t oh_begin = rows.first > r.oh_begin ? rows.first : r.oh_begin;
      const int64_t oh_end = rows.end < r.oh_end ? rows.end : r.oh_end;
      if (oh_begin >= oh_end) continue;
      for (int64_t cb = 0; cb < r.n_col_bands; ++cb) {
        const BlockedDepthwiseBand& cols = r.col_bands[cb];
        a.kh_count = rows.tap_end - rows.tap_begin;
        a.kw_count = cols.tap_end - cols.tap_begin;
        // Without valid taps the outputs are the bias, and x is not read.
        const bool reads = a.kh_count > 0 && a.kw_count > 0;
        if (!reads) a.kh_count = 0;
        // The rectangle [oh_begin, oh_end) x cols in tiles: kMaxTileWidth columns (or all,
        // when fewer) and a narrower one for the rest of the columns; the most rows such a
        // tile takes, and one with the rest of the rows.
        const int64_t n_cols = cols.end - cols.first, n_rows = oh_end - oh_begin;
        const bool wide = n_cols >= kMaxTileWidth;
        const int width = wide ? kMaxTileWidth : static_cast<int>(n_cols);
        const int64_t full_cols = wide ? n_cols / kMaxTileWidth : 1;
        const int rest_cols = wide ? static_cast<int>(n_cols % kMaxTileWidth) : 0;
        const int max_rows = kMaxTileRows[width];
        // (32-bit: a 64-bit division costs as much as a small tile.)
        const int64_t full_rows = static_cast<uint32_t>(n_rows) / static_cast<uint32_t>(max_rows);
        const int rest_rows = static_cast<int>(n_rows - full_rows * max_rows);
        const Walk along_row{reads ? width * a.x_column : 0, 0, 0, width * kLanes};
        const Walk through_blocks{r.x_block, r.weights_block, kLanes, r.y_block};
        const float* w = r.weights + (rows.tap_begin * r.kernel_w + cols.tap_begin) * kLanes;
        Grid g;
        g.w = w;
        g.bias = r.bias;
        // The tiles of tile_w x tile_r outputs from output (oh, ow).
        auto run = [&](int tile_w, int tile_r, int64_t oh, int64_t ow, int64_t groups, int64_t count,
                       const Walk& walk) {
          g.x = reads ? r.x + ((oh * r.stride_h - r.pad_top + rows.tap_begin - r.x_row0) * r.in_w + ow * r.stride_w -
                               r.pad_left + cols.tap_begin) *
                                  kLanes
                      : r.x;
          const int64_t y_at = ((oh - r.y_row0) * r.out_w + ow) * kLanes;
          g.residual = r.residual != nullptr ? r.residual + y_at : nullptr;
          g.y = r.y + y_at;
          g.groups = groups;
          g.walk = walk;
          if (&walk == &along_row) {
            g.count = count;
            table.fn[tile_w - 1][tile_r - 1](a, g);
            return;
          }
          // Through the blocks: BlocksAtOnce at a time, then one by one.
          const int at_once = BlocksAtOnce(tile_w * tile_r);
          g.count = count - count % at_once;
          if (g.count > 0) table_through_blocks.fn[tile_w - 1][tile_r - 1](a, g);
          if (g.count == count) return;
          g.x += g.count * walk.x;
          g.w += g.count * walk.weights;
          g.bias += g.count * walk.bias;
          if (g.residual != nullptr) g.residual += g.count * walk.y;
          g.y += g.count * walk.y;
          g.count = count % at_once;
          table.fn[tile_w - 1][tile_r - 1](a, g);
          g.w = w;
          g.bias = r.bias;
        };
        const int64_t rest_oh = oh_begin + full_rows * max_rows, rest_ow = cols.first + full_cols * width;
        if (r.blocks == 1) {
          // Along the rows.
          if (full_rows > 0) {
            run(width, max_rows, oh_begin, cols.first, full_rows, full_cols, along_row);
            if (rest_cols > 0) run(rest_cols, max_rows, oh_begin, rest_ow, full_rows, 1, along_row);
          }
          if (rest_rows > 0) {
            run(width, rest_rows, rest_oh, cols.first, 1, full_cols, along_row);
            if (rest_cols > 0) run(rest_cols, rest_rows, rest_oh, rest_ow, 1, 1, along_row);
          }
        } else {
          // Each tile through the blocks.
          for (int64_t j = 0; j < full_cols; ++j) {
            const int64_t ow = cols.first + j * width;
            if (full_rows > 0) run(width, max_rows, oh_begin, ow, full_rows, r.blocks, through_blocks);
            if (rest_rows > 0) run(width, rest_rows, rest_oh, ow, 1, r.blocks, through_blocks);
          }
          if (rest_cols > 0) {
            if (full_rows > 0) run(rest_cols, max_rows, oh_begin, rest_ow, full_rows, r.blocks, through_blocks);
            if (rest_rows > 0) run(rest_cols, rest_rows, rest_oh, rest_ow, 1, r.blocks, through_blocks);
          }
        }
      }
    }
  }
};

}  // namespace
}  // namespace blocked_depthwise_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_DEPTHWISE_SIMD_H_
