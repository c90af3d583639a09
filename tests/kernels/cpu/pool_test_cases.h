// A pooling test case (input shape and window attributes) shared by the tests of the
// cpu pooling kernels and of their gradients: its description for SCOPED_TRACE and its
// node attributes.
#ifndef TESSERA_TESTS_KERNELS_CPU_POOL_TEST_CASES_H_
#define TESSERA_TESTS_KERNELS_CPU_POOL_TEST_CASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"

namespace tsr::testing {

struct PoolCase {
  std::vector<int64_t> x;  // [N, C, spatial...]
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};
  std::vector<int64_t> dilations = {};
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0;
};

inline std::string Describe(const PoolCase& c) {
  return absl::StrCat("x=[", absl::StrJoin(c.x, ","), "] kernel=[", absl::StrJoin(c.kernel, ","), "] strides=[",
                      absl::StrJoin(c.strides, ","), "] pads=[", absl::StrJoin(c.pads, ","), "] dilations=[",
                      absl::StrJoin(c.dilations, ","), "] auto_pad=", c.auto_pad, " ceil_mode=", c.ceil_mode);
}

// The attributes of a MaxPool / AveragePool node (and their gradient ops) for `c`.
inline AttrMap PoolAttrs(const PoolCase& c) {
  AttrMap attrs{{"kernel_shape", AttrValue::Ints(c.kernel)},
                {"auto_pad", AttrValue::String(c.auto_pad)},
                {"ceil_mode", AttrValue::Int(c.ceil_mode)}};
  if (!c.strides.empty()) attrs["strides"] = AttrValue::Ints(c.strides);
  if (!c.pads.empty()) attrs["pads"] = AttrValue::Ints(c.pads);
  if (!c.dilations.empty()) attrs["dilations"] = AttrValue::Ints(c.dilations);
  return attrs;
}

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_KERNELS_CPU_POOL_TEST_CASES_H_
