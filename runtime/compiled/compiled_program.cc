// CompiledProgram: loading an Executable (code, kernels, arena, constants, prepared
// convolution weights, kernel contexts) and running its steps in order over the arena.
#include "runtime/compiled/compiled_program.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/ops/blocked_layout.h"
#include "graph/status_macros.h"
#include "kernels/collective_kernels.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_blocked_inverted_residual.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/fused_conv.h"
#include "kernels/cpu/fused_matmul.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel.h"
#include "platform/denormals.h"
#include "runtime/native/object_loader.h"
#include "runtime/native/target_description.h"
#include "runtime/thread_pool.h"

namespace tsr {

namespace {

// Calls a function of the codegen convention (compiler/codegen/codegen.h: one pointer
// per input, then one per output, returning nothing) with `args`. One instantiation
// per arity, so every call goes through a correctly typed function pointer.
using FunctionTrampoline = void (*)(void* fn, void* const* args);

template <size_t... I>
void CallWithArity(void* fn, void* const* args, std::index_sequence<I...>) {
  using Fn = void (*)(decltype((void)I, static_cast<void*>(nullptr))...);
  reinterpret_cast<Fn>(fn)(args[I]...);
}

template <size_t N>
void CallFunction(void* fn, void* const* args) {
  CallWithArity(fn, args, std::make_index_sequence<N>());
}

template <size_t... N>
constexpr std::array<FunctionTrampoline, sizeof...(N)> MakeTrampolines(std::index_sequence<N...>) {
  return {&CallFunction<N>...};
}

constexpr std::array<FunctionTrampoline, kMaxFunctionArguments + 1> kTrampolines =
    MakeTrampolines(std::make_index_sequence<kMaxFunctionArguments + 1>());

// Uninitialized memory aligned for tensors (kTensorAlignment == kExecutableAlignment);
// null for zero bytes.
std::shared_ptr<void> AlignedBlock(int64_t bytes) {
  if (bytes <= 0) return nullptr;
  void* p = ::operator new(static_cast<size_t>(bytes), std::align_val_t(kTensorAlignment));
  return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t(kTensorAlignment)); });
}

int64_t RoundUp(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string StepLabel(const Executable& e, int s) {
  const ExecutableStep& step = e.steps[s];
  return step.kind == ExecutableStep::Kind::kFunction ? absl::StrCat("step ", s, " (function '", step.name, "')")
                                                      : absl::StrCat("step ", s, " (", step.name, ")");
}

absl::Status Prefixed(absl::string_view prefix, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(prefix, ": ", s.message()));
}

}  // namespace

struct CompiledProgram::Step {
  ExecutableStep::Kind kind = ExecutableStep::Kind::kKernel;
  std::string label;  // "step 3 (MatMul)", for errors
  std::string node;   // for timings
  std::string op;

  // kKernel.
  const KernelFn* kernel = nullptr;
  std::unique_ptr<KernelContext> context;
  // A Conv or FusedConv whose weights are a constant: prepared at load, run with
  // ConvForward or FusedConvForward.
  std::unique_ptr<PreparedConvWeights> conv;
  bool fused = false;
  // A BlockedConv whose weights are a constant: prepared at load, run with
  // BlockedConvForward (X blocked unless x_blocked is false).
  std::unique_ptr<PreparedBlockedConv> blocked_conv;
  bool x_blocked = true;
  // A BlockedInvertedResidual whose weights are constants: its three convolutions prepared
  // at load, run with RunNodeInvertedResidual on the step's context.
  std::unique_ptr<PreparedInvertedResidual> inverted_residual;
  // A FusedMatMul whose B is a constant f32 matrix: op(B) packed at load, run with
  // FusedMatMulForward on it, for matmul_rows rows of A.
  std::unique_ptr<SgemmPackedB> matmul_b;
  int64_t matmul_rows = 0;
  // The operands of either (inputs X, W, B, Z; output Y): BindPreparedOperands.
  FusedActivation activation;  // FusedConv, FusedMatMul
  const Tensor* x = nullptr;
  const Tensor* bias = nullptr;      // null without a bias
  const Tensor* residual = nullptr;  // the fused ops' Z; null without one
  Tensor* y = nullptr;

  // kFunction: the slots of its arguments (inputs, then outputs).
  void* function = nullptr;
  FunctionTrampoline trampoline = nullptr;
  std::vector<Tensor*> args;
  // Called once per block (ExecutableStep::tiles; one block when untiled), argument a
  // advanced by tile_strides[a] bytes per block (all 0 when untiled); cost_per_tile
  // estimates a block's cycles.
  int64_t tiles = 1;
  std::vector<int64_t> tile_strides;
  int64_t cost_per_tile = 0;

  // Every tensor the step reads or writes (an in-flight all-reduce's result must not be
  // among them), and whether it is an all-reduce to issue without waiting.
  std::vector<const Tensor*> touched;
  bool issue_all_reduce = false;
};

CompiledProgram::CompiledProgram() = default;
CompiledProgram::~CompiledProgram() = default;

int CompiledProgram::num_threads() const { return threads_; }
int CompiledProgram::num_steps() const { return static_cast<int>(steps_.size()); }

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompiledProgram::Load(Executable executable,
                                                                       const CompiledProgramOptions& options) {
  if (options.threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat("threads must not be negative, got ", options.threads));
  }
  if (absl::Status s = ValidateExecutable(executable); !s.ok()) return Prefixed("invalid executable", s);
  std::unique_ptr<CompiledProgram> program(new CompiledProgram());
  program->options_ = options;
  // Steps run on the calling thread, which also takes chunks of every ParallelFor: the
  // pool has one worker fewer than the threads asked for, and none for one thread (an
  // extra worker would make "1 thread" two, fighting over the cores).
  int threads = options.threads > 0 ? options.threads : executable.threads;
  if (threads <= 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  program->threads_ = threads;
  if (threads > 1) program->pool_ = std::make_unique<ThreadPool>(threads - 1);
  TSR_RETURN_IF_ERROR(program->LoadCode(executable));
  // The object bytes are copied by the linker; the constants by PlaceValues.
  executable.object_files.clear();
  TSR_RETURN_IF_ERROR(program->PlaceValues(executable));
  executable.constants.clear();
  TSR_RETURN_IF_ERROR(program->PrepareSteps(executable));
  return program;
}

absl::Status CompiledProgram::LoadCode(const Executable& e) {
  if (e.object_files.empty()) return absl::OkStatus();
  // Checked here, before the linker sees any byte, so that foreign code is refused
  // with the whole target in the message (NativeModule::Load checks each object again).
  const TargetDescription host = HostTargetDescription();
  if (absl::Status s = CheckTargetRuns(e.target, HostTarget{host.triple, host.cpu, host.features}); !s.ok()) {
    return Prefixed(absl::StrCat("this host cannot run the executable's code (compiled for triple=", e.target.triple,
                                 " cpu=", e.target.cpu, " features=", e.target.features, ")"),
                    s);
  }
  std::vector<NativeObject> objects;
  objects.reserve(e.object_files.size());
  for (const ObjectFile& file : e.object_files) {
    const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.bytes.data()), file.bytes.size());
    // The .tsrx file's CRC32C already vouched for the bytes; the loader wants its own checksum.
    objects.push_back(NativeObject{
        file.name, bytes, TargetDescription{e.target.triple, e.target.cpu, e.target.features}, ObjectChecksum(bytes)});
  }
  absl::StatusOr<std::unique_ptr<NativeModule>> module = NativeModule::Load(objects);
  if (!module.ok()) return Prefixed("loading the executable's object files", module.status());
  module_ = *std::move(module);
  return absl::OkStatus();
}

absl::Status CompiledProgram::PlaceValues(const Executable& e) {
  arena_bytes_ = e.arena_bytes;
  arena_ = AlignedBlock(arena_bytes_);
  absl::flat_hash_map<int, const std::string*> constant_bytes;
  for (const ExecutableConstant& c : e.constants) {
    constant_bytes[c.value] = &c.bytes;
    const int64_t size = RoundUp(static_cast<int64_t>(c.bytes.size()), kExecutableAlignment);
    (e.values[c.value].location == ValueLocation::kVariable ? variable_bytes_ : constant_bytes_) += size;
  }
  constants_ = AlignedBlock(constant_bytes_);
  variable_memory_ = AlignedBlock(variable_bytes_);
  char* const arena = static_cast<char*>(arena_.get());
  char* const constants = static_cast<char*>(constants_.get());
  char* const variables = static_cast<char*>(variable_memory_.get());
  int64_t constant_offset = 0, variable_offset = 0;
  slots_.resize(e.values.size());
  for (size_t i = 0; i < e.values.size(); ++i) {
    const ExecutableValue& v = e.values[i];
    const int64_t bytes = v.size_bytes();
    switch (v.location) {
      case ValueLocation::kArena:
        // ValidateExecutable proved offset + bytes <= arena_bytes and the alignment.
        slots_[i] = Tensor::Wrap(v.dtype, v.shape, arena_, bytes == 0 ? nullptr : arena + v.offset);
        break;
      case ValueLocation::kConstant: {
        const std::string& src = *constant_bytes.at(static_cast<int>(i));
        void* at = bytes == 0 ? nullptr : constants + constant_offset;
        if (bytes != 0) std::memcpy(at, src.data(), src.size());
        constant_offset += RoundUp(bytes, kExecutableAlignment);
        slots_[i] = Tensor::Wrap(v.dtype, v.shape, constants_, at);
        break;
      }
      case ValueLocation::kVariable: {
        const std::string& src = *constant_bytes.at(static_cast<int>(i));
        void* at = bytes == 0 ? nullptr : variables + variable_offset;
        if (bytes != 0) std::memcpy(at, src.data(), src.size());
        variable_offset += RoundUp(bytes, kExecutableAlignment);
        slots_[i] = Tensor::Wrap(v.dtype, v.shape, variable_memory_, at);
        variables_.push_back({v.name, v.dtype, v.shape});
        variable_values_.push_back(static_cast<int>(i));
        break;
      }
      case ValueLocation::kInput:
      case ValueLocation::kOutput:
        // A placeholder with the type but no data until a run binds it.
        slots_[i] = Tensor::Wrap(v.dtype, v.shape, nullptr, nullptr);
        if (v.location == ValueLocation::kOutput) output_bytes_ += RoundUp(bytes, kExecutableAlignment);
        break;
    }
  }
  for (const NamedValue& in : e.inputs) {
    inputs_.push_back({in.name, e.values[in.value].dtype, e.values[in.value].shape});
    input_values_.push_back(in.value);
  }
  for (const NamedValue& out : e.outputs) {
    outputs_.push_back({out.name, e.values[out.value].dtype, e.values[out.value].shape});
    output_values_.push_back(out.value);
  }
  return absl::OkStatus();
}

absl::Status CompiledProgram::PrepareSteps(const Executable& e) {
  steps_.resize(e.steps.size());
  for (int s = 0; s < static_cast<int>(e.steps.size()); ++s) {
    const ExecutableStep& es = e.steps[s];
    Step& step = steps_[s];
    step.kind = es.kind;
    step.label = StepLabel(e, s);
    if (es.kind == ExecutableStep::Kind::kFunction) {
      TSR_RETURN_IF_ERROR(PrepareFunctionStep(e, s, step));
    } else {
      TSR_RETURN_IF_ERROR(PrepareKernelStep(e, s, step));
    }
    for (int v : es.inputs) {
      if (v >= 0) step.touched.push_back(&slots_[v]);
    }
    for (int v : es.outputs) {
      if (v >= 0) step.touched.push_back(&slots_[v]);
    }
    step.issue_all_reduce = options_.overlap_collectives && es.kind == ExecutableStep::Kind::kKernel &&
                            step.op == "AllReduce" && step.context != nullptr;
  }
  // Outputs no step reads and the caller never sees (MaxPool's Indices in an inference
  // graph): their kernels may skip them.
  std::vector<bool> read(e.values.size(), false);
  for (const ExecutableStep& es : e.steps) {
    for (int v : es.inputs) {
      if (v >= 0) read[v] = true;
    }
  }
  for (size_t v = 0; v < e.values.size(); ++v) {
    if (e.values[v].location == ValueLocation::kOutput || e.values[v].location == ValueLocation::kVariable) {
      read[v] = true;
    }
  }
  for (int v : output_values_) read[v] = true;
  for (size_t s = 0; s < e.steps.size(); ++s) {
    if (steps_[s].context == nullptr) continue;
    for (size_t i = 0; i < e.steps[s].outputs.size(); ++i) {
      const int v = e.steps[s].outputs[i];
      if (v >= 0 && !read[v]) steps_[s].context->set_output_needed(static_cast<int>(i), false);
    }
  }
  return absl::OkStatus();
}

absl::Status CompiledProgram::PrepareFunctionStep(const Executable& e, int s, Step& step) {
  const ExecutableStep& es = e.steps[s];
  step.node = es.name;
  step.op = "Function";
  const size_t arity = es.inputs.size() + es.outputs.size();
  if (arity > static_cast<size_t>(kMaxFunctionArguments)) {
    return absl::InvalidArgumentError(
        absl::StrCat(step.label, " takes ", arity, " arguments; at most ", kMaxFunctionArguments, " are supported"));
  }
  if (module_ == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(step.label, ": symbol '", es.name, "' is not defined: the executable has no object files"));
  }
  absl::StatusOr<void*> fn = module_->Lookup(es.name);
  if (!fn.ok()) {
    return absl::NotFoundError(absl::StrCat(step.label, ": symbol '", es.name,
                                            "' is not defined by the executable's object files (they define: ",
                                            absl::StrJoin(module_->defined_symbols(), ", "), ")"));
  }
  step.function = *fn;
  step.trampoline = kTrampolines[arity];
  for (int v : es.inputs) step.args.push_back(&slots_[v]);
  for (int v : es.outputs) step.args.push_back(&slots_[v]);
  step.tiles = es.tiles;
  step.tile_strides = es.tile_strides;
  step.tile_strides.resize(arity, 0);
  if (step.tiles > 1) {
    // About ten cycles per element of the first output's block (the functions are
    // elementwise chains, reductions and normalizations).
    const int64_t block_bytes = es.tile_strides[es.inputs.size()];
    step.cost_per_tile = 10 * block_bytes / std::max<int64_t>(1, DTypeSize(e.values[es.outputs[0]].dtype));
  }
  return absl::OkStatus();
}

void CompiledProgram::RunFunction(Step& step) {
  const auto run = [&](int64_t begin, int64_t end) {
    void* pointers[kMaxFunctionArguments];
    for (int64_t t = begin; t < end; ++t) {
      for (size_t a = 0; a < step.args.size(); ++a) {
        pointers[a] = static_cast<char*>(step.args[a]->raw_data()) + t * step.tile_strides[a];
      }
      step.trampoline(step.function, pointers);
    }
  };
  if (step.tiles > 1 && pool_ != nullptr) {
    pool_->ParallelFor(step.tiles, step.cost_per_tile, run);
  } else {
    run(0, step.tiles);
  }
}

absl::Status CompiledProgram::PrepareKernelStep(const Executable& e, int s, Step& step) {
  const ExecutableStep& es = e.steps[s];
  step.op = es.name;
  step.node = es.outputs.empty() || e.values[es.outputs[0]].name.empty() ? absl::StrCat("step_", s)
                                                                         : e.values[es.outputs[0]].name;
  absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup(es.name);
  if (!def.ok()) return Prefixed(step.label, def.status());
  // An optimizer update computes new values of variables; the executable's own Identity
  // steps commit them after the run's last reader (ValidateExecutable's variable rules).
  for (int slot : (*def)->variable_updates) {
    if (slot >= static_cast<int>(es.inputs.size()) || es.inputs[slot] < 0 ||
        e.values[es.inputs[slot]].location != ValueLocation::kVariable) {
      return absl::InvalidArgumentError(
          absl::StrCat(step.label, ": input ", slot, " must be a variable of the program, which the op updates"));
    }
  }

  // The op's own inference on the executable's types (constant values known) must give
  // exactly the executable's output types: a kernel trusts its outputs' shapes.
  std::vector<std::optional<TensorType>> input_types;
  std::vector<const Tensor*> input_values;
  std::vector<const Tensor*> kernel_inputs;
  for (int v : es.inputs) {
    if (v < 0) {
      input_types.push_back(std::nullopt);
      input_values.push_back(nullptr);
      kernel_inputs.push_back(nullptr);
      continue;
    }
    input_types.push_back(TensorType(e.values[v].dtype, e.values[v].shape));
    input_values.push_back(e.values[v].location == ValueLocation::kConstant ? &slots_[v] : nullptr);
    kernel_inputs.push_back(&slots_[v]);
  }
  absl::StatusOr<std::vector<TensorType>> inferred =
      InferOutputTypes(**def, step.node, es.attrs, std::move(input_types), std::move(input_values));
  if (!inferred.ok()) return Prefixed(step.label, inferred.status());
  if (inferred->size() != es.outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(step.label, " has ", es.outputs.size(), " outputs; the op gives ",
                                                   inferred->size(), " for these inputs"));
  }
  std::vector<Tensor*> kernel_outputs;
  for (size_t i = 0; i < es.outputs.size(); ++i) {
    const ExecutableValue& v = e.values[es.outputs[i]];
    const TensorType& want = (*inferred)[i];
    if (want.dtype != v.dtype || want.shape != v.shape) {
      return absl::InvalidArgumentError(absl::StrCat(step.label, ": output ", i, " ('", v.name, "') is ",
                                                     DTypeName(v.dtype), v.shape.ToString(), " but the op infers ",
                                                     want.ToString(), " from its inputs"));
    }
    kernel_outputs.push_back(&slots_[es.outputs[i]]);
  }

  const DType dtype = KernelDType(kernel_inputs, kernel_outputs);
  const KernelRegistry& registry = KernelRegistry::Global();
  step.kernel = registry.Find(es.name, kCpuDevice, dtype);
  if (step.kernel == nullptr) step.kernel = registry.Find(es.name, kReferenceDevice, dtype);
  if (step.kernel == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(step.label, ": no kernel for op '", es.name, "' with dtype ", DTypeName(dtype)));
  }
  step.context =
      std::make_unique<KernelContext>(**def, step.node, es.attrs, std::move(kernel_inputs), std::move(kernel_outputs));
  step.context->set_collective_groups(options_.collective_groups.get());
  if (pool_ != nullptr) {
    step.context->set_parallel_for(pool_->AsParallelForFn());
  } else {
    step.context->set_parallel_for([](int64_t n, int64_t, const std::function<void(int64_t, int64_t)>& fn) {
      if (n > 0) fn(0, n);
    });
  }

  // Constant f32 Conv / FusedConv weights: choose the algorithm and pack the weights once.
  const bool fused = es.name == "FusedConv";
  const bool constant_weights =
      es.inputs.size() >= 2 && es.inputs[1] >= 0 && e.values[es.inputs[1]].location == ValueLocation::kConstant;
  if ((es.name == "Conv" || fused) && dtype == DType::kF32 && constant_weights && es.inputs[0] >= 0) {
    TSR_RETURN_IF_ERROR(PrepareConvolution(e, s, step));
  }
  if (es.name == "BlockedConv" && dtype == DType::kF32 && constant_weights && es.inputs[0] >= 0) {
    TSR_RETURN_IF_ERROR(PrepareBlockedConvolution(e, s, step));
  }
  if (es.name == "FusedMatMul" && dtype == DType::kF32 && constant_weights && es.inputs[0] >= 0) {
    PrepareMatMul(e, s, step);
  }
  if (es.name == "BlockedInvertedResidual" && dtype == DType::kF32) {
    const auto constant = [&](int i) {
      return i >= static_cast<int>(es.inputs.size()) || es.inputs[i] < 0 ||
             e.values[es.inputs[i]].location == ValueLocation::kConstant;
    };
    if (constant(InvertedResidualWeightInput(InvertedResidualStage::kExpand)) &&
        constant(InvertedResidualWeightInput(InvertedResidualStage::kDepthwise)) &&
        constant(InvertedResidualWeightInput(InvertedResidualStage::kProject))) {
      absl::StatusOr<std::optional<PreparedInvertedResidual>> prepared = PrepareNodeInvertedResidual(*step.context);
      if (!prepared.ok()) return Prefixed(step.label, prepared.status());
      // Anything the fused kernel does not take stays with the kernel (its reference fallback).
      if (prepared->has_value()) {
        step.inverted_residual = std::make_unique<PreparedInvertedResidual>(**std::move(prepared));
        ++num_prepared_convolutions_;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CompiledProgram::PrepareBlockedConvolution(const Executable& e, int s, Step& step) {
  KernelContext& ctx = *step.context;
  absl::StatusOr<FusedActivation> activation = ParseFusedActivation(ctx);
  if (!activation.ok()) return Prefixed(step.label, activation.status());
  absl::StatusOr<std::optional<ConvGeometry>> geometry = NodeBlockedConvGeometry(ctx);
  if (!geometry.ok()) return Prefixed(step.label, geometry.status());
  // Anything the blocked kernels do not take stays with the kernel (its reference fallback).
  if (!geometry->has_value()) return absl::OkStatus();
  step.x_blocked = ctx.GetInt("input_blocked") != 0;
  absl::StatusOr<PreparedBlockedConv> prepared = PrepareBlockedConv(**geometry, ctx.input(1).data<float>());
  if (!prepared.ok()) return Prefixed(step.label, prepared.status());
  step.activation = *activation;
  step.blocked_conv = std::make_unique<PreparedBlockedConv>(*std::move(prepared));
  BindPreparedOperands(e.steps[s], step);
  ++num_prepared_convolutions_;
  return absl::OkStatus();
}

void CompiledProgram::PrepareMatMul(const Executable& e, int s, Step& step) {
  KernelContext& ctx = *step.context;
  // Anything the kernel would refuse stays with the kernel, which says what is wrong.
  absl::StatusOr<FusedMatMulShape> shape = NodeFusedMatMulShape(ctx);
  if (!shape.ok() || shape->n == 0) return;
  step.activation = shape->activation;
  step.matmul_b = std::make_unique<SgemmPackedB>();
  GemmOptions options;
  options.parallel_for = ctx.parallel_for();
  step.matmul_b->Pack(shape->transpose_b, shape->k, shape->n, ctx.input(1).data<float>(),
                      shape->transpose_b ? shape->k : shape->n, options);
  step.matmul_rows = shape->m;
  BindPreparedOperands(e.steps[s], step);
  ++num_prepared_matmuls_;
}

void CompiledProgram::BindPreparedOperands(const ExecutableStep& es, Step& step) {
  const auto slot = [&](size_t i) {
    return i < es.inputs.size() && es.inputs[i] >= 0 ? &slots_[es.inputs[i]] : nullptr;
  };
  step.x = slot(0);
  step.bias = slot(2);
  step.residual = slot(3);
  step.y = &slots_[es.outputs[0]];
}

absl::Status CompiledProgram::PrepareConvolution(const Executable& e, int s, Step& step) {
  const ExecutableStep& es = e.steps[s];
  KernelContext& ctx = *step.context;
  step.fused = es.name == "FusedConv";
  if (step.fused) {
    absl::StatusOr<FusedActivation> activation = ParseFusedActivation(ctx);
    if (!activation.ok()) return Prefixed(step.label, activation.status());
    step.activation = *activation;
    if (ctx.has_input(3) && ctx.input(3).shape() != ctx.output(0).shape()) {
      return absl::InvalidArgumentError(absl::StrCat(step.label, ": input 3 ('Z') is ", ctx.input(3).shape().ToString(),
                                                     " but must have the output's shape ",
                                                     ctx.output(0).shape().ToString()));
    }
  }
  absl::StatusOr<std::optional<ConvGeometry>> geometry = NodeConvGeometry(ctx);
  if (!geometry.ok()) return Prefixed(step.label, geometry.status());
  // More than three spatial dimensions: the kernel runs its reference loops.
  if (!geometry->has_value()) return absl::OkStatus();
  absl::StatusOr<PreparedConvWeights> prepared =
      PrepareConvWeights(**geometry, ctx.input(1).data<float>(), ctx.parallel_for());
  if (!prepared.ok()) return Prefixed(step.label, prepared.status());
  step.conv = std::make_unique<PreparedConvWeights>(*std::move(prepared));
  BindPreparedOperands(es, step);
  ++num_prepared_convolutions_;
  return absl::OkStatus();
}

absl::StatusOr<int> CompiledProgram::FindVariable(absl::string_view name) const {
  for (size_t i = 0; i < variables_.size(); ++i) {
    if (variables_[i].name == name) return static_cast<int>(i);
  }
  std::vector<std::string> names;
  for (const CompiledSignatureEntry& v : variables_) names.push_back(v.name);
  return absl::NotFoundError(absl::StrCat("the program has no variable '", name,
                                          "' (variables: ", names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<Tensor> CompiledProgram::ReadVariable(absl::string_view name) {
  absl::MutexLock lock(&run_mu_);
  TSR_ASSIGN_OR_RETURN(int i, FindVariable(name));
  return slots_[variable_values_[i]].Clone();
}

absl::Status CompiledProgram::AssignVariable(absl::string_view name, const Tensor& value) {
  absl::MutexLock lock(&run_mu_);
  TSR_ASSIGN_OR_RETURN(int i, FindVariable(name));
  const CompiledSignatureEntry& want = variables_[i];
  if (value.dtype() != want.dtype || value.shape() != want.shape) {
    return absl::InvalidArgumentError(absl::StrCat("variable '", name, "' is ", DTypeName(want.dtype),
                                                   want.shape.ToString(), ", but the value is ",
                                                   DTypeName(value.dtype()), value.shape().ToString()));
  }
  Tensor& slot = slots_[variable_values_[i]];
  if (value.num_bytes() != 0) std::memcpy(slot.raw_data(), value.raw_data(), value.num_bytes());
  return absl::OkStatus();
}

absl::Status CompiledProgram::BindFeeds(const std::vector<std::pair<std::string, Tensor>>& feeds) {
  std::vector<bool> fed(inputs_.size(), false);
  for (const auto& [name, tensor] : feeds) {
    size_t i = 0;
    while (i < inputs_.size() && inputs_[i].name != name) ++i;
    if (i == inputs_.size()) {
      std::vector<std::string> names;
      for (const CompiledSignatureEntry& in : inputs_) names.push_back(in.name);
      return absl::InvalidArgumentError(
          absl::StrCat("feed '", name, "' is not an input of the program (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    if (fed[i]) return absl::InvalidArgumentError(absl::StrCat("input '", name, "' is fed twice"));
    const CompiledSignatureEntry& want = inputs_[i];
    if (tensor.dtype() != want.dtype || tensor.shape() != want.shape) {
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "' must be ", DTypeName(want.dtype),
                                                     want.shape.ToString(), ", but the feed is ",
                                                     DTypeName(tensor.dtype()), tensor.shape().ToString()));
    }
    fed[i] = true;
    // Read in place: the slot shares the caller's buffer.
    slots_[input_values_[i]] = tensor;
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!fed[i]) {
      return absl::InvalidArgumentError(absl::StrCat("input '", inputs_[i].name, "' (", DTypeName(inputs_[i].dtype),
                                                     inputs_[i].shape.ToString(), ") is not fed"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> CompiledProgram::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                         RunMetadata* metadata, std::optional<uint64_t> step) {
  const ScopedFlushDenormals flush_denormals;  // on this thread; the pool's workers flush always
  absl::MutexLock lock(&run_mu_);
  const uint64_t run_index = step.value_or(runs_);
  ++runs_;
  // Input and output slots go back to their data-less placeholders when the run ends,
  // so the program holds none of the caller's buffers between runs.
  const auto unbind = [this] {
    for (int v : input_values_) slots_[v] = Tensor::Wrap(slots_[v].dtype(), slots_[v].shape(), nullptr, nullptr);
    for (int v : output_values_) slots_[v] = Tensor::Wrap(slots_[v].dtype(), slots_[v].shape(), nullptr, nullptr);
  };
  if (absl::Status s = BindFeeds(feeds); !s.ok()) {
    unbind();
    return s;
  }
  for (int v : output_values_) {
    Tensor& slot = slots_[v];
    std::shared_ptr<void> block = AlignedBlock(static_cast<int64_t>(slot.num_bytes()));
    void* data = block.get();
    slot = Tensor::Wrap(slot.dtype(), slot.shape(), std::move(block), data);
  }

  if (metadata != nullptr) metadata->timings.clear();
  const int64_t run_start = metadata != nullptr ? NowNs() : 0;
  // All-reduces issued and not yet waited for, in the order issued: each step and the
  // bytes it writes. Nothing returns before they completed: they write into the arena.
  struct InFlight {
    CollectiveHandle handle;
    Step* step;
    const char* begin;
    size_t bytes;
    bool Overlaps(const Tensor& t) const {
      const char* b = static_cast<const char*>(t.raw_data());
      return b != nullptr && t.num_bytes() > 0 && bytes > 0 && b < begin + bytes && begin < b + t.num_bytes();
    }
  };
  std::vector<InFlight> in_flight;
  int64_t overlapped = 0;
  const auto wait = [&](auto keep) -> absl::Status {
    absl::Status status;
    std::vector<InFlight> still;
    for (InFlight& f : in_flight) {
      if (keep(f)) {
        still.push_back(std::move(f));
        continue;
      }
      status.Update(Prefixed(f.step->label, WaitForCollective(*f.step->context, f.handle)));
    }
    in_flight = std::move(still);
    return status;
  };
  const auto fail = [&](absl::Status s) {
    wait([](const InFlight&) { return false; }).IgnoreError();
    unbind();
    return s;
  };
  for (Step& step : steps_) {
    if (!in_flight.empty()) {
      absl::Status waited = wait([&](const InFlight& f) {
        return std::none_of(step.touched.begin(), step.touched.end(), [&](const Tensor* t) { return f.Overlaps(*t); });
      });
      if (!waited.ok()) return fail(waited);
      overlapped += in_flight.empty() ? 0 : 1;
    }
    const int64_t t0 = metadata != nullptr ? NowNs() : 0;
    if (step.issue_all_reduce) {
      absl::StatusOr<CollectiveHandle> handle = IssueAllReduce(*step.context);
      if (!handle.ok()) return fail(Prefixed(step.label, handle.status()));
      const Tensor& y = step.context->output(0);
      in_flight.push_back(InFlight{*std::move(handle), &step, static_cast<const char*>(y.raw_data()), y.num_bytes()});
    } else if (step.kind == ExecutableStep::Kind::kFunction) {
      RunFunction(step);
    } else if (step.matmul_b != nullptr) {
      FusedMatMulForward(step.matmul_rows, step.x->data<float>(), *step.matmul_b,
                         step.bias != nullptr ? step.bias->data<float>() : nullptr,
                         step.residual != nullptr ? step.residual->data<float>() : nullptr, step.activation,
                         step.y->data<float>(), step.context->parallel_for());
    } else if (step.inverted_residual != nullptr) {
      RunNodeInvertedResidual(*step.inverted_residual, *step.context);
    } else if (step.blocked_conv != nullptr) {
      BlockedConvForward(*step.blocked_conv, step.x->shape().dim(0), step.x->data<float>(), step.x_blocked,
                         step.bias != nullptr ? step.bias->data<float>() : nullptr,
                         step.residual != nullptr ? step.residual->data<float>() : nullptr, step.activation,
                         step.y->data<float>(), step.context->parallel_for());
    } else if (step.conv != nullptr) {
      const float* bias = step.bias != nullptr ? step.bias->data<float>() : nullptr;
      const int64_t batch = step.x->shape().dim(0);
      if (step.fused) {
        FusedConvForward(*step.conv, batch, step.x->data<float>(), bias,
                         step.residual != nullptr ? step.residual->data<float>() : nullptr, step.activation,
                         step.y->data<float>(), step.context->parallel_for());
      } else {
        ConvForward(*step.conv, batch, step.x->data<float>(), bias, step.y->data<float>(),
                    step.context->parallel_for());
      }
    } else {
      step.context->set_rng_key(options_.seed, run_index);
      if (absl::Status s = (*step.kernel)(*step.context); !s.ok()) return fail(Prefixed(step.label, s));
    }
    if (metadata != nullptr) {
      const int64_t t1 = NowNs();
      metadata->timings.push_back(OpTiming{step.node, step.op, t0 - run_start, t1 - t0, 0});
    }
  }

  if (absl::Status s = wait([](const InFlight&) { return false; }); !s.ok()) return fail(s);
  last_run_overlapped_steps_ = overlapped;

  std::vector<Tensor> results;
  results.reserve(output_values_.size());
  for (int v : output_values_) results.push_back(slots_[v]);
  unbind();
  if (metadata != nullptr) metadata->peak_bytes = peak_bytes();
  return results;
}

}  // namespace tsr
