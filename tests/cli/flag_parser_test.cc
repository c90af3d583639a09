// FlagParser: the accepted flag forms, positionals, help and the errors.
#include "tools/flag_parser.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Flags {
  bool json = false;
  int64_t top = -1;
  std::string output;
};

void Register(FlagParser& p, Flags& f) {
  p.AddBool("json", '\0', &f.json, "print JSON");
  p.AddInt("top", '\0', "N", &f.top, "limit rows");
  p.AddString("output", 'o', "FILE", &f.output, "where to write");
}

TEST(FlagParserTest, AcceptedForms) {
  FlagParser p;
  Flags f;
  Register(p, f);
  absl::StatusOr<std::vector<std::string>> pos =
      p.Parse({"a", "--json", "--top=3", "-o", "out.pb", "b", "--", "--not-a-flag", "-"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_THAT(*pos, ElementsAre("a", "b", "--not-a-flag", "-"));
  EXPECT_TRUE(f.json);
  EXPECT_EQ(f.top, 3);
  EXPECT_EQ(f.output, "out.pb");
  EXPECT_FALSE(p.help_requested());
}

TEST(FlagParserTest, SeparateValuesAndExplicitBooleans) {
  FlagParser p;
  Flags f;
  Register(p, f);
  ASSERT_TRUE(p.Parse({"--top", "12", "--output=x.pbtxt", "--json=false"}).ok());
  EXPECT_EQ(f.top, 12);
  EXPECT_EQ(f.output, "x.pbtxt");
  EXPECT_FALSE(f.json);
}

TEST(FlagParserTest, Help) {
  FlagParser p;
  Flags f;
  Register(p, f);
  ASSERT_TRUE(p.Parse({"-h"}).ok());
  EXPECT_TRUE(p.help_requested());
  const std::string help = p.Help();
  EXPECT_THAT(help, HasSubstr("  -o, --output FILE  where to write\n"));
  EXPECT_THAT(help, HasSubstr("      --top N        limit rows\n"));
  EXPECT_THAT(help, HasSubstr("  -h, --help         show this help\n"));
}

TEST(FlagParserTest, Errors) {
  Flags f;
  auto parse = [&](std::vector<std::string> args) {
    FlagParser p;
    Register(p, f);
    return p.Parse(args).status();
  };
  EXPECT_THAT(parse({"--bogus"}).message(), HasSubstr("unknown flag '--bogus'"));
  EXPECT_THAT(parse({"--bogus=1"}).message(), HasSubstr("unknown flag '--bogus'"));
  EXPECT_THAT(parse({"-x"}).message(), HasSubstr("unknown flag '-x'"));
  EXPECT_THAT(parse({"-oout"}).message(), HasSubstr("unknown flag '-oout'"));
  EXPECT_THAT(parse({"--top"}).message(), HasSubstr("flag --top needs a value (N)"));
  EXPECT_THAT(parse({"--top=ten"}).message(), HasSubstr("flag --top takes an integer, not 'ten'"));
  EXPECT_THAT(parse({"--json=yes"}).message(), HasSubstr("flag --json takes true or false"));
  EXPECT_EQ(parse({"--top=ten"}).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tsr::cli
