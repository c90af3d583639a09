// The activation of the fused ops (FusedConv, FusedMatMul; graph/ops/fused_ops.cc):
// its kind and parameters read from the node's attributes, and the f32 epilogue pass
// y = act(y + z) over one contiguous run of the output.
//
// The pass reuses the row functions of the standalone kernels (elementwise_loops.h for
// Add, Relu, LeakyRelu, Clip, exact; vector_math.h for Sigmoid, Tanh, Gelu), so a
// fused kernel gives the same floats as Add and the activation kernel run after it.
#ifndef TESSERA_KERNELS_CPU_FUSED_ACTIVATION_H_
#define TESSERA_KERNELS_CPU_FUSED_ACTIVATION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/attr_reader.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/vector_math.h"

namespace tsr {

enum class FusedActivationKind { kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kTanh, kGelu };

struct FusedActivation {
  FusedActivationKind kind = FusedActivationKind::kNone;
  double alpha = 0.01;                  // LeakyRelu
  float min = -3.4028234663852886e38f;  // Clip
  float max = 3.4028234663852886e38f;   // Clip
};

// From the attributes `activation`, `alpha`, `min`, `max` (defaults applied by the
// reader). InvalidArgument naming the attribute for an unknown activation; the caller
// adds the node (ctx.Error).
inline absl::StatusOr<FusedActivation> ParseFusedActivation(const AttrReader& attrs) {
  FusedActivation act;
  const std::string name = attrs.GetString("activation");
  if (name == "None") {
    act.kind = FusedActivationKind::kNone;
  } else if (name == "Relu") {
    act.kind = FusedActivationKind::kRelu;
  } else if (name == "LeakyRelu") {
    act.kind = FusedActivationKind::kLeakyRelu;
  } else if (name == "Clip") {
    act.kind = FusedActivationKind::kClip;
  } else if (name == "Sigmoid") {
    act.kind = FusedActivationKind::kSigmoid;
  } else if (name == "Tanh") {
    act.kind = FusedActivationKind::kTanh;
  } else if (name == "Gelu") {
    act.kind = FusedActivationKind::kGelu;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute 'activation' is \"", name,
        "\" but one of \"None\", \"Relu\", \"LeakyRelu\", \"Clip\", \"Sigmoid\", \"Tanh\", \"Gelu\" is required"));
  }
  act.alpha = attrs.GetFloat("alpha");
  // Clip's bounds as the Clip kernel takes them: f32 values.
  act.min = static_cast<float>(attrs.GetFloat("min"));
  act.max = static_cast<float>(attrs.GetFloat("max"));
  return act;
}

// y[i] = act(y[i] + residual[i]) for i in [0, n) (residual may be null), with the
// loops of `isa`. Elementwise, so any split of a range gives the same floats.
inline void ApplyFusedEpilogue(const FusedActivation& act, const float* residual, float* y, int64_t n, CpuIsa isa) {
  const ElementwiseLoops& loops = ElementwiseLoopsFor(isa);
  if (residual != nullptr) loops.add(y, 1, residual, 1, y, n);
  switch (act.kind) {
    case FusedActivationKind::kNone:
      return;
    case FusedActivationKind::kRelu:
      loops.relu(y, y, n);
      return;
    case FusedActivationKind::kLeakyRelu:
      loops.leaky_relu(y, y, n, act.alpha);
      return;
    case FusedActivationKind::kClip:
      loops.clip(y, y, n, act.min, act.max);
      return;
    case FusedActivationKind::kSigmoid:
      VectorMathFor(isa).sigmoid(y, y, n);
      return;
    case FusedActivationKind::kTanh:
      VectorMathFor(isa).tanh(y, y, n);
      return;
    case FusedActivationKind::kGelu:
      VectorMathFor(isa).gelu_erf(y, y, n);
      return;
  }
}

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_FUSED_ACTIVATION_H_
