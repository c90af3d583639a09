// `AttrReader`: typed access to a node's attributes with the op's defaults applied.
// Shape functions (InferenceContext) and kernels (KernelContext) read attributes
// through it, so both see the same values.
#ifndef TESSERA_GRAPH_ATTR_READER_H_
#define TESSERA_GRAPH_ATTR_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/attribute.h"

namespace tsr {

struct OpDef;

class AttrReader {
 public:
  // `attrs` plus the defaults of `def` for every attribute not given.
  AttrReader(const OpDef& def, const AttrMap& attrs);

  // nullptr when absent and without default.
  const AttrValue* attr(absl::string_view name) const;
  bool has_attr(absl::string_view name) const { return attr(name) != nullptr; }
  // Typed getters return zero/empty values for an absent attribute or one of
  // another type; attribute types are checked before shape functions and kernels run.
  int64_t GetInt(absl::string_view name) const;
  double GetFloat(absl::string_view name) const;
  std::string GetString(absl::string_view name) const;
  bool GetBool(absl::string_view name) const;
  std::vector<int64_t> GetInts(absl::string_view name) const;
  std::vector<double> GetFloats(absl::string_view name) const;
  std::vector<std::string> GetStrings(absl::string_view name) const;
  const Tensor* GetTensor(absl::string_view name) const;
  DType GetType(absl::string_view name) const;
  Shape GetShape(absl::string_view name) const;
  const AttrMap& attrs() const { return attrs_; }

 private:
  AttrMap attrs_;
};

}  // namespace tsr

#endif  // TESSERA_GRAPH_ATTR_READER_H_
