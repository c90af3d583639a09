// CPU f32 kernels of the elementwise ops: Add, Sub, Mul, Div, Pow, variadic Max/Min,
// Equal/Less/Greater (bool output), Where, Clip and the unary math ops Abs, Neg, Exp,
// Log, Sqrt, Rsqrt, Reciprocal.
//
// Multi-operand ops iterate with elementwise_broadcast.h and run the row functions of
// elementwise_loops.h; the work is split over the flat output with ctx.ParallelFor.
// Every op but Exp and Log (vector_math.h, a few ulp) gives the reference's result bit
// for bit; out may alias input 0. Declined to the reference kernel: Pow with an
// exponent that is not f32, and Where whose X/Y are not f32 (Where is keyed by its
// bool condition, so the cpu kernel sees every X dtype).
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/elementwise_broadcast.h"
#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// Rough cycles per output element, for ParallelFor's splitting.
constexpr int64_t kArithmeticCost = 1;
constexpr int64_t kDivCost = 4;
constexpr int64_t kTranscendentalCost = 10;
constexpr int64_t kPowCost = 40;

absl::StatusOr<BroadcastLayout> Layout(KernelContext& ctx, const Shape& out, absl::Span<const Shape> operands) {
  absl::StatusOr<BroadcastLayout> layout = MakeBroadcastLayout(out, operands);
  if (!layout.ok()) return ctx.Error(layout.status().message());
  return layout;
}

// out = row(a, b) over the broadcast of inputs 0 and 1; Out is float or bool.
template <typename Out, typename Row>
absl::Status RunBinary(KernelContext& ctx, Row row, int64_t cost) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& out = ctx.output(0);
  TSR_ASSIGN_OR_RETURN(const BroadcastLayout layout, Layout(ctx, out.shape(), {a.shape(), b.shape()}));
  if (layout.num_elements == 0) return absl::OkStatus();
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  Out* po = out.data<Out>();
  const int64_t as = layout.inner_step(0), bs = layout.inner_step(1);
  ctx.ParallelFor(layout.num_elements, cost, [&](int64_t begin, int64_t end) {
    ForEachBroadcastRun(layout, begin, end, [&](const int64_t* off, int64_t o, int64_t count) {
      row(pa + off[0], as, pb + off[1], bs, po + o, count);
    });
  });
  return absl::OkStatus();
}

KernelFn BinaryKernel(BinaryRowFn ElementwiseLoops::*member, int64_t cost) {
  return [member, cost](KernelContext& ctx) {
    return RunBinary<float>(ctx, ElementwiseLoopsFor(ActiveCpuIsa()).*member, cost);
  };
}

KernelFn CompareKernel(CompareRowFn ElementwiseLoops::*member) {
  return [member](KernelContext& ctx) {
    return RunBinary<bool>(ctx, ElementwiseLoopsFor(ActiveCpuIsa()).*member, kArithmeticCost);
  };
}

// Pow in double through std::pow, as the reference (bit-exact); a scalar exponent of
// 2 is x * x, which rounds the same.
absl::Status PowKernel(KernelContext& ctx) {
  if (ctx.input(1).dtype() != DType::kF32) return RunReferenceKernel(ctx, DType::kF32);
  const Tensor& exponent = ctx.input(1);
  if (exponent.num_elements() == 1 && exponent.data<float>()[0] == 2.0f) {
    const BinaryRowFn mul = ElementwiseLoopsFor(ActiveCpuIsa()).mul;
    return RunBinary<float>(
        ctx,
        [mul](const float* a, int64_t as, const float*, int64_t, float* out, int64_t n) { mul(a, as, a, as, out, n); },
        kArithmeticCost);
  }
  return RunBinary<float>(
      ctx,
      [](const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          out[i] = static_cast<float>(std::pow(static_cast<double>(a[i * as]), static_cast<double>(b[i * bs])));
        }
      },
      kPowCost);
}

// Max/Min fold the operands left to right, as the reference: out = op(in0, in1), then
// out = op(out, in_k), all within each ParallelFor chunk.
KernelFn ExtremumKernel(BinaryRowFn ElementwiseLoops::*member) {
  return [member](KernelContext& ctx) -> absl::Status {
    const BinaryRowFn op = ElementwiseLoopsFor(ActiveCpuIsa()).*member;
    Tensor& out = ctx.output(0);
    const int num = ctx.num_inputs();
    std::vector<BroadcastLayout> layouts;
    if (num == 1) {
      // A broadcast copy: Max(x) = x.
      TSR_ASSIGN_OR_RETURN(BroadcastLayout l, Layout(ctx, out.shape(), {ctx.input(0).shape(), ctx.input(0).shape()}));
      layouts.push_back(l);
    }
    for (int k = 1; k < num; ++k) {
      const Shape& first = k == 1 ? ctx.input(0).shape() : out.shape();
      TSR_ASSIGN_OR_RETURN(BroadcastLayout l, Layout(ctx, out.shape(), {first, ctx.input(k).shape()}));
      layouts.push_back(l);
    }
    if (out.num_elements() == 0) return absl::OkStatus();
    float* po = out.data<float>();
    ctx.ParallelFor(out.num_elements(), kArithmeticCost * static_cast<int64_t>(layouts.size()),
                    [&](int64_t begin, int64_t end) {
                      for (size_t p = 0; p < layouts.size(); ++p) {
                        const BroadcastLayout& l = layouts[p];
                        const float* pa = p == 0 ? ctx.input(0).data<float>() : po;
                        const float* pb = ctx.input(num == 1 ? 0 : static_cast<int>(p) + 1).data<float>();
                        ForEachBroadcastRun(l, begin, end, [&](const int64_t* off, int64_t o, int64_t count) {
                          op(pa + off[0], l.inner_step(0), pb + off[1], l.inner_step(1), po + o, count);
                        });
                      }
                    });
    return absl::OkStatus();
  };
}

absl::Status WhereKernel(KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  Tensor& out = ctx.output(0);
  if (x.dtype() != DType::kF32 || y.dtype() != DType::kF32 || out.dtype() != DType::kF32) {
    return RunReferenceKernel(ctx, DType::kBool);
  }
  TSR_ASSIGN_OR_RETURN(const BroadcastLayout layout, Layout(ctx, out.shape(), {cond.shape(), x.shape(), y.shape()}));
  if (layout.num_elements == 0) return absl::OkStatus();
  const WhereRowFn row = ElementwiseLoopsFor(ActiveCpuIsa()).where;
  const bool* pc = cond.data<bool>();
  const float* px = x.data<float>();
  const float* py = y.data<float>();
  float* po = out.data<float>();
  ctx.ParallelFor(layout.num_elements, kArithmeticCost, [&](int64_t begin, int64_t end) {
    ForEachBroadcastRun(layout, begin, end, [&](const int64_t* off, int64_t o, int64_t count) {
      row(pc + off[0], layout.inner_step(0), px + off[1], layout.inner_step(1), py + off[2], layout.inner_step(2),
          po + o, count);
    });
  });
  return absl::OkStatus();
}

// y = row(x) over the flat tensor (same shapes; y may be x).
template <typename Row>
absl::Status RunUnary(KernelContext& ctx, Row row, int64_t cost) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.shape() != y.shape()) return ctx.Error("input and output shapes differ");
  const float* px = x.data<float>();
  float* py = y.data<float>();
  ctx.ParallelFor(x.num_elements(), cost,
                  [&](int64_t begin, int64_t end) { row(px + begin, py + begin, end - begin); });
  return absl::OkStatus();
}

KernelFn UnaryKernel(UnaryRowFn ElementwiseLoops::*member, int64_t cost) {
  return
      [member, cost](KernelContext& ctx) { return RunUnary(ctx, ElementwiseLoopsFor(ActiveCpuIsa()).*member, cost); };
}

KernelFn MathKernel(VecUnaryFn VectorMath::*member) {
  return [member](KernelContext& ctx) {
    return RunUnary(ctx, VectorMathFor(ActiveCpuIsa()).*member, kTranscendentalCost);
  };
}

absl::Status ClipKernel(KernelContext& ctx) {
  float lo = -INFINITY, hi = INFINITY;  // an absent bound changes nothing
  for (int k : {1, 2}) {
    if (!ctx.has_input(k)) continue;
    if (ctx.input(k).num_elements() != 1) {
      return ctx.Error(absl::StrCat("input ", k, " (", k == 1 ? "min" : "max", ") must hold one value"));
    }
    (k == 1 ? lo : hi) = ctx.input(k).data<float>()[0];
  }
  const ClipRowFn clip = ElementwiseLoopsFor(ActiveCpuIsa()).clip;
  return RunUnary(
      ctx, [clip, lo, hi](const float* x, float* y, int64_t n) { clip(x, y, n, lo, hi); }, kArithmeticCost);
}

}  // namespace

absl::Status RegisterCpuElementwiseKernels(KernelRegistry& registry) {
  auto reg = [&registry](absl::string_view op, KernelFn fn) {
    return registry.Register(op, kCpuDevice, DType::kF32, std::move(fn));
  };
  TSR_RETURN_IF_ERROR(reg("Add", BinaryKernel(&ElementwiseLoops::add, kArithmeticCost)));
  TSR_RETURN_IF_ERROR(reg("Sub", BinaryKernel(&ElementwiseLoops::sub, kArithmeticCost)));
  TSR_RETURN_IF_ERROR(reg("Mul", BinaryKernel(&ElementwiseLoops::mul, kArithmeticCost)));
  TSR_RETURN_IF_ERROR(reg("Div", BinaryKernel(&ElementwiseLoops::div, kDivCost)));
  TSR_RETURN_IF_ERROR(reg("Pow", PowKernel));
  TSR_RETURN_IF_ERROR(reg("Max", ExtremumKernel(&ElementwiseLoops::max)));
  TSR_RETURN_IF_ERROR(reg("Min", ExtremumKernel(&ElementwiseLoops::min)));
  TSR_RETURN_IF_ERROR(reg("Equal", CompareKernel(&ElementwiseLoops::equal)));
  TSR_RETURN_IF_ERROR(reg("Less", CompareKernel(&ElementwiseLoops::less)));
  TSR_RETURN_IF_ERROR(reg("Greater", CompareKernel(&ElementwiseLoops::greater)));
  TSR_RETURN_IF_ERROR(registry.Register("Where", kCpuDevice, DType::kBool, WhereKernel));
  TSR_RETURN_IF_ERROR(reg("Clip", ClipKernel));
  TSR_RETURN_IF_ERROR(reg("Abs", UnaryKernel(&ElementwiseLoops::abs, kArithmeticCost)));
  TSR_RETURN_IF_ERROR(reg("Neg", UnaryKernel(&ElementwiseLoops::neg, kArithmeticCost)));
  TSR_RETURN_IF_ERROR(reg("Sqrt", UnaryKernel(&ElementwiseLoops::sqrt, kDivCost)));
  TSR_RETURN_IF_ERROR(reg("Rsqrt", UnaryKernel(&ElementwiseLoops::rsqrt, 2 * kDivCost)));
  TSR_RETURN_IF_ERROR(reg("Reciprocal", UnaryKernel(&ElementwiseLoops::reciprocal, kDivCost)));
  TSR_RETURN_IF_ERROR(reg("Exp", MathKernel(&VectorMath::exp)));
  TSR_RETURN_IF_ERROR(reg("Log", MathKernel(&VectorMath::log)));
  return absl::OkStatus();
}

}  // namespace tsr
