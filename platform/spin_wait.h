// Waiting for another thread by spinning first: when the other thread usually answers
// within microseconds (a pool's next task, the other devices of a step at a collective),
// a futex sleep and wake-up (tens of microseconds on a busy VM) costs more than the wait.
// Callers spin for a bounded time, then fall back to sleeping on their own primitive.
#ifndef TESSERA_PLATFORM_SPIN_WAIT_H_
#define TESSERA_PLATFORM_SPIN_WAIT_H_

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tsr {

// The default spin budget: ONNX Runtime's and Eigen's pools spin about as long.
inline constexpr std::chrono::microseconds kDefaultSpin{50};

// A pause for a spinning core (x86 PAUSE: it yields the pipeline to the sibling thread).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Spins until ready() or `budget` has passed; returns ready().
template <typename Ready>
bool SpinUntil(const Ready& ready, std::chrono::microseconds budget = kDefaultSpin) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    for (int p = 0; p < 16; ++p) CpuRelax();
    if ((i & 15) == 15 && std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

}  // namespace tsr

#endif  // TESSERA_PLATFORM_SPIN_WAIT_H_
