// The channel-blocked Winograd convolution (3x3, stride 1, group 1;
// conv_blocked_kernels.h): when it applies, the weight transform and packing, the
// blocking and thread split, and the portable fallbacks of the vector steps
// (conv_blocked_winograd_simd.h: AVX-512 and AVX2).
//
// Unlike the plain-layout Winograd (conv_winograd.h: a vector holds 8 tiles, and the
// alpha^2 products run through the general GEMM, whose packing and 16-column strips
// cost more than half of the peak on 49 or 56 tiles), a vector here holds the 16
// channels of one pixel: every tile's transform is a handful of whole-vector
// combinations, stored as full cache lines, and the products are a dedicated
// register-blocked kernel on operands already in its order -- no packing per call.
//
// Packed weights U: [xi][out block][channel][16 lanes] (alpha^2 x ChannelBlocks(out) x
// channels x 16 floats, zeros past out_channels), transformed once in double.
// Per block of tile rows, in three phases split over the threads (each element sees
// the same operations whatever the split or the ISA path):
//   V[xi][tile][channel]   input transform, per (tile row, input block);
//   M[xi][out block][tile][16] = sum_c U[xi][block][c] * V[xi][tile][c], per (xi, group
//                          of output blocks, strip of tiles);
//   y = act(At M A + bias + residual), per (tile row, output block).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_blocked_kernels.h"
#include "kernels/cpu/conv_blocked_winograd_row.h"
#include "kernels/cpu/conv_winograd_matrices.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = kChannelBlock;

// Below these channel counts the products are too thin to pay for the transforms.
constexpr int64_t kMinChannels = 16;
// The fewest tiles at which each tile size pays, measured on ResNet-18 (tessera run
// --profile, one thread): F(4x4) from 28x28 outputs (49 tiles); at 14x14 F(2x2) is
// faster inside the model though F(4x4) wins a benchmark that repeats one layer --
// 256x256 weights transformed for F(4x4) are 9.4 MB, for F(2x2) 4.2 MB, and in a model
// they come from memory, not cache (layer3: 6.1 vs 7.0 ms); F(2x2) also at 7x7 (16
// tiles; layer4: 8.6 vs 10.5 ms with the direct kernel).
constexpr int64_t kMinTiles4 = 40;
constexpr int64_t kMinTiles2 = 16;
// Transformed inputs plus products of one block of tile rows: about one core's L2.
constexpr int64_t kBlockBytes = int64_t{1} << 20;

int64_t TileCount(const Window3d& w, int64_t m) { return ((w.out[1] + m - 1) / m) * ((w.out[2] + m - 1) / m); }

// sum_q coef[q] * v[q * stride] as the vector kernels compute it, one lane.
float Combine(const float* coef, int n, const float* v, int64_t stride) {
  float acc = 0.0f;
  for (int q = 0; q < n; ++q) {
    const float c = coef[q], x = v[q * stride];
    if (c == 0.0f) continue;
    if (c == 1.0f) {
      acc = acc + x;
    } else if (c == -1.0f) {
      acc = acc - x;
    } else {
      acc = std::fma(c, x, acc);
    }
  }
  return acc;
}

template <int kM>
void InputPortableTile(const BlockedWinogradInput& r) {
  using T = WinogradMatrices<kM>;
  constexpr int kA = T::kAlpha;
  for (int64_t tw = r.tw_begin; tw < r.tw_end; ++tw) {
    float* v = r.v + (r.tile0 + tw - r.tw_begin) * r.ldv;
    const int64_t y0 = r.th * kM - r.pad_top, x0 = tw * kM - r.pad_left;
    for (int64_t l = 0; l < kLanes; ++l) {
      float d[kA][kA], t[kA][kA];
      for (int k = 0; k < kA; ++k) {
        for (int j = 0; j < kA; ++j) {
          const int64_t iy = y0 + k, ix = x0 + j;
          d[k][j] = iy >= 0 && iy < r.in_h && ix >= 0 && ix < r.in_w ? r.x[(iy * r.in_w + ix) * kLanes + l] : 0.0f;
        }
      }
      for (int i = 0; i < kA; ++i) {
        for (int j = 0; j < kA; ++j) t[i][j] = Combine(T::kBt[i], kA, &d[0][j], kA);
      }
      for (int i = 0; i < kA; ++i) {
        for (int j = 0; j < kA; ++j) v[(i * kA + j) * r.xi_stride + l] = Combine(T::kBt[j], kA, t[i], 1);
      }
    }
  }
}

void ProductPortable(const BlockedWinogradProduct& r) {
  for (int64_t b = 0; b < r.out_blocks; ++b) {
    for (int64_t t = 0; t < r.width; ++t) {
      for (int64_t l = 0; l < kLanes; ++l) {
        float acc = 0.0f;
        for (int64_t c = 0; c < r.channels; ++c) {
          acc = std::fma(r.u[b * r.u_block_stride + c * kLanes + l], r.v[t * r.ldv + c], acc);
        }
        r.m[b * r.m_block_stride + t * kLanes + l] = acc;
      }
    }
  }
}

template <int kM>
void OutputPortableTile(const BlockedWinogradOutput& r) {
  using T = WinogradMatrices<kM>;
  constexpr int kA = T::kAlpha;
  for (int64_t tw = r.tw_begin; tw < r.tw_end; ++tw) {
    const float* mt = r.m + (r.tile0 + tw - r.tw_begin) * kLanes;
    for (int64_t l = 0; l < kLanes; ++l) {
      float s[kM][kA];
      for (int a = 0; a < kM; ++a) {
        for (int j = 0; j < kA; ++j) s[a][j] = Combine(T::kAt[a], kA, mt + j * r.xi_stride + l, kA * r.xi_stride);
      }
      for (int a = 0; a < kM && r.th * kM + a < r.out_h; ++a) {
        for (int b = 0; b < kM && tw * kM + b < r.out_w; ++b) {
          float y = Combine(T::kAt[b], kA, s[a], 1);
          if (r.bias != nullptr) y = y + r.bias[l];
          const int64_t offset = ((r.th * kM + a) * r.out_w + tw * kM + b) * kLanes + l;
          if (r.residual != nullptr) y = y + r.residual[offset];
          y = ClampLikeRegisters(r.clamp, r.clamp_lo, r.clamp_hi, y);
          r.y[offset] = l < r.lanes ? y : 0.0f;
        }
      }
    }
  }
}

// The fallbacks of the vector entry points, dispatched on the tile as they are.
void InputPortable(const BlockedWinogradInput& r) { r.tile == 2 ? InputPortableTile<2>(r) : InputPortableTile<4>(r); }
void OutputPortable(const BlockedWinogradOutput& r) {
  r.tile == 2 ? OutputPortableTile<2>(r) : OutputPortableTile<4>(r);
}

// The product kernel's register blocking: output blocks per group and the widest strip.
struct ProductBlocking {
  int64_t out_blocks;
  int64_t max_width;
};

// The blocking that keeps the most accumulators busy on `tiles` tiles and `out_blocks`
// blocks (strips and groups balanced); ties go to more blocks per group (fewer
// broadcasts per multiply-add).
ProductBlocking ChooseProductBlocking(int64_t tiles, int64_t out_blocks, const int64_t* max_widths) {
  ProductBlocking best{1, max_widths[1]};
  double best_score = -1.0;
  for (int64_t b = 1; b <= std::min<int64_t>(4, out_blocks); ++b) {
    const int64_t max_width = max_widths[b];
    if (max_width == 0) continue;
    const int64_t strips = (tiles + max_width - 1) / max_width;
    const int64_t groups = (out_blocks + b - 1) / b;
    const double used = static_cast<double>(tiles) / static_cast<double>(strips) * static_cast<double>(out_blocks) /
                        static_cast<double>(groups);
    if (used >= best_score - 1e-9) {
      best_score = std::max(best_score, used);
      best = {b, max_width};
    }
  }
  return best;
}

// One ISA's steps and product strip widths: AVX-512, AVX2 or the portable fallbacks
// (which take any strip; AVX2's widths keep their splits like AVX2's).
struct WinogradSteps {
  void (*input)(const BlockedWinogradInput&);
  void (*product)(const BlockedWinogradProduct&);
  void (*output)(const BlockedWinogradOutput&);
  const int64_t* max_widths;
};

WinogradSteps StepsFor(CpuIsa isa) {
  if (isa >= CpuIsa::kAvx512) {
    return {&BlockedWinogradInputAvx512, &BlockedWinogradProductAvx512, &BlockedWinogradOutputAvx512,
            kBlockedWinogradMaxWidthAvx512};
  }
  if (isa >= CpuIsa::kAvx2) {
    return {&BlockedWinogradInputAvx2, &BlockedWinogradProductAvx2, &BlockedWinogradOutputAvx2,
            kBlockedWinogradMaxWidthAvx2};
  }
  return {&InputPortable, &ProductPortable, &OutputPortable, kBlockedWinogradMaxWidthAvx2};
}

template <int kM>
void TransformWeights(const ConvGeometry& g, const float* weights, float* packed) {
  using T = WinogradMatrices<kM>;
  constexpr int kA = T::kAlpha;
  const int64_t channels = g.channels, out_blocks = ChannelBlocks(g.out_channels);
  const int64_t xi_stride = out_blocks * channels * kLanes;
  // The 16 output channels of a block at once, lane by lane (loops the compiler
  // vectorizes; one channel at a time, the short sums' latency made this the bulk of a
  // model's load time). Lanes past out_channels stay zero.
  for (int64_t ob = 0; ob < out_blocks; ++ob) {
    const int64_t lanes = std::min(kLanes, g.out_channels - ob * kLanes);
    for (int64_t c = 0; c < channels; ++c) {
      double w[9][kLanes] = {};
      for (int64_t l = 0; l < lanes; ++l) {
        const float* src = weights + ((ob * kLanes + l) * channels + c) * 9;
        for (int t = 0; t < 9; ++t) w[t][l] = src[t];
      }
      double gw[kA][3][kLanes];  // G g
      for (int i = 0; i < kA; ++i) {
        const double g0 = T::kG[i][0], g1 = T::kG[i][1], g2 = T::kG[i][2];
        for (int k = 0; k < 3; ++k) {
          for (int64_t l = 0; l < kLanes; ++l) gw[i][k][l] = g0 * w[k][l] + g1 * w[3 + k][l] + g2 * w[6 + k][l];
        }
      }
      float* dst = packed + (ob * channels + c) * kLanes;
      for (int i = 0; i < kA; ++i) {
        for (int j = 0; j < kA; ++j) {
          const double g0 = T::kG[j][0], g1 = T::kG[j][1], g2 = T::kG[j][2];
          float* out = dst + (i * kA + j) * xi_stride;
          for (int64_t l = 0; l < kLanes; ++l) {
            out[l] = static_cast<float>(gw[i][0][l] * g0 + gw[i][1][l] * g1 + gw[i][2][l] * g2);
          }
        }
      }
    }
  }
}

}  // namespace

int BlockedWinogradTile(const ConvGeometry& g) {
  const Window3d& w = g.window;
  if (g.group != 1 || w.kernel[0] != 1 || w.in[0] != 1 || w.out[0] != 1) return 0;
  for (int d = 1; d < 3; ++d) {
    if (w.kernel[d] != 3 || w.stride[d] != 1 || w.dilation[d] != 1) return 0;
  }
  if (g.channels < kMinChannels || g.out_channels < kMinChannels || w.out[1] < 1 || w.out[2] < 1) return 0;
  if (TileCount(w, 4) >= kMinTiles4) return 4;
  if (TileCount(w, 2) >= kMinTiles2) return 2;
  return 0;
}

int64_t BlockedWinogradWeightFloats(const ConvGeometry& g, int tile) {
  return (tile + 2) * (tile + 2) * ChannelBlocks(g.out_channels) * g.channels * kLanes;
}

void PackBlockedWinogradWeights(const ConvGeometry& g, int tile, const float* weights, float* packed) {
  // Every float is written, the lanes past out_channels as zeros.
  if (tile == 2) {
    TransformWeights<2>(g, weights, packed);
  } else {
    TransformWeights<4>(g, weights, packed);
  }
}

void BlockedWinogradConv(const ConvGeometry& g, int tile, const float* packed, int64_t batch, const float* x,
                         const float* bias, const float* residual, const FusedActivation& activation, float* y,
                         const ParallelForFn& parallel_for) {
  const Window3d& w = g.window;
  const int64_t in_h = w.in[1], in_w = w.in[2], out_h = w.out[1], out_w = w.out[2];
  const int64_t alpha = tile + 2, alpha2 = alpha * alpha;
  const int64_t tiles_h = (out_h + tile - 1) / tile, tiles_w = (out_w + tile - 1) / tile;
  const int64_t in_blocks = ChannelBlocks(g.channels), out_blocks = ChannelBlocks(g.out_channels);
  const int64_t in_pixels = in_h * in_w, out_pixels = out_h * out_w;
  const int64_t ldv = in_blocks * kLanes;
  const int64_t last_lanes = g.out_channels - (out_blocks - 1) * kLanes;
  const CpuIsa isa = ActiveCpuIsa();
  const WinogradSteps steps = StepsFor(isa);

  // Blocks of whole tile rows whose V and M fit kBlockBytes (at least one row), balanced.
  const int64_t row_bytes = alpha2 * tiles_w * (ldv + out_blocks * kLanes) * static_cast<int64_t>(sizeof(float));
  const int64_t max_rows = std::clamp<int64_t>(kBlockBytes / row_bytes, 1, tiles_h);
  const int64_t row_blocks = (tiles_h + max_rows - 1) / max_rows;
  const int64_t rows_per_block = (tiles_h + row_blocks - 1) / row_blocks;
  const int64_t max_tiles = rows_per_block * tiles_w;
  const ProductBlocking blocking = ChooseProductBlocking(max_tiles, out_blocks, steps.max_widths);
  const int64_t groups = (out_blocks + blocking.out_blocks - 1) / blocking.out_blocks;

  thread_local AlignedFloatBuffer v_buffer, m_buffer;
  float* const v = v_buffer.Get(alpha2 * max_tiles * ldv);
  float* const m = m_buffer.Get(alpha2 * out_blocks * max_tiles * kLanes);
  std::vector<float> bias_lanes;
  if (bias != nullptr) {
    bias_lanes.assign(static_cast<size_t>(out_blocks * kLanes), 0.0f);
    std::copy(bias, bias + g.out_channels, bias_lanes.begin());
  }
  const BlockedDirectClamp clamp = ClampInRegisters(activation);
  const bool activation_pass = clamp == BlockedDirectClamp::kNone && activation.kind != FusedActivationKind::kNone;
  const bool zero_lanes_after_activation = last_lanes < kLanes && ActivationMovesZero(activation);

  for (int64_t n = 0; n < batch; ++n) {
    const float* x_image = x + n * in_blocks * in_pixels * kLanes;
    float* y_image = y + n * out_blocks * out_pixels * kLanes;
    const float* z_image = residual != nullptr ? residual + n * out_blocks * out_pixels * kLanes : nullptr;
    for (int64_t th0 = 0; th0 < tiles_h; th0 += rows_per_block) {
      const int64_t rows = std::min(rows_per_block, tiles_h - th0), tiles = rows * tiles_w;
      const int64_t v_xi_stride = tiles * ldv, m_xi_stride = out_blocks * tiles * kLanes;

      RunParallelFor(parallel_for, rows * in_blocks, 8 * alpha2 * tiles_w * kLanes, [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
          const int64_t row = u / in_blocks, cb = u % in_blocks;
          BlockedWinogradInput r;
          r.tile = tile;
          r.x = x_image + cb * in_pixels * kLanes;
          r.in_h = in_h;
          r.in_w = in_w;
          r.pad_top = w.pad_begin[1];
          r.pad_left = w.pad_begin[2];
          r.th = th0 + row;
          r.tw_begin = 0;
          r.tw_end = tiles_w;
          r.v = v + cb * kLanes;
          r.xi_stride = v_xi_stride;
          r.ldv = ldv;
          r.tile0 = row * tiles_w;
          steps.input(r);
        }
      });

      const int64_t strips = (tiles + blocking.max_width - 1) / blocking.max_width;
      RunParallelFor(parallel_for, alpha2 * groups * strips,
                     2 * blocking.max_width * blocking.out_blocks * g.channels * kLanes,
                     [&](int64_t begin, int64_t end) {
                       for (int64_t u = begin; u < end; ++u) {
                         const int64_t strip = u % strips, group = (u / strips) % groups, xi = u / (strips * groups);
                         const int64_t ob0 = group * blocking.out_blocks;
                         const int64_t t0 = tiles * strip / strips, t1 = tiles * (strip + 1) / strips;
                         BlockedWinogradProduct r;
                         r.u = packed + (xi * out_blocks + ob0) * g.channels * kLanes;
                         r.u_block_stride = g.channels * kLanes;
                         r.v = v + xi * v_xi_stride + t0 * ldv;
                         r.ldv = ldv;
                         r.channels = g.channels;
                         r.m = m + xi * m_xi_stride + ob0 * tiles * kLanes + t0 * kLanes;
                         r.m_block_stride = tiles * kLanes;
                         r.out_blocks = std::min(blocking.out_blocks, out_blocks - ob0);
                         r.width = t1 - t0;
                         steps.product(r);
                       }
                     });

      RunParallelFor(parallel_for, rows * out_blocks, 8 * alpha2 * tiles_w * kLanes, [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
          const int64_t row = u / out_blocks, ob = u % out_blocks;
          BlockedWinogradOutput r;
          r.tile = tile;
          r.m = m + ob * tiles * kLanes;
          r.xi_stride = m_xi_stride;
          r.tile0 = row * tiles_w;
          r.out_h = out_h;
          r.out_w = out_w;
          r.th = th0 + row;
          r.tw_begin = 0;
          r.tw_end = tiles_w;
          r.bias = bias != nullptr ? bias_lanes.data() + ob * kLanes : nullptr;
          r.residual = z_image != nullptr ? z_image + ob * out_pixels * kLanes : nullptr;
          r.y = y_image + ob * out_pixels * kLanes;
          r.lanes = ob + 1 == out_blocks ? last_lanes : kLanes;
          r.clamp = clamp;
          r.clamp_lo = activation.min;
          r.clamp_hi = activation.max;
          steps.output(r);
          if (!activation_pass) continue;
          const int64_t oy0 = r.th * tile, oy1 = std::min(out_h, oy0 + tile);
          float* run = r.y + oy0 * out_w * kLanes;
          ApplyFusedEpilogue(activation, nullptr, run, (oy1 - oy0) * out_w * kLanes, isa);
          if (zero_lanes_after_activation && ob + 1 == out_blocks) {
            for (int64_t p = 0; p < (oy1 - oy0) * out_w; ++p) {
              std::fill(run + p * kLanes + last_lanes, run + (p + 1) * kLanes, 0.0f);
            }
          }
        }
      });
    }
  }
}

}  // namespace tsr
