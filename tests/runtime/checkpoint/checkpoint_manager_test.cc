// CheckpointManager and Session restore: naming, listing, the latest pointer and
// retention; a session's variables (optimizer slots and global_step included) round
// trip; corrupted or mismatched checkpoints are rejected with every variable
// unchanged; and a writer SIGKILLed at random moments always leaves a complete latest
// checkpoint.
#include "runtime/checkpoint/checkpoint_manager.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/builder/ops.h"
#include "graph/builder/optimizers.h"
#include "gtest/gtest.h"
#include "platform/file.h"
#include "runtime/checkpoint/session_checkpoint.h"

namespace tsr {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string FreshDir(absl::string_view name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/ckpt_manager_test_", ::getpid(), "_", name);
  fs::remove_all(dir);
  return dir;
}

Checkpoint StepCheckpoint(int64_t step) {
  Checkpoint c;
  c.step = step;
  c.metadata = {{"epoch", absl::StrCat(step / 10)}, {"step", absl::StrCat(step)}};
  Tensor a(DType::kF32, Shape({256, 256}));
  for (int64_t i = 0; i < a.num_elements(); ++i) a.flat<float>()[i] = static_cast<float>(step) + 1e-3f * (i % 1000);
  Tensor b(DType::kI64, Shape({1000}));
  for (int64_t i = 0; i < 1000; ++i) b.flat<int64_t>()[i] = step * 7 + i;
  c.tensors = {{"a", a}, {"b", b}, {"global_step", Tensor::Scalar<int64_t>(step)}};
  return c;
}

// True when `c` is exactly what StepCheckpoint(c.step) wrote.
bool IsCompleteStep(const Checkpoint& c) {
  const Checkpoint expected = StepCheckpoint(c.step);
  if (c.metadata != expected.metadata || c.tensors.size() != expected.tensors.size()) return false;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    if (c.tensors[i].first != expected.tensors[i].first) return false;
    if (!c.tensors[i].second.BitwiseEquals(expected.tensors[i].second)) return false;
  }
  return true;
}

TEST(CheckpointManagerTest, SavesListsPointsAtLatestAndPrunes) {
  const std::string dir = FreshDir("prune");
  absl::StatusOr<CheckpointManager> m = CheckpointManager::Create(dir, {.max_to_keep = 3});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(absl::IsNotFound(m->LatestPath().status()));
  for (int64_t step : {1, 2, 5, 10, 12, 20}) {
    absl::StatusOr<std::string> path = m->Save(StepCheckpoint(step));
    ASSERT_TRUE(path.ok()) << path.status();
    EXPECT_EQ(*path, dir + "/ckpt-" + std::to_string(step));
    EXPECT_EQ(*m->LatestPath(), *path);
  }
  absl::StatusOr<std::vector<CheckpointFileInfo>> list = m->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].step, 10);
  EXPECT_EQ((*list)[1].step, 12);
  EXPECT_EQ((*list)[2].step, 20);
  EXPECT_EQ(*ReadFileBounded(dir + "/checkpoint", 100, "x"), "ckpt-20\n");
  absl::StatusOr<Checkpoint> latest = m->ReadLatest();
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->step, 20);
  EXPECT_TRUE(IsCompleteStep(*latest));

  // Unrelated files are neither listed nor removed.
  ASSERT_TRUE(WriteFileAtomically(dir + "/ckpt-7.bak", "x").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/notes", "x").ok());
  ASSERT_TRUE(m->Save(StepCheckpoint(21)).ok());
  EXPECT_EQ(m->List()->size(), 3u);
  EXPECT_TRUE(fs::exists(dir + "/ckpt-7.bak"));
  EXPECT_TRUE(fs::exists(dir + "/notes"));
}

TEST(CheckpointManagerTest, KeepsEverythingWhenMaxToKeepIsZero) {
  const std::string dir = FreshDir("keep_all");
  CheckpointManager m = *CheckpointManager::Create(dir, {.max_to_keep = 0});
  for (int64_t step = 0; step < 7; ++step) ASSERT_TRUE(m.Save(StepCheckpoint(step)).ok());
  EXPECT_EQ(m.List()->size(), 7u);
  EXPECT_FALSE(m.Save(StepCheckpoint(-1)).ok());
}

TEST(CheckpointManagerTest, LatestFallsBackToHighestStepWithoutPointer) {
  const std::string dir = FreshDir("pointer");
  CheckpointManager m = *CheckpointManager::Create(dir);
  ASSERT_TRUE(m.Save(StepCheckpoint(3)).ok());
  ASSERT_TRUE(m.Save(StepCheckpoint(9)).ok());
  fs::remove(dir + "/checkpoint");
  EXPECT_EQ(*m.LatestPath(), dir + "/ckpt-9");
  // A pointer naming a file that is gone (removed by hand) is ignored too.
  ASSERT_TRUE(WriteFileAtomically(dir + "/checkpoint", "ckpt-100\n").ok());
  EXPECT_EQ(*m.LatestPath(), dir + "/ckpt-9");
  // The pointer wins over a higher step (a save interrupted before the pointer moved).
  ASSERT_TRUE(WriteFileAtomically(dir + "/checkpoint", "ckpt-3\n").ok());
  EXPECT_EQ(*m.LatestPath(), dir + "/ckpt-3");
}

TEST(CheckpointManagerTest, RemovesTempFilesOfDeadWritersOnly) {
  const std::string dir = FreshDir("temps");
  CheckpointManager m = *CheckpointManager::Create(dir);
  // A child that exits at once leaves a pid that no longer exists.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  const std::string stale = absl::StrCat(dir, "/ckpt-4.tmp-", dead, "-0");
  const std::string ours = absl::StrCat(dir, "/ckpt-4.tmp-", ::getpid(), "-99");
  const std::string foreign = absl::StrCat(dir, "/other.tmp-", dead, "-0");
  for (const std::string& p : {stale, ours, foreign}) ASSERT_TRUE(WriteFileAtomically(p, "partial").ok());
  ASSERT_TRUE(m.Save(StepCheckpoint(5)).ok());
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(ours));
  EXPECT_TRUE(fs::exists(foreign));
}

// ---- Sessions ----------------------------------------------------------------------

struct ModelSpec {
  DType kernel_dtype = DType::kF32;
  Shape kernel_shape = Shape({3, 2});
  bool with_bias = true;
};

// A dense layer trained with momentum: variables dense/kernel, dense/bias, their
// "/momentum" slots and global_step.
std::unique_ptr<Session> MakeSession(const ModelSpec& spec, uint64_t seed) {
  GraphBuilder b;
  const int64_t in = spec.kernel_shape.dim(0), out = spec.kernel_shape.dim(1);
  const Output x = b.Input("x", spec.kernel_dtype, Shape({kBatchDim, in}));
  Output y = ops::MatMul(b, x, ops::Variable(b, "dense/kernel", spec.kernel_dtype, spec.kernel_shape));
  if (spec.with_bias) y = ops::Add(b, y, ops::Variable(b, "dense/bias", spec.kernel_dtype, Shape({out})));
  const Output loss = ops::ReduceSum(b, ops::Mul(b, y, y), std::vector<int64_t>{}, false, "loss");
  b.MarkOutput("loss", loss);
  Minimize(b, loss, TrainableVariables(b), {.kind = OptimizerKind::kMomentum});
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(*std::move(g), {.num_threads = 1, .seed = seed});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// Gives every variable distinct random contents so that nothing matches by accident.
void Randomize(Session& s, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const std::string& name : s.VariableNames()) {
    Tensor t = *s.GetVariable(name);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (t.dtype() == DType::kF32) t.flat<float>()[i] = std::uniform_real_distribution<float>(-1, 1)(rng);
      if (t.dtype() == DType::kF64) t.flat<double>()[i] = std::uniform_real_distribution<double>(-1, 1)(rng);
      if (t.dtype() == DType::kI64) t.flat<int64_t>()[i] = static_cast<int64_t>(rng() % 100000);
    }
    ASSERT_TRUE(s.SetVariable(name, t).ok()) << name;
  }
}

std::vector<Tensor> Snapshot(const Session& s) {
  std::vector<Tensor> out;
  for (const std::string& name : s.VariableNames()) out.push_back(*s.GetVariable(name));
  return out;
}

void ExpectUnchanged(const Session& s, const std::vector<Tensor>& before) {
  const std::vector<std::string> names = s.VariableNames();
  ASSERT_EQ(names.size(), before.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_TRUE(s.GetVariable(names[i])->BitwiseEquals(before[i])) << names[i] << " changed";
  }
}

TEST(SessionCheckpointTest, RoundTripsVariablesSlotsAndStep) {
  std::unique_ptr<Session> source = MakeSession({}, 1);
  ASSERT_NE(source, nullptr);
  Randomize(*source, 42);
  const std::vector<std::string> names = source->VariableNames();
  EXPECT_THAT(names, ::testing::IsSupersetOf({"dense/kernel", "dense/bias", "dense/kernel/momentum",
                                              "dense/bias/momentum", "global_step"}));
  const std::string dir = FreshDir("session");
  CheckpointManager m = *CheckpointManager::Create(dir);
  absl::StatusOr<std::string> path = m.Save(*source, 77, {{"epoch", "4"}, {"options", "lr=0.1"}});
  ASSERT_TRUE(path.ok()) << path.status();

  std::unique_ptr<Session> target = MakeSession({}, 2);
  ASSERT_NE(target, nullptr);
  EXPECT_FALSE(target->GetVariable("global_step")->BitwiseEquals(*source->GetVariable("global_step")));
  absl::StatusOr<RestoredCheckpoint> r = m.RestoreLatest(*target);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->path, *path);
  EXPECT_EQ(r->step, 77);
  EXPECT_EQ(r->metadata.at("epoch"), "4");
  EXPECT_EQ(r->metadata.at("options"), "lr=0.1");
  ExpectUnchanged(*target, Snapshot(*source));
}

// A restore that fails must leave the session exactly as it was.
void ExpectRejectedUnchanged(Session& s, CheckpointManager& m, const std::string& path, absl::string_view expect) {
  const std::vector<Tensor> before = Snapshot(s);
  absl::StatusOr<RestoredCheckpoint> r = m.Restore(s, path);
  ASSERT_FALSE(r.ok()) << "accepted: " << expect;
  EXPECT_THAT(r.status().message(), HasSubstr(path));
  EXPECT_THAT(r.status().message(), HasSubstr(expect));
  ExpectUnchanged(s, before);
}

TEST(SessionCheckpointTest, RejectsMismatchedVariablesWithNothingChanged) {
  const std::string dir = FreshDir("mismatch");
  CheckpointManager m = *CheckpointManager::Create(dir, {.max_to_keep = 0});
  std::unique_ptr<Session> f32 = MakeSession({}, 1);
  std::unique_ptr<Session> f64 = MakeSession({.kernel_dtype = DType::kF64}, 1);
  std::unique_ptr<Session> wide = MakeSession({.kernel_shape = Shape({3, 4})}, 1);
  std::unique_ptr<Session> no_bias = MakeSession({.with_bias = false}, 1);
  ASSERT_TRUE(f32 && f64 && wide && no_bias);
  Randomize(*f64, 5);
  Randomize(*wide, 6);
  Randomize(*no_bias, 7);
  Randomize(*f32, 8);
  const std::string f32_path = *m.Save(*f32, 1);

  ExpectRejectedUnchanged(*f64, m, f32_path, "tensor 'dense/");  // f32 tensors for f64 variables
  ExpectRejectedUnchanged(*f64, m, f32_path, "but the variable is f64");
  ExpectRejectedUnchanged(*wide, m, f32_path, "is f32[2] but the variable is f32[4]");  // dense/bias first
  ExpectRejectedUnchanged(*no_bias, m, f32_path, "has tensor 'dense/bias' but the session has no such variable");

  // A checkpoint without one of the session's variables.
  const std::string partial_path = *m.Save(*no_bias, 2);
  ExpectRejectedUnchanged(*f32, m, partial_path, "no tensor for variable 'dense/bias'");
}

TEST(SessionCheckpointTest, RejectsCorruptedFilesWithNothingChanged) {
  const std::string dir = FreshDir("corrupt");
  CheckpointManager m = *CheckpointManager::Create(dir, {.max_to_keep = 0});
  std::unique_ptr<Session> s = MakeSession({.kernel_shape = Shape({16, 8})}, 1);
  ASSERT_NE(s, nullptr);
  Randomize(*s, 3);
  const std::string path = *m.Save(*s, 1);
  const std::string good = *ReadFileBounded(path, 1 << 20, "x");
  Randomize(*s, 4);  // the session now differs from the file

  const uint32_t seed = 99;
  SCOPED_TRACE(seed);
  std::mt19937 rng(seed);
  // Bit flips in the header/manifest (first part) and in the data (last part).
  for (int i = 0; i < 40; ++i) {
    const size_t byte = i < 20 ? rng() % 200 : good.size() - 1 - rng() % 400;
    std::string bad = good;
    bad[byte] = static_cast<char>(bad[byte] ^ (1 << (rng() % 8)));
    SCOPED_TRACE(byte);
    ASSERT_TRUE(WriteFileAtomically(path, bad).ok());
    ExpectRejectedUnchanged(*s, m, path, "checkpoint '");
  }
  // Truncation every 13 bytes.
  for (size_t n = 0; n < good.size(); n += 13) {
    SCOPED_TRACE(n);
    ASSERT_TRUE(WriteFileAtomically(path, good.substr(0, n)).ok());
    ExpectRejectedUnchanged(*s, m, path, "checkpoint '");
  }
  // A flip inside dense/kernel's data names it.
  std::string bad = good;
  bad[good.size() - 600] ^= 1;
  ASSERT_TRUE(WriteFileAtomically(path, bad).ok());
  ExpectRejectedUnchanged(*s, m, path, "data checksum mismatch");
  // The intact file still restores.
  ASSERT_TRUE(WriteFileAtomically(path, good).ok());
  EXPECT_TRUE(m.Restore(*s, path).ok());
}

// ---- Crashes -----------------------------------------------------------------------

// In a forked child: saves StepCheckpoint(first), (first + 1), ... until killed.
[[noreturn]] void WriteForever(const std::string& dir, int64_t first) {
  absl::StatusOr<CheckpointManager> m = CheckpointManager::Create(dir, {.max_to_keep = 3});
  if (!m.ok()) _exit(2);
  for (int64_t step = first;; ++step) {
    if (!m->Save(StepCheckpoint(step)).ok()) _exit(3);
  }
}

TEST(CheckpointCrashTest, WriterKilledAtRandomMomentsLeavesACompleteLatest) {
  const std::string dir = FreshDir("kill");
  const uint32_t seed = 1130;
  SCOPED_TRACE(seed);
  std::mt19937 rng(seed);
  int64_t last_step = -1;
  int kills = 0, restores = 0;
  // One save takes tens of milliseconds here (data and folder fsyncs), so kills land
  // anywhere in the first few saves of each writer. On a slow machine (sanitizers, load)
  // the writer is given longer after each kill that saw no new checkpoint.
  int64_t extra_us = 0;
  while (kills < 60 && (kills < 16 || restores < 12 || last_step < 8)) {
    SCOPED_TRACE(kills);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) WriteForever(dir, last_step + 1);
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 150000 + extra_us));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    ++kills;
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "writer failed, status " << status;

    CheckpointManager m = *CheckpointManager::Create(dir, {.max_to_keep = 3});
    absl::StatusOr<Checkpoint> latest = m.ReadLatest();
    if (absl::IsNotFound(latest.status()) && last_step < 0) {  // killed before its first save
      extra_us += 50000;
      continue;
    }
    ASSERT_TRUE(latest.ok()) << latest.status();
    EXPECT_TRUE(IsCompleteStep(*latest)) << "step " << latest->step;
    EXPECT_GE(latest->step, last_step);
    extra_us = latest->step > last_step ? 0 : extra_us + 50000;
    // Every file that carries a checkpoint name is complete (kills before the pruning
    // may leave more than max_to_keep; the next save prunes them).
    absl::StatusOr<std::vector<CheckpointFileInfo>> all = m.List();
    ASSERT_TRUE(all.ok());
    for (const CheckpointFileInfo& info : *all) {
      absl::StatusOr<Checkpoint> c = ReadCheckpointFile(info.path);
      ASSERT_TRUE(c.ok()) << c.status();
      EXPECT_TRUE(IsCompleteStep(*c));
    }
    last_step = latest->step;
    ++restores;
  }
  std::printf("%d kills, %d restores, last step %lld\n", kills, restores, static_cast<long long>(last_step));
  EXPECT_GE(restores, 12);
  EXPECT_GE(last_step, 8) << "the writer made too little progress for the test to mean much";
  CheckpointManager m = *CheckpointManager::Create(dir, {.max_to_keep = 3});
  ASSERT_TRUE(m.Save(StepCheckpoint(last_step + 1)).ok());
  EXPECT_EQ(m.List()->size(), 3u);
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace tsr
