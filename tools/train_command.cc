// `tessera train [MODEL]`: trains a model on an MNIST-format dataset (Fashion-MNIST by
// default) with runtime/trainer: optimizer and schedule flags, checkpoints with
// resume, TensorBoard scalars, a progress bar, evaluation on the test split after
// every epoch, and optionally the trained model saved as a GraphDef for `tessera run`.
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "examples/models.h"
#include "graph/builder/nn.h"
#include "graph/builder/optimizers.h"
#include "graph/proto/graph_def_io.h"
#include "partitioner/device_mesh.h"
#include "runtime/data/idx_reader.h"
#include "runtime/launch/world_info.h"
#include "runtime/trainer/trainer.h"
#include "strategies/distributed_step.h"
#include "strategies/strategy_factory.h"
#include "tools/command.h"
#include "tools/strategy_flags.h"
#include "tools/world_collectives.h"
#ifdef TESSERA_HAS_COMPILER
#include "compiler/pipeline/compiled_step.h"
#endif

namespace tsr::cli {

namespace {

constexpr absl::string_view kDefaultData = "/usr/share/datasets/fashion-mnist";

constexpr absl::string_view kUsage =
    "tessera train [mlp|lenet|MODEL.pb] [--data DIR] [--epochs N] [--batch-size N] [--optimizer NAME]\n"
    "                     [--lr X] [--schedule S] [--momentum X] [--weight-decay X] [--clip-norm X]\n"
    "                     [--dropout X] [--seed N] [--threads N] [--max-steps N] [--checkpoint-dir DIR]\n"
    "                     [--checkpoint-every N] [--keep N] [--no-resume] [--logdir DIR] [--save FILE]\n"
    "                     [--interpret] [--dump-ir DIR] [--strategy mirrored|tensor-parallel|zero1|zero2|zero3\n"
    "                      --devices N | multi-worker | hybrid --mesh data=D,model=M |\n"
    "                      pipeline --stages S --microbatches M [--pipeline-schedule 1f1b|gpipe|interleaved]\n"
    "                      [--chunks V] [--cut-points OPS]]";
constexpr absl::string_view kDescription =
    "Trains a classifier on an MNIST-format dataset: DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte\n"
    "(.gz or not; default DIR: Fashion-MNIST from Debian's dataset-fashion-mnist). The model is\n"
    "an example (mlp: 784-256-256-10, the default; lenet: LeNet-5) or a GraphDef with inputs\n"
    "'image' and 'labels' and outputs 'logits' and 'loss'. Prints a progress bar per epoch and\n"
    "the test loss and accuracy after each. Schedules: constant, step:STEPS:GAMMA,\n"
    "exponential:STEPS:GAMMA, cosine[:MIN_RATIO], each optionally +warmup:STEPS. Optimizers:\n"
    "sgd, momentum, nesterov, adam, adamw, rmsprop. With --checkpoint-dir, saves checkpoints\n"
    "(every epoch, or every N steps) and resumes from the latest one unless --no-resume.\n"
    "With --logdir, writes TensorBoard event files. With --save, writes the trained model\n"
    "(variables frozen to their values) as a GraphDef. The training step (forward, backward\n"
    "and optimizer as one program) and the evaluation are compiled to machine code, once per\n"
    "batch size; --interpret runs them op by op with the interpreter instead (the oracle).\n"
    "--strategy mirrored --devices N trains data-parallel on N virtual CPU devices of this\n"
    "process (each with --threads threads, default 1): every step is partitioned so that each\n"
    "device runs the model on its share of the batch and the gradients are all-reduced before\n"
    "the update, which gives the weights one device would reach on the same global batch.\n"
    "--strategy multi-worker does the same across the processes of a job started by\n"
    "`tessera launch --nproc N [--backend gloo|mpi] -- tessera train ...` (or mpirun): each\n"
    "process reads the same batches and trains on its share; rank 0 prints, logs, saves and\n"
    "writes the checkpoints, which every rank resumes from.\n"
    "--strategy tensor-parallel --devices N splits the dense layers' weights over N virtual\n"
    "devices (Megatron: alternately by columns and rows); --strategy hybrid --mesh\n"
    "data=D,model=M does both on a D x M mesh. --strategy zero1|zero2|zero3 --devices N is\n"
    "data parallelism with ZeRO's sharded state: each device keeps and updates 1/N of the\n"
    "optimizer slots (zero1), also gets only its 1/N of the reduced gradients (zero2), and\n"
    "also holds only 1/N of the weights, gathered where they are used (zero3); in a job of\n"
    "several processes (`tessera launch --nproc N -- tessera train ... --strategy zero2`, or\n"
    "mpirun) the devices are the processes, as with multi-worker (so are tensor-parallel's,\n"
    "and hybrid's when the job has D x M processes: each row and column of the mesh gets a\n"
    "communicator of its own), and rank 0 gathers the split state from every rank to write\n"
    "the checkpoints.\n"
    "--strategy pipeline --stages S --microbatches M cuts the model into S consecutive stages\n"
    "(balanced by FLOPs, or at --cut-points), each on its own virtual device, and runs each\n"
    "batch as M micro-batches through them in the 1F1B or GPipe schedule, accumulating the\n"
    "gradients before one update; its summary line gives the schedule's bubble fraction.\n"
    "--pipeline-schedule interleaved --chunks V cuts the model into S x V stages instead, stage\n"
    "c on device c mod S, and runs 1F1B over them (Megatron-LM's interleaved schedule): each\n"
    "micro-batch visits every device V times, the bubble shrinks V-fold.\n"
    "In a job of several processes each process runs one stage (--stages defaults to the\n"
    "process count) and sends its activations and gradients to the next and previous\n"
    "stage's process; with fewer stages than processes (4 processes, --stages 2) the\n"
    "pipeline is replicated data-parallel: each replica takes its share of the batch and\n"
    "the replicas of a stage all-reduce its gradients.";

absl::Status ParseDouble(absl::string_view flag, const std::string& text, double* out) {
  if (!absl::SimpleAtod(text, out) || !std::isfinite(*out)) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " takes a number, not '", text, "'"));
  }
  return absl::OkStatus();
}

// The forward model with every Variable given its trained value and the training
// flag (nn::TrainingFlag), if any, replaced by the constant false: an inference graph.
absl::StatusOr<Graph> Freeze(const Graph& model, Session& session) {
  Graph frozen = model.Clone();
  const Node* flag = frozen.FindNode(nn::kTrainingFlagName);
  if (flag != nullptr && flag->op() == "Placeholder") {
    const int flag_id = flag->id();
    AttrMap attrs;
    attrs["value"] = AttrValue::FromTensor(Tensor::Scalar(false));
    absl::StatusOr<Node*> inference =
        frozen.AddNodeAndInfer(absl::StrCat(nn::kTrainingFlagName, "/frozen"), "Constant", {}, std::move(attrs));
    if (!inference.ok()) return inference.status();
    const int inference_id = (*inference)->id();
    for (Node* node : frozen.nodes()) {
      for (int i = 0; i < node->num_inputs(); ++i) {
        if (node->inputs()[i].node == flag_id) node->set_input(i, TensorRef{inference_id, 0});
      }
    }
  }
  for (Node* node : frozen.nodes()) {
    if (node->op() != "Variable") continue;
    absl::StatusOr<Tensor> value = session.GetVariable(node->name());
    if (!value.ok()) return value.status();
    node->set_attr("value", AttrValue::FromTensor(*value));
  }
  return frozen;
}

}  // namespace

int RunTrain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  FlagParser flags;
  std::string data = std::string(kDefaultData), optimizer = "momentum", lr_text = "0.05", schedule = "constant";
  std::string momentum_text = "0.9", weight_decay_text = "0", clip_text, checkpoint_dir, logdir, save_path;
  std::string dropout_text = "0";
  int64_t epochs = 10, batch_size = 64, seed = 0, threads = 0, max_steps = 0, checkpoint_every = 0, keep = 3;
  bool no_resume = false, quiet = false;
  flags.AddString("data", 'd', "DIR", &data, "the dataset folder (default: Fashion-MNIST)");
  flags.AddInt("epochs", 'e', "N", &epochs, "passes over the training set (default 10)");
  flags.AddInt("batch-size", 'b', "N", &batch_size, "examples per step (default 64)");
  flags.AddString("optimizer", '\0', "NAME", &optimizer, "sgd, momentum (default), nesterov, adam, adamw, rmsprop");
  flags.AddString("lr", '\0', "X", &lr_text, "base learning rate (default 0.05)");
  flags.AddString("schedule", '\0', "S", &schedule, "learning-rate schedule (default constant)");
  flags.AddString("momentum", '\0', "X", &momentum_text, "momentum of momentum/nesterov (default 0.9)");
  flags.AddString("weight-decay", '\0', "X", &weight_decay_text, "L2 penalty; decoupled for adamw (default 0)");
  flags.AddString("dropout", '\0', "X", &dropout_text,
                  "dropout rate after the hidden dense layers of mlp/lenet (default 0: none)");
  flags.AddString("clip-norm", '\0', "X", &clip_text, "clip gradients to this global norm (default: no clipping)");
  flags.AddInt("seed", '\0', "N", &seed, "seed of initialization and data order (default 0)");
  flags.AddInt("threads", '\0', "N", &threads, "worker threads (default 0: one per core)");
  flags.AddInt("max-steps", '\0', "N", &max_steps, "stop after N steps in total (default 0: all epochs)");
  flags.AddString("checkpoint-dir", '\0', "DIR", &checkpoint_dir, "save checkpoints here and resume from them");
  flags.AddInt("checkpoint-every", '\0', "N", &checkpoint_every, "also checkpoint every N steps (default: per epoch)");
  flags.AddInt("keep", '\0', "N", &keep, "checkpoints to keep (default 3)");
  flags.AddBool("no-resume", '\0', &no_resume, "start fresh even if --checkpoint-dir has a checkpoint");
  flags.AddString("logdir", '\0', "DIR", &logdir, "write TensorBoard event files here");
  flags.AddString("save", 'o', "FILE", &save_path, "write the trained model as a GraphDef (.pb or .pbtxt)");
  flags.AddBool("quiet", 'q', &quiet, "no progress output, only the final result");
  bool interpret = false;
  std::string dump_ir;
  flags.AddBool("interpret", '\0', &interpret, "run the steps op by op with the interpreter instead of compiling them");
  flags.AddString("dump-ir", '\0', "DIR", &dump_ir, "write the IR of every compiled step after every pass here");
  std::string strategy_name = "one-device";
  int64_t devices = 1;
  flags.AddString(
      "strategy", '\0', "NAME", &strategy_name,
      "one-device (default), mirrored, multi-worker, tensor-parallel, zero1, zero2, zero3, hybrid or pipeline");
  std::string mesh_text;
  flags.AddString("mesh", '\0', "AXES", &mesh_text, "the mesh of --strategy hybrid: data=D,model=M");
  flags.AddInt("devices", '\0', "N", &devices,
               "devices of --strategy mirrored, tensor-parallel, zero1/2/3 (default 1)");
  PipelineFlags pipeline;
  AddPipelineFlags(flags, &pipeline);
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(args);
  if (!positionals.ok()) return UsageError(err, "train", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (positionals->size() > 1) {
    return UsageError(err, "train", absl::StrCat("expected at most one MODEL, got ", positionals->size()));
  }
  if (epochs < 1) return UsageError(err, "train", "--epochs must be at least 1");
  if (batch_size < 1) return UsageError(err, "train", "--batch-size must be at least 1");
  if (threads < 0 || threads > 4096) return UsageError(err, "train", "--threads must be in [0, 4096]");
  if (seed < 0 || max_steps < 0 || checkpoint_every < 0) {
    return UsageError(err, "train", "--seed, --max-steps and --checkpoint-every must not be negative");
  }
  double dropout = 0;
  TrainerOptions options;
  options.epochs = epochs;
  options.batch_size = batch_size;
  options.max_steps = max_steps;
  options.schedule = schedule;
  options.seed = static_cast<uint64_t>(seed);
  options.num_threads = static_cast<int>(threads);
  options.checkpoint_dir = checkpoint_dir;
  options.checkpoint_every_steps = checkpoint_every;
  options.keep_checkpoints = static_cast<int>(keep);
  options.resume = !no_resume;
  options.logdir = logdir;
  options.progress = !quiet;
  options.out = &err;
  if (interpret && !dump_ir.empty())
    return UsageError(err, "train", "--dump-ir needs the compiled steps, not --interpret");
  if (strategy_name == "multi-worker" && devices != 1) {
    return UsageError(err, "train", "--devices does not apply to multi-worker: the job's process count does");
  }
  // The job's rank and size (rank 0 of 1 outside a launcher).
  absl::StatusOr<WorldInfo> world = WorldInfo{};
  // The strategies whose one-axis mesh may span the job's processes.
  const bool spannable = strategy_name == "zero1" || strategy_name == "zero2" || strategy_name == "zero3" ||
                         strategy_name == "tensor-parallel" || strategy_name == "hybrid" || strategy_name == "pipeline";
  if (strategy_name == "multi-worker" || spannable) {
    world = WorldInfoFromEnvironment();
    if (!world.ok()) return Failure(err, "train", world.status());
  }
  // One device per process of the job: multi-worker always; ZeRO and tensor parallelism
  // when the job has several processes.
  const bool across_processes = strategy_name == "multi-worker" || (spannable && world->world_size > 1);
  if (strategy_name == "hybrid" && across_processes) {
    // One device of the mesh per process: the mesh must have as many as the job.
    absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse(mesh_text);
    if (mesh.ok() && mesh->num_devices() != world->world_size) {
      return UsageError(err, "train",
                        absl::StrCat("--mesh ", mesh_text, " has ", mesh->num_devices(), " devices but the job has ",
                                     world->world_size,
                                     " processes: in a job of several processes each runs one "
                                     "device of the mesh"));
    }
  }
  // Strategies whose devices are not --devices: hybrid's --mesh, pipeline's --stages.
  const bool own_devices = strategy_name == "hybrid" || strategy_name == "pipeline";
  if (spannable && !own_devices && across_processes && devices != 1) {
    return UsageError(err, "train",
                      absl::StrCat("--devices does not apply to ", strategy_name,
                                   " in a job of several processes: the job's process count does"));
  }
  if (across_processes) {
    if (world->rank != 0) {
      // One voice: rank 0 prints, writes TensorBoard logs and checkpoints and saves the
      // model. Every rank resumes from the checkpoints: the same weights (replicated), and
      // the first step's all-reduce keeps rank 0 from writing before all have read.
      options.progress = false;
      options.logdir.clear();
      options.write_checkpoints = false;
      save_path.clear();
      quiet = true;
    }
  }
  StrategySpec strategy_spec{
      .name = strategy_name,
      .devices = across_processes && !own_devices ? world->world_size : static_cast<int>(devices),
      .mesh = mesh_text};
  ApplyPipelineFlags(pipeline, strategy_spec);
  if (strategy_name == "pipeline" && across_processes) {
    // One stage per process: --stages defaults to the job's process count; fewer stages
    // make data-parallel replicas of the pipeline.
    if (strategy_spec.stages == 0) strategy_spec.stages = world->world_size;
    if (strategy_spec.stages < 1 || world->world_size % strategy_spec.stages != 0) {
      return UsageError(
          err, "train",
          absl::StrCat("--stages ", strategy_spec.stages, " does not divide the job's ", world->world_size,
                       " processes: in a job of several processes each runs one "
                       "stage of one of (processes / stages) data replicas"));
    }
    strategy_spec.data = world->world_size / strategy_spec.stages;
  }
  absl::StatusOr<std::shared_ptr<const Strategy>> strategy = MakeStrategy(strategy_spec);
  if (!strategy.ok()) return UsageError(err, "train", strategy.status().message());
#ifdef TESSERA_HAS_COMPILER
  if (!interpret) options.step_compiler = CompiledStepCompiler({.dump_ir_dir = dump_ir});
#else
  if (!dump_ir.empty()) return UsageError(err, "train", "--dump-ir: this build has no compiler (MLIR not found)");
#endif
  if (*strategy != nullptr) {
    // Each device's program is compiled (or interpreted) as a one-device step would be.
    PartitionedStepOptions partitioned{.device_compiler = options.step_compiler,
                                       .threads_per_device = threads > 0 ? static_cast<int>(threads) : 1};
    if (across_processes) {
      // This process runs its own device, over the job's communicator.
      absl::StatusOr<std::shared_ptr<Collectives>> joined = JoinWorld(*world, CollectivesOptions{});
      if (!joined.ok()) return Failure(err, "train", joined.status());
      partitioned.process_device = world->rank;
      partitioned.process_groups = JoinedMeshGroups(*world, *std::move(joined), CollectivesOptions{});
    }
    options.step_compiler = PartitionedStepCompiler(*std::move(strategy), std::move(partitioned));
    // A step the strategy cannot partition is an error, not one device's training.
    options.fallback_to_interpreter = false;
  }
  absl::StatusOr<OptimizerKind> kind = ParseOptimizerKind(optimizer);
  if (!kind.ok()) return UsageError(err, "train", kind.status().message());
  options.optimizer.kind = *kind;
  for (absl::Status s : {ParseDouble("lr", lr_text, &options.learning_rate),
                         ParseDouble("momentum", momentum_text, &options.optimizer.momentum),
                         ParseDouble("weight-decay", weight_decay_text, &options.optimizer.weight_decay),
                         ParseDouble("dropout", dropout_text, &dropout)}) {
    if (!s.ok()) return UsageError(err, "train", s.message());
  }
  if (!(dropout >= 0 && dropout < 1)) return UsageError(err, "train", "--dropout must be in [0, 1)");
  if (!clip_text.empty()) {
    double clip = 0;
    if (absl::Status s = ParseDouble("clip-norm", clip_text, &clip); !s.ok())
      return UsageError(err, "train", s.message());
    options.optimizer.clip_global_norm = clip;
  }

  const std::string model_name = positionals->empty() ? "mlp" : (*positionals)[0];
  if (dropout > 0 && model_name != "mlp" && model_name != "lenet") {
    return UsageError(err, "train", "--dropout applies to the example models (mlp, lenet) only");
  }
  absl::StatusOr<Graph> model = model_name == "mlp" ? examples::BuildMlp({.dropout = dropout, .training_head = true})
                                : model_name == "lenet"
                                    ? examples::BuildLeNet({.dropout = dropout, .training_head = true})
                                    : LoadGraph(model_name);
  if (!model.ok()) return Failure(err, "train", model.status());
  // The image layout the model takes: [N, 784] (flat) or [N, 1, 28, 28].
  bool flatten = false;
  for (const SignatureEntry& e : model->inputs()) {
    if (e.name == "image") flatten = model->TypeOf(e.ref) != nullptr && model->TypeOf(e.ref)->shape.rank() == 2;
  }
  const auto load_start = std::chrono::steady_clock::now();
  absl::StatusOr<Dataset> train_set = LoadMnist(data, MnistSplit::kTrain, {.flatten = flatten});
  if (!train_set.ok()) return Failure(err, "train", train_set.status());
  absl::StatusOr<Dataset> test_set = LoadMnist(data, MnistSplit::kTest, {.flatten = flatten});
  if (!test_set.ok()) return Failure(err, "train", test_set.status());
  if (!quiet) {
    err << absl::StrFormat("loaded %d training and %d test examples from %s in %.1f s\n", train_set->num_examples(),
                           test_set->num_examples(), data,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count());
  }
  // What --save writes: for the examples, the inference model (no labels/loss, dropout
  // off), whose variables have the same names as the trained ones.
  absl::StatusOr<Graph> forward = model_name == "mlp"     ? examples::BuildMlp({.dropout = dropout})
                                  : model_name == "lenet" ? examples::BuildLeNet({.dropout = dropout})
                                                          : model->Clone();
  if (!forward.ok()) return Failure(err, "train", forward.status());
  absl::StatusOr<std::unique_ptr<Trainer>> trainer = Trainer::Create(*std::move(model), options);
  if (!trainer.ok()) return Failure(err, "train", trainer.status());
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<TrainResult> result = (*trainer)->Fit(std::make_shared<const Dataset>(*std::move(train_set)),
                                                       std::make_shared<const Dataset>(*std::move(test_set)));
  if (!result.ok()) return Failure(err, "train", result.status());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!save_path.empty()) {
    absl::StatusOr<Graph> frozen = Freeze(*forward, (*trainer)->session());
    if (!frozen.ok()) return Failure(err, "train", frozen.status());
    if (absl::Status s = SaveGraph(*frozen, save_path); !s.ok()) return Failure(err, "train", s);
  }
  if (result->epochs.empty()) {
    out << "nothing to do: the checkpoint is already at step " << result->steps << "\n";
    return kExitOk;
  }
  if (world->rank != 0) return kExitOk;
  const EpochResult& last = result->epochs.back();
  out << absl::StrFormat("%s on %s: test accuracy %.4f, test loss %.4f after %d epochs (%d steps, %.1f s, %s ex/s)\n",
                         model_name, data, last.eval.accuracy, last.eval.loss, last.epoch + 1, result->steps, seconds,
                         absl::StrFormat("%.0f", last.examples_per_second));
  return kExitOk;
}

}  // namespace tsr::cli
