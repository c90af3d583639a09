// Tests of platform/file.h: atomic replacement (content, mode kept, no temporary file
// left, failures leave the old file) and bounded reads (limits on regular files and
// pipes, missing files, folders).
#include "platform/file.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  const std::string dir = ::testing::TempDir() + "platform_file_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FileTest, AtomicWriteCreatesReplacesAndKeepsTheMode) {
  const std::string dir = TempDir();
  const std::string path = dir + "/a.bin";
  ASSERT_TRUE(WriteFileAtomically(path, std::string("first\0x", 7)).ok());
  EXPECT_EQ(Slurp(path), std::string("first\0x", 7));
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "second").ok());
  EXPECT_EQ(Slurp(path), "second");
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  // Only the file itself is left in the folder: no temporary files.
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  std::filesystem::remove_all(dir);
}

TEST(FileTest, FailedWriteLeavesNothingBehind) {
  const std::string dir = TempDir();
  absl::Status s = WriteFileAtomically(dir + "/missing/folder/x.bin", "data");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot create"));
  // Renaming over a folder fails after the data was written: the temporary goes away.
  std::filesystem::create_directories(dir + "/taken");
  s = WriteFileAtomically(dir + "/taken", "data");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot rename"));
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "taken");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  std::filesystem::remove_all(dir);
}

TEST(FileTest, BoundedReads) {
  const std::string dir = TempDir();
  const std::string path = dir + "/r.bin";
  ASSERT_TRUE(WriteFileAtomically(path, "0123456789").ok());
  absl::StatusOr<std::string> all = ReadFileBounded(path, 10, "Options::max_bytes");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, "0123456789");
  absl::StatusOr<std::string> over = ReadFileBounded(path, 9, "Options::max_bytes");
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.status().message(), HasSubstr("10 bytes, above the limit of 9 (Options::max_bytes)"));
  EXPECT_EQ(ReadFileBounded(dir + "/none", 100, "x").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::string> folder = ReadFileBounded(dir, 100, "x");
  EXPECT_EQ(folder.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(folder.status().message(), HasSubstr("directory"));
  std::filesystem::remove_all(dir);
}

TEST(FileTest, PipesAreCutOffAtTheLimit) {
  const std::string dir = TempDir();
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader closes early: the writer must get EPIPE, not a process-killing SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  // A writer that would go on for 1 MiB; the reader stops after the limit.
  std::thread writer([&] {
    FILE* f = std::fopen(fifo.c_str(), "wb");
    if (f == nullptr) return;
    const std::string chunk(4096, 'z');
    for (int i = 0; i < 256; ++i) {
      if (std::fwrite(chunk.data(), 1, chunk.size(), f) != chunk.size()) break;
    }
    std::fclose(f);
  });
  absl::StatusOr<std::string> got = ReadFileBounded(fifo, 100000, "limit");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(got.status().message(), HasSubstr("at least"));
  writer.join();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tsr
