// Node attributes: `AttrValue` (int, float, string, bool, lists of int/float/string,
// tensor, dtype, shape) and `AttrMap`, an ordered name -> value map.
#ifndef TESSERA_GRAPH_ATTRIBUTE_H_
#define TESSERA_GRAPH_ATTRIBUTE_H_

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/tensor.h"

namespace tsr {

// The numbering is part of the GraphDef format.
enum class AttrType : uint8_t {
  kInt = 1,
  kFloat = 2,
  kString = 3,
  kBool = 4,
  kInts = 5,
  kFloats = 6,
  kStrings = 7,
  kTensor = 8,
  kType = 9,
  kShape = 10,
};

absl::string_view AttrTypeName(AttrType type);

class AttrValue {
 public:
  AttrValue() : value_(int64_t{0}) {}
  static AttrValue Int(int64_t v) { return AttrValue(Storage(std::in_place_index<0>, v)); }
  static AttrValue Float(double v) { return AttrValue(Storage(std::in_place_index<1>, v)); }
  static AttrValue String(std::string v) { return AttrValue(Storage(std::in_place_index<2>, std::move(v))); }
  static AttrValue Bool(bool v) { return AttrValue(Storage(std::in_place_index<3>, v)); }
  static AttrValue Ints(std::vector<int64_t> v) { return AttrValue(Storage(std::in_place_index<4>, std::move(v))); }
  static AttrValue Floats(std::vector<double> v) { return AttrValue(Storage(std::in_place_index<5>, std::move(v))); }
  static AttrValue Strings(std::vector<std::string> v) {
    return AttrValue(Storage(std::in_place_index<6>, std::move(v)));
  }
  static AttrValue FromTensor(Tensor v) { return AttrValue(Storage(std::in_place_index<7>, std::move(v))); }
  static AttrValue Type(DType v) { return AttrValue(Storage(std::in_place_index<8>, v)); }
  static AttrValue FromShape(Shape v) { return AttrValue(Storage(std::in_place_index<9>, std::move(v))); }

  AttrType type() const { return static_cast<AttrType>(value_.index() + 1); }

  // Accessors; the caller must have checked type() (the verifier does for op attrs).
  int64_t i() const { return std::get<0>(value_); }
  double f() const { return std::get<1>(value_); }
  const std::string& s() const { return std::get<2>(value_); }
  bool b() const { return std::get<3>(value_); }
  const std::vector<int64_t>& ints() const { return std::get<4>(value_); }
  const std::vector<double>& floats() const { return std::get<5>(value_); }
  const std::vector<std::string>& strings() const { return std::get<6>(value_); }
  const Tensor& tensor() const { return std::get<7>(value_); }
  DType dtype() const { return std::get<8>(value_); }
  const Shape& shape() const { return std::get<9>(value_); }

  // Human-readable value: "3", "0.5", "\"same_upper\"", "[1,2]", "f32", "f32[2,3]".
  std::string ToString() const;

  // Deep equality (tensors compared bitwise).
  friend bool operator==(const AttrValue& a, const AttrValue& b);
  friend bool operator!=(const AttrValue& a, const AttrValue& b) { return !(a == b); }

 private:
  using Storage = std::variant<int64_t, double, std::string, bool, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor, DType, Shape>;
  explicit AttrValue(Storage v) : value_(std::move(v)) {}
  Storage value_;
};

using AttrMap = std::map<std::string, AttrValue, std::less<>>;

}  // namespace tsr

#endif  // TESSERA_GRAPH_ATTRIBUTE_H_
