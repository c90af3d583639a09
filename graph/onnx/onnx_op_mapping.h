// The table from ONNX op types (default domain, opsets 11-18) to converters that build
// the equivalent Tessera nodes.
//
// Most ops map 1:1 (Tessera's op set follows ONNX's latest-opset semantics): inputs pass
// through and the listed attributes are copied; Tessera's defaults are ONNX's, which
// are the same across opsets 11-18 for every attribute copied. Ops whose signature
// changed within 11-18 have converters that turn the older form into the newer one —
// Reduce* and Squeeze/Unsqueeze axes and Split's split from attributes into constant
// inputs, Softmax/LogSoftmax before 13 (coerced to 2-D) into Flatten + Softmax +
// Reshape, Dropout's ratio before 12 — and a few ops are exact compositions (Sum,
// Mean, GlobalMaxPool). Everything else is an Unimplemented error naming the node.
#ifndef TESSERA_GRAPH_ONNX_ONNX_OP_MAPPING_H_
#define TESSERA_GRAPH_ONNX_ONNX_OP_MAPPING_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/onnx/onnx_node_context.h"

namespace tsr {

// Builds the Tessera nodes of one ONNX node and returns, for each ONNX output position,
// the Tessera tensor holding it (fewer entries, or invalid ones, for outputs it cannot
// produce: the importer reports those when the model uses them).
using OnnxConverter = std::function<absl::StatusOr<std::vector<TensorRef>>(OnnxNodeContext&)>;

struct OnnxOpMapping {
  OnnxConverter convert;
  // The opset that introduced the op (as Tessera reads it).
  int64_t since_opset = 1;
};

// nullptr when the op type has no mapping.
const OnnxOpMapping* FindOnnxOpMapping(absl::string_view op_type);

// Sorted op types with a mapping.
std::vector<std::string> MappedOnnxOps();

// Converters whose behaviour depends on the opset (onnx_versioned_ops.cc).
absl::StatusOr<std::vector<TensorRef>> ConvertReduce(OnnxNodeContext& ctx, int64_t axes_input_since);
absl::StatusOr<std::vector<TensorRef>> ConvertSqueeze(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertUnsqueeze(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertSplit(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertSoftmax(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertDropout(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertBatchNormalization(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertConstant(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertCast(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertSumOrMean(OnnxNodeContext& ctx);
absl::StatusOr<std::vector<TensorRef>> ConvertGlobalMaxPool(OnnxNodeContext& ctx);

// A 1:1 mapping onto Tessera op `op`, copying the listed ONNX attributes.
OnnxConverter DirectOnnxMapping(std::string op, std::vector<std::string> attrs = {});

// The table, filled by domain: each adds its op types' entries.
using OnnxOpTable = absl::flat_hash_map<std::string, OnnxOpMapping>;
void AddOnnxElementwiseMappings(OnnxOpTable& table);  // onnx_elementwise_ops.cc
void AddOnnxReductionMappings(OnnxOpTable& table);    // onnx_reduction_ops.cc
void AddOnnxShapeMappings(OnnxOpTable& table);        // onnx_shape_ops.cc

// Every output of `node`, for returning from a converter.
std::vector<TensorRef> AllOutputs(const Node& node);

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_OP_MAPPING_H_
