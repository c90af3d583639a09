// Compile-time lists of storage types mirroring graph/dtype.h's dtype sets, and
// registration of one kernel instantiation per type, so a reference kernel is
// only instantiated for the dtypes its op accepts.
#ifndef TESSERA_KERNELS_REFERENCE_DTYPE_LIST_H_
#define TESSERA_KERNELS_REFERENCE_DTYPE_LIST_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/dtype.h"
#include "kernels/kernel.h"

namespace tsr::reference {

template <typename... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t, int32_t, int64_t>;
using SignedTypes = TypeList<float, double, Float16, BFloat16, int8_t, int32_t, int64_t>;
using AllTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t, int32_t, int64_t, bool>;

// Registers `make(T{})` (a KernelFn) for `op` on the reference device, once per T.
template <typename... Ts, typename Make>
absl::Status RegisterForTypes(KernelRegistry& registry, absl::string_view op, TypeList<Ts...>, Make make) {
  absl::Status status;
  ((status.ok() ? status.Update(registry.Register(op, kReferenceDevice, DTypeOf<Ts>::value, make(Ts{}))) : void()),
   ...);
  return status;
}

// Calls fn(T{}) for the T of `dtype` in the list; false when `dtype` is not in it.
template <typename... Ts, typename Fn>
bool VisitTypeIn(TypeList<Ts...>, DType dtype, Fn&& fn) {
  return ((DTypeOf<Ts>::value == dtype ? (fn(Ts{}), true) : false) || ...);
}

}  // namespace tsr::reference

#endif  // TESSERA_KERNELS_REFERENCE_DTYPE_LIST_H_
