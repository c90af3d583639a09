// The Winograd Conv driver: transforms the weights (alpha^2 packed GEMM operands
// shared by every image and thread; once per call, or once for constant weights
// through WinogradPackWeights), then walks each image in blocks of tile
// rows small enough that the block's transformed input and GEMM products stay in
// L2, in three phases split over the threads -- input transform by channel, the
// alpha^2 GEMMs by xi, output transform (plus bias) by output channel. Each element
// sees the same operations whatever the split, so results do not depend on it.
#include "kernels/cpu/conv_winograd.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_winograd_transform.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm.h"

namespace tsr {

namespace {

// Transformed input plus GEMM products of one block, in floats: about 1 MiB, one
// core's L2.
constexpr int64_t kBlockFloats = int64_t{1} << 18;
// Padding past each row of transformed input (stored) and after the GEMM products
// (read) in whole vectors of 8 tiles.
constexpr int64_t kVectorPadding = 8;

// Below these, ChooseWinogradTile keeps the im2col GEMM.
constexpr int64_t kMinChannels = 16;
constexpr int64_t kMinTiles = 40;
// The same with the weights transformed once: measured on ResNet-18's 3x3 512@7
// (bench/conv_bench.cc, prepared column), F(2x2) on its 16 tiles runs 1.8x the im2col
// GEMM on prepared weights.
constexpr int64_t kMinTilesPrepared = 16;

bool Applies(const Window3d& w, int64_t group) {
  if (group != 1 || w.kernel[0] != 1 || w.in[0] != 1 || w.out[0] != 1) return false;
  for (int d = 1; d < 3; ++d) {
    if (w.kernel[d] != 3 || w.stride[d] != 1 || w.dilation[d] != 1) return false;
  }
  return w.out[1] > 0 && w.out[2] > 0;
}

// What one call needs, kept per calling thread.
struct Workspace {
  AlignedFloatBuffer v, products;
};

}  // namespace

int64_t WinogradInputScratchFloats(const WinogradPlane& p, int64_t tile_rows) {
  const int64_t twp = (p.tiles_w + 7) / 8 * 8;
  const int64_t alpha = p.tile + 2;
  return p.tile * (twp + 8) + (tile_rows * p.tile + 2) * alpha * twp;
}

int ChooseWinogradTile(const Window3d& w, int64_t channels, int64_t out_channels, int64_t group,
                       bool weights_prepared_once) {
  if (ActiveCpuIsa() < CpuIsa::kAvx2 || !Applies(w, group)) return 0;
  // Too few channels and the GEMMs are too thin to pay for the transforms.
  if (channels < kMinChannels || out_channels < kMinChannels) return 0;
  // The weight transform and its packing cost alpha^2 * channels * out_channels per
  // call, like the GEMMs of alpha^2 / tiles images: with few tiles they dominate.
  // Measured on ResNet-18 (bench/conv_bench.cc): F(4x4) wins from 28x28 outputs
  // (49 tiles), F(2x2) at 14x14 (49 tiles), neither at 7x7 -- unless the weights are
  // transformed once, when F(2x2) wins at 7x7 too.
  auto tiles = [&](int64_t m) { return ((w.out[1] + m - 1) / m) * ((w.out[2] + m - 1) / m); };
  if (tiles(4) >= kMinTiles) return 4;
  if (tiles(2) >= (weights_prepared_once ? kMinTilesPrepared : kMinTiles)) return 2;
  return 0;
}

void WinogradPackWeights(int tile, int64_t channels, int64_t out_channels, const float* weights,
                         const ParallelForFn& parallel_for, std::vector<SgemmPackedA>* packed) {
  const int64_t alpha = tile + 2, alpha2 = alpha * alpha;
  // U[xi] = G g Gt of every (out channel, channel), laid out [out channel][xi][channel]
  // (each output channel's transform writes one contiguous run), packed for the GEMM.
  const int64_t u_row = alpha2 * channels;
  thread_local AlignedFloatBuffer u_buffer;
  float* const u = u_buffer.Get(out_channels * u_row);
  RunParallelFor(parallel_for, out_channels, 40 * alpha2 * channels,
                 [&](int64_t o0, int64_t o1) { WinogradWeightsAvx2(tile, weights, channels, o0, o1, u); });
  packed->resize(static_cast<size_t>(alpha2));
  SgemmPackedA* const out = packed->data();
  RunParallelFor(parallel_for, alpha2, 2 * out_channels * channels, [&](int64_t x0, int64_t x1) {
    for (int64_t xi = x0; xi < x1; ++xi) out[xi].Pack(false, out_channels, channels, u + xi * channels, u_row);
  });
}

void WinogradConv(const Window3d& w, int tile, int64_t batch, int64_t channels, int64_t out_channels, const float* x,
                  const float* weights, const float* bias, float* y, const ParallelForFn& parallel_for) {
  thread_local std::vector<SgemmPackedA> packed;
  WinogradPackWeights(tile, channels, out_channels, weights, parallel_for, &packed);
  WinogradConvPacked(w, tile, batch, channels, out_channels, packed, x, bias, y, parallel_for);
}

void WinogradConvPacked(const Window3d& w, int tile, int64_t batch, int64_t channels, int64_t out_channels,
                        const std::vector<SgemmPackedA>& packed, const float* x, const float* bias, float* y,
                        const ParallelForFn& parallel_for) {
  const int64_t alpha = tile + 2, alpha2 = alpha * alpha;
  WinogradPlane plane;
  plane.tile = tile;
  plane.in_h = w.in[1];
  plane.in_w = w.in[2];
  plane.out_h = w.out[1];
  plane.out_w = w.out[2];
  plane.pad_top = w.pad_begin[1];
  plane.pad_left = w.pad_begin[2];
  plane.tiles_w = (plane.out_w + tile - 1) / tile;
  const int64_t tiles_h = (plane.out_h + tile - 1) / tile;
  const int64_t in_size = plane.in_h * plane.in_w, out_size = plane.out_h * plane.out_w;
  thread_local Workspace ws;

  // Blocks of tile rows: at most as many as fit kBlockFloats (at least one), and among
  // those the count whose tiles (the GEMMs' columns) waste the least of the last
  // micro-kernel strip, counted as 16 columns (the AVX2 kernel's); ties to the most rows.
  const int64_t max_rows =
      std::clamp<int64_t>(kBlockFloats / (alpha2 * (channels + out_channels) * plane.tiles_w), 1, tiles_h);
  int64_t rows_per_block = max_rows;
  double best_use = 0.0;
  for (int64_t r = max_rows; r >= 1; --r) {
    const int64_t n = r * plane.tiles_w;
    const double use = static_cast<double>(n) / static_cast<double>((n + 15) / 16 * 16);
    if (use > best_use + 1e-9) {
      best_use = use;
      rows_per_block = r;
    }
  }
  const int64_t max_tiles = rows_per_block * plane.tiles_w;
  float* const v = ws.v.Get(alpha2 * channels * (max_tiles + kVectorPadding));
  float* const products = ws.products.Get(alpha2 * out_channels * max_tiles + kVectorPadding);
  const int64_t scratch_floats = WinogradInputScratchFloats(plane, rows_per_block);

  for (int64_t n = 0; n < batch; ++n) {
    const float* xn = x + n * channels * in_size;
    float* yn = y + n * out_channels * out_size;
    for (int64_t th0 = 0; th0 < tiles_h; th0 += rows_per_block) {
      const int64_t th1 = std::min(tiles_h, th0 + rows_per_block);
      const int64_t tiles = (th1 - th0) * plane.tiles_w;
      const int64_t ldv = tiles + kVectorPadding;
      const int64_t v_stride = channels * ldv, mo_stride = out_channels * tiles;
      RunParallelFor(parallel_for, channels, 4 * alpha2 * tiles, [&](int64_t c0, int64_t c1) {
        thread_local std::vector<float> scratch;
        scratch.resize(static_cast<size_t>(scratch_floats));
        for (int64_t c = c0; c < c1; ++c) {
          WinogradInputAvx2(plane, xn + c * in_size, th0, th1, v + c * ldv, v_stride, scratch.data());
        }
      });
      RunParallelFor(parallel_for, alpha2, 2 * out_channels * channels * tiles, [&](int64_t x0, int64_t x1) {
        for (int64_t xi = x0; xi < x1; ++xi) {
          Sgemm(packed[xi], false, tiles, 1.0f, v + xi * v_stride, ldv, 0.0f, products + xi * mo_stride, tiles);
        }
      });
      RunParallelFor(parallel_for, out_channels, 4 * alpha2 * tiles, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          WinogradOutputAvx2(plane, products + o * tiles, mo_stride, th0, th1, bias != nullptr ? bias[o] : 0.0f,
                             yn + o * out_size);
        }
      });
    }
  }
}

}  // namespace tsr
