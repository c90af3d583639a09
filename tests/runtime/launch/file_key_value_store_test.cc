// Tests of FileKeyValueStore: values round-trip (binary, replaced on a second Set), Get
// waits for a key another client sets and times out naming the key, readers never see
// a partial value, and no key reaches outside the store's directory.
#include "runtime/launch/file_key_value_store.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

// A fresh directory under the test's temporary directory, holding the store's
// directory "store" (so that files escaping it would show up beside it).
class FileKeyValueStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/file_kv_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    directory_ = root_ + "/store";
    ASSERT_EQ(::mkdir(directory_.c_str(), 0700), 0);
  }
  void TearDown() override {
    for (const std::string& dir : {directory_, root_}) {
      for (const std::string& name : List(dir)) ::unlink((dir + "/" + name).c_str());
    }
    ::rmdir(directory_.c_str());
    ::rmdir(root_.c_str());
  }

  static std::vector<std::string> List(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return names;
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
    return names;
  }

  std::string root_;
  std::string directory_;
};

TEST_F(FileKeyValueStoreTest, SetThenGetAndReplace) {
  FileKeyValueStore store(directory_);
  ASSERT_TRUE(store.Set("rank/0", "127.0.0.1:5000").ok());
  absl::StatusOr<std::string> value = store.Get("rank/0", absl::Seconds(1));
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "127.0.0.1:5000");
  const std::string binary("a\0b\xff\n", 5);
  ASSERT_TRUE(store.Set("rank/0", binary).ok());
  EXPECT_EQ(*store.Get("rank/0", absl::Seconds(1)), binary);
  ASSERT_TRUE(store.Set("empty", "").ok());
  EXPECT_EQ(*store.Get("empty", absl::Seconds(1)), "");
  // No temporary files are left behind.
  EXPECT_EQ(List(directory_).size(), 2u);
}

TEST_F(FileKeyValueStoreTest, AnotherClientSeesTheKeys) {
  FileKeyValueStore writer(directory_);
  FileKeyValueStore reader(directory_);
  ASSERT_TRUE(writer.Set("k", "v").ok());
  EXPECT_EQ(*reader.Get("k", absl::ZeroDuration()), "v");
}

TEST_F(FileKeyValueStoreTest, GetWaitsForALaterSet) {
  FileKeyValueStore store(directory_);
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(100));
    FileKeyValueStore(directory_).Set("late", "here").IgnoreError();
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> value = store.Get("late", absl::Seconds(10));
  const absl::Duration waited = absl::Now() - start;
  writer.join();
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "here");
  EXPECT_GE(waited, absl::Milliseconds(90));
  EXPECT_LT(waited, absl::Seconds(5));
}

TEST_F(FileKeyValueStoreTest, GetTimesOutNamingTheKey) {
  FileKeyValueStore store(directory_);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> value = store.Get("comm/3", absl::Milliseconds(200));
  const absl::Duration waited = absl::Now() - start;
  EXPECT_EQ(value.status().code(), absl::StatusCode::kDeadlineExceeded) << value.status();
  EXPECT_THAT(value.status().message(), HasSubstr("key 'comm/3' was not set in " + directory_ + " within 200ms"));
  EXPECT_GE(waited, absl::Milliseconds(190));
  EXPECT_LT(waited, absl::Seconds(5));
}

TEST_F(FileKeyValueStoreTest, KeysStayInsideTheDirectory) {
  FileKeyValueStore store(directory_);
  const std::vector<std::string> keys = {"..",
                                         ".",
                                         "../escaped",
                                         "/etc/passwd",
                                         "a/../../b",
                                         ".tmp-1-2-3",
                                         "%2F",
                                         "/",
                                         "~",
                                         std::string(1000, 'x'),
                                         std::string(1000, '/'),
                                         "a b\tc",
                                         std::string("nul\0byte", 8)};
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(store.Set(keys[i], std::to_string(i)).ok()) << keys[i];
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    absl::StatusOr<std::string> value = store.Get(keys[i], absl::ZeroDuration());
    ASSERT_TRUE(value.ok()) << keys[i] << ": " << value.status();
    EXPECT_EQ(*value, std::to_string(i)) << keys[i];
    const std::string path = store.PathOf(keys[i]);
    EXPECT_EQ(path.rfind(directory_ + "/", 0), 0u) << path;
    EXPECT_EQ(path.find('/', directory_.size() + 1), std::string::npos) << path;
    EXPECT_LT(path.size() - directory_.size(), 200u) << path;
  }
  // Every key is one plain file in the directory, and nothing was written beside it.
  EXPECT_EQ(List(directory_).size(), keys.size());
  EXPECT_EQ(List(root_), std::vector<std::string>{"store"});
  EXPECT_EQ(store.Set("", "x").code(), absl::StatusCode::kInvalidArgument);
}

// Writers replace a key's value over and over while readers read it: every value read
// is one whole value (64 KiB of one repeated byte), never a mix or a prefix.
TEST_F(FileKeyValueStoreTest, ReadersNeverSeeAPartialValue) {
  constexpr size_t kValueBytes = 64 << 10;
  FileKeyValueStore store(directory_);
  ASSERT_TRUE(store.Set("v", std::string(kValueBytes, 'a')).ok());
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (char c : {'b', 'c'}) {
    writers.emplace_back([&, c] {
      FileKeyValueStore mine(directory_);
      for (int i = 0; i < 100; ++i) ASSERT_TRUE(mine.Set("v", std::string(kValueBytes, c)).ok());
    });
  }
  std::thread reader([&] {
    FileKeyValueStore mine(directory_);
    while (!done.load()) {
      absl::StatusOr<std::string> value = mine.Get("v", absl::Seconds(1));
      ASSERT_TRUE(value.ok()) << value.status();
      ASSERT_EQ(value->size(), kValueBytes);
      ASSERT_EQ(value->find_first_not_of((*value)[0]), std::string::npos);
    }
  });
  for (std::thread& w : writers) w.join();
  done.store(true);
  reader.join();
}

TEST_F(FileKeyValueStoreTest, MissingDirectoryIsNamed) {
  FileKeyValueStore store(directory_ + "/missing");
  absl::Status status = store.Set("k", "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr(directory_ + "/missing"));
}

}  // namespace
}  // namespace tsr
