// CompileGraph: the compile driver (see compile_graph.h).
#include "compiler/pipeline/compile_graph.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/codegen_mlir.h"
#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/mlir_diagnostics.h"
#include "compiler/lowering/fusion_outlining.h"
#include "compiler/pipeline/collective_overlap.h"
#include "compiler/pipeline/executable_builder.h"
#include "compiler/pipeline/executable_plan.h"
#include "compiler/pipeline/freeze_variables.h"
#include "compiler/pipeline/pass_pipeline.h"
#include "compiler/transforms/fusion_report.h"
#include "graph/bind_batch.h"
#include "graph/status_macros.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "runtime/native/target_description.h"

namespace tsr {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

absl::Status Prefixed(absl::string_view what, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

// Graph nodes that compute: placeholders, constants and variables hold values.
int64_t CountGraphOps(const Graph& graph) {
  int64_t n = 0;
  for (const Node* node : graph.nodes()) {
    n += node->op() != "Placeholder" && node->op() != "Constant" && node->op() != "Variable";
  }
  return n;
}

// Training steps update Variables in place; a compiled program holds no state (yet).
absl::Status RefuseVariableUpdates(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    if (node->op_def() != nullptr && !node->op_def()->variable_updates.empty()) {
      return absl::UnimplementedError(absl::StrCat("node '", node->name(), "' (", node->op(),
                                                   ") updates Variables: training steps do not compile yet; "
                                                   "compile the inference graph"));
    }
  }
  return absl::OkStatus();
}

// The functions @main calls, compiled into one object: copies of them, made public, in a
// module of their own (code generation rewrites the module it is given).
absl::StatusOr<CompiledObject> CompileFunctions(mlir::ModuleOp module, const std::vector<std::string>& symbols,
                                                const CodegenOptions& options, IrDumper& dumper) {
  mlir::OpBuilder builder(module.getContext());
  mlir::OwningOpRef<mlir::ModuleOp> code = mlir::ModuleOp::create(module.getLoc());
  builder.setInsertionPointToEnd(code->getBody());
  for (const std::string& symbol : symbols) {
    auto f = module.lookupSymbol<mlir::func::FuncOp>(symbol);
    if (!f) return absl::InternalError(absl::StrCat("@main calls @", symbol, ", which the module does not define"));
    auto copy = llvm::cast<mlir::func::FuncOp>(builder.clone(*f.getOperation()));
    copy.setPublic();
  }
  TSR_RETURN_IF_ERROR(dumper.WriteModule("codegen-input", *code));
  CodegenOptions codegen_options = options;
  absl::Status dumped;
  if (dumper.enabled()) {
    codegen_options.dump_ir = [&dumper, &dumped](const std::string& stage, const std::string& ir) {
      if (dumped.ok()) dumped = dumper.Write("codegen-" + stage, ir, stage == "llvm-ir" ? ".ll" : ".mlir");
    };
  }
  absl::StatusOr<CompiledObject> compiled = codegen::CompileModule(*code, codegen_options);
  TSR_RETURN_IF_ERROR(dumped);
  return compiled;
}

std::string DescribeExecutable(const Executable& e) {
  std::string out = absl::StrCat("# ", e.steps.size(), " steps, arena ", e.arena_bytes, " bytes, target ",
                                 e.target.triple, " ", e.target.cpu, "\n");
  const auto value = [&](int id) {
    if (id < 0) return std::string("-");
    const ExecutableValue& v = e.values[id];
    std::string where;
    switch (v.location) {
      case ValueLocation::kArena:
        where = absl::StrCat("@", v.offset, v.reused_from >= 0 ? absl::StrCat(" in place of %", v.reused_from) : "");
        break;
      case ValueLocation::kInput:
        where = "input";
        break;
      case ValueLocation::kOutput:
        where = "output";
        break;
      case ValueLocation::kConstant:
        where = "constant";
        break;
      case ValueLocation::kVariable:
        where = "variable";
        break;
    }
    return absl::StrCat("%", id, " '", v.name, "' ", DTypeName(v.dtype), v.shape.ToString(), " [", where, "]");
  };
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const ExecutableStep& step = e.steps[s];
    std::vector<std::string> ins, outs;
    for (int v : step.inputs) ins.push_back(value(v));
    for (int v : step.outputs) outs.push_back(value(v));
    absl::StrAppend(&out, s, ": ", step.kind == ExecutableStep::Kind::kFunction ? "call @" : "", step.name,
                    step.tiles > 1 ? absl::StrCat(" x ", step.tiles, " blocks") : "");
    if (!step.attrs.empty()) {
      std::vector<std::string> attrs;
      for (const auto& [k, v] : step.attrs) attrs.push_back(absl::StrCat(k, "=", v.ToString()));
      absl::StrAppend(&out, " {", absl::StrJoin(attrs, ", "), "}");
    }
    absl::StrAppend(&out, "\n    in:  ", absl::StrJoin(ins, "\n         "),
                    "\n    out: ", absl::StrJoin(outs, "\n         "), "\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<Executable> CompileGraph(const Graph& graph, const CompileOptions& options, CompileStats* stats) {
  CompileStats local;
  CompileStats& st = stats != nullptr ? *stats : local;
  st = CompileStats();
  const Clock::time_point start = Clock::now();
  if (options.threads < 0 || options.threads > kMaxExecutableThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("threads is ", options.threads, "; it must be in [0, ", kMaxExecutableThreads, "]"));
  }
  if (options.batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("the batch size must be >= 1, got ", options.batch));
  }
  if (!options.variables_as_state) TSR_RETURN_IF_ERROR(RefuseVariableUpdates(graph));
  for (const std::string& target : options.targets) {
    if (graph.FindNode(target) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("target '", target, "' is not a node of the graph"));
    }
  }
  if (!options.targets.empty() && !options.variables_as_state) {
    return absl::InvalidArgumentError("targets run optimizer updates: they need variables_as_state");
  }
  absl::StatusOr<Graph> bound = BindBatch(graph, options.batch);
  if (!bound.ok()) return Prefixed("binding the batch", bound.status());
  st.graph_ops = CountGraphOps(*bound);

  Clock::time_point t = Clock::now();
  mlir::DialectRegistry registry;
  RegisterGraphDialects(registry);
  RegisterOutlinedDialects(registry);
  codegen::RegisterCodegenDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> imported = ImportGraph(context, *bound);
  if (!imported.ok()) return Prefixed("importing the graph", imported.status());
  mlir::ModuleOp module = imported->get();
  if (options.variables_as_state) {
    DropUntargetedUpdates(module, options.targets);
  } else if (absl::Status s = FreezeVariables(module, options.variable_values); !s.ok()) {
    return Prefixed("freezing the variables", s);
  }
  st.stages.push_back({"import", SecondsSince(t)});
  IrDumper dumper(options.dump_ir_dir, &st);
  TSR_RETURN_IF_ERROR(dumper.WriteModule("import", module));

  // The fusion report is taken before the fusions are outlined (the last stage).
  std::vector<PipelineStage> stages = OptimizationStages(options);
  const PipelineStage outline = stages.back();
  stages.pop_back();
  TSR_RETURN_IF_ERROR(RunStages(module, stages, dumper, &st));
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main) return absl::InternalError("the imported module has no @main");
  st.fusion_summary = FormatFusionReport(ReportFusion(main));
  TSR_RETURN_IF_ERROR(RunStages(module, {outline}, dumper, &st));

  t = Clock::now();
  absl::StatusOr<Executable> built = BuildExecutableSteps(main, options.variable_values);
  if (!built.ok()) return Prefixed("building the executable's steps", built.status());
  Executable e = *std::move(built);
  OrderStepsForCollectiveOverlap(e);
  std::vector<std::string> symbols;
  for (const ExecutableStep& step : e.steps) {
    if (step.kind != ExecutableStep::Kind::kFunction) continue;
    if (std::find(symbols.begin(), symbols.end(), step.name) == symbols.end()) symbols.push_back(step.name);
  }
  st.stages.push_back({"steps", SecondsSince(t)});

  t = Clock::now();
  TargetDescription target;
  if (!symbols.empty()) {
    absl::StatusOr<CompiledObject> object = CompileFunctions(module, symbols, options.codegen, dumper);
    if (!object.ok()) return Prefixed("generating code for the fused regions", object.status());
    target = object->target;
    st.object_bytes = static_cast<int64_t>(object->object.size());
    e.object_files.push_back({"fusions.o", std::string(object->object.begin(), object->object.end())});
  } else {
    // No machine code: any host of this architecture runs the library kernels.
    target = HostTargetDescription();
    target.cpu = "generic";
    target.features = "";
  }
  e.target = {target.triple, target.cpu, target.features};
  st.stages.push_back({"codegen", SecondsSince(t)});

  t = Clock::now();
  e.producer = "tessera compile";
  e.threads = options.threads;
  if (absl::Status s = PlanExecutableBuffers(e, &st.arena_lower_bound); !s.ok()) {
    return Prefixed("planning the buffers", s);
  }
  if (absl::Status s = ValidateExecutable(e); !s.ok()) return Prefixed("the compiled executable is invalid", s);
  st.stages.push_back({"buffer-plan", SecondsSince(t)});
  TSR_RETURN_IF_ERROR(dumper.Write("executable", DescribeExecutable(e), ".txt"));

  for (const ExecutableStep& step : e.steps) {
    if (step.kind == ExecutableStep::Kind::kFunction) {
      ++st.function_steps;
    } else {
      ++st.kernel_steps;
      // A BlockedConv (the layout pass's FusedConv or Conv) has fused an epilogue when it
      // applies an activation or a residual.
      const auto activation = step.attrs.find("activation");
      const bool blocked_epilogue =
          step.name == "BlockedConv" && ((step.inputs.size() > 3 && step.inputs[3] >= 0) ||
                                         (activation != step.attrs.end() && activation->second.s() != "None"));
      st.fused_epilogues += step.name == "FusedConv" || step.name == "FusedMatMul" || blocked_epilogue;
    }
  }
  st.arena_bytes = e.arena_bytes;
  for (const ExecutableConstant& c : e.constants) st.constant_bytes += static_cast<int64_t>(c.bytes.size());
  st.total_seconds = SecondsSince(start);
  return e;
}

std::string FormatCompileStats(const CompileStats& st) {
  std::string out = absl::StrFormat("compiled in %.3f s: %s\n", st.total_seconds, st.fusion_summary);
  absl::StrAppendFormat(
      &out, "  %d graph ops -> %d steps (%d library kernels of which %d fused epilogues, %d compiled functions)\n",
      st.graph_ops, st.kernel_steps + st.function_steps, st.kernel_steps, st.fused_epilogues, st.function_steps);
  absl::StrAppendFormat(&out, "  arena %.2f MiB (lower bound %.2f MiB), constants %.2f MiB, machine code %.1f KiB\n",
                        st.arena_bytes / 1048576.0, st.arena_lower_bound / 1048576.0, st.constant_bytes / 1048576.0,
                        st.object_bytes / 1024.0);
  absl::StrAppend(&out, "  stages:");
  for (const StageTiming& s : st.stages) absl::StrAppendFormat(&out, " %s %.3f s,", s.stage, s.seconds);
  out.back() = '\n';
  return out;
}

}  // namespace tsr
