// ValidateExecutable, BufferPlanOf and the target checks.
#include "compiler/executable/executable.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/status_macros.h"

namespace tsr {
namespace {

std::string ValueLabel(const Executable& e, int id) {
  return absl::StrCat("value ", id, " ('", e.values[id].name, "')");
}

std::string StepLabel(const Executable& e, int s) {
  return absl::StrCat("step ", s, " (", e.steps[s].kind == ExecutableStep::Kind::kKernel ? "kernel " : "function ",
                      e.steps[s].name, ")");
}

absl::Status CheckValue(const Executable& e, int id) {
  const ExecutableValue& v = e.values[id];
  if (!IsValidDType(v.dtype)) return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, id), ": invalid dtype"));
  if (absl::Status s = v.shape.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, id), ": ", s.message()));
  }
  if (!v.shape.is_static()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ValueLabel(e, id), ": shape ", v.shape.ToString(), " is not static"));
  }
  const bool arena = v.location == ValueLocation::kArena;
  if (v.location != ValueLocation::kArena && v.location != ValueLocation::kInput &&
      v.location != ValueLocation::kOutput && v.location != ValueLocation::kConstant &&
      v.location != ValueLocation::kVariable) {
    return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, id), ": unknown location"));
  }
  if (!arena && (v.offset != -1 || v.reused_from != -1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ValueLabel(e, id), ": only arena values have an offset or reuse a buffer"));
  }
  if (arena && v.offset < 0) {
    return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, id), ": arena offset ", v.offset, " is negative"));
  }
  if (v.reused_from < -1 || v.reused_from >= static_cast<int>(e.values.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(ValueLabel(e, id), ": reuses value ", v.reused_from, ", which does not exist"));
  }
  return absl::OkStatus();
}

// Each value of `location` named exactly once in `entries`, names unique.
absl::Status CheckSignature(const Executable& e, const std::vector<NamedValue>& entries, ValueLocation location,
                            absl::string_view what) {
  const int n = static_cast<int>(e.values.size());
  std::vector<int> seen(n, 0);
  absl::flat_hash_set<std::string> names;
  for (const NamedValue& entry : entries) {
    if (entry.value < 0 || entry.value >= n) {
      return absl::InvalidArgumentError(absl::StrCat(what, " '", entry.name, "' names value ", entry.value, " of ", n));
    }
    if (e.values[entry.value].location != location) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " '", entry.name, "' names ", ValueLabel(e, entry.value), ", which is not an ", what));
    }
    if (!names.insert(entry.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(what, " '", entry.name, "' is given twice"));
    }
    ++seen[entry.value];
  }
  for (int i = 0; i < n; ++i) {
    if (e.values[i].location == location && seen[i] != 1) {
      return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, i), " is an ", what, " named ", seen[i],
                                                     " times in the signature; once is needed"));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> EnabledFeatures(absl::string_view features) {
  std::vector<std::string> out;
  for (absl::string_view f : absl::StrSplit(features, ',', absl::SkipEmpty())) {
    if (f.size() > 1 && f[0] == '+') out.emplace_back(f.substr(1));
  }
  return out;
}

// A tiled function call (ExecutableStep::tiles): every argument is read whole by every block
// (stride 0, inputs only) or cut into `tiles` back-to-back blocks of `stride` bytes -- every
// output is, so no two blocks write one byte and none is left unwritten.
absl::Status CheckTiles(const Executable& e, int s) {
  const ExecutableStep& step = e.steps[s];
  if (step.tiles == 1 && step.tile_strides.empty()) return absl::OkStatus();
  if (step.kind != ExecutableStep::Kind::kFunction) {
    return absl::InvalidArgumentError(absl::StrCat(StepLabel(e, s), ": only a function call is tiled"));
  }
  if (step.tiles < 1 || step.tiles > kMaxExecutableTiles) {
    return absl::InvalidArgumentError(
        absl::StrCat(StepLabel(e, s), " has ", step.tiles, " tiles; it must be in [1, ", kMaxExecutableTiles, "]"));
  }
  if (step.outputs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(StepLabel(e, s), " is tiled but writes nothing"));
  }
  const size_t arguments = step.inputs.size() + step.outputs.size();
  if (step.tile_strides.size() != arguments) {
    return absl::InvalidArgumentError(absl::StrCat(StepLabel(e, s), " has ", step.tile_strides.size(),
                                                   " tile strides for ", arguments, " arguments"));
  }
  for (size_t k = 0; k < arguments; ++k) {
    const bool output = k >= step.inputs.size();
    const int v = output ? step.outputs[k - step.inputs.size()] : step.inputs[k];
    const int64_t stride = step.tile_strides[k], size = e.values[v].size_bytes();
    // A cut argument's blocks are `stride` bytes each, back to back.
    const bool cut_exactly = stride > 0 && stride <= size && stride * step.tiles == size;
    if (!(cut_exactly || (stride == 0 && !output))) {
      return absl::InvalidArgumentError(
          absl::StrCat(StepLabel(e, s), ": argument ", k, " (", ValueLabel(e, v), ", ", size,
                       " bytes) has tile stride ", stride, " for ", step.tiles, " tiles; ",
                       output ? "an output's blocks must cover it exactly" : "it must be 0 or cut it exactly"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int64_t ExecutableValue::size_bytes() const { return shape.num_elements() * static_cast<int64_t>(DTypeSize(dtype)); }

absl::StatusOr<ExecutableBufferPlan> BufferPlanOf(const Executable& e) {
  const int n = static_cast<int>(e.values.size());
  ExecutableBufferPlan result;
  result.problem.values.resize(n);
  result.plan.offsets.assign(n, -1);
  result.plan.reused_from.assign(n, -1);
  result.plan.arena_bytes = e.arena_bytes;
  std::vector<int> writer(n, -1);
  for (int s = 0; s < static_cast<int>(e.steps.size()); ++s) {
    const ExecutableStep& step = e.steps[s];
    for (int in : step.inputs) {
      if (in == -1) continue;
      const ValueLocation where = e.values[in].location;
      if ((where == ValueLocation::kArena || where == ValueLocation::kOutput) && writer[in] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(StepLabel(e, s), " reads ", ValueLabel(e, in), " before any step writes it"));
      }
      result.problem.values[in].last_use_step = s;
    }
    for (int out : step.outputs) {
      const ValueLocation where = e.values[out].location;
      if (where != ValueLocation::kArena && where != ValueLocation::kOutput && where != ValueLocation::kVariable) {
        return absl::InvalidArgumentError(
            absl::StrCat(StepLabel(e, s), " writes ", ValueLabel(e, out), ", an input or constant"));
      }
      if (writer[out] >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, out), " is written by both ",
                                                       StepLabel(e, writer[out]), " and ", StepLabel(e, s)));
      }
      writer[out] = s;
      result.problem.values[out].def_step = s;
      result.problem.values[out].last_use_step = s;
    }
  }
  for (int i = 0; i < n; ++i) {
    const ExecutableValue& v = e.values[i];
    BufferValue& b = result.problem.values[i];
    b.name = v.name;
    b.size = v.size_bytes();
    b.alignment = kExecutableAlignment;
    b.external = v.location != ValueLocation::kArena;
    if (b.external) {
      b.def_step = 0;
      b.last_use_step = 0;
      continue;
    }
    if (writer[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, i), " lives in the arena but no step writes it"));
    }
    result.plan.offsets[i] = v.offset;
    result.plan.reused_from[i] = v.reused_from;
    if (v.reused_from >= 0) b.inplace_candidates = {v.reused_from};
  }
  for (int i = 0; i < n; ++i) {
    if (e.values[i].location == ValueLocation::kOutput && writer[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, i), " is an output but no step writes it"));
    }
  }
  return result;
}

absl::Status ValidateExecutable(const Executable& e) {
  const int n = static_cast<int>(e.values.size());
  if (e.threads < 0 || e.threads > kMaxExecutableThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("threads is ", e.threads, "; it must be in [0, ", kMaxExecutableThreads, "]"));
  }
  for (int i = 0; i < n; ++i) TSR_RETURN_IF_ERROR(CheckValue(e, i));
  TSR_RETURN_IF_ERROR(CheckSignature(e, e.inputs, ValueLocation::kInput, "input"));
  TSR_RETURN_IF_ERROR(CheckSignature(e, e.outputs, ValueLocation::kOutput, "output"));

  std::vector<int> filled(n, 0);
  for (size_t c = 0; c < e.constants.size(); ++c) {
    const ExecutableConstant& constant = e.constants[c];
    if (constant.value < 0 || constant.value >= n ||
        (e.values[constant.value].location != ValueLocation::kConstant &&
         e.values[constant.value].location != ValueLocation::kVariable)) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant ", c, " fills value ", constant.value, ", which is not a constant or variable value"));
    }
    const int64_t expected = e.values[constant.value].size_bytes();
    if (static_cast<int64_t>(constant.bytes.size()) != expected) {
      return absl::InvalidArgumentError(absl::StrCat("constant ", c, " for ", ValueLabel(e, constant.value), " (",
                                                     DTypeName(e.values[constant.value].dtype),
                                                     e.values[constant.value].shape.ToString(), ") has ",
                                                     constant.bytes.size(), " bytes; its shape needs ", expected));
    }
    ++filled[constant.value];
  }
  for (int i = 0; i < n; ++i) {
    const ValueLocation where = e.values[i].location;
    if ((where == ValueLocation::kConstant || where == ValueLocation::kVariable) && filled[i] != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(ValueLabel(e, i), " is a ", where == ValueLocation::kConstant ? "constant" : "variable",
                       " with ", filled[i], " constants giving its bytes; one is needed"));
    }
  }
  // Variables: unique non-empty names (they are how callers read and assign them), at most
  // one writer, and no reader after it (every step of a run sees the value it started with).
  absl::flat_hash_map<std::string, int> variable_names;
  std::vector<int> last_read(n, -1), writer(n, -1);
  for (int s = 0; s < static_cast<int>(e.steps.size()); ++s) {
    for (int in : e.steps[s].inputs) {
      if (in >= 0 && in < n) last_read[in] = s;
    }
    for (int out : e.steps[s].outputs) {
      if (out < 0 || out >= n || e.values[out].location != ValueLocation::kVariable) continue;
      if (writer[out] >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(ValueLabel(e, out), " is written by both ",
                                                       StepLabel(e, writer[out]), " and ", StepLabel(e, s)));
      }
      writer[out] = s;
    }
  }
  for (int i = 0; i < n; ++i) {
    if (e.values[i].location != ValueLocation::kVariable) continue;
    if (e.values[i].name.empty()) return absl::InvalidArgumentError(absl::StrCat("variable value ", i, " has no name"));
    if (!variable_names.emplace(e.values[i].name, i).second) {
      return absl::InvalidArgumentError(absl::StrCat("two variables are named '", e.values[i].name, "'"));
    }
    if (writer[i] >= 0 && last_read[i] > writer[i]) {
      return absl::InvalidArgumentError(absl::StrCat(StepLabel(e, last_read[i]), " reads ", ValueLabel(e, i), " after ",
                                                     StepLabel(e, writer[i]), " wrote it"));
    }
  }
  for (size_t o = 0; o < e.object_files.size(); ++o) {
    if (e.object_files[o].name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("object file ", o, " has no name"));
    }
  }
  for (int s = 0; s < static_cast<int>(e.steps.size()); ++s) {
    const ExecutableStep& step = e.steps[s];
    const bool kernel = step.kind == ExecutableStep::Kind::kKernel;
    if (!kernel && step.kind != ExecutableStep::Kind::kFunction) {
      return absl::InvalidArgumentError(absl::StrCat("step ", s, " has an unknown kind"));
    }
    if (step.name.empty()) return absl::InvalidArgumentError(absl::StrCat("step ", s, " has no op or symbol name"));
    if (!kernel && !step.attrs.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(StepLabel(e, s), ": a function call has no attributes"));
    }
    if (!kernel && step.inputs.size() + step.outputs.size() > static_cast<size_t>(kMaxFunctionArguments)) {
      return absl::InvalidArgumentError(absl::StrCat(StepLabel(e, s), " takes ",
                                                     step.inputs.size() + step.outputs.size(), " arguments; at most ",
                                                     kMaxFunctionArguments, " are supported"));
    }
    for (int in : step.inputs) {
      if (in < (kernel ? -1 : 0) || in >= n) {
        return absl::InvalidArgumentError(absl::StrCat(StepLabel(e, s), " reads value ", in, " of ", n));
      }
    }
    for (int out : step.outputs) {
      if (out < 0 || out >= n) {
        return absl::InvalidArgumentError(absl::StrCat(StepLabel(e, s), " writes value ", out, " of ", n));
      }
    }
    TSR_RETURN_IF_ERROR(CheckTiles(e, s));
  }
  TSR_ASSIGN_OR_RETURN(ExecutableBufferPlan plan, BufferPlanOf(e));
  if (absl::Status s = VerifyBufferPlan(plan.problem, plan.plan); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("buffer plan: ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status CheckTargetRuns(const ExecutableTarget& recorded, const HostTarget& host) {
  const std::vector<std::string> want = absl::StrSplit(recorded.triple, '-');
  const std::vector<std::string> have = absl::StrSplit(host.triple, '-');
  const auto part = [](const std::vector<std::string>& parts, size_t i) {
    return i < parts.size() ? parts[i] : std::string();
  };
  if (part(want, 0) != part(have, 0) || part(want, 2) != part(have, 2)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the code was compiled for ", recorded.triple, " and this host is ", host.triple));
  }
  const std::vector<std::string> host_features = EnabledFeatures(host.features);
  const absl::flat_hash_set<std::string> enabled(host_features.begin(), host_features.end());
  std::vector<std::string> missing;
  for (const std::string& f : EnabledFeatures(recorded.features)) {
    if (!enabled.contains(f)) missing.push_back(absl::StrCat("+", f));
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the code was compiled for CPU '", recorded.cpu,
                                                      "' with features this host ('", host.cpu,
                                                      "') lacks: ", absl::StrJoin(missing, ",")));
  }
  return absl::OkStatus();
}

absl::Status CheckTargetIsa(const ExecutableTarget& recorded, CpuIsa host_isa) {
  std::vector<std::string> missing;
  for (const std::string& f : EnabledFeatures(recorded.features)) {
    const bool avx512 = absl::StartsWith(f, "avx512");
    const bool avx2 = f == "avx" || f == "avx2" || f == "fma";
    if ((avx512 && host_isa < CpuIsa::kAvx512) || (avx2 && host_isa < CpuIsa::kAvx2)) {
      missing.push_back(absl::StrCat("+", f));
    }
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the code was compiled for CPU '", recorded.cpu, "' with ",
                                                      absl::StrJoin(missing, ","), ", beyond this host's ",
                                                      CpuIsaName(host_isa), " level"));
  }
  return absl::OkStatus();
}

}  // namespace tsr
