// Philox4x32-10, the counter-based random number generator of Salmon et al.,
// "Parallel Random Numbers: As Easy as 1, 2, 3" (SC'11), as in Random123: a
// bijection of a 128-bit counter under a 64-bit key, so any element of a random
// stream can be computed independently and reproducibly.
#ifndef TESSERA_KERNELS_REFERENCE_PHILOX_H_
#define TESSERA_KERNELS_REFERENCE_PHILOX_H_

#include <array>
#include <cstdint>

namespace tsr::reference {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// Ten rounds of Philox4x32 applied to `counter` under `key`.
inline PhiloxCounter Philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  constexpr uint32_t kMul0 = 0xD2511F53u;
  constexpr uint32_t kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
  constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * counter[0];
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * counter[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
  }
  return counter;
}

}  // namespace tsr::reference

#endif  // TESSERA_KERNELS_REFERENCE_PHILOX_H_
