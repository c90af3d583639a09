// Direct small-channel Conv and ConvGradFilter (conv_direct.h): the geometry of the
// padded planes, the per-image copies into them, the threading and the ordered
// reduction over images; the arithmetic is in conv_direct_avx2.cc (and the
// forward pass in AVX-512, conv_direct_avx512.cc).
#include "kernels/cpu/conv_direct.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_direct_rows.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

namespace {

// Images per ConvGradFilter partial sum: the chunks, not the threads, fix the order
// in which images are added.
constexpr int64_t kGradChunkImages = 4;

// Zero-padded input planes of one image and group, and the offsets of each (channel,
// tap) into them.
struct PaddedPlanes {
  int64_t width, height;  // padded sizes
  int64_t plane;          // floats per channel plane, with room for the over-reads
  int64_t pixels;         // computed pixels per image: output rows x padded width, rounded up
  std::vector<int64_t> offsets;

  PaddedPlanes(const Window3d& w, int64_t c_per_group, int64_t pixel_step) {
    width = w.in[2] + w.pad_begin[2] + w.pad_end[2];
    height = w.in[1] + w.pad_begin[1] + w.pad_end[1];
    pixels = (w.out[1] * width + pixel_step - 1) / pixel_step * pixel_step;
    // Reads reach offsets.back() + pixels - 1 = (height - out[1]) * width + (kw - 1) *
    // dilation + pixels - 1, which is below height * width + width + pixel_step: all
    // inside the channel's own plane.
    plane = (height * width + width + pixel_step + 7) / 8 * 8;
    offsets.reserve(static_cast<size_t>(c_per_group * w.taps()));
    for (int64_t c = 0; c < c_per_group; ++c) {
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          offsets.push_back(c * plane + kh * w.dilation[1] * width + kw * w.dilation[2]);
        }
      }
    }
  }

  // Copies the input channels x [c_per_group, in[1], in[2]] into planes whose padding
  // is already zero.
  void Fill(const Window3d& w, int64_t c_per_group, const float* x, float* planes) const {
    const int64_t in_h = w.in[1], in_w = w.in[2];
    if (in_w == 0) return;  // all padding (and x may be null)
    for (int64_t c = 0; c < c_per_group; ++c) {
      float* dst = planes + c * plane + w.pad_begin[1] * width + w.pad_begin[2];
      const float* src = x + c * in_h * in_w;
      for (int64_t ih = 0; ih < in_h; ++ih) {
        std::memcpy(dst + ih * width, src + ih * in_w, sizeof(float) * static_cast<size_t>(in_w));
      }
    }
  }
};

}  // namespace

bool DirectConvApplies(const Window3d& w, int64_t c_per_group, int64_t max_rows) {
  if (ActiveCpuIsa() < CpuIsa::kAvx2) return false;
  if (w.in[0] != 1 || w.kernel[0] != 1 || w.out[0] != 1 || w.pad_begin[0] != 0) return false;
  if (w.stride[1] != 1 || w.stride[2] != 1 || w.out[1] <= 0 || w.out[2] <= 0) return false;
  const int64_t rows = c_per_group * w.taps();
  if (rows < 1 || rows > max_rows) return false;
  const int64_t width = w.in[2] + w.pad_begin[2] + w.pad_end[2];
  const int64_t height = w.in[1] + w.pad_begin[1] + w.pad_end[1];
  // Stride 1 always gives these; checked because the offsets rely on them.
  if (w.out[2] != width - (w.kernel[2] - 1) * w.dilation[2]) return false;
  if (w.out[1] != height - (w.kernel[1] - 1) * w.dilation[1]) return false;
  return width <= 2 * w.out[2];
}

bool AllFinite(const float* x, int64_t n) {
  if (ActiveCpuIsa() >= CpuIsa::kAvx2) return AllFiniteAvx2(x, n);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return false;
  }
  return true;
}

void DirectConv(const Window3d& w, int64_t batch, int64_t channels, int64_t out_channels, int64_t group, const float* x,
                const float* weights, const float* bias, float* y, const ParallelForFn& parallel_for,
                const DirectConvPlanesDoneFn* planes_done) {
  const int64_t c_per_group = channels / group, m_per_group = out_channels / group;
  const int64_t rows = c_per_group * w.taps();
  const bool avx512 = ActiveCpuIsa() >= CpuIsa::kAvx512;
  const int64_t block_channels = avx512 ? kDirectForwardChannelsAvx512 : kDirectForwardChannels;
  const PaddedPlanes planes(w, c_per_group, avx512 ? kDirectForwardPixelStepAvx512 : kDirectForwardPixelStep);
  const int64_t out_w = w.out[2], out_pixels = w.out[1] * out_w;

  // Each group's weights in the forward loop's blocks of output channels.
  std::vector<float> packed(static_cast<size_t>(out_channels * rows));
  for (int64_t g = 0; g < group; ++g) {
    const float* wg = weights + g * m_per_group * rows;
    float* pg = packed.data() + g * m_per_group * rows;
    for (int64_t m0 = 0; m0 < m_per_group; m0 += block_channels) {
      const int64_t mb = std::min(block_channels, m_per_group - m0);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < mb; ++i) pg[m0 * rows + r * mb + i] = wg[(m0 + i) * rows + r];
      }
    }
  }

  // AVX-512: where each vector of padded-row pixels lands in an output plane.
  std::vector<uint16_t> store_lanes;
  std::vector<int64_t> store_first;
  if (avx512) {
    const int64_t vectors = planes.pixels / kDirectForwardPixelStepAvx512;
    store_lanes.resize(static_cast<size_t>(vectors));
    store_first.resize(static_cast<size_t>(vectors));
    for (int64_t v = 0; v < vectors; ++v) {
      const int64_t q0 = v * kDirectForwardPixelStepAvx512;
      store_first[v] = std::min(q0 / planes.width * out_w + std::min(q0 % planes.width, out_w), out_pixels);
      uint32_t lanes = 0;
      for (int64_t l = 0; l < kDirectForwardPixelStepAvx512; ++l) {
        const int64_t q = q0 + l;
        if (q / planes.width < w.out[1] && q % planes.width < out_w) lanes |= 1u << l;
      }
      store_lanes[v] = static_cast<uint16_t>(lanes);
    }
  }
  const DirectForwardStores stores{store_lanes.data(), store_first.data()};

  const int64_t cost = 2 * m_per_group * rows * planes.pixels;
  RunParallelFor(parallel_for, batch * group, cost, [&](int64_t begin, int64_t end) {
    thread_local AlignedFloatBuffer plane_buffer, out_buffer;
    float* xp = plane_buffer.Get(c_per_group * planes.plane);
    float* out = avx512 ? nullptr : out_buffer.Get(m_per_group * planes.pixels);
    std::fill_n(xp, c_per_group * planes.plane, 0.0f);
    for (int64_t u = begin; u < end; ++u) {
      const int64_t n = u / group, g = u % group;
      planes.Fill(w, c_per_group, x + (n * channels + g * c_per_group) * w.in[1] * w.in[2], xp);
      const float* wg = packed.data() + g * m_per_group * rows;
      const float* bg = bias != nullptr ? bias + g * m_per_group : nullptr;
      const int64_t first_plane = n * out_channels + g * m_per_group;
      float* yu = y + first_plane * out_pixels;
      if (avx512) {
        ConvDirectForwardAvx512(xp, planes.offsets.data(), rows, wg, m_per_group, planes.pixels, stores, bg, yu,
                                out_pixels);
      } else {
        ConvDirectForwardAvx2(xp, planes.offsets.data(), rows, wg, m_per_group, planes.pixels, out, planes.pixels);
        for (int64_t m = 0; m < m_per_group; ++m) {
          CopyRowsAddBiasAvx2(out + m * planes.pixels, planes.width, w.out[1], out_w, bg != nullptr ? bg[m] : 0.0f,
                              yu + m * out_pixels);
        }
      }
      if (planes_done != nullptr) (*planes_done)(first_plane, first_plane + m_per_group);
    }
  });
}

bool DirectConvGradFilter(const Window3d& w, int64_t batch, int64_t channels, int64_t out_channels, int64_t group,
                          const float* x, const float* dy, float* dw, const ParallelForFn& parallel_for) {
  const int64_t in_pixels = w.in[1] * w.in[2];
  if (!AllFinite(x, batch * channels * in_pixels)) return false;
  const int64_t c_per_group = channels / group, m_per_group = out_channels / group;
  const int64_t rows = c_per_group * w.taps();
  const PaddedPlanes planes(w, c_per_group, 8);
  const int64_t out_w = w.out[2], out_pixels = w.out[1] * out_w;
  const int64_t block = out_channels * rows;  // all of dw

  const int64_t chunks = (batch + kGradChunkImages - 1) / kGradChunkImages;
  std::vector<float> partial(static_cast<size_t>(chunks * block), 0.0f);
  RunParallelFor(parallel_for, chunks, 2 * kGradChunkImages * block * planes.pixels, [&](int64_t begin, int64_t end) {
    thread_local AlignedFloatBuffer plane_buffer, dy_buffer;
    GradFilterImages im;
    im.x_image = c_per_group * planes.plane;
    im.dy_stride = planes.pixels;
    im.dy_image = m_per_group * planes.pixels;
    im.pixels = planes.pixels;
    float* xp = plane_buffer.Get(kGradChunkImages * im.x_image);
    // Each output-gradient plane with the padded width as row stride, zero in the
    // dropped columns and past the last row.
    float* dyp = dy_buffer.Get(kGradChunkImages * im.dy_image);
    std::fill_n(xp, kGradChunkImages * im.x_image, 0.0f);
    std::fill_n(dyp, kGradChunkImages * im.dy_image, 0.0f);
    im.xp = xp;
    im.dy = dyp;
    for (int64_t chunk = begin; chunk < end; ++chunk) {
      const int64_t n0 = chunk * kGradChunkImages;
      im.images = std::min(batch, n0 + kGradChunkImages) - n0;
      for (int64_t g = 0; g < group; ++g) {
        for (int64_t i = 0; i < im.images; ++i) {
          const int64_t n = n0 + i;
          planes.Fill(w, c_per_group, x + (n * channels + g * c_per_group) * in_pixels, xp + i * im.x_image);
          const float* dyg = dy + (n * out_channels + g * m_per_group) * out_pixels;
          for (int64_t m = 0; m < m_per_group; ++m) {
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              std::memcpy(dyp + i * im.dy_image + m * planes.pixels + oh * planes.width,
                          dyg + m * out_pixels + oh * out_w, sizeof(float) * static_cast<size_t>(out_w));
            }
          }
        }
        ConvDirectGradFilterAvx2(im, planes.offsets.data(), rows, m_per_group,
                                 partial.data() + chunk * block + g * m_per_group * rows);
      }
    }
  });
  SumPartsInOrder(partial.data(), chunks, block, dw);
  return true;
}

void SumPartsInOrder(const float* parts, int64_t count, int64_t floats, float* out) {
  for (int64_t i = 0; i < floats; ++i) {
    float sum = 0.0f;
    for (int64_t c = 0; c < count; ++c) sum += parts[c * floats + i];
    out[i] = sum;
  }
}

}  // namespace tsr
