// A private op registry for tests of the graph machinery, independent of the
// built-in op set: Src (a placeholder-like source), Pair (two inputs of one type,
// broadcast), Split2 (two outputs), Opt (optional second input), Cat (variadic), Fan (n outputs).
#ifndef TESSERA_TESTS_GRAPH_TEST_OPS_H_
#define TESSERA_TESTS_GRAPH_TEST_OPS_H_

#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"

namespace tsr::testing {

inline const OpRegistry& TestRegistry() {
  static OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    auto src = [](InferenceContext& ctx) {
      ctx.set_output(0, ctx.GetType("dtype"), ctx.GetShape("shape"));
      return absl::OkStatus();
    };
    (void)reg->Register(OpDefBuilder("Src")
                            .Output("y", "T")
                            .RequiredAttr("dtype", AttrType::kType)
                            .Attr("shape", AttrType::kShape, AttrValue::FromShape(Shape()))
                            .Infer(src)
                            .Build());
    (void)reg->Register(OpDefBuilder("Pair")
                            .Input("a", "T")
                            .Input("b", "T")
                            .Output("c", "T")
                            .TypeConstraint("T", kFloatDTypes)
                            .Attr("alpha", AttrType::kFloat, AttrValue::Float(1.0))
                            .Infer(BroadcastAllInputs)
                            .Flops(PerOutputElement(1))
                            .Build());
    (void)reg->Register(OpDefBuilder("Split2")
                            .Input("x", "T")
                            .Output("a", "T")
                            .Output("b", "T")
                            .Infer([](InferenceContext& ctx) {
                              ctx.set_output(0, ctx.input(0));
                              ctx.set_output(1, DType::kBool, ctx.input_shape(0));
                              return absl::OkStatus();
                            })
                            .Build());
    (void)reg->Register(OpDefBuilder("Opt")
                            .Input("x", "T")
                            .OptionalInput("bias", "T")
                            .Output("y", "T")
                            .Infer(SameAsFirstInput)
                            .Build());
    (void)reg->Register(
        OpDefBuilder("Cat").VariadicInput("xs", "T", 2).Output("y", "T").Infer(SameAsFirstInput).Build());
    (void)reg->Register(OpDefBuilder("Fan")
                            .Input("x", "T")
                            .VariadicOutput("ys", "T")
                            .Attr("n", AttrType::kInt, AttrValue::Int(1))
                            .Infer([](InferenceContext& ctx) {
                              for (int64_t i = 0; i < ctx.GetInt("n"); ++i) {
                                ctx.set_output(static_cast<int>(i), ctx.input(0));
                              }
                              return absl::OkStatus();
                            })
                            .Build());
    return reg;
  }();
  return *r;
}

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_GRAPH_TEST_OPS_H_
