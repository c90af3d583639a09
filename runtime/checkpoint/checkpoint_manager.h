// `CheckpointManager`: a directory of checkpoints "ckpt-<step>" (one file each, see
// checkpoint_file.h), a pointer file "checkpoint" naming the latest, and retention of
// the last `max_to_keep`.
//
//   TSR_ASSIGN_OR_RETURN(CheckpointManager manager, CheckpointManager::Create(dir, {.max_to_keep = 3}));
//   TSR_ASSIGN_OR_RETURN(std::string path, manager.Save(*session, step, {{"epoch", "2"}}));
//   ...
//   absl::StatusOr<RestoredCheckpoint> r = manager.RestoreLatest(*session);  // NotFound: none yet
//
// Saving is crash-safe: the checkpoint file is written atomically, then the pointer is
// replaced atomically, then old checkpoints are removed; a process killed at any
// moment leaves the previous complete checkpoint or the new one as the latest.
// Steps are expected to increase from one Save to the next; one writer per directory.
#ifndef TESSERA_RUNTIME_CHECKPOINT_CHECKPOINT_MANAGER_H_
#define TESSERA_RUNTIME_CHECKPOINT_CHECKPOINT_MANAGER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/checkpoint/checkpoint_file.h"
#include "runtime/session.h"

namespace tsr {

struct CheckpointManagerOptions {
  int max_to_keep = 5;  // <= 0 keeps every checkpoint
  int64_t max_checkpoint_bytes = kDefaultMaxCheckpointBytes;
};

struct CheckpointFileInfo {
  int64_t step = 0;
  std::string path;
};

// What RestoreLatest loaded.
struct RestoredCheckpoint {
  std::string path;
  int64_t step = 0;
  std::map<std::string, std::string> metadata;
};

class CheckpointManager {
 public:
  static constexpr char kPointerFileName[] = "checkpoint";
  static constexpr char kFilePrefix[] = "ckpt-";

  // Creates `directory` (and its parents) when missing.
  static absl::StatusOr<CheckpointManager> Create(std::string directory, CheckpointManagerOptions options = {});

  // Writes ckpt-<checkpoint.step>, points "checkpoint" at it and removes the oldest
  // beyond max_to_keep. Returns the new file's path.
  absl::StatusOr<std::string> Save(const Checkpoint& checkpoint);
  // Saves every variable of `session`.
  absl::StatusOr<std::string> Save(const Session& session, int64_t step,
                                   std::map<std::string, std::string> metadata = {});

  // The checkpoints present, by increasing step.
  absl::StatusOr<std::vector<CheckpointFileInfo>> List() const;
  // The file the pointer names; when the pointer is missing or names no file (it was
  // deleted by hand), the highest step present. NotFound when there is none.
  absl::StatusOr<std::string> LatestPath() const;
  absl::StatusOr<Checkpoint> ReadLatest() const;
  // Reads the latest checkpoint, verifies it completely and against the session's
  // variables, then sets them; on any error nothing has changed.
  absl::StatusOr<RestoredCheckpoint> RestoreLatest(Session& session) const;
  // The same for a given checkpoint file.
  absl::StatusOr<RestoredCheckpoint> Restore(Session& session, const std::string& path) const;

  const std::string& directory() const { return directory_; }

 private:
  CheckpointManager(std::string directory, CheckpointManagerOptions options)
      : directory_(std::move(directory)), options_(options) {}

  // Removes the checkpoints beyond max_to_keep (never `keep`) and the temporary files
  // of writers that died mid-write.
  absl::Status Prune(const std::string& keep) const;

  std::string directory_;
  CheckpointManagerOptions options_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_CHECKPOINT_CHECKPOINT_MANAGER_H_
