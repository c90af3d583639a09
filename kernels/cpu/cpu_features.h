// Runtime detection of the x86 vector ISA the optimized CPU kernels may use
// (cpuid + xgetbv), with an environment override for tests and debugging:
// TESSERA_CPU_ISA=avx512|avx2|scalar caps the level (it never raises it above what
// the CPU and OS support).
#ifndef TESSERA_KERNELS_CPU_CPU_FEATURES_H_
#define TESSERA_KERNELS_CPU_CPU_FEATURES_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace tsr {

// Ordered: a higher level implies the lower ones.
enum class CpuIsa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

// "scalar", "avx2" (AVX2 + FMA), "avx512" (AVX-512F + FMA).
absl::string_view CpuIsaName(CpuIsa isa);
// Parses a CpuIsaName; nullopt for anything else.
std::optional<CpuIsa> ParseCpuIsa(absl::string_view name);

// The best level this CPU and OS support (cached after the first call).
CpuIsa DetectedCpuIsa();

// DetectedCpuIsa() capped by TESSERA_CPU_ISA when set (read on every call, so tests
// may change it). An unparsable value is ignored.
CpuIsa ActiveCpuIsa();

// min(isa, DetectedCpuIsa()): the level a request for `isa` actually gets.
CpuIsa SupportedCpuIsa(CpuIsa isa);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CPU_FEATURES_H_
