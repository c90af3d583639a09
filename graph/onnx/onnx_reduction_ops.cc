// ONNX mappings of reduction, normalization and loss ops (beyond the core table in onnx_op_mapping.cc).
#include "graph/onnx/onnx_op_mapping.h"

namespace tsr {

void AddOnnxReductionMappings(OnnxOpTable& table) {
  // These Reduce* took their axes as an attribute until opset 18 (see ConvertReduce).
  for (const char* op : {"ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    table[op] = {[](OnnxNodeContext& ctx) { return ConvertReduce(ctx, 18); }};
  }
  table["ArgMin"] = {DirectOnnxMapping("ArgMin", {"axis", "keepdims", "select_last_index"})};
  table["CumSum"] = {DirectOnnxMapping("CumSum", {"exclusive", "reverse"}), 11};
  // K is an input from opset 10 (the only form in opsets 11-18).
  table["TopK"] = {DirectOnnxMapping("TopK", {"axis", "largest", "sorted"})};
  // Before opset 13 Hardmax coerced its input to 2-D, as Softmax did; ConvertSoftmax
  // handles both forms for any op of that signature.
  table["Hardmax"] = {ConvertSoftmax};
  table["InstanceNormalization"] = {DirectOnnxMapping("InstanceNormalization", {"epsilon"})};
  table["MeanVarianceNormalization"] = {DirectOnnxMapping("MeanVarianceNormalization", {"axes"})};
  table["LRN"] = {DirectOnnxMapping("LRN", {"alpha", "beta", "bias", "size"})};
  table["Einsum"] = {DirectOnnxMapping("Einsum", {"equation"}), 12};
  table["NegativeLogLikelihoodLoss"] = {DirectOnnxMapping("NegativeLogLikelihoodLoss", {"ignore_index", "reduction"}),
                                        12};
}

}  // namespace tsr
