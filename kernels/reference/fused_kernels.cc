// Reference FusedConv and FusedMatMul kernels (graph/ops/fused_ops.cc), f32 and f64:
// literally the composition the fusion replaced, each step run by the reference kernel
// of the op it stands for, so the oracle of the fused ops is the oracle of
//   FusedConv:   Conv(X, W, B) -> Add(., Z) -> activation
//   FusedMatMul: MatMul(A, B or Transpose(B)) -> Add(., bias) -> Add(., Z) -> activation
// with the same rounding after every step as the unfused graph. The activation names
// are the names of the ops (Relu, LeakyRelu(alpha), Clip(min, max), Sigmoid, Tanh,
// Gelu with approximate = "none"); "None" applies nothing.
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/dtype.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

constexpr DType kFusedDTypes[] = {DType::kF32, DType::kF64};

// The attributes the fused ops add to those of the op they fuse.
constexpr const char* kActivationAttrs[] = {"activation", "alpha", "min", "max"};

// Runs the steps of a composition with the reference kernels of `kernels`, each into
// a fresh tensor of the fused node's dtype; Finish() copies the last into the output.
class Composition {
 public:
  Composition(const KernelRegistry& kernels, KernelContext& ctx) : kernels_(kernels), ctx_(ctx) {}

  const Tensor& value() const { return value_; }

  // value = op(inputs) with `attrs`, of shape `shape`.
  absl::Status Step(absl::string_view op, std::vector<const Tensor*> inputs, const AttrMap& attrs, const Shape& shape) {
    absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup(op);
    if (!def.ok()) return ctx_.Error(def.status().message());
    absl::StatusOr<const KernelFn*> fn = kernels_.Lookup(op, kReferenceDevice, inputs[0]->dtype());
    if (!fn.ok()) return ctx_.Error(fn.status().message());
    Tensor out(ctx_.output(0).dtype(), shape);
    KernelContext step(**def, ctx_.node_name(), attrs, std::move(inputs), {&out});
    TSR_RETURN_IF_ERROR((**fn)(step));
    value_ = std::move(out);
    return absl::OkStatus();
  }

  // value = value + input `i` of the fused node, when present.
  absl::Status AddInput(int i) {
    if (!ctx_.has_input(i)) return absl::OkStatus();
    const Tensor current = value_;
    return Step("Add", {&current, &ctx_.input(i)}, {}, current.shape());
  }

  // value = activation(value), the activation as the fused node's attributes give it.
  absl::Status Activate() {
    const std::string activation = ctx_.GetString("activation");
    if (activation == "None") return absl::OkStatus();
    const Tensor current = value_;
    if (activation == "Relu" || activation == "Sigmoid" || activation == "Tanh") {
      return Step(activation, {&current}, {}, current.shape());
    }
    if (activation == "Gelu")
      return Step("Gelu", {&current}, {{"approximate", AttrValue::String("none")}}, current.shape());
    if (activation == "LeakyRelu") {
      return Step("LeakyRelu", {&current}, {{"alpha", AttrValue::Float(ctx_.GetFloat("alpha"))}}, current.shape());
    }
    if (activation == "Clip") {
      Tensor lo(current.dtype(), Shape{});
      Tensor hi(current.dtype(), Shape{});
      if (current.dtype() == DType::kF64) {
        lo.data<double>()[0] = ctx_.GetFloat("min");
        hi.data<double>()[0] = ctx_.GetFloat("max");
      } else {
        lo.data<float>()[0] = static_cast<float>(ctx_.GetFloat("min"));
        hi.data<float>()[0] = static_cast<float>(ctx_.GetFloat("max"));
      }
      return Step("Clip", {&current, &lo, &hi}, {}, current.shape());
    }
    return ctx_.Error(absl::StrCat("attribute 'activation' is \"", activation,
                                   "\" but one of \"None\", \"Relu\", \"LeakyRelu\", \"Clip\", \"Sigmoid\", \"Tanh\", "
                                   "\"Gelu\" is required"));
  }

  absl::Status Finish() {
    Tensor& y = ctx_.output(0);
    if (y.dtype() != value_.dtype() || y.shape() != value_.shape()) {
      return ctx_.Error(
          absl::StrCat("the output is ", y.type().ToString(), " but the composition gives ", value_.type().ToString()));
    }
    if (y.num_bytes() > 0) std::memcpy(y.raw_data(), value_.raw_data(), y.num_bytes());
    return absl::OkStatus();
  }

 private:
  const KernelRegistry& kernels_;
  KernelContext& ctx_;
  Tensor value_;
};

// The fused node's attributes without the activation's: those of the fused op.
AttrMap WithoutActivation(const AttrMap& attrs) {
  AttrMap out = attrs;
  for (const char* name : kActivationAttrs) out.erase(name);
  return out;
}

absl::Status FusedConvKernel(const KernelRegistry& kernels, KernelContext& ctx) {
  Composition c(kernels, ctx);
  std::vector<const Tensor*> conv_inputs = {&ctx.input(0), &ctx.input(1)};
  if (ctx.has_input(2)) conv_inputs.push_back(&ctx.input(2));
  TSR_RETURN_IF_ERROR(c.Step("Conv", std::move(conv_inputs), WithoutActivation(ctx.attrs()), ctx.output(0).shape()));
  TSR_RETURN_IF_ERROR(c.AddInput(3));
  TSR_RETURN_IF_ERROR(c.Activate());
  return c.Finish();
}

absl::Status FusedMatMulKernel(const KernelRegistry& kernels, KernelContext& ctx) {
  Composition c(kernels, ctx);
  const Tensor& b = ctx.input(1);
  Tensor b_kn = b;
  if (ctx.GetInt("transpose_b") == 1) {
    if (b.shape().rank() != 2) return ctx.Error(absl::StrCat("input 1 ('B') ", b.shape().ToString(), " is not 2-D"));
    TSR_RETURN_IF_ERROR(
        c.Step("Transpose", {&b}, {{"perm", AttrValue::Ints({1, 0})}}, Shape{b.shape().dim(1), b.shape().dim(0)}));
    b_kn = c.value();
  }
  // numpy MatMul of A [..., M, K] with a 2-D [K, N] is exactly the rows-times-matrix product.
  TSR_RETURN_IF_ERROR(c.Step("MatMul", {&ctx.input(0), &b_kn}, {}, ctx.output(0).shape()));
  TSR_RETURN_IF_ERROR(c.AddInput(2));
  TSR_RETURN_IF_ERROR(c.AddInput(3));
  TSR_RETURN_IF_ERROR(c.Activate());
  return c.Finish();
}

}  // namespace

absl::Status RegisterReferenceFusedKernels(KernelRegistry& registry) {
  // The steps run the reference kernels registered here, at the time the fused kernel runs.
  const KernelRegistry* kernels = &registry;
  TSR_RETURN_IF_ERROR(registry.Register("FusedConv", kReferenceDevice, kFusedDTypes,
                                        [kernels](KernelContext& ctx) { return FusedConvKernel(*kernels, ctx); }));
  TSR_RETURN_IF_ERROR(registry.Register("FusedMatMul", kReferenceDevice, kFusedDTypes,
                                        [kernels](KernelContext& ctx) { return FusedMatMulKernel(*kernels, ctx); }));
  return absl::OkStatus();
}

}  // namespace tsr
