// FlagParser.
#include "tools/flag_parser.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tsr::cli {

void FlagParser::AddBool(absl::string_view name, char short_name, bool* value, absl::string_view help) {
  flags_.push_back({std::string(name), short_name, "", std::string(help), Kind::kBool, value});
}

void FlagParser::AddInt(absl::string_view name, char short_name, absl::string_view value_name, int64_t* value,
                        absl::string_view help) {
  flags_.push_back({std::string(name), short_name, std::string(value_name), std::string(help), Kind::kInt, value});
}

void FlagParser::AddString(absl::string_view name, char short_name, absl::string_view value_name, std::string* value,
                           absl::string_view help) {
  flags_.push_back({std::string(name), short_name, std::string(value_name), std::string(help), Kind::kString, value});
}

const FlagParser::Flag* FlagParser::Find(absl::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const FlagParser::Flag* FlagParser::FindShort(char short_name) const {
  for (const Flag& f : flags_) {
    if (f.short_name != '\0' && f.short_name == short_name) return &f;
  }
  return nullptr;
}

absl::Status FlagParser::Set(const Flag& flag, absl::string_view value) const {
  switch (flag.kind) {
    case Kind::kBool:
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", flag.name, " takes true or false, not '", value, "'"));
      }
      *static_cast<bool*>(flag.target) = value == "true";
      return absl::OkStatus();
    case Kind::kInt:
      if (!absl::SimpleAtoi(value, static_cast<int64_t*>(flag.target))) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", flag.name, " takes an integer, not '", value, "'"));
      }
      return absl::OkStatus();
    case Kind::kString:
      *static_cast<std::string*>(flag.target) = std::string(value);
      return absl::OkStatus();
  }
  return absl::InternalError("unhandled flag kind");
}

absl::StatusOr<std::vector<std::string>> FlagParser::Parse(const std::vector<std::string>& args) {
  std::vector<std::string> positionals;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      positionals.insert(positionals.end(), args.begin() + i + 1, args.end());
      break;
    }
    // "-" alone is a positional by convention (stdin/stdout); so is anything without a dash.
    if (arg.size() < 2 || arg[0] != '-') {
      positionals.emplace_back(arg);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      help_ = true;
      continue;
    }
    const Flag* flag = nullptr;
    std::string shown;  // the flag as the user wrote it, for messages
    absl::string_view inline_value;
    bool has_inline_value = false;
    if (absl::StartsWith(arg, "--")) {
      absl::string_view body = arg.substr(2);
      if (const size_t eq = body.find('='); eq != absl::string_view::npos) {
        inline_value = body.substr(eq + 1);
        has_inline_value = true;
        body = body.substr(0, eq);
      }
      flag = Find(body);
      shown = absl::StrCat("--", body);
    } else if (arg.size() == 2) {
      flag = FindShort(arg[1]);
      shown = std::string(arg);
    } else {
      shown = std::string(arg);
    }
    if (flag == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag '", shown, "'"));
    if (flag->kind == Kind::kBool && !has_inline_value) {
      *static_cast<bool*>(flag->target) = true;
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag ", shown, " needs a value (", flag->value_name, ")"));
      }
      inline_value = args[++i];
    }
    if (absl::Status s = Set(*flag, inline_value); !s.ok()) return s;
  }
  return positionals;
}

std::string FlagParser::Help() const {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Flag& f : flags_) {
    std::string left = f.short_name != '\0' ? absl::StrCat("-", std::string(1, f.short_name), ", --", f.name)
                                            : absl::StrCat("    --", f.name);
    if (!f.value_name.empty()) absl::StrAppend(&left, " ", f.value_name);
    rows.emplace_back(std::move(left), f.help);
  }
  rows.emplace_back("-h, --help", "show this help");
  size_t width = 0;
  for (const auto& [left, help] : rows) width = std::max(width, left.size());
  std::string out;
  for (const auto& [left, help] : rows) {
    absl::StrAppend(&out, "  ", left, std::string(width - left.size() + 2, ' '), help, "\n");
  }
  return out;
}

}  // namespace tsr::cli
