// WorldInfoFromEnvironment: the Tessera variables, OpenMPI's, neither, and every
// malformed value named with its variable.
#include "runtime/launch/world_info.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

using Env = std::map<std::string, std::string>;

absl::StatusOr<WorldInfo> FromEnv(const Env& env) {
  return WorldInfoFromEnvironment([&env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

// The variables `tessera launch` sets for rank 1 of 4.
Env LaunchedRank1() {
  return {{"TESSERA_RANK", "1"},
          {"TESSERA_WORLD_SIZE", "4"},
          {"TESSERA_LOCAL_RANK", "1"},
          {"TESSERA_LOCAL_WORLD_SIZE", "4"},
          {"TESSERA_COORDINATOR", "127.0.0.1:29500"},
          {"TESSERA_JOB_TOKEN", "s3cret"},
          {"TESSERA_BACKEND", "gloo"}};
}

// The error for `env`, which must be InvalidArgument.
std::string ErrorOf(const Env& env) {
  absl::StatusOr<WorldInfo> info = FromEnv(env);
  EXPECT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument) << info.status();
  return std::string(info.status().message());
}

TEST(WorldInfoTest, NoVariablesIsOneProcess) {
  absl::StatusOr<WorldInfo> info = FromEnv({});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->rank, 0);
  EXPECT_EQ(info->world_size, 1);
  EXPECT_EQ(info->local_rank, 0);
  EXPECT_EQ(info->local_world_size, 1);
  EXPECT_FALSE(info->has_coordinator());
  EXPECT_EQ(info->coordinator_host, "");
  EXPECT_EQ(info->token, "");
  EXPECT_EQ(info->backend, "gloo");
  EXPECT_FALSE(info->under_mpirun);
}

TEST(WorldInfoTest, ReadsTheTesseraContract) {
  absl::StatusOr<WorldInfo> info = FromEnv(LaunchedRank1());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->rank, 1);
  EXPECT_EQ(info->world_size, 4);
  EXPECT_EQ(info->local_rank, 1);
  EXPECT_EQ(info->local_world_size, 4);
  EXPECT_EQ(info->coordinator_host, "127.0.0.1");
  EXPECT_EQ(info->coordinator_port, 29500);
  EXPECT_TRUE(info->has_coordinator());
  EXPECT_EQ(info->token, "s3cret");
  EXPECT_EQ(info->backend, "gloo");
  EXPECT_FALSE(info->under_mpirun);
}

TEST(WorldInfoTest, LocalRanksDefaultToTheGlobalOnes) {
  absl::StatusOr<WorldInfo> info = FromEnv({{"TESSERA_RANK", "2"}, {"TESSERA_WORLD_SIZE", "3"}});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->local_rank, 2);
  EXPECT_EQ(info->local_world_size, 3);
  EXPECT_FALSE(info->has_coordinator());
}

TEST(WorldInfoTest, LocalhostIsTheLoopbackAddress) {
  Env env = LaunchedRank1();
  env["TESSERA_COORDINATOR"] = "localhost:65535";
  absl::StatusOr<WorldInfo> info = FromEnv(env);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->coordinator_host, "127.0.0.1");
  EXPECT_EQ(info->coordinator_port, 65535);
}

TEST(WorldInfoTest, ReadsOpenMpiVariables) {
  absl::StatusOr<WorldInfo> info = FromEnv({{"OMPI_COMM_WORLD_RANK", "3"},
                                            {"OMPI_COMM_WORLD_SIZE", "8"},
                                            {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                            {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->rank, 3);
  EXPECT_EQ(info->world_size, 8);
  EXPECT_EQ(info->local_rank, 1);
  EXPECT_EQ(info->local_world_size, 2);
  EXPECT_TRUE(info->under_mpirun);
  EXPECT_EQ(info->backend, "mpi");
  EXPECT_FALSE(info->has_coordinator());
}

TEST(WorldInfoTest, UnderMpirunTheBackendAndCoordinatorMayStillBeSet) {
  absl::StatusOr<WorldInfo> info = FromEnv({{"OMPI_COMM_WORLD_RANK", "0"},
                                            {"OMPI_COMM_WORLD_SIZE", "2"},
                                            {"TESSERA_BACKEND", "gloo"},
                                            {"TESSERA_COORDINATOR", "127.0.0.1:1234"},
                                            {"TESSERA_JOB_TOKEN", "t"}});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->under_mpirun);
  EXPECT_EQ(info->backend, "gloo");
  EXPECT_EQ(info->coordinator_port, 1234);
  EXPECT_EQ(info->local_rank, 0);
  EXPECT_EQ(info->local_world_size, 2);
}

TEST(WorldInfoTest, TheTesseraContractWinsOverOpenMpi) {
  Env env = LaunchedRank1();
  env["OMPI_COMM_WORLD_RANK"] = "0";
  env["OMPI_COMM_WORLD_SIZE"] = "2";
  absl::StatusOr<WorldInfo> info = FromEnv(env);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->rank, 1);
  EXPECT_EQ(info->world_size, 4);
  EXPECT_FALSE(info->under_mpirun);
}

TEST(WorldInfoTest, MalformedNumbersNameTheVariableAndValue) {
  for (const char* bad : {"", "x", "1x", "-1", "+1", " 1", "1.0", "99999999999"}) {
    Env env = LaunchedRank1();
    env["TESSERA_RANK"] = bad;
    EXPECT_THAT(ErrorOf(env), HasSubstr(std::string("TESSERA_RANK='") + bad + "'")) << "value '" << bad << "'";
  }
  Env env = LaunchedRank1();
  env["TESSERA_WORLD_SIZE"] = "0";
  EXPECT_THAT(ErrorOf(env), HasSubstr("TESSERA_WORLD_SIZE='0'"));
  env = LaunchedRank1();
  env["TESSERA_LOCAL_RANK"] = "one";
  EXPECT_THAT(ErrorOf(env), HasSubstr("TESSERA_LOCAL_RANK='one'"));
  env = LaunchedRank1();
  env["TESSERA_LOCAL_WORLD_SIZE"] = "4 ";
  EXPECT_THAT(ErrorOf(env), HasSubstr("TESSERA_LOCAL_WORLD_SIZE='4 '"));
  EXPECT_THAT(ErrorOf({{"OMPI_COMM_WORLD_RANK", "r"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
              HasSubstr("OMPI_COMM_WORLD_RANK='r'"));
  EXPECT_THAT(ErrorOf({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "two"}}),
              HasSubstr("OMPI_COMM_WORLD_SIZE='two'"));
  EXPECT_THAT(ErrorOf({{"OMPI_COMM_WORLD_RANK", "0"},
                       {"OMPI_COMM_WORLD_SIZE", "2"},
                       {"OMPI_COMM_WORLD_LOCAL_RANK", "?"},
                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
              HasSubstr("OMPI_COMM_WORLD_LOCAL_RANK='?'"));
}

TEST(WorldInfoTest, RanksMustBeInsideTheWorld) {
  Env env = LaunchedRank1();
  env["TESSERA_RANK"] = "4";
  EXPECT_THAT(ErrorOf(env), AllOf(HasSubstr("TESSERA_RANK='4'"), HasSubstr("TESSERA_WORLD_SIZE=4")));
  env = LaunchedRank1();
  env["TESSERA_LOCAL_RANK"] = "4";
  EXPECT_THAT(ErrorOf(env), HasSubstr("TESSERA_LOCAL_RANK='4'"));
  env = LaunchedRank1();
  env["TESSERA_LOCAL_WORLD_SIZE"] = "5";
  EXPECT_THAT(ErrorOf(env), HasSubstr("TESSERA_LOCAL_WORLD_SIZE='5'"));
  EXPECT_THAT(ErrorOf({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
              HasSubstr("OMPI_COMM_WORLD_RANK='2'"));
}

TEST(WorldInfoTest, RankAndWorldSizeComeTogether) {
  EXPECT_THAT(ErrorOf({{"TESSERA_RANK", "0"}}), HasSubstr("TESSERA_WORLD_SIZE is not set"));
  EXPECT_THAT(ErrorOf({{"TESSERA_WORLD_SIZE", "2"}}), HasSubstr("TESSERA_RANK is not set"));
  EXPECT_THAT(ErrorOf({{"TESSERA_RANK", "0"}, {"TESSERA_WORLD_SIZE", "2"}, {"TESSERA_LOCAL_WORLD_SIZE", "2"}}),
              HasSubstr("TESSERA_LOCAL_RANK is not set"));
}

TEST(WorldInfoTest, MalformedCoordinators) {
  for (const char* bad :
       {"127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:http", "127.0.0.1:-5", ":29500"}) {
    Env env = LaunchedRank1();
    env["TESSERA_COORDINATOR"] = bad;
    EXPECT_THAT(ErrorOf(env), HasSubstr(std::string("TESSERA_COORDINATOR='") + bad + "'")) << "value '" << bad << "'";
  }
}

TEST(WorldInfoTest, CoordinatorsMustBeLoopback) {
  for (const char* bad : {"10.0.0.1:29500", "0.0.0.0:29500", "example.com:29500", "127.0.0.2:29500"}) {
    Env env = LaunchedRank1();
    env["TESSERA_COORDINATOR"] = bad;
    EXPECT_THAT(ErrorOf(env), AllOf(HasSubstr(std::string("TESSERA_COORDINATOR='") + bad + "'"),
                                    HasSubstr("not the loopback address 127.0.0.1")))
        << "value '" << bad << "'";
  }
}

TEST(WorldInfoTest, ACoordinatorNeedsAToken) {
  Env env = LaunchedRank1();
  env.erase("TESSERA_JOB_TOKEN");
  EXPECT_THAT(ErrorOf(env), AllOf(HasSubstr("TESSERA_COORDINATOR"), HasSubstr("TESSERA_JOB_TOKEN is not")));
}

TEST(WorldInfoTest, TokenErrorsDoNotRevealTheToken) {
  Env env = LaunchedRank1();
  env["TESSERA_JOB_TOKEN"] = std::string(300, 'k');
  EXPECT_THAT(ErrorOf(env), AllOf(HasSubstr("TESSERA_JOB_TOKEN has 300 bytes"), Not(HasSubstr("kkkk"))));
  env["TESSERA_JOB_TOKEN"] = "";
  EXPECT_THAT(ErrorOf(env), HasSubstr("TESSERA_JOB_TOKEN has 0 bytes"));
}

TEST(WorldInfoTest, UnknownBackend) {
  Env env = LaunchedRank1();
  env["TESSERA_BACKEND"] = "carrier-pigeon";
  EXPECT_THAT(ErrorOf(env), AllOf(HasSubstr("TESSERA_BACKEND='carrier-pigeon'"), HasSubstr("gloo or mpi")));
  env["TESSERA_BACKEND"] = "mpi";
  absl::StatusOr<WorldInfo> info = FromEnv(env);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->backend, "mpi");
}

TEST(WorldInfoTest, ReadsTheProcessEnvironment) {
  // Whatever the test runs under (a plain shell, CTest, mpirun), this process's own
  // variables parse: nothing in the environment of a test is malformed.
  absl::StatusOr<WorldInfo> info = WorldInfoFromEnvironment();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_LT(info->rank, info->world_size);
}

}  // namespace
}  // namespace tsr
