// ONNX mappings of shape, layout, indexing and source ops (beyond the core table in onnx_op_mapping.cc).
#include "graph/onnx/onnx_op_mapping.h"

namespace tsr {

void AddOnnxShapeMappings(OnnxOpTable& table) { (void)table; }

}  // namespace tsr
