// Checkpoint directory management: naming, the latest pointer, listing, retention and
// the cleanup of files left by killed writers.
#include "runtime/checkpoint/checkpoint_manager.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "graph/status_macros.h"
#include "platform/file.h"
#include "runtime/checkpoint/session_checkpoint.h"

namespace tsr {
namespace {

namespace fs = std::filesystem;

// The step of "ckpt-<digits>", or -1 for any other name.
int64_t StepOfFileName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, CheckpointManager::kFilePrefix) || name.empty() || name.size() > 18) return -1;
  for (char c : name) {
    if (!absl::ascii_isdigit(c)) return -1;
  }
  int64_t step = -1;
  return absl::SimpleAtoi(name, &step) ? step : -1;
}

// WriteFileAtomically writes "<path>.tmp-<pid>-<n>"; true when that writer is gone, so
// the file can never be completed and is safe to remove.
bool IsAbandonedTempFile(absl::string_view name) {
  const size_t at = name.find(".tmp-");
  if (at == absl::string_view::npos) return false;
  const absl::string_view target = name.substr(0, at);
  if (target != CheckpointManager::kPointerFileName && StepOfFileName(target) < 0) return false;
  absl::string_view rest = name.substr(at + 5);
  const size_t dash = rest.find('-');
  int pid = 0;
  if (dash == absl::string_view::npos || !absl::SimpleAtoi(rest.substr(0, dash), &pid) || pid <= 0) return false;
  if (pid == ::getpid()) return false;
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

absl::StatusOr<CheckpointManager> CheckpointManager::Create(std::string directory, CheckpointManagerOptions options) {
  if (directory.empty()) return absl::InvalidArgumentError("checkpoint directory: empty path");
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec)
    return absl::InternalError(absl::StrCat("cannot create checkpoint directory '", directory, "': ", ec.message()));
  if (!fs::is_directory(directory, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint directory '", directory, "' is not a folder"));
  }
  return CheckpointManager(std::move(directory), options);
}

absl::StatusOr<std::string> CheckpointManager::Save(const Checkpoint& checkpoint) {
  if (checkpoint.step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint step ", checkpoint.step, " is negative"));
  }
  const std::string name = absl::StrCat(kFilePrefix, checkpoint.step);
  const std::string path = (fs::path(directory_) / name).string();
  TSR_RETURN_IF_ERROR(WriteCheckpointFile(path, checkpoint));
  TSR_RETURN_IF_ERROR(
      WriteFileAtomically((fs::path(directory_) / kPointerFileName).string(), absl::StrCat(name, "\n")));
  TSR_RETURN_IF_ERROR(Prune(name));
  return path;
}

absl::StatusOr<std::string> CheckpointManager::Save(const Session& session, int64_t step,
                                                    std::map<std::string, std::string> metadata) {
  TSR_ASSIGN_OR_RETURN(Checkpoint checkpoint, CaptureVariables(session, step, std::move(metadata)));
  return Save(checkpoint);
}

absl::StatusOr<std::vector<CheckpointFileInfo>> CheckpointManager::List() const {
  std::vector<CheckpointFileInfo> found;
  std::error_code ec;
  for (fs::directory_iterator it(directory_, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t step = StepOfFileName(it->path().filename().string());
    if (step >= 0 && it->is_regular_file(ec)) found.push_back({step, it->path().string()});
  }
  if (ec)
    return absl::InternalError(absl::StrCat("cannot list checkpoint directory '", directory_, "': ", ec.message()));
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return found;
}

absl::StatusOr<std::string> CheckpointManager::LatestPath() const {
  const std::string pointer_path = (fs::path(directory_) / kPointerFileName).string();
  absl::StatusOr<std::string> pointer = ReadFileBounded(pointer_path, 4096, "checkpoint pointer size");
  if (pointer.ok()) {
    const absl::string_view name = absl::StripAsciiWhitespace(*pointer);
    std::error_code ec;
    const fs::path target = fs::path(directory_) / std::string(name);
    if (StepOfFileName(name) >= 0 && fs::is_regular_file(target, ec)) return target.string();
  } else if (!absl::IsNotFound(pointer.status())) {
    return pointer.status();
  }
  TSR_ASSIGN_OR_RETURN(std::vector<CheckpointFileInfo> all, List());
  if (all.empty()) return absl::NotFoundError(absl::StrCat("no checkpoint in '", directory_, "'"));
  return all.back().path;
}

absl::StatusOr<Checkpoint> CheckpointManager::ReadLatest() const {
  TSR_ASSIGN_OR_RETURN(std::string path, LatestPath());
  return ReadCheckpointFile(path, options_.max_checkpoint_bytes);
}

absl::StatusOr<RestoredCheckpoint> CheckpointManager::RestoreLatest(Session& session) const {
  TSR_ASSIGN_OR_RETURN(std::string path, LatestPath());
  return Restore(session, path);
}

absl::StatusOr<RestoredCheckpoint> CheckpointManager::Restore(Session& session, const std::string& path) const {
  TSR_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpointFile(path, options_.max_checkpoint_bytes));
  TSR_RETURN_IF_ERROR(RestoreVariables(session, checkpoint, path));
  return RestoredCheckpoint{path, checkpoint.step, std::move(checkpoint.metadata)};
}

absl::Status CheckpointManager::Prune(const std::string& keep) const {
  TSR_ASSIGN_OR_RETURN(std::vector<CheckpointFileInfo> all, List());
  std::error_code ec;
  if (options_.max_to_keep > 0 && all.size() > static_cast<size_t>(options_.max_to_keep)) {
    const size_t excess = all.size() - static_cast<size_t>(options_.max_to_keep);
    for (size_t i = 0; i < excess; ++i) {
      if (fs::path(all[i].path).filename() == keep) continue;
      if (!fs::remove(all[i].path, ec) && ec) {
        return absl::InternalError(absl::StrCat("cannot remove old checkpoint '", all[i].path, "': ", ec.message()));
      }
    }
  }
  for (fs::directory_iterator it(directory_, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsAbandonedTempFile(it->path().filename().string())) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);  // another process may have removed it first
    }
  }
  return absl::OkStatus();
}

}  // namespace tsr
