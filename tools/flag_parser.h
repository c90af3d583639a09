// `FlagParser`: the small command-line parser of the `tessera` subcommands.
//
// Accepted forms: `--name=value`, `--name value`, `-n value` (a one-letter alias),
// `--flag` for booleans (also `--flag=true|false`), and `--` to end the flags.
// `--help` and `-h` are always known. Everything else that starts with '-' is an
// error naming the flag; arguments that do not are returned as positionals, in order.
#ifndef TESSERA_TOOLS_FLAG_PARSER_H_
#define TESSERA_TOOLS_FLAG_PARSER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr::cli {

class FlagParser {
 public:
  FlagParser() = default;
  FlagParser(const FlagParser&) = delete;
  FlagParser& operator=(const FlagParser&) = delete;

  // `short_name` is '\0' for none; `value_name` is the placeholder shown in help ("N").
  void AddBool(absl::string_view name, char short_name, bool* value, absl::string_view help);
  void AddInt(absl::string_view name, char short_name, absl::string_view value_name, int64_t* value,
              absl::string_view help);
  void AddString(absl::string_view name, char short_name, absl::string_view value_name, std::string* value,
                 absl::string_view help);

  // Sets the registered values and returns the positionals. InvalidArgument naming
  // the flag for an unknown flag, a missing value or a malformed one.
  absl::StatusOr<std::vector<std::string>> Parse(const std::vector<std::string>& args);
  bool help_requested() const { return help_; }

  // One line per flag ("  -o, --output FILE  where to write"), aligned; --help last.
  std::string Help() const;

 private:
  enum class Kind { kBool, kInt, kString };
  struct Flag {
    std::string name;
    char short_name;
    std::string value_name;
    std::string help;
    Kind kind;
    void* target;
  };
  const Flag* Find(absl::string_view name) const;
  const Flag* FindShort(char short_name) const;
  absl::Status Set(const Flag& flag, absl::string_view value) const;

  std::vector<Flag> flags_;
  bool help_ = false;
};

}  // namespace tsr::cli

#endif  // TESSERA_TOOLS_FLAG_PARSER_H_
