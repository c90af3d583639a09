// `Executable`: what a compiled program is, independent of how it is stored — its
// signature, the values it computes (where each lives: caller inputs/outputs, constants,
// or an offset in the one arena of its buffer plan), the constants' bytes, the steps it
// runs in order (library kernels from kernels/ by op name, or compiled functions by
// symbol), the machine code as relocatable object files, and the target that code was
// compiled for. executable_file.h stores it as a .tsrx file.
//
// No MLIR or LLVM here: the runtime loads executables with this code.
#ifndef TESSERA_COMPILER_EXECUTABLE_EXECUTABLE_H_
#define TESSERA_COMPILER_EXECUTABLE_EXECUTABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/planning/buffer_plan.h"
#include "graph/attribute.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

// The most arguments (inputs plus outputs) a function step may take: the loader calls
// compiled functions through one trampoline per arity.
inline constexpr int kMaxFunctionArguments = 64;

// The most worker threads an executable may ask for.
inline constexpr int kMaxExecutableThreads = 4096;
// The most blocks a tiled function call (ExecutableStep::tiles) may have.
inline constexpr int64_t kMaxExecutableTiles = 1 << 16;

// Arena values are placed at multiples of this, and so is every section of a .tsrx file.
inline constexpr int64_t kExecutableAlignment = 64;

enum class ValueLocation : uint8_t {
  kArena = 0,     // a temporary at `offset` in the arena
  kInput = 1,     // fed by the caller
  kOutput = 2,    // handed back to the caller
  kConstant = 3,  // bytes held by the executable
  // State kept between runs (a training program's weights and optimizer slots), named by
  // the value's name, with its initial bytes in `constants`. Steps read it; at most one
  // step writes it — the new value, after every step that reads it.
  kVariable = 4,
};

struct ExecutableValue {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;  // static
  ValueLocation location = ValueLocation::kArena;
  int64_t offset = -1;   // kArena only
  int reused_from = -1;  // kArena only: the value whose buffer it took over in place
  // prod(shape) * DTypeSize(dtype); the shape must be valid and static.
  int64_t size_bytes() const;
  friend bool operator==(const ExecutableValue&, const ExecutableValue&) = default;
};

struct ExecutableStep {
  enum class Kind : uint8_t { kKernel = 0, kFunction = 1 };
  Kind kind = Kind::kKernel;
  std::string name;  // the op (kKernel) or the symbol (kFunction)
  AttrMap attrs;     // kKernel only
  // Value ids. -1 in `inputs` is an absent optional kernel input. A function is called
  // with the addresses of its inputs, then of its outputs.
  std::vector<int> inputs;
  std::vector<int> outputs;
  // kFunction only: the function computes one of `tiles` blocks and is called once per
  // block (on several threads), argument k advanced by tile_strides[k] bytes per block
  // (inputs, then outputs; 0: the same whole input for every block). A cut argument, and
  // every output is one, has stride * tiles == its size. Empty strides: one call, tiles 1.
  int64_t tiles = 1;
  std::vector<int64_t> tile_strides;
  friend bool operator==(const ExecutableStep&, const ExecutableStep&) = default;
};

struct ExecutableConstant {
  int value = -1;     // a kConstant value, or the initial value of a kVariable value
  std::string bytes;  // exactly its size_bytes()
  friend bool operator==(const ExecutableConstant&, const ExecutableConstant&) = default;
};

struct ObjectFile {
  std::string name;
  std::string bytes;  // a relocatable object file (ELF on Linux)
  friend bool operator==(const ObjectFile&, const ObjectFile&) = default;
};

// What the machine code was compiled for, as LLVM names it.
struct ExecutableTarget {
  std::string triple;    // "x86_64-unknown-linux-gnu"
  std::string cpu;       // "znver3", "skylake-avx512"
  std::string features;  // "+avx2,+fma,-avx512f"
  friend bool operator==(const ExecutableTarget&, const ExecutableTarget&) = default;
};

struct NamedValue {
  std::string name;
  int value = -1;
  friend bool operator==(const NamedValue&, const NamedValue&) = default;
};

struct Executable {
  std::string producer;  // "tessera <version>"
  ExecutableTarget target;
  std::vector<ExecutableValue> values;
  std::vector<NamedValue> inputs;   // each kInput value exactly once
  std::vector<NamedValue> outputs;  // each kOutput value exactly once
  int64_t arena_bytes = 0;
  // Worker threads to run with unless the loader is told otherwise; 0: one per core.
  int threads = 0;
  std::vector<ExecutableStep> steps;
  std::vector<ExecutableConstant> constants;  // each kConstant value exactly once
  std::vector<ObjectFile> object_files;
  friend bool operator==(const Executable&, const Executable&) = default;
};

// Checks everything that must hold for the steps to run safely: valid dtypes and static
// shapes, ids in range, signature and constants covering their values exactly once,
// variables named uniquely and written at most once, after their last reader,
// constant byte counts, every arena or output value written by exactly one step before
// any step reads it, and the buffer plan (offsets, in-place reuse) proven safe by
// VerifyBufferPlan over the lifetimes the steps imply. Errors name the value or step.
absl::Status ValidateExecutable(const Executable& executable);

// The buffer-planning problem the steps imply (arena and output values defined by their
// writer, read until their last reader; inputs, outputs and constants external) and the
// plan the executable claims. The executable must pass ValidateExecutable's checks up to
// the plan.
struct ExecutableBufferPlan {
  BufferProblem problem;
  BufferPlan plan;
};
absl::StatusOr<ExecutableBufferPlan> BufferPlanOf(const Executable& executable);

// The host a loader would run the code on, filled by runtime/native (from LLVM's host
// detection); features in the same "+name,-name" form.
struct HostTarget {
  std::string triple;
  std::string cpu;
  std::string features;
};

// OK when `host` can run code compiled for `recorded`: the same architecture and OS
// (triple components 1 and 3; vendor and environment may differ) and every feature the
// code was compiled with ("+name") enabled on the host. The error lists what is missing.
absl::Status CheckTargetRuns(const ExecutableTarget& recorded, const HostTarget& host);

// A coarse check for callers without a full host description: refuses code compiled
// with AVX-512 features ("+avx512*") on a host below kAvx512, and with AVX/AVX2/FMA
// below kAvx2 (kernels/cpu/cpu_features.h's levels). Other features are not judged.
absl::Status CheckTargetIsa(const ExecutableTarget& recorded, CpuIsa host_isa);

}  // namespace tsr

#endif  // TESSERA_COMPILER_EXECUTABLE_EXECUTABLE_H_
