// ONNX mappings of elementwise math, logic and activation ops (beyond the core table in onnx_op_mapping.cc).
#include "graph/onnx/onnx_op_mapping.h"

namespace tsr {

void AddOnnxElementwiseMappings(OnnxOpTable& table) { (void)table; }

}  // namespace tsr
