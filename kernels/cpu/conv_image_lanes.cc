// ImageLanesConv and ImageLanesConvGradFilter (conv_image_lanes.h): the geometry check,
// the weight packing, the transposes of each block of sixteen images in and out of the
// lanes, the split of the blocks (and rows, or input channels and kernel rows) over
// threads around the AVX-512 loops (conv_image_lanes_avx512.cc), and the weight
// gradient's sum over the blocks.
#include "kernels/cpu/conv_image_lanes.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_blocked_layout_row.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_image_lanes_row.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = 16;

// Work items per call at least (when the output has rows enough): two threads, or
// four, get even shares even when the batch is one or two blocks.
constexpr int64_t kMinItems = 4;

// Floats of one block's transposed input: every channel's rows, each padded_w vectors.
int64_t BlockFloats(const Window3d& w, int64_t channels) {
  const int64_t padded_w = w.in[2] + w.pad_begin[2] + w.pad_end[2];
  return channels * w.in[1] * padded_w * kLanes;
}

// Images [n0, n0 + 16) of x [batch, channels, in_h, in_w] (those past the batch as
// zeros) into xb [channels][in_h][padded_w][16]: every row its pad_left zero columns, its
// pixels, and its zero columns after them.
void TransposeInputBlock(const Window3d& w, int64_t batch, int64_t channels, int64_t n0, const float* x, float* xb) {
  const int64_t in_h = w.in[1], in_w = w.in[2], in_pixels = in_h * in_w;
  const int64_t pad_left = w.pad_begin[2], padded_w = in_w + pad_left + w.pad_end[2];
  const int64_t images = std::min(kLanes, batch - n0);
  for (int64_t row = 0; row < channels * in_h; ++row) {
    float* dst = xb + row * padded_w * kLanes;
    std::fill(dst, dst + pad_left * kLanes, 0.0f);
    std::fill(dst + (pad_left + in_w) * kLanes, dst + padded_w * kLanes, 0.0f);
    BlockPixelsAvx512(images, channels * in_pixels, 0, in_w, x + n0 * channels * in_pixels + row * in_w,
                      dst + pad_left * kLanes);
  }
}

}  // namespace

bool ImageLanesConvApplies(const Window3d& w, int64_t batch, int64_t channels, int64_t group) {
  if (ActiveCpuIsa() < CpuIsa::kAvx512 || group != 1 || batch < kLanes || channels < 1) return false;
  if (w.in[0] != 1 || w.out[0] != 1 || w.kernel[0] != 1) return false;
  for (int d = 1; d < 3; ++d) {
    if (w.stride[d] != 1 || w.dilation[d] < 1 || w.pad_begin[d] < 0 || w.pad_end[d] < 0 || w.out[d] < 1) return false;
  }
  if (channels * w.taps() > kMaxImageLanesRows) return false;
  return BlockFloats(w, channels) * static_cast<int64_t>(sizeof(float)) <= kMaxImageLanesBlockBytes;
}

void ImageLanesConv(const Window3d& w, int64_t batch, int64_t channels, int64_t out_channels, const float* x,
                    const float* weights, const float* bias, float* y, const ParallelForFn& parallel_for) {
  const int64_t in_h = w.in[1], in_w = w.in[2], out_h = w.out[1], out_w = w.out[2];
  const int64_t kernel_h = w.kernel[1], kernel_w = w.kernel[2], taps = kernel_h * kernel_w;
  const int64_t pad_left = w.pad_begin[2], padded_w = in_w + pad_left + w.pad_end[2];
  const int64_t out_pixels = out_h * out_w;

  // [out_channels, channels, taps] -> [channels, taps, out_channels]: one tap's output
  // channels side by side.
  std::vector<float> packed(static_cast<size_t>(channels * taps * out_channels));
  for (int64_t m = 0; m < out_channels; ++m) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t t = 0; t < taps; ++t)
        packed[(c * taps + t) * out_channels + m] = weights[(m * channels + c) * taps + t];
    }
  }
  // The valid kernel columns of every output column.
  std::vector<int64_t> kw_begin(static_cast<size_t>(out_w)), kw_end(static_cast<size_t>(out_w));
  for (int64_t ow = 0; ow < out_w; ++ow) w.ValidTaps(2, ow, kw_begin[ow], kw_end[ow]);

  const int64_t blocks = (batch + kLanes - 1) / kLanes;
  const int64_t row_chunks = std::min(out_h, (kMinItems + blocks - 1) / blocks);
  const int64_t block_macs = out_pixels * out_channels * channels * taps;
  RunParallelFor(parallel_for, blocks * row_chunks, block_macs / row_chunks, [&](int64_t begin, int64_t end) {
    thread_local AlignedFloatBuffer x_buffer, y_buffer;
    float* xb = x_buffer.Get(BlockFloats(w, channels));
    float* yb = y_buffer.Get(out_channels * out_pixels * kLanes);
    int64_t transposed_block = -1;
    for (int64_t u = begin; u < end; ++u) {
      const int64_t block = u / row_chunks, chunk = u % row_chunks;
      const int64_t n0 = block * kLanes, images = std::min(kLanes, batch - n0);
      const int64_t oh_begin = out_h * chunk / row_chunks, oh_end = out_h * (chunk + 1) / row_chunks;
      if (block != transposed_block) {
        TransposeInputBlock(w, batch, channels, n0, x, xb);
        transposed_block = block;
      }
      ImageLanesRow r;
      r.x = xb;
      r.channels = channels;
      r.channel_stride = in_h * padded_w * kLanes;
      r.row_stride = padded_w * kLanes;
      r.weights = packed.data();
      r.bias = bias;
      r.out_channels = out_channels;
      r.kernel_h = kernel_h;
      r.kernel_w = kernel_w;
      r.dilation_w = w.dilation[2];
      r.dilation_h = w.dilation[1];
      r.kw_begin = kw_begin.data();
      r.kw_end = kw_end.data();
      r.out_w = out_w;
      r.y_channel_stride = out_pixels * kLanes;
      for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
        w.ValidTaps(1, oh, r.kh_begin, r.kh_end);
        r.in_row0 = oh - w.pad_begin[1];
        r.y = yb + oh * out_w * kLanes;
        ImageLanesRowAvx512(r);
      }
      // The rows just computed, back to [image, channel, pixel].
      for (int64_t m = 0; m < out_channels; ++m) {
        UnblockPixelsAvx512(images, out_channels * out_pixels, oh_begin * out_w, oh_end * out_w,
                            yb + m * out_pixels * kLanes, y + (n0 * out_channels + m) * out_pixels);
      }
    }
  });
}

void ImageLanesConvGradFilter(const Window3d& w, int64_t batch, int64_t channels, int64_t out_channels, const float* x,
                              const float* dy, float* dw, const ParallelForFn& parallel_for) {
  const int64_t in_h = w.in[1], in_w = w.in[2], out_h = w.out[1], out_w = w.out[2];
  const int64_t kernel_h = w.kernel[1], kernel_w = w.kernel[2], taps = kernel_h * kernel_w;
  const int64_t pad_left = w.pad_begin[2], padded_w = in_w + pad_left + w.pad_end[2];
  const int64_t out_pixels = out_h * out_w;

  // The valid output columns of every kernel column.
  std::vector<int64_t> ow_begin(static_cast<size_t>(kernel_w)), ow_end(static_cast<size_t>(kernel_w));
  for (int64_t kw = 0; kw < kernel_w; ++kw) {
    const int64_t shift = kw * w.dilation[2] - pad_left;  // input column of output column 0
    ow_begin[kw] = std::min(out_w, std::max<int64_t>(0, -shift));
    ow_end[kw] = std::max(ow_begin[kw], std::min(out_w, in_w - shift));
  }

  // Every block's input and output gradient in the lanes, then each block's sums per
  // (input channel, kernel row), then the blocks' sums added in order.
  const int64_t blocks = (batch + kLanes - 1) / kLanes;
  const int64_t x_block = BlockFloats(w, channels), dy_block = out_channels * out_pixels * kLanes;
  const int64_t dw_floats = out_channels * channels * taps;
  thread_local AlignedFloatBuffer x_buffer, dy_buffer;
  float* xl = x_buffer.Get(blocks * x_block);
  float* dyl = dy_buffer.Get(blocks * dy_block);
  std::vector<float> partial(static_cast<size_t>(blocks * dw_floats));
  RunParallelFor(parallel_for, blocks, x_block + dy_block, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t n0 = block * kLanes, images = std::min(kLanes, batch - n0);
      TransposeInputBlock(w, batch, channels, n0, x, xl + block * x_block);
      for (int64_t m = 0; m < out_channels; ++m) {
        BlockPixelsAvx512(images, out_channels * out_pixels, 0, out_pixels, dy + (n0 * out_channels + m) * out_pixels,
                          dyl + block * dy_block + m * out_pixels * kLanes);
      }
    }
  });
  const int64_t items = blocks * channels * kernel_h;
  RunParallelFor(parallel_for, items, out_channels * kernel_w * out_pixels, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t kh = u % kernel_h, c = u / kernel_h % channels, block = u / (kernel_h * channels);
      ImageLanesGradRow r;
      r.row_stride = padded_w * kLanes;
      r.in_row0 = kh * w.dilation[1] - w.pad_begin[1];
      r.x = xl + block * x_block + c * in_h * r.row_stride;
      r.dy = dyl + block * dy_block;
      r.dy_channel_stride = out_pixels * kLanes;
      r.out_w = out_w;
      r.oh_begin = std::min(out_h, std::max<int64_t>(0, -r.in_row0));
      r.oh_end = std::max(r.oh_begin, std::min(out_h, in_h - r.in_row0));
      r.out_channels = out_channels;
      r.kernel_w = kernel_w;
      r.dilation_w = w.dilation[2];
      r.ow_begin = ow_begin.data();
      r.ow_end = ow_end.data();
      r.dw = partial.data() + block * dw_floats + (c * kernel_h + kh) * kernel_w;
      r.dw_channel_stride = channels * taps;
      ImageLanesGradRowAvx512(r);
    }
  });
  SumPartsInOrder(partial.data(), blocks, dw_floats, dw);
}

}  // namespace tsr
