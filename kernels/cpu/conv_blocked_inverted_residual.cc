// The fused inverted-residual block (conv_blocked_inverted_residual.h): bands of output
// rows, each a pointwise expansion of its input rows into a per-thread scratch buffer, a
// depthwise convolution into a second one and the projection into Y, on the direct and
// depthwise kernels' plans (conv_blocked_kernels.h).
#include "kernels/cpu/conv_blocked_inverted_residual.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_blocked_kernels.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = kChannelBlock;

// A band's two scratch buffers (its expanded input rows and its depthwise output) take at
// most this many bytes: with the band's input and output rows they stay in the 1 MiB L2
// of this machine's cores.
constexpr int64_t kBandBytes = 512 * 1024;

// An image is cut into at least this many bands where its rows allow, so that two
// threads (or four) get even shares.
constexpr int64_t kMinBandsPerImage = 8;

// The expanded rows a thread's scratch buffer holds: those of image `image` in [lo, hi),
// computed by the call numbered `call` (a band of the same image and call that starts
// inside them takes them over instead of expanding them again).
struct ExpandedRows {
  uint64_t call = 0;
  int64_t image = -1;
  int64_t lo = 0, hi = 0;
};

thread_local AlignedFloatBuffer expanded_scratch;
thread_local AlignedFloatBuffer depthwise_scratch;
thread_local ExpandedRows expanded_rows;

// Numbers the calls, so that no call takes over rows another one left in a scratch buffer.
std::atomic<uint64_t> next_call{1};

}  // namespace

bool BlockedInvertedResidualApplies(const ConvGeometry* expand, const ConvGeometry& depthwise,
                                    const ConvGeometry& project) {
  const Window3d& w = depthwise.window;
  if (!BlockedConvApplies(depthwise) || depthwise.group == 1 || depthwise.group != depthwise.channels ||
      depthwise.out_channels != depthwise.channels) {
    return false;
  }
  if (expand != nullptr &&
      (!BlockedConvApplies(*expand) || !IsBlockedPointwise(*expand) || expand->out_channels != depthwise.channels ||
       expand->window.in[1] != w.in[1] || expand->window.in[2] != w.in[2])) {
    return false;
  }
  return BlockedConvApplies(project) && IsBlockedPointwise(project) && project.channels == depthwise.channels &&
         project.window.in[1] == w.out[1] && project.window.in[2] == w.out[2];
}

void BlockedInvertedResidualForward(const BlockedConvStage& expand, const BlockedConvStage& depthwise,
                                    const BlockedConvStage& project, int64_t batch, const float* x,
                                    const float* residual, float* y, const ParallelForFn& parallel_for) {
  const ConvGeometry& gd = depthwise.conv->geometry();
  const ConvGeometry& gp = project.conv->geometry();
  const Window3d& w = gd.window;
  const int64_t in_h = w.in[1], in_w = w.in[2], out_h = w.out[1], out_w = w.out[2];
  const int64_t kernel_h = w.kernel[1], stride_h = w.stride[1], pad_top = w.pad_begin[1];
  const int64_t e_blocks = ChannelBlocks(gd.channels);
  const int64_t in_channels = expand.conv != nullptr ? expand.conv->geometry().channels : gd.channels;
  const int64_t x_block = in_h * in_w * kLanes, x_image = ChannelBlocks(in_channels) * x_block;
  const int64_t y_block = out_h * out_w * kLanes, y_image = ChannelBlocks(gp.out_channels) * y_block;

  // Rows per band: the most whose scratch fits kBandBytes, at most out_h / kMinBandsPerImage
  // (rounded up); at least one.
  const int64_t expanded_row = expand.conv != nullptr ? e_blocks * in_w * kLanes : 0;
  const int64_t depthwise_row = e_blocks * out_w * kLanes;
  const auto scratch_bytes = [&](int64_t rows) {
    return static_cast<int64_t>(sizeof(float)) *
           (((rows - 1) * stride_h + kernel_h) * expanded_row + rows * depthwise_row);
  };
  int64_t band = std::max<int64_t>(1, (out_h + kMinBandsPerImage - 1) / kMinBandsPerImage);
  while (band > 1 && scratch_bytes(band) > kBandBytes) --band;
  const int64_t bands = (out_h + band - 1) / band;
  const int64_t capacity_rows = (band - 1) * stride_h + kernel_h;  // expanded rows a band reads

  std::optional<BlockedDirectPlan> expand_plan;
  if (expand.conv != nullptr) {
    expand_plan.emplace(expand.conv->geometry(), expand.conv->packed_weights(), expand.bias, expand.activation,
                        std::min<int64_t>(4096, capacity_rows * in_w));
  }
  const BlockedDepthwisePlan depthwise_plan(gd, depthwise.conv->packed_weights(), depthwise.bias, depthwise.activation);
  const BlockedDirectPlan project_plan(gp, project.conv->packed_weights(), project.bias, project.activation,
                                       std::min<int64_t>(4096, band * out_w));

  // A band's cost in cycles: its multiply-adds at about sixteen a cycle.
  const int64_t expand_macs = expand.conv != nullptr ? band * stride_h * in_w * in_channels * gd.channels : 0;
  const int64_t band_cost = (expand_macs + band * out_w * gd.channels * (w.taps() + gp.out_channels)) / 16 + 1;
  const uint64_t call = next_call.fetch_add(1);

  RunParallelFor(parallel_for, batch * bands, band_cost, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t n = u / bands, o0 = u % bands * band, o1 = std::min(out_h, o0 + band);
      // The input rows the band's depthwise windows read.
      const int64_t i0 = std::clamp<int64_t>(o0 * stride_h - pad_top, 0, in_h);
      const int64_t i1 = std::clamp<int64_t>((o1 - 1) * stride_h - pad_top + kernel_h, i0, in_h);

      BlockedDepthwiseSlice slice;
      if (expand_plan.has_value()) {
        const int64_t e_block = capacity_rows * in_w * kLanes;
        float* e = expanded_scratch.Get(e_blocks * e_block);
        ExpandedRows& held = expanded_rows;
        int64_t from = i0;
        if (held.call == call && held.image == n && held.lo <= i0 && i0 <= held.hi && held.hi <= i1) {
          // The rows this band shares with the thread's last one move to the front.
          if (i0 > held.lo && held.hi > i0) {
            for (int64_t b = 0; b < e_blocks; ++b) {
              float* block = e + b * e_block;
              std::memmove(block, block + (i0 - held.lo) * in_w * kLanes,
                           static_cast<size_t>((held.hi - i0) * in_w * kLanes) * sizeof(float));
            }
          }
          from = held.hi;
        }
        if (i1 > from) {
          expand_plan->RunPointwise(x + n * x_image + from * in_w * kLanes, x_block, (i1 - from) * in_w, nullptr,
                                    e + (from - i0) * in_w * kLanes, e_block);
        }
        held = {call, n, i0, i1};
        slice.x = e;
        slice.x_block = e_block;
        slice.x_row0 = i0;
      } else {
        slice.x = x + n * x_image;
        slice.x_block = x_block;
        slice.x_row0 = 0;
      }
      const int64_t d_block = band * out_w * kLanes;
      float* d = depthwise_scratch.Get(e_blocks * d_block);
      slice.y = d;
      slice.y_block = d_block;
      slice.y_row0 = o0;
      slice.oh_begin = o0;
      slice.oh_end = o1;
      slice.blocks = 1;
      const float* x0 = slice.x;
      for (int64_t b = 0; b < e_blocks; ++b) {
        slice.block = b;
        slice.x = x0 + b * slice.x_block;
        slice.y = d + b * d_block;
        depthwise_plan.Run(slice);
      }

      const int64_t at = n * y_image + o0 * out_w * kLanes;
      project_plan.RunPointwise(d, d_block, (o1 - o0) * out_w, residual != nullptr ? residual + at : nullptr, y + at,
                                y_block);
    }
  });
}

}  // namespace tsr
