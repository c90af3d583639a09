// Import-time constant folding of ONNX nodes.
//
// Exporters (torch.onnx among them) compute Reshape shapes, Slice bounds and masks at
// run time with chains like Shape -> Gather -> Unsqueeze -> Concat -> Reshape, because
// their graphs may have dynamic shapes. Tessera's graphs have static shapes (but for
// the one batch dim), and its shape inference needs such shape operands as known
// values. FoldOnnxNode evaluates one ONNX node at import time when its result is
// known: every input is a Constant node's value (initializers, ONNX Constant nodes,
// earlier folded nodes), or the node is Shape/Size of a tensor whose shape is fully
// static (symbolic dims bound by OnnxImportOptions::dim_bindings count as static).
// The importer then adds Constants holding the values instead of the node.
//
// The node is converted with its usual converter into a scratch graph and every
// Tessera node of that conversion is run with the reference kernels (RunOp), so a
// folded node computes exactly what the unfolded one would.
//
// What it leaves alone (the node is then converted as usual): nodes without inputs
// (Constant is already constant; random sources must not be frozen), stateful Tessera
// ops (Dropout, random ops), Shape of a tensor with the symbolic batch dim, Variables
// (trainable initializers can change), any intermediate or result tensor above
// max_elements, and any node whose conversion or evaluation fails here — the normal
// conversion and the runtime then report the problem at the node.
#ifndef TESSERA_GRAPH_ONNX_ONNX_CONSTANT_FOLDING_H_
#define TESSERA_GRAPH_ONNX_ONNX_CONSTANT_FOLDING_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/onnx/onnx_op_mapping.h"
#include "graph/onnx/onnx_tensor.h"
#include "graph/tensor.h"
#include "onnx/onnx_pb.h"

namespace tsr {

struct OnnxConstantFoldingOptions {
  // The most elements any tensor of a folded node (results and intermediates) may
  // have. Shape arithmetic and masks are small; folding large tensors (a transposed
  // weight, an Expand of a constant) would add a second copy of the data to the model
  // — the original Constant stays for other readers — and spend import time and memory
  // on what the runtime computes anyway.
  int64_t max_elements = int64_t{64} * 1024;
};

// The values of `node`'s outputs (one per ONNX output position; an invalid Tensor for
// an output with an empty name) when it can be evaluated at import time, else
// std::nullopt. `inputs` are the node's inputs resolved in `graph` (None() for absent
// optional ones), as the importer hands them to `convert`.
std::optional<std::vector<Tensor>> FoldOnnxNode(const onnx::NodeProto& node, int node_index, int64_t opset,
                                                const OnnxConverter& convert, const Graph& graph,
                                                absl::Span<const TensorRef> inputs,
                                                const OnnxTensorOptions& tensor_options,
                                                const OnnxConstantFoldingOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_CONSTANT_FOLDING_H_
