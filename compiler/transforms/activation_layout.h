// tsr-activation-layout: chains of convolutions run in the channel-blocked layout.
// MLIR-level header (see activation_layout.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_ACTIVATION_LAYOUT_H_
#define TESSERA_COMPILER_TRANSFORMS_ACTIVATION_LAYOUT_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// Runs on func.func. Every f32 Conv / FusedConv with a constant weight that the blocked
// kernels take (kernels/cpu/conv_blocked.h: 1-D or 2-D, no dilation, group 1 or
// depthwise), that the plain layout would not run as Winograd (kernels/cpu/
// conv_prepared.h: fewer multiplications than any direct kernel) and whose output
// channels fill at least 3/4 of their 16-channel blocks becomes a BlockedConv (graph/ops/blocked_ops.cc): its output [N, ceil(M/16), ..., 16]
// feeds the next such convolution (as X or as the residual Z) directly, and an
// UnblockChannels is inserted once for its other users. An input that does not come
// blocked is read as it lies by a group-1 convolution (input_blocked = 0) and goes
// through one BlockChannels (shared by all its users) for a depthwise one or a
// residual. So the layout changes at the ends of a chain only, never inside it: oneDNN
// and ONNX Runtime (NCHWc) run CNNs the same way, every vector holding sixteen channels
// of one pixel whatever the image size.
std::unique_ptr<mlir::Pass> CreateActivationLayoutPass();

// Registers `tsr-activation-layout` for tessera-opt.
void RegisterActivationLayoutPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_ACTIVATION_LAYOUT_H_
