// `CompiledProgram`: runs a compiled `Executable` (compiler/executable/executable.h)
// without the compiler. Loading does all the work that does not depend on the data:
// it validates the executable, checks that this host can run its machine code, links
// its object files (runtime/native), resolves every function step's symbol and every
// kernel step's kernel (cpu, else reference) with its op's type inference checked
// against the executable's values, allocates the one arena of the buffer plan, copies
// the constants into aligned memory, prepares constant convolution weights once
// (kernels/cpu/conv_prepared.h) and builds every step's KernelContext over tensors that
// wrap arena memory. A run then checks the feeds, allocates the outputs and runs the
// steps in order: inputs are read where the caller holds them, nothing is copied.
//
// No MLIR or LLVM in this header: it is what an application that ships a .tsrx links.
#ifndef TESSERA_RUNTIME_COMPILED_COMPILED_PROGRAM_H_
#define TESSERA_RUNTIME_COMPILED_COMPILED_PROGRAM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "compiler/executable/executable.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/tensor.h"
#include "runtime/run_metadata.h"

namespace tsr {

class CollectiveGroups;  // runtime/collectives/collective_groups.h
class NativeModule;
class ThreadPool;

struct CompiledProgramOptions {
  // Worker threads of the kernels' ParallelFor; 0: the executable's own choice
  // (Executable::threads), where 0 is one per core.
  int threads = 0;
  uint64_t seed = 0;  // key of the random streams of stateful kernels (Dropout), with the run count
  // The device's communicators when the executable is one device's program of a
  // partitioned graph (it has collective steps: AllReduce, ...); null otherwise.
  std::shared_ptr<CollectiveGroups> collective_groups;
  // AllReduce steps (the gradient buckets of data parallelism) are issued and the run
  // goes on with the steps after them, waiting only before a step that touches the
  // all-reduce's result (or at the end of the run): communication overlaps the rest of
  // the backward pass. False: each collective step waits for its collective.
  bool overlap_collectives = true;
};

// One input or output of the program's signature.
struct CompiledSignatureEntry {
  std::string name;
  DType dtype = DType::kInvalid;
  Shape shape;  // static: feeds must have exactly this shape
};

class CompiledProgram {
 public:
  // Errors name the step, symbol, op, value or target at fault.
  static absl::StatusOr<std::unique_ptr<CompiledProgram>> Load(Executable executable,
                                                               const CompiledProgramOptions& options = {});

  ~CompiledProgram();
  CompiledProgram(const CompiledProgram&) = delete;
  CompiledProgram& operator=(const CompiledProgram&) = delete;

  // Feeds every signature input exactly once, by name, with its dtype and exact shape
  // (InvalidArgument naming the input otherwise); returns the outputs in signature
  // order. With `metadata`, records one timing per step (node: the first output's name,
  // or the symbol of a function step; op: the op, or "Function") and peak_bytes().
  // Concurrent calls are serialized: the steps share one arena. Random kernels (Dropout)
  // draw from the stream keyed by (options.seed, `step`) — as Session::Run with
  // RunOptions::step does — or by the run count when `step` is not given.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          RunMetadata* metadata = nullptr, std::optional<uint64_t> step = std::nullopt);

  const std::vector<CompiledSignatureEntry>& inputs() const { return inputs_; }
  const std::vector<CompiledSignatureEntry>& outputs() const { return outputs_; }

  // The program's state (a compiled training step's weights and optimizer slots): each
  // variable starts with the executable's initial value, a run reads the values it starts
  // with and leaves the new ones. Reading copies; assigning checks dtype and shape. Both
  // wait for a running Run. NotFound names the known variables.
  const std::vector<CompiledSignatureEntry>& variables() const { return variables_; }
  absl::StatusOr<Tensor> ReadVariable(absl::string_view name);
  absl::Status AssignVariable(absl::string_view name, const Tensor& value);

  int64_t arena_bytes() const { return arena_bytes_; }
  int64_t constant_bytes() const { return constant_bytes_; }
  int64_t output_bytes() const { return output_bytes_; }
  int64_t variable_bytes() const { return variable_bytes_; }
  // Memory one run holds: the arena, the constants, the variables and the outputs.
  int64_t peak_bytes() const { return arena_bytes_ + constant_bytes_ + variable_bytes_ + output_bytes_; }

  int num_steps() const;
  // Steps the last Run ran while an all-reduce it issued was still in flight (0 without
  // overlap_collectives): how much of the program the communication could overlap.
  int64_t last_run_overlapped_steps() const { return last_run_overlapped_steps_; }
  // How many Conv, FusedConv, BlockedConv and BlockedInvertedResidual steps run on weights
  // prepared at load time.
  int num_prepared_convolutions() const { return num_prepared_convolutions_; }
  // How many FusedMatMul steps run on a constant B packed at load time.
  int num_prepared_matmuls() const { return num_prepared_matmuls_; }
  int num_threads() const;

 private:
  struct Step;
  CompiledProgram();

  absl::Status LoadCode(const Executable& executable);
  absl::Status PlaceValues(const Executable& executable);
  absl::Status PrepareSteps(const Executable& executable);
  absl::Status PrepareKernelStep(const Executable& executable, int s, Step& step);
  // Calls a function step, once per block when it is tiled (over the pool's threads).
  void RunFunction(Step& step);
  absl::Status PrepareFunctionStep(const Executable& executable, int s, Step& step);
  absl::Status PrepareConvolution(const Executable& executable, int s, Step& step);
  absl::Status PrepareBlockedConvolution(const Executable& executable, int s, Step& step);
  void PrepareMatMul(const Executable& executable, int s, Step& step);
  void BindPreparedOperands(const ExecutableStep& es, Step& step);
  absl::Status BindFeeds(const std::vector<std::pair<std::string, Tensor>>& feeds);

  CompiledProgramOptions options_;
  int threads_ = 1;
  std::unique_ptr<ThreadPool> pool_;  // threads_ - 1 workers beside the caller; null for one thread
  std::unique_ptr<NativeModule> module_;
  std::vector<CompiledSignatureEntry> inputs_;
  std::vector<CompiledSignatureEntry> outputs_;
  std::vector<int> input_values_;   // value id of each signature input
  std::vector<int> output_values_;  // value id of each signature output
  std::vector<CompiledSignatureEntry> variables_;
  std::vector<int> variable_values_;  // value id of each variable
  absl::StatusOr<int> FindVariable(absl::string_view name) const;
  std::shared_ptr<void> arena_;
  std::shared_ptr<void> constants_;
  std::shared_ptr<void> variable_memory_;
  int64_t variable_bytes_ = 0;
  int64_t arena_bytes_ = 0;
  int64_t constant_bytes_ = 0;
  int64_t output_bytes_ = 0;
  int num_prepared_convolutions_ = 0;
  int num_prepared_matmuls_ = 0;
  // One tensor per executable value, at a fixed address that the steps' contexts point
  // to: arena and constant values wrap their memory for good; input and output values
  // are rebound by each run.
  std::vector<Tensor> slots_;
  std::vector<Step> steps_;
  std::atomic<int64_t> last_run_overlapped_steps_{0};
  absl::Mutex run_mu_;
  uint64_t runs_ ABSL_GUARDED_BY(run_mu_) = 0;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COMPILED_COMPILED_PROGRAM_H_
