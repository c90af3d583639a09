// Conversion of single values between Tessera and GraphDef protos: dtypes, shapes,
// tensor types, tensors and attribute values. Internal to graph/proto/.
//
// The *FromProto functions treat the proto as hostile: they check every dtype number,
// dimension and byte count before allocating anything, and their errors say what is
// wrong without saying where (the caller prefixes "node 'fc1' attribute 'value': ").
#ifndef TESSERA_GRAPH_PROTO_GRAPH_DEF_VALUES_H_
#define TESSERA_GRAPH_PROTO_GRAPH_DEF_VALUES_H_

#include "absl/status/statusor.h"
#include "graph/attribute.h"
#include "graph/proto/graph_def.pb.h"
#include "graph/shape.h"
#include "graph/tensor.h"
#include "graph/tensor_type.h"

namespace tsr {

// The generated code's namespace (package tessera.proto), shortened.
namespace proto = ::tessera::proto;

void ShapeToProto(const Shape& shape, proto::ShapeProto* out);
void TensorTypeToProto(const TensorType& type, proto::TensorTypeProto* out);
void TensorToProto(const Tensor& tensor, proto::TensorProto* out);
void AttrValueToProto(const AttrValue& value, proto::AttrValue* out);

// A valid dtype (kInvalid and numbers that are no DType are errors).
absl::StatusOr<DType> DTypeFromProto(int value);
// Dims >= 0 or kBatchDim, rank <= kMaxRank, at most kMaxElements elements.
absl::StatusOr<Shape> ShapeFromProto(const proto::ShapeProto& shape);
absl::StatusOr<TensorType> TensorTypeFromProto(const proto::TensorTypeProto& type);
// Static dims and exactly the bytes they need; bool bytes must be 0 or 1.
absl::StatusOr<Tensor> TensorFromProto(const proto::TensorProto& tensor);
absl::StatusOr<AttrValue> AttrValueFromProto(const proto::AttrValue& value);

}  // namespace tsr

#endif  // TESSERA_GRAPH_PROTO_GRAPH_DEF_VALUES_H_
