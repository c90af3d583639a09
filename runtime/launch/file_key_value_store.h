// `FileKeyValueStore`: a KeyValueStore in a directory that every rank of the job can
// reach (the ranks of one machine; tests rendezvous Gloo ranks through it). Each key is
// one file. A Set writes a temporary file and renames it over the key's file, so a
// reader sees either no value or a whole one, never a partial write; a Get polls for the
// file with short sleeps until its deadline.
//
// Keys are arbitrary bytes: each is escaped into a single file name (letters, digits,
// '-' and '_' stay, every other byte becomes %XX; very long keys keep a prefix and a
// hash of the whole key), so no key can name a file outside the directory ("../x",
// "/etc/passwd", "." are just names) or collide with the temporary files.
#ifndef TESSERA_RUNTIME_LAUNCH_FILE_KEY_VALUE_STORE_H_
#define TESSERA_RUNTIME_LAUNCH_FILE_KEY_VALUE_STORE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "runtime/launch/key_value_store.h"

namespace tsr {

class FileKeyValueStore : public KeyValueStore {
 public:
  // A store in `directory`, which must exist (Set fails naming it otherwise). Several
  // objects, in any processes, on one directory are clients of one store.
  explicit FileKeyValueStore(std::string directory);

  // InvalidArgument for an empty key; an error naming the file when writing fails.
  absl::Status Set(absl::string_view key, absl::string_view value) override;
  absl::StatusOr<std::string> Get(absl::string_view key, absl::Duration timeout) override;

  // The file that holds `key`'s value.
  std::string PathOf(absl::string_view key) const;

 private:
  const std::string directory_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_LAUNCH_FILE_KEY_VALUE_STORE_H_
