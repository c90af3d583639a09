// `StableHash64`: FNV-1a over the bytes of a string — the same value in every process, on
// every platform and in every build (absl::Hash is salted per process). Random streams keyed
// by a node's name (Dropout, Variable initializers) and the collectives' descriptors, which
// ranks compare across processes, use it.
#ifndef TESSERA_GRAPH_STABLE_HASH_H_
#define TESSERA_GRAPH_STABLE_HASH_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace tsr {

inline uint64_t StableHash64(absl::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

}  // namespace tsr

#endif  // TESSERA_GRAPH_STABLE_HASH_H_
