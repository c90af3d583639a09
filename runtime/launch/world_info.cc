// Reading the launch environment contract of world_info.h.
#include "runtime/launch/world_info.h"

#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/status_macros.h"

namespace tsr {
namespace {

constexpr char kOmpiRank[] = "OMPI_COMM_WORLD_RANK";
constexpr char kOmpiSize[] = "OMPI_COMM_WORLD_SIZE";
constexpr char kOmpiLocalRank[] = "OMPI_COMM_WORLD_LOCAL_RANK";
constexpr char kOmpiLocalSize[] = "OMPI_COMM_WORLD_LOCAL_SIZE";

absl::Status Malformed(absl::string_view name, absl::string_view value, absl::string_view expectation) {
  return absl::InvalidArgumentError(absl::StrCat(name, "='", value, "': ", expectation));
}

// A decimal integer in [min, max]: digits only (no sign, no spaces).
absl::StatusOr<int> ParseInt(absl::string_view name, absl::string_view value, int min, int max) {
  int parsed = 0;
  bool digits = !value.empty() && value.size() <= 10;
  for (char c : value) digits = digits && absl::ascii_isdigit(static_cast<unsigned char>(c));
  if (!digits || !absl::SimpleAtoi(value, &parsed) || parsed < min || parsed > max) {
    return Malformed(name, value, absl::StrCat("expected an integer in [", min, ", ", max, "]"));
  }
  return parsed;
}

// The value of `name` parsed as an integer in [min, max], or `fallback` when unset.
absl::StatusOr<int> IntVariable(const EnvironmentLookup& lookup, const std::string& name, int min, int max,
                                std::optional<int> fallback) {
  std::optional<std::string> value = lookup(name);
  if (!value.has_value()) {
    if (fallback.has_value()) return *fallback;
    return absl::InvalidArgumentError(absl::StrCat(name, " is not set"));
  }
  return ParseInt(name, *value, min, max);
}

constexpr int kMaxInt = std::numeric_limits<int>::max();

// Rank, world size, local rank and local world size from four variables; the local ones
// default to the global ones (a job on one host).
absl::Status ReadRanks(const EnvironmentLookup& lookup, const std::string& rank_name, const std::string& size_name,
                       const std::string& local_rank_name, const std::string& local_size_name, WorldInfo& info) {
  TSR_ASSIGN_OR_RETURN(info.world_size, IntVariable(lookup, size_name, 1, kMaxInt, std::nullopt));
  TSR_ASSIGN_OR_RETURN(info.rank, IntVariable(lookup, rank_name, 0, kMaxInt, std::nullopt));
  if (info.rank >= info.world_size) {
    return Malformed(rank_name, *lookup(rank_name),
                     absl::StrCat("rank must be less than ", size_name, "=", info.world_size));
  }
  TSR_ASSIGN_OR_RETURN(info.local_world_size, IntVariable(lookup, local_size_name, 1, kMaxInt, info.world_size));
  if (info.local_world_size > info.world_size) {
    return Malformed(local_size_name, *lookup(local_size_name),
                     absl::StrCat("more local processes than ", size_name, "=", info.world_size));
  }
  TSR_ASSIGN_OR_RETURN(info.local_rank,
                       IntVariable(lookup, local_rank_name, 0, kMaxInt,
                                   lookup(local_size_name).has_value() ? std::nullopt : std::optional<int>(info.rank)));
  if (info.local_rank >= info.local_world_size) {
    return Malformed(local_rank_name, *lookup(local_rank_name),
                     absl::StrCat("local rank must be less than the local world size ", info.local_world_size));
  }
  return absl::OkStatus();
}

absl::Status ReadCoordinator(const EnvironmentLookup& lookup, WorldInfo& info) {
  std::optional<std::string> coordinator = lookup(kCoordinatorVariable);
  std::optional<std::string> token = lookup(kJobTokenVariable);
  if (coordinator.has_value()) {
    const size_t colon = coordinator->rfind(':');
    if (colon == std::string::npos) {
      return Malformed(kCoordinatorVariable, *coordinator, "expected HOST:PORT");
    }
    const std::string host = coordinator->substr(0, colon);
    if (host != kLoopbackHost && host != "localhost") {
      return Malformed(kCoordinatorVariable, *coordinator,
                       absl::StrCat("host '", host, "' is not the loopback address ", kLoopbackHost,
                                    " (jobs run on one host and connect to nothing else)"));
    }
    absl::StatusOr<int> port = ParseInt(kCoordinatorVariable, coordinator->substr(colon + 1), 1, 65535);
    if (!port.ok()) return Malformed(kCoordinatorVariable, *coordinator, "expected a port in [1, 65535]");
    info.coordinator_host = kLoopbackHost;
    info.coordinator_port = *port;
    if (!token.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(kCoordinatorVariable, " is set but ", kJobTokenVariable,
                                                     " is not: the store refuses clients ", "without the job's token"));
    }
  }
  if (token.has_value()) {
    // The token is a secret: its length is named, never its value.
    if (token->empty() || token->size() > kMaxJobTokenBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(kJobTokenVariable, " has ", token->size(), " bytes; expected 1 to ", kMaxJobTokenBytes));
    }
    info.token = *token;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<WorldInfo> WorldInfoFromEnvironment(const EnvironmentLookup& lookup) {
  WorldInfo info;
  if (lookup(kRankVariable).has_value() || lookup(kWorldSizeVariable).has_value()) {
    TSR_RETURN_IF_ERROR(
        ReadRanks(lookup, kRankVariable, kWorldSizeVariable, kLocalRankVariable, kLocalWorldSizeVariable, info));
  } else if (lookup(kOmpiRank).has_value() || lookup(kOmpiSize).has_value()) {
    TSR_RETURN_IF_ERROR(ReadRanks(lookup, kOmpiRank, kOmpiSize, kOmpiLocalRank, kOmpiLocalSize, info));
    info.under_mpirun = true;
  }
  TSR_RETURN_IF_ERROR(ReadCoordinator(lookup, info));
  info.backend = info.under_mpirun ? "mpi" : "gloo";
  if (std::optional<std::string> backend = lookup(kBackendVariable); backend.has_value()) {
    if (*backend != "gloo" && *backend != "mpi") return Malformed(kBackendVariable, *backend, "expected gloo or mpi");
    info.backend = *backend;
  }
  return info;
}

absl::StatusOr<WorldInfo> WorldInfoFromEnvironment() {
  return WorldInfoFromEnvironment([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

}  // namespace tsr
