// CPU ISA detection: cpuid feature bits, and xgetbv to check that the OS saves the
// wide register state (YMM for AVX2, ZMM + opmask for AVX-512).
#include "kernels/cpu/cpu_features.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tsr {

namespace {

#if defined(__x86_64__) || defined(__i386__)
uint64_t ReadXcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuIsa Detect() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return CpuIsa::kScalar;
  const bool osxsave = (ecx >> 27) & 1;
  const bool fma = (ecx >> 12) & 1;
  const bool avx = (ecx >> 28) & 1;
  if (!osxsave || !avx || !fma) return CpuIsa::kScalar;
  const uint64_t xcr0 = ReadXcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;    // SSE + AVX state
  const bool zmm_state = (xcr0 & 0xE6) == 0xE6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  if (!ymm_state) return CpuIsa::kScalar;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return CpuIsa::kScalar;
  const bool avx2 = (ebx >> 5) & 1;
  const bool avx512f = (ebx >> 16) & 1;
  if (avx512f && avx2 && zmm_state) return CpuIsa::kAvx512;
  if (avx2) return CpuIsa::kAvx2;
  return CpuIsa::kScalar;
}
#else
CpuIsa Detect() { return CpuIsa::kScalar; }
#endif

}  // namespace

absl::string_view CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kScalar:
      break;
  }
  return "scalar";
}

std::optional<CpuIsa> ParseCpuIsa(absl::string_view name) {
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (name == CpuIsaName(isa)) return isa;
  }
  return std::nullopt;
}

CpuIsa DetectedCpuIsa() {
  static const CpuIsa detected = Detect();
  return detected;
}

CpuIsa SupportedCpuIsa(CpuIsa isa) { return std::min(isa, DetectedCpuIsa()); }

CpuIsa ActiveCpuIsa() {
  const char* env = std::getenv("TESSERA_CPU_ISA");
  if (env != nullptr) {
    if (std::optional<CpuIsa> requested = ParseCpuIsa(env)) return SupportedCpuIsa(*requested);
  }
  return DetectedCpuIsa();
}

}  // namespace tsr
