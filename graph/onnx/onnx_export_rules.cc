// The export rules by op (FindOnnxExportRule): training ops refused, Tessera-only ops
// decomposed exactly into ONNX ops, opset-dependent forms rewritten for the target
// opset, and everything the importer maps 1:1 exported by the generic rule.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_export_context.h"
#include "graph/onnx/onnx_op_mapping.h"
#include "graph/status_macros.h"
#include "onnx/defs/schema.h"

namespace tsr {

namespace {

// Optimizer updates, gradients (GatherGrad, ConvGradFilter, ...) and state writes exist
// only in training graphs.
bool IsTrainingOp(const OpDef& def) {
  if (!def.variable_updates.empty() || absl::StrContains(def.name, "Grad")) return true;
  return def.stateful && def.name != "Variable" && def.name != "Dropout";
}

DType OutputDType(const Node& node) { return node.output_type(0).dtype; }

// x * Sigmoid(x).
absl::Status ExportSilu(const Node& node, OnnxExportContext& ctx) {
  const std::string x = ctx.InputName(node, 0);
  const std::string s = ctx.UniqueName(absl::StrCat(node.name(), "/sigmoid"));
  ctx.AddNode("Sigmoid", {x}, {s}, s);
  ctx.AddNode("Mul", {x, s}, {ctx.OutputName(node, 0)}, node.name());
  return absl::OkStatus();
}

// 1 / Sqrt(x).
absl::Status ExportRsqrt(const Node& node, OnnxExportContext& ctx) {
  const std::string s = ctx.UniqueName(absl::StrCat(node.name(), "/sqrt"));
  ctx.AddNode("Sqrt", {ctx.InputName(node, 0)}, {s}, s);
  ctx.AddNode("Reciprocal", {s}, {ctx.OutputName(node, 0)}, node.name());
  return absl::OkStatus();
}

// Gelu is an ONNX op only from opset 20: x * 0.5 * (1 + Erf(x / sqrt(2))), or with
// approximate="tanh" 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + 0.044715 x^3), written
// as x * Sigmoid(2u) — the same function, without the cancellation of 1 + tanh(u) for
// negative x (Tessera's kernel uses that form too).
absl::Status ExportGelu(const Node& node, OnnxExportContext& ctx) {
  const AttrValue* approx = node.FindAttr("approximate");
  const std::string mode = approx == nullptr ? "none" : approx->s();
  const DType dtype = OutputDType(node);
  const std::string& base = node.name();
  const std::string x = ctx.InputName(node, 0);
  auto step = [&](absl::string_view op, std::vector<std::string> inputs, absl::string_view suffix) {
    const std::string out = ctx.UniqueName(absl::StrCat(base, "/", suffix));
    ctx.AddNode(op, std::move(inputs), {out}, out);
    return out;
  };
  std::string gate;
  if (mode == "none") {
    TSR_ASSIGN_OR_RETURN(std::string rsqrt2, ctx.AddScalar(M_SQRT1_2, dtype, absl::StrCat(base, "/rsqrt2")));
    TSR_ASSIGN_OR_RETURN(std::string one, ctx.AddScalar(1.0, dtype, absl::StrCat(base, "/one")));
    TSR_ASSIGN_OR_RETURN(std::string half, ctx.AddScalar(0.5, dtype, absl::StrCat(base, "/half")));
    const std::string erf = step("Erf", {step("Mul", {x, rsqrt2}, "scaled")}, "erf");
    gate = step("Mul", {step("Add", {erf, one}, "one_plus"), half}, "gate");
  } else if (mode == "tanh") {
    TSR_ASSIGN_OR_RETURN(std::string k, ctx.AddScalar(0.044715, dtype, absl::StrCat(base, "/k")));
    TSR_ASSIGN_OR_RETURN(std::string c, ctx.AddScalar(2 * std::sqrt(2.0 / M_PI), dtype, absl::StrCat(base, "/c")));
    const std::string x3 = step("Mul", {step("Mul", {x, x}, "square"), x}, "cube");
    const std::string sum = step("Add", {x, step("Mul", {x3, k}, "cube_scaled")}, "sum");
    gate = step("Sigmoid", {step("Mul", {sum, c}, "scaled")}, "gate");
  } else {
    return ctx.Unsupported(node, absl::StrCat("approximate='", mode, "' has no ONNX decomposition"));
  }
  ctx.AddNode("Mul", {x, gate}, {ctx.OutputName(node, 0)}, base);
  return absl::OkStatus();
}

// Split's num_outputs arrived in opset 18; before, the sizes are an input. They are read
// from the outputs' inferred shapes, which is exactly how Tessera split.
absl::Status ExportSplit(const Node& node, OnnxExportContext& ctx) {
  const AttrValue* num_outputs = node.FindAttr("num_outputs");
  if (ctx.opset() >= 18 || num_outputs == nullptr || (node.num_inputs() > 1 && node.input(1).valid())) {
    return ExportDirect(node, ctx, {"num_outputs"});
  }
  const AttrValue* axis_attr = node.FindAttr("axis");
  const int64_t axis_value = axis_attr == nullptr ? 0 : axis_attr->i();
  const int rank = node.output_type(0).shape.rank();
  const int axis = static_cast<int>(axis_value < 0 ? axis_value + rank : axis_value);
  std::vector<int64_t> sizes;
  for (const TensorType& t : node.output_types()) {
    const int64_t d = t.shape.dim(axis);
    if (d == kBatchDim) {
      return ctx.Unsupported(node, absl::StrCat("splitting the batch dimension N into num_outputs pieces has no "
                                                "ONNX opset ",
                                                ctx.opset(), " form (sizes must be known)"));
    }
    sizes.push_back(d);
  }
  std::vector<std::string> outputs;
  for (int i = 0; i < node.num_outputs(); ++i) {
    std::string name = ctx.OutputName(node, i);
    // Every piece must be listed for the sizes to add up; unread ones get fresh names.
    if (name.empty()) name = ctx.UniqueName(absl::StrCat(node.name(), ":", i));
    outputs.push_back(std::move(name));
  }
  const std::string split = ctx.AddInt64s(sizes, absl::StrCat(node.name(), "/split"));
  onnx::NodeProto* n = ctx.AddNode("Split", {ctx.InputName(node, 0), split}, std::move(outputs), node.name());
  if (axis_value != 0) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis_value);
  }
  return absl::OkStatus();
}

// Reduce* other than ReduceSum take their axes as an attribute before opset 18 (the
// generic rule turns the constant input into it) and have no noop_with_empty_axes: with
// no axes, noop_with_empty_axes=1 is the identity; with axes it changes nothing.
absl::Status ExportReduce(const Node& node, OnnxExportContext& ctx) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op(), static_cast<int>(ctx.opset()), "");
  if (schema == nullptr || schema->attributes().count("noop_with_empty_axes") != 0) return ExportDirect(node, ctx);
  const AttrValue* noop = node.FindAttr("noop_with_empty_axes");
  if (noop != nullptr && noop->i() != 0) {
    const bool has_axes = node.num_inputs() > 1 && node.input(1).valid();
    const Tensor* axes = has_axes ? ctx.graph().ConstantValue(node.input(1)) : nullptr;
    if (!has_axes || (axes != nullptr && axes->num_elements() == 0)) {
      ctx.AddNode("Identity", {ctx.InputName(node, 0)}, {ctx.OutputName(node, 0)}, node.name());
      return absl::OkStatus();
    }
  }
  return ExportDirect(node, ctx, {"noop_with_empty_axes"});
}

// Inference-mode BatchNormalization is 1:1; training mode updates running statistics.
absl::Status ExportBatchNormalization(const Node& node, OnnxExportContext& ctx) {
  const AttrValue* training = node.FindAttr("training_mode");
  if (training != nullptr && training->i() != 0) {
    return ctx.Unsupported(node,
                           "training_mode=1 (batch statistics and running-average updates) is a training op; "
                           "training ops cannot be exported to ONNX; export the inference graph");
  }
  return ExportDirect(node, ctx);
}

// Pad's "wrap" mode arrived in opset 19.
absl::Status ExportPad(const Node& node, OnnxExportContext& ctx) {
  const AttrValue* mode = node.FindAttr("mode");
  if (mode != nullptr && mode->s() == "wrap") {
    return ctx.Unsupported(node, absl::StrCat("mode='wrap' has no form in ONNX opset ", ctx.opset()));
  }
  return ExportDirect(node, ctx);
}

}  // namespace

absl::StatusOr<OnnxExportRule> FindOnnxExportRule(const OpDef& def, int64_t opset) {
  const std::string& op = def.name;
  if (op == "Placeholder" || op == "Constant" || op == "Variable") {
    return absl::InternalError(absl::StrCat(op, " nodes are graph inputs and initializers, not ONNX nodes"));
  }
  if (IsTrainingOp(def)) {
    return absl::UnimplementedError("training ops cannot be exported to ONNX; export the inference graph");
  }
  if (op == "Silu") return OnnxExportRule(ExportSilu);
  if (op == "Gelu") return OnnxExportRule(ExportGelu);
  if (op == "Rsqrt") return OnnxExportRule(ExportRsqrt);
  if (FindOnnxOpMapping(op) == nullptr) {
    return absl::UnimplementedError(absl::StrCat("Tessera op '", op,
                                                 "' has no ONNX export rule (it is not an ONNX op that the importer "
                                                 "maps 1:1, and no decomposition is defined)"));
  }
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), "");
  if (schema == nullptr || schema->Deprecated()) {
    return absl::UnimplementedError(absl::StrCat("ONNX opset ", opset, " has no op '", op, "'"));
  }
  if (op == "Split") return OnnxExportRule(ExportSplit);
  if (op == "BatchNormalization") return OnnxExportRule(ExportBatchNormalization);
  if (op == "Pad") return OnnxExportRule(ExportPad);
  if (absl::StartsWith(op, "Reduce")) return OnnxExportRule(ExportReduce);
  return OnnxExportRule([](const Node& node, OnnxExportContext& ctx) { return ExportDirect(node, ctx); });
}

}  // namespace tsr
