// ONNX mappings of reduction, normalization and loss ops (beyond the core table in onnx_op_mapping.cc).
#include "graph/onnx/onnx_op_mapping.h"

namespace tsr {

void AddOnnxReductionMappings(OnnxOpTable& table) { (void)table; }

}  // namespace tsr
