// The `actorrec` command line: parses subcommands and hands off to the
// runtime. Every failure ends with a message that says what to fix, and an
// exit code from actors/common/exit_codes.hpp.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <new>
#include <unistd.h>
#include <string>

#include "actors/common/exit_codes.hpp"
#include "actors/node/actor_plan.hpp"
#include "actors/node/agent.hpp"
#include "actors/node/member_select.hpp"
#include "actors/node/runtime.hpp"
#include "actors/run/pipeline_run.hpp"
#include "base/atomic_file.hpp"
#include "base/logging.hpp"
#include "base/version.hpp"
#include "configs/config.hpp"
#include "gpu/backend_select.hpp"
#include "models/model.hpp"
#include "tools/bench_command.hpp"
#include "tools/config_command.hpp"
#include "tools/config_flags.hpp"
#include "tools/data_command.hpp"
#include "tools/plan_command.hpp"
#include "tools/inspect_command.hpp"
#include "tools/predict_command.hpp"
#include "tools/train_command.hpp"

namespace {

using namespace actorrec;

constexpr const char* kExitCodes =
    "Exit codes: 0 done; 1 error (see the log); 2 bad command line or config; 3 a cluster member was lost;\n"
    "4 refused by the coordinator (secret, config or build differ); 5 members missing after\n"
    "cluster.join_timeout_ms; 7 out of memory (a size in the config or data\n"
    "needs more memory than the process could get); 8 training diverged (a non-finite loss; no checkpoint of\n"
    "its parameters is written, the last good one is kept).";

bool StartLogging(const std::string& process, const std::string& flag_level, const config::Config& cfg) {
  const std::string level = flag_level.empty() ? cfg.run.log_level : flag_level;
  if (!InitLogging(process, level)) {
    std::cerr << "actorrec: --log-level " << level << " is not a level; use trace, debug, info, warn, error or off\n";
    return false;
  }
  return true;
}

int Train(const ConfigFlags& config_flags, const std::string& log_level, const TrainOptions& options) {
  config::Config cfg;
  if (!LoadConfigFlags(config_flags, "train", std::cerr, &cfg)) return kExitUsage;
  if (!StartLogging("train", log_level, cfg)) return kExitUsage;
  // The same choice RunParts makes for every trainer (gpu/backend_select.hpp).
  auto backend = gpu::ChooseBackend(cfg.training.backend, models::ResidencyOf(cfg.model.kind));
  if (!backend.ok()) {
    std::cerr << "actorrec train: " << cfg.path << ": " << backend.status().message() << "\n";
    return kExitUsage;
  }
  std::cout << "actorrec " << BuildVersion() << ": config " << cfg.path << DescribeOverrides(cfg) << " (digest "
            << cfg.digest << ")\n"
            << "model " << config::ModelKindName(cfg.model.kind) << ", mode " << config::ModeName(cfg.training.mode)
            << ", " << cfg.cluster.TotalTrainers() << " trainer(s), " << cfg.cluster.TotalShards()
            << " embedding shard(s)\n"
            << "backend: " << backend->Line() << "\n";
  // The actor pipeline (actors/run/pipeline_run.hpp) starts the control
  // plane with it: its own actors register with the supervisor. The
  // lockstep driver (--lockstep) has no role actors.
  return TrainConfig(cfg, options, std::cout, std::cerr);
}

// How `actorrec node` runs with cluster.max_restarts > 0 (actors/node/agent.hpp).
struct NodeRecovery {
  std::vector<std::string> args;  // the command line after the program, for the agent's worker
  bool worker = false;            // --worker: this process is an agent's worker
  bool recover = false;           // --recover: restarted by the agent, resume from the newest snapshot
  std::string snapshot_store;     // --snapshot-store DIR: the agent's in-memory store of this member's snapshots
  std::string takeover_file;      // --takeover-file FILE: a spare's worker names the member it takes over there
  std::string take_over;          // --take-over MEMBER: a spare's worker plays that member
};

// A spare's worker playing `member` (a member lost for good): the member's
// roles, name and keys, at the spare's own address and port.
Status PlayMember(config::Config* cfg, const std::string& spare, const std::string& member) {
  const config::Member* s = cfg->cluster.Find(spare);
  config::Member* m = nullptr;
  for (config::Member& c : cfg->cluster.members) {
    if (c.name == member) m = &c;
  }
  if (s == nullptr || m == nullptr || IsSpare(*m) || member == cfg->cluster.coordinator) {
    return Status::InvalidArgument("--take-over " + member + ": not a member that spare '" + spare +
                                   "' can take over in " + cfg->path);
  }
  m->address = s->address;
  m->port = s->port;
  return Status::Ok();
}

int Node(const ConfigFlags& config_flags, const std::string& member_flag, const std::string& role, int rank,
         const std::string& log_level, TrainOptions node_options, const NodeRecovery& recovery) {
  if (config_flags.path.empty()) {
    std::cerr << "actorrec node: --config FILE is required (the topology names every member)\n";
    return kExitUsage;
  }
  config::Config cfg;
  if (!LoadConfigFlags(config_flags, "node", std::cerr, &cfg)) return kExitUsage;
  auto member = SelectMember(cfg.cluster, member_flag, role, rank);
  if (!member.ok()) {
    std::cerr << "actorrec node: " << member.status().message() << "\n";
    return kExitUsage;
  }
  if (!StartLogging(*member, log_level, cfg)) return kExitUsage;
  const bool spare = IsSpare(*cfg.cluster.Find(*member));
  if (spare && recovery.worker && recovery.take_over.empty()) {
    // A spare waits for the roles of a member lost for good; its agent then
    // starts it again as that member.
    return RunSpare(cfg, *member, [&](const std::string& m) -> Status {
      if (Status st = WriteFileAtomically(recovery.takeover_file, m + "\n"); !st.ok()) return st;
      return Status::Ok();
    });
  }
  if (spare && recovery.worker) {
    if (Status st = PlayMember(&cfg, *member, recovery.take_over); !st.ok()) {
      std::cerr << "actorrec node: " << st.message() << "\n";
      return kExitUsage;
    }
    spdlog::info("spare '{}' plays member '{}' (at {})", *member, recovery.take_over,
                 cfg.cluster.Find(recovery.take_over)->address);
    member = recovery.take_over;
  }
  if (cfg.cluster.max_restarts > 0) {
    // Snapshots for recovery: with --checkpoint-dir, into it (a directory
    // every member sees); else in memory, each member's agent keeping its
    // worker's store and the keepers replicating it between members
    // (actors/run/snapshot_keeper.hpp).
    if (node_options.checkpoint_every == 0) node_options.checkpoint_every = static_cast<uint64_t>(cfg.cluster.snapshot_every);
    if (!recovery.worker) {
      AgentArgs agent{*member, recovery.args, cfg.cluster.max_restarts, cfg.cluster.restart_backoff_ms,
                      node_options.checkpoint_dir, ""};
      agent.worker_args.push_back("--worker");
      if (node_options.checkpoint_dir.empty()) {
        std::string why;
        agent.memory_store = MakeMemoryStore(*member, &why);
        if (agent.memory_store.empty()) {
          std::cerr << "actorrec node: no memory for the recovery snapshots: " << why
                    << "; give --checkpoint-dir DIR (a directory every member sees)\n";
          return kExitFailure;
        }
        agent.worker_args.insert(agent.worker_args.end(), {"--snapshot-store", agent.memory_store});
      }
      if (spare) {
        agent.takeover_file = (agent.memory_store.empty() ? std::filesystem::temp_directory_path().string()
                                                          : agent.memory_store) +
                              "/actorrec-takeover-" + std::to_string(::getpid());
        agent.worker_args.insert(agent.worker_args.end(), {"--takeover-file", agent.takeover_file});
      }
      return RunAgent(agent);
    }
    if (!recovery.snapshot_store.empty()) node_options.checkpoint_dir = recovery.snapshot_store;
  }
  // A restarted worker resumes from the newest snapshot, read once it is
  // admitted: by then every member of the failed run has stopped (the
  // coordinator's restarted worker read it at the same point), so all of
  // them load the same one. Without a snapshot yet, the run starts over.
  // Snapshots in memory: the coordinator reads its own store, the others
  // ask it which snapshot (MemberPipeline::Start).
  auto resume_dir = [&]() {
    if (recovery.recover && std::filesystem::exists(node_options.checkpoint_dir + "/LATEST")) {
      return node_options.checkpoint_dir;
    }
    return node_options.resume_dir;
  };
  MemberWork work;
  work.drive = [&](caf::actor_system& sys, const caf::actor& supervisor, const MemberWork::EndRun& end_run) {
    const trainer::ClusterSeat seat{&sys, supervisor, *member, recovery.snapshot_store};
    TrainOptions options = node_options;
    options.cluster = &seat;
    options.before_teardown = end_run;
    options.resume_dir = resume_dir();
    options.recovering = recovery.recover;
    if (!recovery.snapshot_store.empty()) {
      // A coordinator whose agent was lost too has an empty store: the
      // others' keepers say which snapshot it committed last.
      auto restored = trainer::RestoreCoordinatorSnapshot(cfg, seat);
      if (!restored.ok()) {
        std::cerr << "actorrec node: cannot restore the coordinator's snapshot: " << restored.status().message()
                  << "\n";
        return ExitCodeOf(restored.status());
      }
      if (!restored->empty()) {
        options.resume_dir = *restored;
        options.recovering = true;
      }
    }
    return TrainConfig(cfg, options, std::cout, std::cerr);
  };
  work.host = [&](caf::actor_system& sys, const caf::actor& supervisor) -> Result<std::shared_ptr<void>> {
    auto hosted = trainer::MemberPipeline::Start(cfg, {&sys, supervisor, *member, recovery.snapshot_store},
                                                 recovery.snapshot_store.empty() ? resume_dir()
                                                                                 : node_options.resume_dir);
    if (!hosted.ok()) return hosted.status();
    return std::shared_ptr<void>(std::move(hosted).value());
  };
  auto backend = gpu::ChooseBackend(cfg.training.backend, models::ResidencyOf(cfg.model.kind));
  if (!backend.ok()) {
    std::cerr << "actorrec node: " << cfg.path << ": " << backend.status().message() << "\n";
    return kExitUsage;
  }
  work.gemm_kernels = backend->name;
  work.recovering = recovery.recover;
  return RunMember(cfg, *member, work);
}

// Runs a command's work so that nothing it throws ends the process with an
// abort: memory running out (a config or data size the machine cannot hold,
// beyond what the config checks could foresee) is kExitNoMemory with the keys
// to lower, anything else kExitFailure with its message.
int Guarded(const char* command, const std::function<int()>& work) {
  try {
    return work();
  } catch (const std::bad_alloc&) {
    std::cerr << "\nactorrec " << command
              << ": out of memory: the run needed more memory than this process could get (std::bad_alloc). Lower "
                 "the sizes that take memory in proportion (training.cache_rows, training.batch_size, "
                 "training.lookahead, the model's embedding_dim and MLP widths, trainers per member), or raise the "
                 "process's memory limit. Nothing was saved.\n";
    return kExitNoMemory;
  } catch (const std::exception& e) {
    std::cerr << "\nactorrec " << command << ": internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "actorrec trains recommendation models (DLRM, Wide&Deep, DeepFM, Deep&Cross) whose embedding\n"
      "tables exceed accelerator memory: an oracle looks ahead at future batches, caches and prefetches\n"
      "embedding rows, and synchronizes only what later batches need, bit-identical to plain training.",
      "actorrec"};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("actorrec ") + BuildVersion());
  std::string log_level;
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (default: run.log_level)");

  ConfigFlags config_flags;
  auto* train = app.add_subcommand("train", "Train a model. Without --config, runs the embedded configs/local.toml "
                                            "(all roles in this process).");
  train->add_option("--config,-c", config_flags.path, "TOML config file (see configs/)")->check(CLI::ExistingFile);
  AddSetFlag(train, &config_flags);
  TrainOptions train_options;
  train->add_flag("--lockstep", train_options.lockstep,
                  "run batch by batch from one thread instead of the actor pipeline: the reference the pipeline "
                  "equals bit for bit, without overlap");
  train->add_option("--checkpoint-dir", train_options.checkpoint_dir,
                    "save checkpoints here (dense state in safetensors, shards in the checksummed shard format; "
                    "docs/checkpoint_format.md): at the end, and every --checkpoint-every batches");
  train->add_option("--checkpoint-every", train_options.checkpoint_every,
                    "batches between checkpoints (0: only at the end); needs --checkpoint-dir");
  train->add_option("--resume", train_options.resume_dir,
                    "continue the run saved in this checkpoint directory (same config: model, optimizers, seed, "
                    "batch size and shard count must match); the result equals a run that never stopped")
      ->check(CLI::ExistingDirectory);
  train->add_option("--inspect", train_options.inspect_address,
                    "serve the live inspector (web page, JSON, /metrics) at HOST:PORT, port 0 a free one, or 'off' "
                    "(default: run.inspect_address, 127.0.0.1 and a free port); the address is printed at start");
  train->add_flag("--roofline", train_options.roofline,
                  "with the inspector: measure the GEMM roofline before the run starts, as train_bench does (the "
                  "model's MLP shapes; about 10 s for the default config on a 2-core VM), so that it shows the GEMM "
                  "rate against it");

  std::string member, role;
  int rank = 0;
  auto* node = app.add_subcommand("node",
                                  "Run one member of a cluster described by a topology file. The coordinator "
                                  "listens on its address and port; the other members connect to it, prove the "
                                  "cluster secret and start their roles.");
  node->add_option("--config,-c", config_flags.path, "topology and run config (TOML)")->required();
  AddSetFlag(node, &config_flags);
  node->add_option("--member,-m", member, "this process's member name in the topology");
  node->add_option("--role,-r", role,
                   "sampler, oracle, embedding, trainer or all: with --member, checks that the member runs it; "
                   "without, picks the --rank-th member that runs it");
  node->add_option("--rank", rank, "which of the members running --role (0-based, topology order)");
  TrainOptions node_options;
  node->add_option("--checkpoint-dir", node_options.checkpoint_dir,
                   "as for train; read by the coordinator, whose embedding shards write their files into it on "
                   "their own hosts: give a directory every member sees (a shared filesystem)");
  node->add_option("--checkpoint-every", node_options.checkpoint_every, "as for train (the coordinator)");
  node->add_option("--inspect", node_options.inspect_address,
                   "the coordinator: serve the live inspector of the whole cluster at HOST:PORT, or 'off' (default: "
                   "run.inspect_address); ignored by the other members");
  node->add_option("--resume", node_options.resume_dir,
                   "continue the cluster run saved in this checkpoint directory: give every member the same one "
                   "(each loads its shards and dense replicas from it; the coordinator checks)")
      ->check(CLI::ExistingDirectory);
  NodeRecovery recovery;
  node->add_flag("--worker", recovery.worker, "(internal) run as the worker of this member's agent")->group("");
  node->add_flag("--recover", recovery.recover, "(internal) restarted by the agent: resume from the newest snapshot")
      ->group("");
  node->add_option("--snapshot-store", recovery.snapshot_store, "(internal) the agent's in-memory snapshot store")
      ->group("");
  node->add_option("--takeover-file", recovery.takeover_file, "(internal) where a spare's worker names its member")
      ->group("");
  node->add_option("--take-over", recovery.take_over, "(internal) a spare's worker plays this member")->group("");
  for (int i = 1; i < argc; ++i) recovery.args.emplace_back(argv[i]);

  auto run_data = AddDataCommands(app);
  auto run_config = AddConfigCommand(app);
  auto run_plan = AddPlanCommand(app);
  auto run_predict = AddPredictCommand(app);
  auto run_bench = AddBenchCommand(app);
  auto run_inspect = AddInspectCommand(app);
  auto run_report = AddReportCommand(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (train->parsed()) return Guarded("train", [&] { return Train(config_flags, log_level, train_options); });
  if (node->parsed()) {
    // RunMember leaves its actor system running (runtime.hpp): end here,
    // without the static destructors its threads could still touch.
    const int code = Node(config_flags, member, role, rank, log_level, node_options, recovery);
    std::cout.flush();
    std::cerr.flush();
    spdlog::shutdown();
    std::_Exit(code);
  }
  if (app.got_subcommand("config")) return Guarded("config", run_config);
  if (app.got_subcommand("data")) {
    if (!InitLogging("data", log_level.empty() ? "info" : log_level)) return kExitUsage;
    return Guarded("data", run_data);
  }
  if (app.got_subcommand("plan")) return Guarded("plan", run_plan);
  if (app.got_subcommand("predict")) return Guarded("predict", run_predict);
  if (app.got_subcommand("bench")) return Guarded("bench", run_bench);
  if (app.got_subcommand("inspect")) return Guarded("inspect", run_inspect);
  if (app.got_subcommand("report")) return Guarded("report", run_report);
  return kExitUsage;
}
