// PrepareConvWeights and ConvForward: the algorithm choice per shape (see
// conv_kernels.cc's top comment for why each applies where it does) and the forward
// pass of each on prepared weights.
#include "kernels/cpu/conv_prepared.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_blocked_kernels.h"
#include "kernels/cpu/conv_depthwise.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_im2col.h"
#include "kernels/cpu/conv_im2col_row.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/node_window.h"
#include "kernels/cpu/transpose.h"

namespace tsr {

namespace {

// Below this many multiply-adds an (image, group) pair is not worth splitting a GEMM
// over threads; the pairs themselves are spread over the threads instead.
constexpr int64_t kSmallUnitMacs = int64_t{1} << 22;

// From this many output channels a one-channel input goes through the GEMM path.
constexpr int64_t kGemmMinOutputsForOneChannel = 4;

bool Pointwise(const Window3d& w) {
  for (int d = 0; d < 3; ++d) {
    if (w.kernel[d] != 1 || w.stride[d] != 1 || w.pad_begin[d] != 0 || w.pad_end[d] != 0) return false;
  }
  return true;
}

// 1x1 and unpadded but strided: every output pixel reads one input pixel.
bool StridedPointwise(const Window3d& w) {
  for (int d = 0; d < 3; ++d) {
    if (w.kernel[d] != 1 || w.pad_begin[d] != 0 || w.pad_end[d] != 0) return false;
  }
  return !Pointwise(w);
}

bool IsDepthwise(const ConvGeometry& g) {
  const Window3d& w = g.window;
  // One input channel (group 1) with several outputs is an ordinary conv: the GEMM
  // computes all outputs per pass over the taps, the direct kernel one at a time.
  const bool single_input_channel = g.channels == 1 && g.out_channels >= kGemmMinOutputsForOneChannel;
  return g.group == g.channels && !single_input_channel && w.kernel[0] == 1 && w.in[0] == 1 && w.out[0] == 1;
}

// Where the direct loops would run (few input channels per tap, conv_direct.h), the
// channel-blocked direct kernel -- sixteen output channels per vector, the input read as
// it lies -- and one pass that unblocks its output are 1.4-1.6x faster (LeNet's 6 -> 16
// 5x5 at batch 64, at one and two threads), given its AVX-512 path and outputs that fill
// at least 3/4 of their blocks (the compiler's layout pass uses the same bound), so that
// few lanes compute padding.
bool BlockedDirectPays(const ConvGeometry& g) {
  if (ActiveCpuIsa() < CpuIsa::kAvx512 || g.group != 1 || !BlockedConvApplies(g)) return false;
  return 4 * g.out_channels >= 3 * ChannelBlocks(g.out_channels) * kChannelBlock;
}

absl::Status Validate(const ConvGeometry& g) {
  const Window3d& w = g.window;
  if (g.group < 1 || g.channels < 0 || g.out_channels < 0 || g.channels % g.group != 0 ||
      g.out_channels % g.group != 0) {
    return absl::InvalidArgumentError(absl::StrCat("PrepareConvWeights: channels ", g.channels, " and out_channels ",
                                                   g.out_channels, " must be non-negative multiples of group ", g.group,
                                                   " (group >= 1)"));
  }
  for (int d = 0; d < 3; ++d) {
    if (w.in[d] < 0 || w.out[d] < 0 || w.kernel[d] < 0 || w.stride[d] < 1 || w.dilation[d] < 1 || w.pad_begin[d] < 0 ||
        w.pad_end[d] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("PrepareConvWeights: spatial dimension ", d,
                                                     " of the window has a negative size or pad, or a stride or "
                                                     "dilation below 1"));
    }
    const int64_t span = w.in[d] + w.pad_begin[d] + w.pad_end[d] - w.dilation[d] * (w.kernel[d] - 1) - 1;
    const int64_t expected = span < 0 ? 0 : span / w.stride[d] + 1;
    if (w.out[d] != expected) {
      return absl::InvalidArgumentError(absl::StrCat("PrepareConvWeights: output size ", w.out[d],
                                                     " of spatial dimension ", d, " does not match the window (",
                                                     expected, ")"));
    }
  }
  return absl::OkStatus();
}

// The transposed product (kGemmPixelRows) keeps its column matrix and its output
// [pixels, out_channels] per thread: small images only.
constexpr int64_t kMaxPixelRowsPixels = 1024;
// It must waste this much less of the register tile to be worth the output's transpose.
constexpr double kPixelRowsMinGain = 1.05;

// Whether C^T = col^T W^T (pixels as the GEMM's rows, output channels as its columns)
// wastes less of the micro-kernel's mr x nr tile than C = W col: a 7x7 output is 49
// columns, two 32-wide strips of which a quarter is padding, but 49 rows are three
// 14-row strips and a 7-row one; output channels are multiples of 32 in most models.
bool PixelRowsPay(const ConvGeometry& g) {
  const int64_t pixels = g.window.out_size();
  if (g.group != 1 || pixels > kMaxPixelRowsPixels) return false;
  const SgemmTile tile = SgemmTileFor();
  const auto used = [](int64_t n, int t) { return static_cast<double>(n) / static_cast<double>((n + t - 1) / t * t); };
  const double channel_rows = used(g.out_channels, tile.mr) * used(pixels, tile.nr);
  const double pixel_rows = used(pixels, tile.mr) * used(g.out_channels, tile.nr);
  return pixel_rows > kPixelRowsMinGain * channel_rows;
}

// The input pixels a 1x1 strided window reads, [channels, w.out...] into dst.
void SubsampleInput(const Window3d& w, int64_t channels, const float* x, float* dst) {
  const bool avx2 = ActiveCpuIsa() >= CpuIsa::kAvx2;
  for (int64_t c = 0; c < channels; ++c) {
    const float* xc = x + c * w.in_size();
    for (int64_t od = 0; od < w.out[0]; ++od) {
      for (int64_t oh = 0; oh < w.out[1]; ++oh, dst += w.out[2]) {
        const float* src = xc + (od * w.stride[0] * w.in[1] + oh * w.stride[1]) * w.in[2];
        if (avx2) {
          StridedCopyAvx2(src, w.stride[2], w.out[2], dst);
        } else {
          for (int64_t ow = 0; ow < w.out[2]; ++ow) dst[ow] = src[ow * w.stride[2]];
        }
      }
    }
  }
}

// Group g's input of image n.
const float* GroupInput(const ConvGeometry& geo, const float* x, int64_t n, int64_t g) {
  return x + (n * geo.channels + g * (geo.channels / geo.group)) * geo.window.in_size();
}

// All output channels and pixels of group g of image n, from the group's packed
// weights; base.parallel_for (if any) splits the GEMM.
void RunGemmUnit(const ConvGeometry& geo, const SgemmPackedA& weights, const float* x, const float* bias, float* y,
                 int64_t n, int64_t g, const GemmOptions& base) {
  const Window3d& w = geo.window;
  const int64_t pixels = w.out_size();
  const int64_t c_per_group = geo.channels / geo.group, m_per_group = geo.out_channels / geo.group;
  GemmOptions options = base;
  if (bias != nullptr) options.epilogue.row_bias = bias + g * m_per_group;
  float* yg = y + (n * geo.out_channels + g * m_per_group) * pixels;
  const float* xg = GroupInput(geo, x, n, g);
  if (Pointwise(w)) {
    Sgemm(weights, false, pixels, 1.0f, xg, pixels, 0.0f, yg, pixels, options);
  } else if (StridedPointwise(w)) {
    // The subsampled input is only channels x pixels floats (a quarter of the input
    // at stride 2): gathered once into a plain matrix, it is packed by Sgemm's block
    // copies instead of im2col's per-line calls, which dominate on short output lines.
    thread_local std::vector<float> subsampled;
    subsampled.resize(static_cast<size_t>(c_per_group * pixels));
    SubsampleInput(w, c_per_group, xg, subsampled.data());
    Sgemm(weights, false, pixels, 1.0f, subsampled.data(), pixels, 0.0f, yg, pixels, options);
  } else {
    Sgemm(weights, Im2ColPacker(w, xg), pixels, 1.0f, 0.0f, yg, pixels, options);
  }
}

// The algorithm for `geometry` (validated), with Winograd's tile in *tile; per_call
// counts the weights' preparation as part of one call (see PrepareConvWeightsInto).
ConvAlgorithm ChooseAlgorithm(const ConvGeometry& geometry, bool per_call, int* tile) {
  const Window3d& w = geometry.window;
  const int64_t c_per_group = geometry.channels / geometry.group;
  if (geometry.out_channels == 0 || w.out_size() == 0) return ConvAlgorithm::kEmpty;
  if (c_per_group * w.taps() == 0) return ConvAlgorithm::kBiasOnly;
  if (IsDepthwise(geometry)) return ConvAlgorithm::kDepthwise;
  // Prepared F(2x2) beats the GEMM on 7x7 outputs, but not the transposed product (3x3
  // 512@7: 78 vs 94 GFLOP/s at one thread).
  *tile = ChooseWinogradTile(w, geometry.channels, geometry.out_channels, geometry.group,
                             /*weights_prepared_once=*/!per_call && !PixelRowsPay(geometry));
  if (*tile != 0) return ConvAlgorithm::kWinograd;
  // (A pointwise convolution is a GEMM on the input as it lies, with nothing to pack per
  // call: the direct loops' plane copies and one-image-per-thread split only cost.)
  if (!Pointwise(w) && DirectConvApplies(w, c_per_group)) {
    return BlockedDirectPays(geometry) ? ConvAlgorithm::kBlockedDirect : ConvAlgorithm::kDirect;
  }
  if (PixelRowsPay(geometry)) return ConvAlgorithm::kGemmPixelRows;
  return ConvAlgorithm::kGemm;
}

}  // namespace

ConvAlgorithm PreparedConvAlgorithm(const ConvGeometry& geometry) {
  if (!Validate(geometry).ok()) return ConvAlgorithm::kEmpty;
  int tile = 0;
  return ChooseAlgorithm(geometry, /*per_call=*/false, &tile);
}

absl::Status PrepareConvWeightsInto(const ConvGeometry& geometry, const float* weights, bool per_call,
                                    const ParallelForFn& parallel_for, PreparedConvWeights* prepared) {
  if (absl::Status status = Validate(geometry); !status.ok()) return status;
  const Window3d& w = geometry.window;
  prepared->geometry_ = geometry;
  prepared->winograd_tile_ = 0;
  prepared->raw_ = nullptr;
  prepared->owned_.clear();
  const int64_t c_per_group = geometry.channels / geometry.group;
  const int64_t m_per_group = geometry.out_channels / geometry.group;
  const int64_t rows = c_per_group * w.taps();
  auto keep_raw = [&] {
    if (per_call) {
      prepared->raw_ = weights;
    } else {
      prepared->owned_.assign(weights, weights + geometry.out_channels * rows);
      prepared->raw_ = prepared->owned_.data();
    }
  };

  int tile = 0;
  prepared->algorithm_ = ChooseAlgorithm(geometry, per_call, &tile);
  switch (prepared->algorithm_) {
    case ConvAlgorithm::kEmpty:
    case ConvAlgorithm::kBiasOnly:
      break;
    case ConvAlgorithm::kDepthwise:
    case ConvAlgorithm::kDirect:
      keep_raw();
      break;
    case ConvAlgorithm::kBlockedDirect:
      PackBlockedDirectWeights(geometry, weights, prepared->blocked_.Get(BlockedDirectWeightFloats(geometry)));
      break;
    case ConvAlgorithm::kWinograd:
      prepared->winograd_tile_ = tile;
      WinogradPackWeights(tile, geometry.channels, geometry.out_channels, weights, parallel_for, &prepared->packed_);
      break;
    case ConvAlgorithm::kGemmPixelRows: {
      // The weights [out_channels, rows] as the transposed product's B, W^T.
      GemmOptions options;
      options.parallel_for = parallel_for;
      prepared->packed_b_.Pack(/*trans_b=*/true, rows, geometry.out_channels, weights, rows, options);
      break;
    }
    case ConvAlgorithm::kGemm: {
      // Each group's weights [m_per_group, rows] packed once for all images.
      GemmOptions options;
      options.parallel_for = parallel_for;
      prepared->packed_.resize(static_cast<size_t>(geometry.group));
      for (int64_t g = 0; g < geometry.group; ++g) {
        prepared->packed_[g].Pack(false, m_per_group, rows, weights + g * m_per_group * rows, rows, options);
      }
      break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PreparedConvWeights> PrepareConvWeights(const ConvGeometry& geometry, const float* weights,
                                                       const ParallelForFn& parallel_for) {
  PreparedConvWeights prepared;
  if (absl::Status status = PrepareConvWeightsInto(geometry, weights, /*per_call=*/false, parallel_for, &prepared);
      !status.ok()) {
    return status;
  }
  return prepared;
}

bool ConvForward(const PreparedConvWeights& prepared, int64_t batch, const float* x, const float* bias, float* y,
                 const ParallelForFn& parallel_for, const PlaneEpilogueFn* epilogue) {
  const ConvGeometry& geo = prepared.geometry_;
  const Window3d& w = geo.window;
  const int64_t pixels = w.out_size();
  if (batch == 0) return true;
  switch (prepared.algorithm_) {
    case ConvAlgorithm::kEmpty:
      return false;
    case ConvAlgorithm::kBiasOnly:
      for (int64_t nm = 0; nm < batch * geo.out_channels; ++nm) {
        std::fill_n(y + nm * pixels, pixels, bias != nullptr ? bias[nm % geo.out_channels] : 0.0f);
      }
      return false;
    case ConvAlgorithm::kDepthwise: {
      const CpuIsa isa = ActiveCpuIsa();
      const int64_t m_per_group = geo.out_channels / geo.group;
      if (m_per_group == 1 && DepthwiseChannelsApply(w, isa)) {
        // Sixteen channels at a time: (image, block of 16 channels) units.
        const int64_t blocks = (geo.out_channels + 15) / 16;
        RunParallelFor(parallel_for, batch * blocks, 32 * pixels * w.taps(), [&](int64_t begin, int64_t end) {
          for (int64_t u = begin; u < end; ++u) {
            const int64_t n = u / blocks, c0 = (u % blocks) * 16;
            const int64_t count = std::min<int64_t>(16, geo.out_channels - c0);
            DepthwiseConvChannels(w, count, x + (n * geo.channels + c0) * w.in_size(), prepared.raw_ + c0 * w.taps(),
                                  bias != nullptr ? bias + c0 : nullptr, y + (n * geo.out_channels + c0) * pixels);
            const int64_t first = n * geo.out_channels + c0;
            if (epilogue != nullptr) (*epilogue)(first, first + count, 0, pixels);
          }
        });
        return epilogue != nullptr;
      }
      RunParallelFor(parallel_for, batch * geo.out_channels, 2 * pixels * w.taps(), [&](int64_t begin, int64_t end) {
        for (int64_t nm = begin; nm < end; ++nm) {
          const int64_t n = nm / geo.out_channels, m = nm % geo.out_channels;
          DepthwiseConvPlane(w, x + (n * geo.channels + m / m_per_group) * w.in_size(), prepared.raw_ + m * w.taps(),
                             bias != nullptr ? bias[m] : 0.0f, y + nm * pixels, isa);
          if (epilogue != nullptr) (*epilogue)(nm, nm + 1, 0, pixels);
        }
      });
      return epilogue != nullptr;
    }
    case ConvAlgorithm::kWinograd:
      WinogradConvPacked(w, prepared.winograd_tile_, batch, geo.channels, geo.out_channels, prepared.packed_, x, bias,
                         y, parallel_for);
      return false;
    case ConvAlgorithm::kDirect: {
      const DirectConvPlanesDoneFn planes_done = [&](int64_t begin, int64_t end) {
        (*epilogue)(begin, end, 0, pixels);
      };
      DirectConv(w, batch, geo.channels, geo.out_channels, geo.group, x, prepared.raw_, bias, y, parallel_for,
                 epilogue != nullptr ? &planes_done : nullptr);
      return epilogue != nullptr;
    }
    case ConvAlgorithm::kBlockedDirect: {
      // The blocked output in this thread's buffer (reused: megabytes at a CNN's first
      // layer), then unblocked into y.
      thread_local AlignedFloatBuffer blocked_y;
      float* by = blocked_y.Get(batch * ChannelBlocks(geo.out_channels) * kChannelBlock * pixels);
      BlockedDirectConv(geo, prepared.blocked_.data(), batch, x, /*x_blocked=*/false, bias, /*residual=*/nullptr,
                        FusedActivation{}, by, parallel_for);
      UnblockChannels(batch, geo.out_channels, pixels, by, y, parallel_for);
      return false;
    }
    case ConvAlgorithm::kGemmPixelRows: {
      const int64_t rows = geo.channels * w.taps();
      const CpuIsa isa = ActiveCpuIsa();
      // Image n: its column matrix [rows, pixels] (the input itself when pointwise),
      // T = col^T W^T + bias [pixels, out_channels], then y = T^T plane by plane.
      const auto run_image = [&](int64_t n, const ParallelForFn& split) {
        thread_local AlignedFloatBuffer col_buffer, product_buffer;
        const float* xn = x + n * geo.channels * w.in_size();
        const float* col = xn;
        if (!Pointwise(w)) {
          float* c = col_buffer.Get(rows * pixels);
          if (StridedPointwise(w)) {
            SubsampleInput(w, geo.channels, xn, c);
          } else {
            Im2Col(w, xn, 0, rows, 0, pixels, c);
          }
          col = c;
        }
        float* product = product_buffer.Get(pixels * geo.out_channels);
        GemmOptions options;
        options.parallel_for = split;
        options.epilogue.bias = bias;
        Sgemm(/*trans_a=*/true, pixels, 1.0f, col, pixels, prepared.packed_b_, 0.0f, product, geo.out_channels,
              options);
        float* yn = y + n * geo.out_channels * pixels;
        RunParallelFor(split, geo.out_channels, 2 * pixels, [&](int64_t m0, int64_t m1) {
          TransposeBlock(sizeof(float), isa, product + m0, geo.out_channels, yn + m0 * pixels, pixels, m1 - m0, pixels);
          if (epilogue != nullptr) (*epilogue)(n * geo.out_channels + m0, n * geo.out_channels + m1, 0, pixels);
        });
      };
      if (batch >= 2 && parallel_for) {
        RunParallelFor(parallel_for, batch, 2 * pixels * rows * geo.out_channels, [&](int64_t begin, int64_t end) {
          for (int64_t n = begin; n < end; ++n) run_image(n, nullptr);
        });
      } else {
        for (int64_t n = 0; n < batch; ++n) run_image(n, parallel_for);
      }
      return epilogue != nullptr;
    }
    case ConvAlgorithm::kGemm: {
      const int64_t units = batch * geo.group;
      const int64_t m_per_group = geo.out_channels / geo.group;
      const int64_t unit_macs = m_per_group * (geo.channels / geo.group) * w.taps() * pixels;
      // Unit u is image u / group's channels of group u % group: the GEMM's rows are
      // those channels, its columns the pixels; the epilogue runs on its finished blocks.
      const auto run_unit = [&](int64_t u, const GemmOptions& base) {
        const int64_t first = (u / geo.group) * geo.out_channels + (u % geo.group) * m_per_group;
        const std::function<void(int64_t, int64_t, int64_t, int64_t)> block = [&](int64_t row0, int64_t rows,
                                                                                  int64_t col0, int64_t cols) {
          (*epilogue)(first + row0, first + row0 + rows, col0, cols);
        };
        GemmOptions options = base;
        if (epilogue != nullptr) options.epilogue.block = &block;
        RunGemmUnit(geo, prepared.packed_[u % geo.group], x, bias, y, u / geo.group, u % geo.group, options);
      };
      if (units >= 4 || (units >= 2 && unit_macs < kSmallUnitMacs)) {
        RunParallelFor(parallel_for, units, unit_macs, [&](int64_t begin, int64_t end) {
          for (int64_t u = begin; u < end; ++u) run_unit(u, GemmOptions{});
        });
      } else {
        GemmOptions threaded;
        threaded.parallel_for = parallel_for;
        for (int64_t u = 0; u < units; ++u) run_unit(u, threaded);
      }
      return epilogue != nullptr;
    }
  }
  return false;
}

absl::StatusOr<std::optional<ConvGeometry>> NodeConvGeometry(const KernelContext& ctx) {
  const Shape& w = ctx.input(1).shape();
  const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  absl::StatusOr<std::optional<Window3d>> window = NodeWindow3d(ctx, 0, kernel);
  if (!window.ok()) return window.status();
  if (!window->has_value()) return std::nullopt;
  ConvGeometry geometry;
  geometry.window = **window;
  geometry.channels = ctx.input(0).shape().dim(1);
  geometry.out_channels = w.dim(0);
  geometry.group = ctx.GetInt("group");
  return geometry;
}

absl::StatusOr<const PreparedConvWeights*> PrepareConvWeightsForCall(const ConvGeometry& geometry, const float* weights,
                                                                     const ParallelForFn& parallel_for) {
  thread_local PreparedConvWeights prepared;
  absl::Status status = PrepareConvWeightsInto(geometry, weights, /*per_call=*/true, parallel_for, &prepared);
  if (!status.ok()) return status;
  return &prepared;
}

}  // namespace tsr
