// Building ONNX ModelProtos in C++ for the importer's tests, and running an imported
// model on the reference device.
#ifndef TESSERA_TESTS_GRAPH_ONNX_ONNX_TEST_UTIL_H_
#define TESSERA_TESTS_GRAPH_ONNX_ONNX_TEST_UTIL_H_

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "runtime/session.h"

namespace tsr::onnx_test {

using onnx::TensorProto;

// A dim of a graph input: a size or a symbolic name.
struct Dim {
  Dim(int64_t v) : value(v) {}                   // NOLINT: implicit for brace lists
  Dim(const char* p) : value(std::string(p)) {}  // NOLINT
  std::variant<int64_t, std::string> value;
};

inline onnx::ModelProto MakeModel(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tessera-test");
  onnx::OperatorSetIdProto* id = m.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

inline void SetType(onnx::ValueInfoProto* v, int32_t elem_type, const std::vector<Dim>& dims) {
  onnx::TypeProto::Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (const Dim& d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d.value)) {
      dim->set_dim_value(std::get<int64_t>(d.value));
    } else {
      dim->set_dim_param(std::get<std::string>(d.value));
    }
  }
}

inline void AddInput(onnx::ModelProto& m, const std::string& name, int32_t elem_type, const std::vector<Dim>& dims) {
  onnx::ValueInfoProto* v = m.mutable_graph()->add_input();
  v->set_name(name);
  SetType(v, elem_type, dims);
}

// An output without a declared type (the importer infers it).
inline void AddOutput(onnx::ModelProto& m, const std::string& name) { m.mutable_graph()->add_output()->set_name(name); }

inline onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs, const std::string& name = "") {
  onnx::NodeProto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  for (const std::string& i : inputs) n->add_input(i);
  for (const std::string& o : outputs) n->add_output(o);
  return n;
}

inline void SetInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void SetFloat(onnx::NodeProto* n, const std::string& name, float v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void SetString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void SetInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void SetTensorAttr(onnx::NodeProto* n, const std::string& name, const TensorProto& t) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

// A float tensor in float_data, or raw_data when `raw`.
inline TensorProto FloatTensor(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<float>& values, bool raw = false) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  if (raw) {
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  } else {
    for (float v : values) t.add_float_data(v);
  }
  return t;
}

inline TensorProto Int64Tensor(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& values) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

inline void AddInitializer(onnx::ModelProto& m, const TensorProto& t) { *m.mutable_graph()->add_initializer() = t; }

inline std::string Serialize(const onnx::ModelProto& m) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  return bytes;
}

inline absl::StatusOr<ImportedModel> Import(const onnx::ModelProto& m, const OnnxImportOptions& options = {},
                                            const std::string& dir = "") {
  return ImportOnnxModelFromBytes(Serialize(m), options, dir);
}

// Imports `m`, runs it on the reference kernels with `feeds` and returns every
// signature output in order.
inline absl::StatusOr<std::vector<Tensor>> ImportAndRun(const onnx::ModelProto& m,
                                                        const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                        const OnnxImportOptions& options = {}) {
  absl::StatusOr<ImportedModel> model = Import(m, options);
  if (!model.ok()) return model.status();
  std::vector<std::string> fetches = model->output_names;
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Create(std::move(model->graph), {.num_threads = 1, .device = "reference"});
  if (!session.ok()) return session.status();
  return (*session)->Run(feeds, fetches);
}

inline Tensor F32(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  return Tensor::FromVector<float>(Shape(dims), values);
}

// Shape and values within `tol` (absolute + relative).
inline void ExpectTensorNear(const Tensor& t, const std::vector<int64_t>& dims, const std::vector<double>& expected,
                             double tol = 1e-5) {
  ASSERT_EQ(t.shape(), Shape(dims)) << t.DebugString();
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    EXPECT_NEAR(t.GetAsDouble(i), expected[i], tol * (1 + std::abs(expected[i])))
        << "element " << i << " of " << t.DebugString();
  }
}

// A fresh folder under the test temp dir.
inline std::string MakeTempDir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/onnx_test_", ::getpid(), "_", name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace tsr::onnx_test

#endif  // TESSERA_TESTS_GRAPH_ONNX_ONNX_TEST_UTIL_H_
