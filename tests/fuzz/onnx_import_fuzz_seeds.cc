// Writes the seed corpus of onnx_import_fuzzer: small valid ONNX models (a CNN block, a
// transformer-like block, opset-11 forms) as "<folder>/<name>.onnx".
//
//   onnx_import_fuzz_seeds <folder>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace {

using onnx::TensorProto;

onnx::ModelProto Model(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  onnx::OperatorSetIdProto* id = m.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  return m;
}

void Input(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* v = m.mutable_graph()->add_input();
  v->set_name(name);
  onnx::TypeProto::Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(TensorProto::FLOAT);
  for (int64_t d : dims) {
    if (d < 0) {
      t->mutable_shape()->add_dim()->set_dim_param("batch");
    } else {
      t->mutable_shape()->add_dim()->set_dim_value(d);
    }
  }
}

void Init(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& dims, int32_t type, bool raw) {
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  for (int64_t i = 0; i < n; ++i) {
    if (type == TensorProto::INT64) {
      t->add_int64_data(i % 2 == 0 ? 1 : -1);
    } else if (raw) {
      const float v = 0.1f * static_cast<float>(i % 7);
      t->mutable_raw_data()->append(reinterpret_cast<const char*>(&v), sizeof(v));
    } else {
      t->add_float_data(0.1f * static_cast<float>(i % 5));
    }
  }
}

onnx::NodeProto* Node(onnx::ModelProto& m, const std::string& op, const std::vector<std::string>& in,
                      const std::vector<std::string>& out) {
  onnx::NodeProto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(out[0] + "_node");
  for (const std::string& s : in) n->add_input(s);
  for (const std::string& s : out) n->add_output(s);
  return n;
}

void Ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void Int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

onnx::ModelProto Cnn() {
  onnx::ModelProto m = Model(13);
  Input(m, "x", {-1, 1, 6, 6});
  Init(m, "w", {2, 1, 3, 3}, TensorProto::FLOAT, true);
  Init(m, "b", {2}, TensorProto::FLOAT, false);
  Init(m, "fc", {8, 3}, TensorProto::FLOAT, false);
  Ints(Node(m, "Conv", {"x", "w", "b"}, {"c"}), "kernel_shape", {3, 3});
  Node(m, "Relu", {"c"}, {"r"});
  Ints(Node(m, "MaxPool", {"r"}, {"p"}), "kernel_shape", {2, 2});
  Node(m, "Flatten", {"p"}, {"f"});
  Node(m, "MatMul", {"f", "fc"}, {"logits"});
  Node(m, "Softmax", {"logits"}, {"probs"});
  m.mutable_graph()->add_output()->set_name("probs");
  return m;
}

onnx::ModelProto Transformer() {
  onnx::ModelProto m = Model(17);
  Input(m, "x", {-1, 4, 8});
  Init(m, "g", {8}, TensorProto::FLOAT, false);
  Init(m, "wq", {8, 8}, TensorProto::FLOAT, true);
  Init(m, "shape", {4}, TensorProto::INT64, false);
  Init(m, "axes", {1}, TensorProto::INT64, false);
  Node(m, "LayerNormalization", {"x", "g"}, {"ln"});
  Node(m, "MatMul", {"ln", "wq"}, {"q"});
  Ints(Node(m, "Transpose", {"q"}, {"qt"}), "perm", {0, 2, 1});
  Node(m, "MatMul", {"q", "qt"}, {"s"});
  Node(m, "Softmax", {"s"}, {"a"});
  Node(m, "ReduceSum", {"a", "axes"}, {"sum"});
  Node(m, "Split", {"q"}, {"q0", "q1"});
  Int(m.mutable_graph()->mutable_node(6), "axis", 2);
  Node(m, "Concat", {"q1", "q0"}, {"qc"});
  Int(m.mutable_graph()->mutable_node(7), "axis", 2);
  m.mutable_graph()->add_output()->set_name("sum");
  m.mutable_graph()->add_output()->set_name("qc");
  return m;
}

onnx::ModelProto Opset11() {
  onnx::ModelProto m = Model(11);
  Input(m, "x", {2, 1, 3});
  Ints(Node(m, "Squeeze", {"x"}, {"s"}), "axes", {1});
  Ints(Node(m, "Unsqueeze", {"s"}, {"u"}), "axes", {0});
  Ints(Node(m, "ReduceMean", {"u"}, {"r"}), "axes", {2});
  Node(m, "Softmax", {"u"}, {"sm"});
  Ints(Node(m, "Split", {"s"}, {"a", "b"}), "split", {1, 2});
  Int(m.mutable_graph()->mutable_node(4), "axis", 1);
  for (const char* o : {"r", "sm", "a", "b"}) m.mutable_graph()->add_output()->set_name(o);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: onnx_import_fuzz_seeds <folder>\n");
    return 2;
  }
  const std::vector<std::pair<std::string, onnx::ModelProto>> models = {
      {"cnn", Cnn()}, {"transformer", Transformer()}, {"opset11", Opset11()}};
  for (const auto& [name, model] : models) {
    std::string bytes;
    if (!model.SerializeToString(&bytes)) return 1;
    std::ofstream(std::string(argv[1]) + "/" + name + ".onnx", std::ios::binary) << bytes;
  }
  return 0;
}
