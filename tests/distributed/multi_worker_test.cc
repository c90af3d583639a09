// Multi-worker data parallelism with real processes: the test starts itself as the
// workers of a job through the launcher (runtime/launch/launcher.h) — over Gloo (TCP on
// loopback, rendezvous through the launcher's store) and over MPI (mpirun) — and each
// worker trains its device of the data-parallel partition (mirrored, or ZeRO stage 1, 2
// or 3: optimizer slots, gradients and weights sharded over the processes; or of the
// tensor-parallel one, or of the hybrid data x tensor one on a 2 x 2 mesh; or runs its stage of a
// pipeline) for 20 steps on its share of the global
// batches, beside one device training on the whole batches in the same process; a worker whose losses or final
// Variables (its shares of the split ones) differ from one device's by more than 1e-5 relative fails the job.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "examples/models.h"
#include "graph/status_macros.h"
#include "gtest/gtest.h"
#include "partitioner/spmd_partitioner.h"
#include "runtime/collectives/collective_groups.h"
#include "runtime/launch/launcher.h"
#include "runtime/launch/world_info.h"
#include "runtime/session.h"
#include "strategies/data_parallel.h"
#include "strategies/pipeline.h"
#include "strategies/tensor_parallel.h"
#include "strategies/zero.h"
#include "tests/partitioner/training_fixtures.h"
#include "tools/world_collectives.h"

namespace tsr {
namespace {

constexpr char kWorkerFlag[] = "--multi-worker-test-rank";
constexpr int kSteps = 20;
constexpr uint64_t kSeed = 9;

struct Model {
  TrainingGraph training;
  Shape batch_shape;
};

Model BuildModel(const std::string& name) {
  if (name == "lenet") {
    absl::StatusOr<Graph> g = examples::BuildLeNet({.training_head = true});
    return {Training(*std::move(g), OptimizerKind::kAdam), Shape{12, 1, 28, 28}};
  }
  absl::StatusOr<Graph> g = examples::BuildMlp({.hidden_units = {48, 24}, .training_head = true});
  // 45 rows: uneven shares over 2 (22 + 23) and 4 workers.
  return {Training(*std::move(g), OptimizerKind::kMomentum), Shape{45, 784}};
}

// The strategy a job's workers partition by: "mirrored", "zero1", "zero2", "zero3",
// "tensor-parallel" or "hybrid" (data=2 x model=world_size/2).
std::unique_ptr<Strategy> MakeStrategy(const std::string& name, int world_size) {
  if (name.size() == 5 && name.rfind("zero", 0) == 0) return std::make_unique<ZeroStrategy>(name[4] - '0', world_size);
  if (name == "tensor-parallel") return std::make_unique<TensorParallelStrategy>(world_size);
  if (name == "hybrid") return std::make_unique<HybridStrategy>(2, world_size / 2);
  return std::make_unique<MultiWorkerMirroredStrategy>(world_size);
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "worker: %s\n", what.c_str());
  return 1;
}

// What every worker compares with: the model, its batches and learning rate, and one
// device (a Session of the whole training graph) to train on them.
struct Reference {
  Model model;
  std::vector<TrainingBatch> batches;
  Tensor rate;
  std::unique_ptr<Session> one;
};

absl::StatusOr<std::unique_ptr<Reference>> MakeReference(const std::string& model_name) {
  auto ref = std::make_unique<Reference>();
  ref->model = BuildModel(model_name);
  ref->batches = RandomBatches(ref->model.batch_shape, kSteps, 77);
  ref->rate = Tensor::Scalar<float>(model_name == "lenet" ? 0.002f : 0.05f);
  TSR_ASSIGN_OR_RETURN(ref->one, Session::Create(ref->model.training.graph.Clone(), {.num_threads = 1, .seed = kSeed}));
  return ref;
}

// A worker's differences from one device, each printed; Finish prints the line the test
// looks for and returns the worker's exit code.
class Differences {
 public:
  explicit Differences(const WorldInfo& world) : world_(world) {}
  void Loss(int step, double have, double want) {
    if (!(std::abs(have - want) > 1e-5 * std::abs(want))) return;
    std::fprintf(stderr, "worker %d step %d: loss %.9g but one device %.9g\n", world_.rank, step, have, want);
    ++count_;
  }
  void Logits(int step, double error) {
    if (!(error > 1e-5)) return;
    std::fprintf(stderr, "worker %d step %d: logits differ by %.3g relative\n", world_.rank, step, error);
    ++count_;
  }
  void Variable(const std::string& name, double error) {
    if (!(error > 1e-5)) return;
    std::fprintf(stderr, "worker %d: variable %s differs by %.3g relative\n", world_.rank, name.c_str(), error);
    ++count_;
  }
  int Finish(const std::string& model_name, const std::string& strategy_name, size_t variables) const {
    std::printf("rank %d of %d (%s, %s, %s): %d steps, %zu variables, %d differences\n", world_.rank, world_.world_size,
                world_.backend.c_str(), model_name.c_str(), strategy_name.c_str(), kSteps, variables, count_);
    return count_ == 0 ? 0 : 1;
  }

 private:
  const WorldInfo& world_;
  int count_ = 0;
};

// One worker of a pipeline over the job's processes ("pipeline-1f1b" or "pipeline-gpipe":
// one stage per process, 4 micro-batches; "pipeline-interleaved": two stages per process,
// stage c on rank c mod world_size; "pipeline-data": 1F1B, two data-parallel replicas
// of the pipeline, each on its half of the batch): every rank runs the step on the whole batch
// and gets the loss and logits (broadcast by the last stage); at the end every rank reads
// every Variable (broadcast by the stage holding it). Returns 0 when all equal one
// device's.
int RunPipelineWorker(const WorldInfo& world, std::shared_ptr<Collectives> joined, const std::string& model_name,
                      const std::string& strategy_name) {
  absl::StatusOr<std::unique_ptr<Reference>> ref = MakeReference(model_name);
  if (!ref.ok()) return Fail(ref.status().ToString());
  const TrainingGraph& t = (*ref)->model.training;
  Session& one = *(*ref)->one;

  // "pipeline-data": two data replicas of a pipeline of world_size / 2 stages.
  const int data = strategy_name == "pipeline-data" ? 2 : 1;
  const bool interleaved = strategy_name == "pipeline-interleaved";
  const PipelinePlan plan{.stages = world.world_size / data,
                          .microbatches = 4,
                          .schedule = strategy_name == "pipeline-gpipe" ? PipelineScheduleKind::kGPipe
                                      : interleaved                     ? PipelineScheduleKind::kInterleaved
                                                                        : PipelineScheduleKind::kOneForwardOneBackward,
                          .data = data,
                          .chunks = interleaved ? 2 : 1};
  std::vector<MeshAxisSize> mesh = {{"pipe", plan.stages}};
  if (data > 1) mesh.push_back({"data", data});
  absl::StatusOr<std::shared_ptr<CollectiveGroupTable>> groups =
      cli::JoinMeshGroups(world, std::move(joined), mesh, {.timeout = absl::Seconds(60)});
  if (!groups.ok()) return Fail(groups.status().ToString());
  StepProgramSpec spec;
  spec.graph = &t.graph;
  spec.fetches = {"loss", "logits"};
  spec.targets = t.updates;
  spec.batch = (*ref)->model.batch_shape.dim(0);
  spec.threads = 1;
  spec.seed = kSeed;
  for (const std::string& name : t.variables) {
    absl::StatusOr<Tensor> value = one.GetVariable(name);
    if (!value.ok()) return Fail(value.status().ToString());
    spec.variable_values[name] = *value;
  }
  absl::StatusOr<std::unique_ptr<StepProgram>> mine = MakePipelineStep(
      plan, spec, {.timeout = absl::Seconds(60), .pipe_rank = world.rank / data, .process_groups = *groups});
  if (!mine.ok()) return Fail(mine.status().ToString());

  Differences differences(world);
  for (int s = 0; s < kSteps; ++s) {
    const TrainingBatch& b = (*ref)->batches[s];
    const Batch feeds = {{"image", b.image}, {"labels", b.labels}, {"learning_rate", (*ref)->rate}};
    absl::StatusOr<std::vector<Tensor>> expected = one.Run(feeds, {"loss", "logits"}, RunOptions{.targets = t.updates});
    absl::StatusOr<std::vector<Tensor>> got = (*mine)->Run(feeds, s, nullptr);
    if (!expected.ok()) return Fail(expected.status().ToString());
    if (!got.ok()) return Fail(absl::StrCat("step ", s, ": ", got.status().ToString()));
    differences.Loss(s, (*got)[0].GetAsDouble(0), (*expected)[0].GetAsDouble(0));
    differences.Logits(s, RelativeError((*got)[1], (*expected)[1]));
  }
  for (const std::string& name : t.variables) {
    absl::StatusOr<Tensor> want = one.GetVariable(name);
    absl::StatusOr<Tensor> have = (*mine)->ReadVariable(name);
    if (!want.ok() || !have.ok()) return Fail("reading " + name);
    differences.Variable(name, RelativeError(*have, *want));
  }
  return differences.Finish(model_name, strategy_name, t.variables.size());
}

// One worker: returns 0 when its device trains as one device does, 1 otherwise.
int RunWorker(const std::string& model_name, const std::string& strategy_name) {
  absl::StatusOr<WorldInfo> world = WorldInfoFromEnvironment();
  if (!world.ok()) return Fail(world.status().ToString());
  absl::StatusOr<std::shared_ptr<Collectives>> joined = cli::JoinWorld(*world, {.timeout = absl::Seconds(60)});
  if (!joined.ok()) return Fail(joined.status().ToString());
  if (strategy_name.rfind("pipeline", 0) == 0)
    return RunPipelineWorker(*world, *std::move(joined), model_name, strategy_name);

  absl::StatusOr<std::unique_ptr<Reference>> ref = MakeReference(model_name);
  if (!ref.ok()) return Fail("setting up: " + ref.status().ToString());
  const TrainingGraph& t = (*ref)->model.training;
  Session& one = *(*ref)->one;
  const Tensor& rate = (*ref)->rate;
  absl::StatusOr<StrategyPlan> plan = MakeStrategy(strategy_name, world->world_size)->Plan(t.graph);
  if (!plan.ok()) return Fail("setting up: " + plan.status().ToString());
  // This worker's device's communicators: the job's over the whole mesh, new ones over
  // the groups of a two-axis mesh's rows and columns.
  std::vector<MeshAxisSize> axes;
  for (const MeshAxis& axis : plan->mesh.axes()) axes.push_back({axis.name, axis.size});
  absl::StatusOr<std::shared_ptr<CollectiveGroupTable>> groups =
      cli::JoinMeshGroups(*world, *joined, axes, {.timeout = absl::Seconds(60)});
  if (!groups.ok()) return Fail(groups.status().ToString());
  absl::StatusOr<PartitionedProgram> program = PartitionGraph(
      t.graph, plan->mesh, plan->annotations,
      {.batch = (*ref)->model.batch_shape.dim(0), .targets = t.updates, .reduce_scatter = plan->reduce_scatter});
  if (!program.ok()) return Fail(program.status().ToString());
  absl::StatusOr<std::unique_ptr<Session>> mine = Session::Create(
      std::move(program->devices[world->rank]), {.num_threads = 1, .seed = kSeed, .collective_groups = *groups});
  if (!mine.ok()) return Fail(mine.status().ToString());

  Differences differences(*world);
  for (int s = 0; s < kSteps; ++s) {
    const TrainingBatch& b = (*ref)->batches[s];
    absl::StatusOr<std::vector<Tensor>> expected =
        one.Run({{"image", b.image}, {"labels", b.labels}, {"learning_rate", rate}}, {"loss"},
                RunOptions{.targets = t.updates});
    absl::StatusOr<Tensor> image = program->ShareOf("image", b.image, world->rank);
    absl::StatusOr<Tensor> labels = program->ShareOf("labels", b.labels, world->rank);
    if (!expected.ok() || !image.ok() || !labels.ok()) return Fail("step " + std::to_string(s) + ": shares");
    absl::StatusOr<std::vector<Tensor>> got = (*mine)->Run(
        {{"image", *image}, {"labels", *labels}, {"learning_rate", rate}}, {"loss"}, RunOptions{.targets = t.updates});
    if (!got.ok()) return Fail(absl::StrCat("step ", s, ": ", got.status().ToString()));
    differences.Loss(s, (*got)[0].GetAsDouble(0), (*expected)[0].GetAsDouble(0));
  }
  for (const std::string& name : t.variables) {
    absl::StatusOr<Tensor> whole = one.GetVariable(name);
    if (!whole.ok()) return Fail("reading " + name);
    // A split Variable: this worker's share of one device's value.
    absl::StatusOr<Tensor> want =
        program->variable_shardings.contains(name) ? program->VariableShare(name, *whole, world->rank) : *whole;
    absl::StatusOr<Tensor> have = (*mine)->GetVariable(name);
    if (!want.ok() || !have.ok()) return Fail("reading " + name);
    differences.Variable(name, RelativeError(*have, *want));
  }
  return differences.Finish(model_name, strategy_name, t.variables.size());
}

std::string SelfPath() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

void ExpectJobMatchesOneDevice(int nproc, const std::string& backend, const std::string& model,
                               const std::string& strategy = "mirrored") {
  std::ostringstream out, err, log;
  LaunchOptions options;
  options.nproc = nproc;
  options.backend = backend;
  options.argv = {SelfPath(), kWorkerFlag, model, strategy};
  options.worker_stdout = &out;
  options.worker_stderr = &err;
  absl::StatusOr<int> code = Launch(options, log);
  const std::string describe = absl::StrCat("log:\n", log.str(), "stdout:\n", out.str(), "stderr:\n", err.str());
  ASSERT_TRUE(code.ok()) << code.status() << "\n" << describe;
  EXPECT_EQ(*code, 0) << describe;
  for (int r = 0; r < nproc; ++r) {
    EXPECT_NE(out.str().find(absl::StrCat("rank ", r, " of ", nproc, " (", backend, ", ", model, ", ", strategy)),
              std::string::npos)
        << describe;
  }
}

bool HaveMpirun() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

TEST(MultiWorkerTest, MlpOverTwoGlooWorkersTrainsAsOneDevice) { ExpectJobMatchesOneDevice(2, "gloo", "mlp"); }

TEST(MultiWorkerTest, MlpOverFourGlooWorkersTrainsAsOneDevice) { ExpectJobMatchesOneDevice(4, "gloo", "mlp"); }

TEST(MultiWorkerTest, LeNetOverTwoGlooWorkersTrainsAsOneDevice) { ExpectJobMatchesOneDevice(2, "gloo", "lenet"); }

// ZeRO over processes: ReduceScatter of the gradients and AllGather of the updated
// shares (stages 2, 3) and of the weights where they are used (stage 3) between workers.
TEST(MultiWorkerTest, ZeroOverTwoGlooWorkersTrainsAsOneDevice) {
  for (const char* stage : {"zero1", "zero2", "zero3"}) {
    SCOPED_TRACE(stage);
    ExpectJobMatchesOneDevice(2, "gloo", "mlp", stage);
  }
}

// Megatron tensor parallelism over processes: the dense layers' weights split by columns
// and rows between the workers, every worker on the whole batch.
TEST(MultiWorkerTest, MlpTensorParallelOverTwoGlooWorkersTrainsAsOneDevice) {
  ExpectJobMatchesOneDevice(2, "gloo", "mlp", "tensor-parallel");
}

// Data x tensor parallelism over processes: a 2 x 2 mesh of four workers, the batch split
// between the mesh's rows and the dense layers' weights between its columns. Each worker
// all-reduces gradients with its column's other row and the layers' partial sums with
// its row's other column: communicators over two of the four processes.
TEST(MultiWorkerTest, MlpHybridOverFourGlooWorkersTrainsAsOneDevice) {
  ExpectJobMatchesOneDevice(4, "gloo", "mlp", "hybrid");
}

TEST(MultiWorkerTest, MlpHybridOverFourMpiWorkersTrainsAsOneDevice) {
  if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed";
  ExpectJobMatchesOneDevice(4, "mpi", "mlp", "hybrid");
}

// Pipeline parallelism over processes: one stage per worker, activations and gradients
// sent between them per micro-batch (Send/Recv), in the 1F1B and GPipe schedules; two
// stages per worker, each micro-batch crossing between them three times, in the
// interleaved one.
TEST(MultiWorkerTest, MlpPipelineOverTwoGlooWorkersTrainsAsOneDevice) {
  for (const char* schedule : {"pipeline-1f1b", "pipeline-gpipe", "pipeline-interleaved"}) {
    SCOPED_TRACE(schedule);
    ExpectJobMatchesOneDevice(2, "gloo", "mlp", schedule);
  }
}

TEST(MultiWorkerTest, MlpPipelineOverThreeGlooWorkersTrainsAsOneDevice) {
  ExpectJobMatchesOneDevice(3, "gloo", "mlp", "pipeline-1f1b");
}

// Pipeline x data parallelism: 2 stages x 2 replicas over 4 workers; each replica's stages
// trade activations and gradients, each stage's replicas all-reduce its gradients.
TEST(MultiWorkerTest, MlpPipelineTimesDataOverFourGlooWorkersTrainsAsOneDevice) {
  ExpectJobMatchesOneDevice(4, "gloo", "mlp", "pipeline-data");
}

TEST(MultiWorkerTest, LeNetPipelineTimesDataOverFourMpiWorkersTrainsAsOneDevice) {
  if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed";
  ExpectJobMatchesOneDevice(4, "mpi", "lenet", "pipeline-data");
}

TEST(MultiWorkerTest, LeNetPipelineOverTwoMpiWorkersTrainsAsOneDevice) {
  if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed";
  ExpectJobMatchesOneDevice(2, "mpi", "lenet", "pipeline-1f1b");
}

TEST(MultiWorkerTest, LeNetInterleavedPipelineOverThreeMpiWorkersTrainsAsOneDevice) {
  if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed";
  ExpectJobMatchesOneDevice(3, "mpi", "lenet", "pipeline-interleaved");
}

TEST(MultiWorkerTest, LeNetZero2OverTwoMpiWorkersTrainsAsOneDevice) {
  if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed";
  ExpectJobMatchesOneDevice(2, "mpi", "lenet", "zero2");
}

TEST(MultiWorkerTest, MlpOverTwoMpiWorkersTrainsAsOneDevice) {
  if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed";
  ExpectJobMatchesOneDevice(2, "mpi", "mlp");
}

TEST(MultiWorkerTest, LeNetOverTwoMpiWorkersTrainsAsOneDevice) {
  if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed";
  ExpectJobMatchesOneDevice(2, "mpi", "lenet");
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == tsr::kWorkerFlag) return tsr::RunWorker(argv[2], argv[3]);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
