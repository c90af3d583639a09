// The ONNX op table: 1:1 mappings with their attribute lists, and the entries of the
// opset-dependent converters (onnx_versioned_ops.cc).
#include "graph/onnx/onnx_op_mapping.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "graph/status_macros.h"

namespace tsr {

OnnxConverter DirectOnnxMapping(std::string op, std::vector<std::string> attrs) {
  return
      [op = std::move(op), attrs = std::move(attrs)](OnnxNodeContext& ctx) -> absl::StatusOr<std::vector<TensorRef>> {
        AttrMap map;
        for (const std::string& a : attrs) TSR_RETURN_IF_ERROR(ctx.CopyAttrs({a}, map, op));
        TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode(op, ctx.inputs(), std::move(map)));
        return AllOutputs(*n);
      };
}

namespace {

OnnxConverter Direct(std::string op, std::vector<std::string> attrs = {}) {
  return DirectOnnxMapping(std::move(op), std::move(attrs));
}

const std::vector<std::string> kConvAttrs = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};

absl::flat_hash_map<std::string, OnnxOpMapping> BuildTable() {
  absl::flat_hash_map<std::string, OnnxOpMapping> t;
  for (const char* op : {"Abs",        "Neg",      "Exp",     "Log",    "Sqrt",
                         "Reciprocal", "Relu",     "Sigmoid", "Tanh",   "Erf",
                         "Softplus",   "Identity", "Add",     "Sub",    "Mul",
                         "Div",        "Pow",      "Max",     "Min",    "Equal",
                         "Less",       "Greater",  "Where",   "MatMul", "GlobalAveragePool",
                         "Expand",     "Tile",     "Range",   "Slice",  "Clip"}) {
    t[op] = {Direct(op)};
  }
  t["LeakyRelu"] = {Direct("LeakyRelu", {"alpha"})};
  t["Conv"] = {Direct("Conv", kConvAttrs)};
  std::vector<std::string> conv_transpose = kConvAttrs;
  conv_transpose.push_back("output_padding");
  conv_transpose.push_back("output_shape");
  t["ConvTranspose"] = {Direct("ConvTranspose", conv_transpose)};
  t["Gemm"] = {Direct("Gemm", {"alpha", "beta", "transA", "transB"})};
  t["MaxPool"] = {
      Direct("MaxPool", {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides", "storage_order"})};
  t["AveragePool"] = {
      Direct("AveragePool", {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"})};
  t["Flatten"] = {Direct("Flatten", {"axis"})};
  t["Transpose"] = {Direct("Transpose", {"perm"})};
  t["Concat"] = {Direct("Concat", {"axis"})};
  t["Gather"] = {Direct("Gather", {"axis"})};
  t["GatherElements"] = {Direct("GatherElements", {"axis"})};
  t["ScatterElements"] = {Direct("ScatterElements", {"axis", "reduction"})};
  t["OneHot"] = {Direct("OneHot", {"axis"})};
  t["ArgMax"] = {Direct("ArgMax", {"axis", "keepdims", "select_last_index"})};
  t["Reshape"] = {Direct("Reshape", {"allowzero"})};
  t["Pad"] = {Direct("Pad", {"mode"})};
  t["Shape"] = {Direct("Shape", {"start", "end"})};
  t["LayerNormalization"] = {Direct("LayerNormalization", {"axis", "epsilon", "stash_type"}), 17};
  t["SoftmaxCrossEntropyLoss"] = {Direct("SoftmaxCrossEntropyLoss", {"ignore_index", "reduction"}), 12};

  // ReduceSum took its axes as an input from opset 13, the others from 18.
  t["ReduceSum"] = {[](OnnxNodeContext& ctx) { return ConvertReduce(ctx, 13); }};
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"}) {
    t[op] = {[](OnnxNodeContext& ctx) { return ConvertReduce(ctx, 18); }};
  }
  t["Squeeze"] = {ConvertSqueeze};
  t["Unsqueeze"] = {ConvertUnsqueeze};
  t["Split"] = {ConvertSplit};
  t["Softmax"] = {ConvertSoftmax};
  t["LogSoftmax"] = {ConvertSoftmax};
  t["Dropout"] = {ConvertDropout};
  t["BatchNormalization"] = {ConvertBatchNormalization};
  t["Constant"] = {ConvertConstant};
  t["Cast"] = {ConvertCast};
  t["Sum"] = {ConvertSumOrMean};
  t["Mean"] = {ConvertSumOrMean};
  t["GlobalMaxPool"] = {ConvertGlobalMaxPool};
  AddOnnxElementwiseMappings(t);
  AddOnnxReductionMappings(t);
  AddOnnxShapeMappings(t);
  return t;
}

const absl::flat_hash_map<std::string, OnnxOpMapping>& Table() {
  static const auto* table = new absl::flat_hash_map<std::string, OnnxOpMapping>(BuildTable());
  return *table;
}

}  // namespace

std::vector<TensorRef> AllOutputs(const Node& node) {
  std::vector<TensorRef> out;
  for (int i = 0; i < node.num_outputs(); ++i) out.push_back(node.output(i));
  return out;
}

const OnnxOpMapping* FindOnnxOpMapping(absl::string_view op_type) {
  auto it = Table().find(op_type);
  return it == Table().end() ? nullptr : &it->second;
}

std::vector<std::string> MappedOnnxOps() {
  std::vector<std::string> ops;
  for (const auto& [name, mapping] : Table()) ops.push_back(name);
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace tsr
