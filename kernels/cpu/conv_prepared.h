// Convolution weights prepared once, for inference with constant weights: the
// algorithm picked for the shape (depthwise, Winograd, direct -- plain or into channel
// blocks --, or (implicit) GEMM) and the weights in the form it consumes -- each group's
// weights packed as the GEMM's A operand, Winograd's transformed weights packed per xi,
// or the blocked direct kernel's order -- so that a forward pass does none of that
// work. The compiler's layout pass prepares constant weights at compile time; the cpu
// Conv kernel (conv_kernels.cc) prepares per call into a reused object and runs the
// same ConvForward, so both paths compute exactly the same floats wherever they pick
// the same algorithm (they differ only where Winograd pays off on weights transformed
// once but not on every call).
//
// Prepared weights are immutable: any number of threads may run ConvForward on
// one object at once. They are made for the ISA active when prepared
// (ActiveCpuIsa()), which must still be available when they are used.
#ifndef TESSERA_KERNELS_CPU_CONV_PREPARED_H_
#define TESSERA_KERNELS_CPU_CONV_PREPARED_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel.h"

namespace tsr {

// Everything about a convolution except its batch size and its data: NCHW-style
// (channels first) input [N, channels, window.in...], weights [out_channels,
// channels / group, window.kernel...], output [N, out_channels, window.out...].
struct ConvGeometry {
  Window3d window;
  int64_t channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
};

enum class ConvAlgorithm {
  kEmpty,          // no output elements
  kBiasOnly,       // no input channels or taps: the output is the bias
  kDepthwise,      // conv_depthwise.h
  kWinograd,       // conv_winograd.h
  kDirect,         // conv_direct.h
  kBlockedDirect,  // conv_blocked_kernels.h's direct kernel into 16-channel blocks, then unblocked
  kGemm,           // per (image, group) GEMM: pointwise, strided pointwise or implicit im2col
  kGemmPixelRows,  // per image, the transposed product: pixels x output channels (small images)
};

// Applied to elements [offset, offset + length) of each output plane in [plane_begin,
// plane_end) of a convolution (a plane: one image's channel; see ConvForward).
using PlaneEpilogueFn = std::function<void(int64_t plane_begin, int64_t plane_end, int64_t offset, int64_t length)>;

class PreparedConvWeights {
 public:
  PreparedConvWeights() = default;
  PreparedConvWeights(PreparedConvWeights&&) = default;
  PreparedConvWeights& operator=(PreparedConvWeights&&) = default;

  const ConvGeometry& geometry() const { return geometry_; }
  ConvAlgorithm algorithm() const { return algorithm_; }
  int winograd_tile() const { return winograd_tile_; }

 private:
  friend absl::Status PrepareConvWeightsInto(const ConvGeometry& geometry, const float* weights, bool per_call,
                                             const ParallelForFn& parallel_for, PreparedConvWeights* prepared);
  friend bool ConvForward(const PreparedConvWeights& prepared, int64_t batch, const float* x, const float* bias,
                          float* y, const ParallelForFn& parallel_for, const PlaneEpilogueFn* epilogue);

  ConvGeometry geometry_;
  ConvAlgorithm algorithm_ = ConvAlgorithm::kEmpty;
  int winograd_tile_ = 0;
  // kGemm: one per group; kWinograd: one per xi.
  std::vector<SgemmPackedA> packed_;
  // kGemmPixelRows: the weights transposed, [rows, out_channels], as the product's B.
  SgemmPackedB packed_b_;
  // kBlockedDirect: the weights in the blocked direct kernel's order.
  AlignedFloatBuffer blocked_;
  // kDepthwise and kDirect consume the weights as given: either a copy (owned_) or
  // the caller's array (borrowed); raw_ points at whichever.
  std::vector<float> owned_;
  const float* raw_ = nullptr;
};

// Prepares `weights` ([out_channels, channels / group, kernel...]) for `geometry`,
// copying whatever it keeps: the caller's array may be freed afterwards.
// parallel_for (null: inline) splits the preparation. InvalidArgument when the
// geometry is inconsistent (group < 1, channels or out_channels not divisible by it,
// negative sizes, a zero stride or dilation).
absl::StatusOr<PreparedConvWeights> PrepareConvWeights(const ConvGeometry& geometry, const float* weights,
                                                       const ParallelForFn& parallel_for = nullptr);

// The algorithm PrepareConvWeights picks for `geometry` (kEmpty for an invalid one),
// without preparing anything: the compiler's layout pass keeps the convolutions that run
// as Winograd in the plain layout.
ConvAlgorithm PreparedConvAlgorithm(const ConvGeometry& geometry);

// The same into an existing object, reusing its memory. With `per_call` (the Conv
// kernel's preparation on every call), the algorithm is chosen counting the
// preparation's cost as part of one call (so Winograd needs more tiles to pay off),
// and depthwise and direct weights are borrowed, not copied: `weights` must then
// outlive every ConvForward on *prepared.
absl::Status PrepareConvWeightsInto(const ConvGeometry& geometry, const float* weights, bool per_call,
                                    const ParallelForFn& parallel_for, PreparedConvWeights* prepared);

// y = conv(x, weights) + bias for `batch` images: x [batch, channels, window.in...],
// y [batch, out_channels, window.out...] (both dense, channels first), bias
// [out_channels] or null. parallel_for (null: inline) splits the work; the results
// do not depend on the split.
//
// With `epilogue`, the depthwise and GEMM algorithms call it on each part of the output
// (planes: [image * out_channels + channel] indices) right after writing it, while it is
// in cache — whole planes, or the GEMM's finished blocks — and ConvForward returns true;
// the others return false and the caller applies its epilogue in a pass of its own.
// FusedConv's activation and residual go there.
bool ConvForward(const PreparedConvWeights& prepared, int64_t batch, const float* x, const float* bias, float* y,
                 const ParallelForFn& parallel_for = nullptr, const PlaneEpilogueFn* epilogue = nullptr);

// The convolution of a Conv-like node (Conv, FusedConv: X is input 0, W input 1, the
// Conv attributes). Nullopt for more than three spatial dimensions (callers run the
// reference kernel); an error naming the node for an invalid geometry.
absl::StatusOr<std::optional<ConvGeometry>> NodeConvGeometry(const KernelContext& ctx);

// The cpu Conv-like kernels' per-call preparation: `weights` prepared (per_call) into
// this thread's object, whose memory is reused from call to call (the packed weights
// are megabytes: fresh pages every call would cost as much as the packing) and shared
// by every such kernel. The weights are borrowed: the object is valid for this call only.
absl::StatusOr<const PreparedConvWeights*> PrepareConvWeightsForCall(const ConvGeometry& geometry, const float* weights,
                                                                     const ParallelForFn& parallel_for);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_PREPARED_H_
