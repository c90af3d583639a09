// Loads relocatable object files (machine code from compiler/codegen) into this process
// with LLVM's ORC JIT linker and hands out their entry points as function pointers. Links
// libLLVM only, never MLIR, so that a deployed runtime stays small.
//
// Undefined symbols resolve against the process (libc, libm, anything already loaded);
// anything else is refused at load time with the symbol's name, before any code is
// linked, and so is an object for a CPU this host cannot run (target_description.h) or
// bytes that are not a well-formed object for this architecture or whose checksum differs
// from the recorded one. Deliberately crafted objects are not defended against: load only
// objects this project's compiler made.
#ifndef TESSERA_RUNTIME_NATIVE_OBJECT_LOADER_H_
#define TESSERA_RUNTIME_NATIVE_OBJECT_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/native/target_description.h"

namespace tsr {

struct NativeObject {
  std::string name;  // for messages, e.g. "kernel_3.o"
  absl::Span<const uint8_t> bytes;
  TargetDescription target;
  // ObjectChecksum(bytes) as recorded when the object was made. LLVM's linker trusts the
  // relocations it reads (a corrupted one can make it write out of bounds), so bytes
  // whose checksum differs are refused before anything parses them.
  uint64_t checksum = 0;
};

// 64-bit FNV-1a of `bytes`: detects accidental corruption, not tampering.
uint64_t ObjectChecksum(absl::Span<const uint8_t> bytes);

class NativeModule {
 public:
  // Links all `objects` into one fresh JIT dylib (they may call each other) and resolves
  // every symbol they define, so that any link error surfaces here, not at Lookup.
  static absl::StatusOr<std::unique_ptr<NativeModule>> Load(absl::Span<const NativeObject> objects);

  ~NativeModule();
  NativeModule(const NativeModule&) = delete;
  NativeModule& operator=(const NativeModule&) = delete;

  // The address of a function or data symbol defined by the loaded objects; NotFound
  // naming the symbol otherwise. Valid while this NativeModule lives.
  absl::StatusOr<void*> Lookup(absl::string_view symbol) const;

  // Symbols (functions and data) the loaded objects define, sorted.
  const std::vector<std::string>& defined_symbols() const { return defined_symbols_; }

 private:
  struct State;
  explicit NativeModule(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
  std::vector<std::string> defined_symbols_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_NATIVE_OBJECT_LOADER_H_
