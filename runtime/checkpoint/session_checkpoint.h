// Moving a Session's variables (weights, optimizer slots such as
// "dense/kernel/momentum", the i64 "global_step") into and out of a Checkpoint.
#ifndef TESSERA_RUNTIME_CHECKPOINT_SESSION_CHECKPOINT_H_
#define TESSERA_RUNTIME_CHECKPOINT_SESSION_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/checkpoint/checkpoint_file.h"
#include "runtime/session.h"

namespace tsr {

// A copy of every variable, in VariableNames() order, with `step` and `metadata`.
absl::StatusOr<Checkpoint> CaptureVariables(const Session& session, int64_t step,
                                            std::map<std::string, std::string> metadata = {});

// Sets every variable of `session` from `checkpoint`. Everything is checked first:
// each variable must have a tensor of its dtype and shape, and the checkpoint may hold
// no tensor the session lacks. On any error no variable has changed. `source` (the
// file) is named in errors.
absl::Status RestoreVariables(Session& session, const Checkpoint& checkpoint, absl::string_view source);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_CHECKPOINT_SESSION_CHECKPOINT_H_
