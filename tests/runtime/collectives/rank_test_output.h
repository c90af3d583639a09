// For tests whose ranks are processes (MPI, Gloo): rank 0 prints gtest's usual output;
// every other rank prints only its failures, each line prefixed with the rank, and its
// count of failed tests, so that a job's log reads like one test run and still says
// which rank failed what.
#ifndef TESSERA_TESTS_RUNTIME_COLLECTIVES_RANK_TEST_OUTPUT_H_
#define TESSERA_TESTS_RUNTIME_COLLECTIVES_RANK_TEST_OUTPUT_H_

#include <iostream>

#include "gtest/gtest.h"

namespace tsr {
namespace conformance {

class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::cout << "[rank " << rank_ << "] " << (result.file_name() ? result.file_name() : "?") << ":"
              << result.line_number() << ": Failure\n"
              << result.message() << std::endl;
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    if (info.result()->Failed()) {
      std::cout << "[rank " << rank_ << "] FAILED " << info.test_suite_name() << "." << info.name() << std::endl;
    }
  }
  void OnTestProgramEnd(const testing::UnitTest& unit) override {
    std::cout << "[rank " << rank_ << "] " << unit.successful_test_count() << " passed, " << unit.failed_test_count()
              << " failed" << std::endl;
  }

 private:
  const int rank_;
};

// Call after testing::InitGoogleTest.
inline void PrintOnlyFailuresUnlessRankZero(int rank) {
  if (rank == 0) return;
  testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new RankFailurePrinter(rank));
}

}  // namespace conformance
}  // namespace tsr

#endif  // TESSERA_TESTS_RUNTIME_COLLECTIVES_RANK_TEST_OUTPUT_H_
