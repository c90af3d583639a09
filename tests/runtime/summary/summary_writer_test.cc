// SummaryWriter and TFRecord framing: the file name, the version record first, scalars
// read back through our own checked reader, the framing bytes against the formula, the
// Event wire format against hand-encoded bytes (TensorFlow's field numbers), flushing
// rules, concurrent writers, corruption detection, and TensorBoard's own reader when
// the tensorboard Python package is installed.
#include "runtime/summary/summary_writer.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"
#include "platform/crc32c.h"
#include "runtime/summary/tfrecord.h"

namespace tsr {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

std::string FreshDir(absl::string_view name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/summary_test_", ::getpid(), "_", name);
  fs::remove_all(dir);
  return dir;
}

std::vector<tessera::tb::Event> ReadAll(const std::string& path) {
  absl::StatusOr<std::vector<tessera::tb::Event>> events = ReadEventFile(path);
  EXPECT_TRUE(events.ok()) << events.status();
  return events.ok() ? *events : std::vector<tessera::tb::Event>{};
}

TEST(SummaryWriterTest, WritesVersionFirstThenScalars) {
  const std::string dir = FreshDir("basic");
  absl::StatusOr<std::unique_ptr<SummaryWriter>> w = SummaryWriter::Create(dir);
  ASSERT_TRUE(w.ok()) << w.status();
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(fs::path((*w)->path()).parent_path().string(), dir);
  EXPECT_THAT(fs::path((*w)->path()).filename().string(),
              MatchesRegex(absl::StrCat("events\\.out\\.tfevents\\.[0-9]+\\.", host)));

  // The version record is on disk at once.
  std::vector<tessera::tb::Event> events = ReadAll((*w)->path());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GT(events[0].wall_time(), 1.6e9);

  ASSERT_TRUE((*w)->AddScalar("train/loss", 2.5f, 10).ok());
  ASSERT_TRUE((*w)->AddScalar("train/loss", 1.25f, 20).ok());
  ASSERT_TRUE((*w)->AddScalar("eval/accuracy", 0.75f, 20).ok());
  EXPECT_EQ(ReadAll((*w)->path()).size(), 1u) << "buffered until the interval passes or Flush";
  ASSERT_TRUE((*w)->Flush().ok());
  events = ReadAll((*w)->path());
  ASSERT_EQ(events.size(), 4u);
  const struct {
    const char* tag;
    float value;
    int64_t step;
  } expected[] = {{"train/loss", 2.5f, 10}, {"train/loss", 1.25f, 20}, {"eval/accuracy", 0.75f, 20}};
  for (int i = 0; i < 3; ++i) {
    const tessera::tb::Event& e = events[i + 1];
    ASSERT_TRUE(e.has_summary());
    ASSERT_EQ(e.summary().value_size(), 1);
    EXPECT_EQ(e.summary().value(0).tag(), expected[i].tag);
    EXPECT_EQ(e.summary().value(0).simple_value(), expected[i].value);
    EXPECT_EQ(e.step(), expected[i].step);
    EXPECT_GE(e.wall_time(), events[i].wall_time());
  }
}

TEST(SummaryWriterTest, FlushesWhenFullAfterTheIntervalAndOnDestruction) {
  const std::string dir = FreshDir("flush");
  std::string path;
  {
    std::unique_ptr<SummaryWriter> w = *SummaryWriter::Create(dir, {.max_buffered_events = 3});
    path = w->path();
    ASSERT_TRUE(w->AddScalar("a", 1, 1).ok());
    ASSERT_TRUE(w->AddScalar("a", 2, 2).ok());
    EXPECT_EQ(ReadAll(path).size(), 1u);
    ASSERT_TRUE(w->AddScalar("a", 3, 3).ok());
    EXPECT_EQ(ReadAll(path).size(), 4u);
    ASSERT_TRUE(w->AddScalar("a", 4, 4).ok());
    EXPECT_EQ(ReadAll(path).size(), 4u);
  }
  EXPECT_EQ(ReadAll(path).size(), 5u);

  std::unique_ptr<SummaryWriter> eager =
      *SummaryWriter::Create(FreshDir("eager"), {.flush_interval = absl::ZeroDuration()});
  ASSERT_TRUE(eager->AddScalar("b", 1, 1).ok());
  EXPECT_EQ(ReadAll(eager->path()).size(), 2u);
}

TEST(SummaryWriterTest, WritersInOneDirectoryGetDistinctFiles) {
  const std::string dir = FreshDir("two");
  std::unique_ptr<SummaryWriter> a = *SummaryWriter::Create(dir);
  std::unique_ptr<SummaryWriter> b = *SummaryWriter::Create(dir);
  std::unique_ptr<SummaryWriter> c = *SummaryWriter::Create(dir, {.filename_suffix = ".eval"});
  EXPECT_NE(a->path(), b->path());
  EXPECT_THAT(c->path(), ::testing::EndsWith(".eval"));
}

TEST(SummaryWriterTest, ConcurrentScalarsAllArrive) {
  const std::string dir = FreshDir("threads");
  std::unique_ptr<SummaryWriter> w = *SummaryWriter::Create(dir, {.max_buffered_events = 7});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) EXPECT_TRUE(w->AddScalar(absl::StrCat("t", t), static_cast<float>(i), i).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(w->Flush().ok());
  const std::vector<tessera::tb::Event> events = ReadAll(w->path());
  ASSERT_EQ(events.size(), 201u);
  std::set<std::pair<std::string, int64_t>> seen;
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_EQ(events[i].summary().value(0).simple_value(), static_cast<float>(events[i].step()));
    seen.insert({events[i].summary().value(0).tag(), events[i].step()});
  }
  EXPECT_EQ(seen.size(), 200u);
}

uint64_t LE(const std::string& s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

TEST(TfRecordTest, FramingMatchesTheFormula) {
  std::string out;
  AppendTfRecord("hello", &out);
  AppendTfRecord("", &out);
  ASSERT_EQ(out.size(), 16u + 5u + 16u);
  auto masked = [](absl::string_view s) {
    const uint32_t crc = crc32c::Value(s);
    return static_cast<uint32_t>(((crc >> 15) | (crc << 17)) + 0xa282ead8u);
  };
  EXPECT_EQ(LE(out, 0, 8), 5u);
  EXPECT_EQ(LE(out, 8, 4), masked(absl::string_view(out.data(), 8)));
  EXPECT_EQ(out.substr(12, 5), "hello");
  EXPECT_EQ(LE(out, 17, 4), masked("hello"));
  EXPECT_EQ(LE(out, 21, 8), 0u);
  absl::StatusOr<std::vector<std::string>> records = ParseTfRecords(out, "mem");
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(*records, (std::vector<std::string>{"hello", ""}));
}

TEST(TfRecordTest, RejectsEveryBitFlipAndTruncation) {
  std::string good;
  AppendTfRecord("first record", &good);
  AppendTfRecord("second", &good);
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      absl::StatusOr<std::vector<std::string>> r = ParseTfRecords(bad, "f");
      ASSERT_FALSE(r.ok()) << "bit " << bit << " of byte " << byte;
      EXPECT_THAT(r.status().message(), HasSubstr("TFRecord file 'f': record "));
    }
  }
  for (size_t n = 1; n < good.size(); ++n) {
    if (n == 16 + 12) continue;  // a whole first record
    EXPECT_FALSE(ParseTfRecords(good.substr(0, n), "f").ok()) << n;
  }
  EXPECT_EQ(ParseTfRecords(good.substr(0, 28), "f")->size(), 1u);
}

// The Event wire format, encoded by hand from TensorFlow's field numbers: wall_time = 1
// (double), step = 2 (varint), summary = 5 { value = 1 { tag = 1, simple_value = 2 } }.
TEST(EventProtoTest, WireFormatMatchesTensorFlowFieldNumbers) {
  tessera::tb::Event e;
  e.set_wall_time(1.5);
  e.set_step(3);
  tessera::tb::Summary::Value* v = e.mutable_summary()->add_value();
  v->set_tag("a");
  v->set_simple_value(2.0f);
  const std::string expected(
      "\x09\x00\x00\x00\x00\x00\x00\xf8\x3f"  // wall_time 1.5
      "\x10\x03"                              // step 3
      "\x2a\x0a"                              // summary, 10 bytes
      "\x0a\x08"                              // value, 8 bytes
      "\x0a\x01\x61"                          // tag "a"
      "\x15\x00\x00\x00\x40",                 // simple_value 2.0f
      23);
  EXPECT_EQ(e.SerializeAsString(), expected);
  tessera::tb::Event version;
  version.set_file_version("brain.Event:2");
  EXPECT_EQ(version.SerializeAsString(), std::string("\x1a\x0d") + "brain.Event:2");
}

// TensorBoard's EventAccumulator reads our file, when the package is installed.
TEST(SummaryWriterTest, TensorBoardReadsTheFile) {
  if (std::system("python3 -c 'import tensorboard' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "the tensorboard Python package is not installed";
  }
  const std::string dir = FreshDir("tensorboard");
  {
    std::unique_ptr<SummaryWriter> w = *SummaryWriter::Create(dir);
    for (int step = 0; step < 5; ++step) ASSERT_TRUE(w->AddScalar("loss", 0.5f * step, step).ok());
  }
  const std::string script = absl::StrCat(
      "python3 -c \"from tensorboard.backend.event_processing.event_accumulator import EventAccumulator as E\n"
      "a = E('",
      dir, "'); a.Reload()\nprint(' '.join('%d:%g' % (s.step, s.value) for s in a.Scalars('loss')))\"");
  FILE* pipe = ::popen(script.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[256];
  while (std::fgets(buf, sizeof(buf), pipe) != nullptr) output += buf;
  ASSERT_EQ(::pclose(pipe), 0) << output;
  EXPECT_EQ(output, "0:0 1:0.5 2:1 3:1.5 4:2\n");
}

}  // namespace
}  // namespace tsr
