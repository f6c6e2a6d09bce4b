#include "actors/run/checkpoint.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <signal.h>
#include <sstream>
#include <unistd.h>

#include <cerrno>

#include "base/atomic_file.hpp"
#include "base/digest.hpp"
#include "base/safetensors.hpp"
#include "data/sample_values.hpp"

namespace actorrec::trainer {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "actorrec-checkpoint-2";
// Version 1 had no checksum over its metadata (the data position, the
// config identity): a flipped bit there resumed silently.
constexpr const char* kFormatUnchecked = "actorrec-checkpoint-1";
constexpr const char* kChecksumKey = "checksum.xxh3";
constexpr int kKeep = 2;

// XXH3 of every metadata entry but the checksum itself (key order), then of
// every tensor's name, shape and bytes (name order): safetensors has no
// checksum of its own, and neither a flipped bit in a weight nor one in the
// data position may load silently.
std::string Checksum(const std::map<std::string, std::string>& meta, std::vector<const NamedTensor*> tensors) {
  uint64_t digest = 0;
  for (const auto& [key, value] : meta) {
    if (key == kChecksumKey) continue;
    digest = Digest64(key, digest);
    digest = Digest64(value, digest);
  }
  std::sort(tensors.begin(), tensors.end(), [](const NamedTensor* a, const NamedTensor* b) { return a->name < b->name; });
  for (const NamedTensor* t : tensors) {
    digest = Digest64(t->name, digest);
    digest = Digest64(std::string_view(reinterpret_cast<const char*>(t->shape.data()), t->shape.size() * sizeof(uint64_t)),
                      digest);
    digest = Digest64(std::string_view(reinterpret_cast<const char*>(t->values.data()), t->values.size() * sizeof(float)),
                      digest);
  }
  return std::to_string(digest);
}

std::string ShardFile(uint32_t s, uint32_t S) {
  return "shard-" + std::to_string(s) + "-of-" + std::to_string(S) + ".ckpt";
}

std::string Joined(const std::vector<uint64_t>& values) {
  std::string text;
  for (const uint64_t v : values) text.append(text.empty() ? "" : ",").append(std::to_string(v));
  return text;
}

// The config values a resumed run must share with the saved one, by key.
std::map<std::string, std::string> Identity(const RunParts& parts) {
  const config::Config& c = parts.cfg;
  return {
      {"model.kind", config::ModelKindName(c.model.kind)},
      {"model.embedding_dim", std::to_string(parts.spec.embedding_dim)},
      {"optimizer.dense", std::to_string(static_cast<int>(c.optimizer.dense))},
      {"optimizer.sparse", std::to_string(static_cast<int>(c.optimizer.sparse))},
      {"run.seed", std::to_string(c.run.seed)},
      {"training.batch_size", std::to_string(c.training.batch_size)},
      {"embedding shards", std::to_string(parts.S())},
      {"model.dense_features", std::to_string(parts.spec.dense_features)},
      {"tables.rows", Joined(parts.table_rows)},
      {"tables.dims", Joined(std::vector<uint64_t>(parts.table_rows.size(), parts.spec.embedding_dim))},
  };
}

// This host's name ("" when it has none): the part of a temporary
// directory's name that says whose process ids it carries.
std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  std::string host(name);
  std::replace(host.begin(), host.end(), '/', '_');
  return host;
}

std::string TempName(const std::string& name) {
  return name + ".tmp-" + HostName() + "-" + std::to_string(::getpid());
}

// Removes the temporary directories (batch-<k>.tmp-<host>-<pid>, or
// batch-<k>.tmp-<pid> from older builds) that a writer on this host left
// when it died before renaming them: their process no longer exists. A live
// writer's, this process's and another host's are kept. Best effort.
void RemoveStaleTemporaries(const fs::path& dir) {
  std::error_code ec;
  const std::string host = HostName();
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string n = entry.path().filename().string();
    const size_t tmp = n.find(".tmp-");
    if (n.rfind("batch-", 0) != 0 || tmp == std::string::npos) continue;
    const std::string owner = n.substr(tmp + 5);
    const size_t dash = owner.rfind('-');
    const std::string pid_text = dash == std::string::npos ? owner : owner.substr(dash + 1);
    if (dash != std::string::npos && owner.substr(0, dash) != host) continue;
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) {
      continue;
    }
    const auto pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(entry.path());
  }
  for (const fs::path& p : stale) fs::remove_all(p, ec);
}

Status SyncDirectory(const fs::path& dir) {
  std::FILE* f = std::fopen(dir.c_str(), "r");
  if (!f) return Status::IoError("cannot open directory " + dir.string() + " to sync it");
  const int rc = ::fsync(fileno(f));
  std::fclose(f);
  return rc == 0 ? Status::Ok() : Status::IoError("cannot sync directory " + dir.string());
}

uint64_t ParseNumber(const std::map<std::string, std::string>& meta, const std::string& key, bool* ok) {
  auto it = meta.find(key);
  if (it == meta.end()) {
    *ok = false;
    return 0;
  }
  try {
    return std::stoull(it->second);
  } catch (...) {
    *ok = false;
    return 0;
  }
}

}  // namespace

std::string ShardCheckpointFile(uint32_t s, uint32_t S) { return ShardFile(s, S); }

Status WriteDenseCheckpoint(const RunParts& parts, const std::string& path, const RunPosition& position) {
  const std::span<const float> dense = parts.trainers[0]->model().params();
  if (data::FirstNonFinite(dense.data(), dense.size()) >= 0) {
    return Status::InvalidArgument("the dense parameters after batch " + std::to_string(position.batches) +
                                   " are not all finite (training diverged): no checkpoint written");
  }
  TrainerCore& trainer = *parts.trainers[0];
  std::vector<NamedTensor> tensors;
  auto add = [&](const std::string& prefix, const models::TensorInfo& info, const float* buffer) {
    NamedTensor t;
    t.name = prefix + info.name;
    for (int64_t d : info.shape) t.shape.push_back(static_cast<uint64_t>(d));
    t.values.assign(buffer + info.offset, buffer + info.offset + info.size);
    tensors.push_back(std::move(t));
  };
  for (const auto& info : trainer.model().tensors()) add("model.", info, trainer.model().params().data());
  for (const auto& info : trainer.dense_optimizer().state_tensors()) {
    add("optimizer.", info, trainer.dense_optimizer().state().data());
  }
  std::map<std::string, std::string> meta = Identity(parts);
  meta["format"] = kFormat;
  meta["position.batches"] = std::to_string(position.batches);
  meta["position.epoch"] = std::to_string(position.next.epoch);
  meta["position.batch"] = std::to_string(position.next.batch);
  meta["config.digest"] = parts.cfg.digest;
  std::vector<const NamedTensor*> all;
  for (const NamedTensor& t : tensors) all.push_back(&t);
  meta[kChecksumKey] = Checksum(meta, all);
  return WriteSafetensors(path, tensors, meta);
}

Result<std::string> BeginCheckpoint(const std::string& dir_given, uint64_t batches) {
  std::error_code ec;
  // Absolute: the shard files' paths go to actors that may run elsewhere.
  const std::string dir = fs::absolute(dir_given, ec).string();
  if (ec) return Status::IoError("cannot resolve the checkpoint directory " + dir_given + ": " + ec.message());
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("cannot create the checkpoint directory " + dir + ": " + ec.message());
  RemoveStaleTemporaries(dir);
  const fs::path tmp = fs::path(dir) / TempName("batch-" + std::to_string(batches));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return Status::IoError("cannot create " + tmp.string() + ": " + ec.message());
  return tmp.string();
}

Status CommitCheckpoint(const std::string& dir_given, const std::string& tmp, uint64_t batches) {
  std::error_code ec;
  const std::string dir = fs::absolute(dir_given, ec).string();
  if (ec) return Status::IoError("cannot resolve the checkpoint directory " + dir_given + ": " + ec.message());
  const std::string name = "batch-" + std::to_string(batches);
  const fs::path final_dir = fs::path(dir) / name;
  if (Status st = SyncDirectory(tmp); !st.ok()) return st;
  fs::remove_all(final_dir, ec);
  fs::rename(tmp, final_dir, ec);
  if (ec) return Status::IoError("cannot rename " + tmp + " to " + final_dir.string() + ": " + ec.message());
  if (Status st = SyncDirectory(dir); !st.ok()) return st;
  if (Status st = WriteFileAtomically((fs::path(dir) / "LATEST").string(), name + "\n"); !st.ok()) return st;

  // Keep the newest kKeep complete checkpoints.
  std::vector<std::pair<uint64_t, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string n = entry.path().filename().string();
    if (n.rfind("batch-", 0) != 0 || n.find(".tmp-") != std::string::npos) continue;
    try {
      found.emplace_back(std::stoull(n.substr(6)), entry.path());
    } catch (...) {
    }
  }
  std::sort(found.rbegin(), found.rend());
  for (size_t i = kKeep; i < found.size(); ++i) fs::remove_all(found[i].second, ec);
  return Status::Ok();
}

Status SaveRunCheckpoint(const RunParts& parts, const std::string& dir, const RunPosition& position,
                         const ShardWriter& write_shard) {
  // A diverged run's parameters are no checkpoint: refused before anything
  // is written, so the last good checkpoint stays the latest.
  const std::span<const float> dense = parts.trainers[0]->model().params();
  if (data::FirstNonFinite(dense.data(), dense.size()) >= 0) {
    return Status::InvalidArgument("the dense parameters after batch " + std::to_string(position.batches) +
                                   " are not all finite (training diverged): no checkpoint written");
  }
  auto tmp = BeginCheckpoint(dir, position.batches);
  if (!tmp.ok()) return tmp.status();
  for (uint32_t s = 0; s < parts.S(); ++s) {
    const std::string path = (fs::path(*tmp) / ShardFile(s, parts.S())).string();
    const auto batch = static_cast<int64_t>(position.batches);
    Status st = write_shard ? write_shard(s, path, batch) : parts.shards[s]->SaveCheckpoint(path, batch);
    if (!st.ok()) return st;
  }
  if (Status st = WriteDenseCheckpoint(parts, (fs::path(*tmp) / "dense.safetensors").string(), position); !st.ok()) {
    return st;
  }
  return CommitCheckpoint(dir, *tmp, position.batches);
}

Result<RunPosition> LoadRunCheckpoint(const std::string& dir, RunParts* parts, const std::vector<bool>* shards) {
  RemoveStaleTemporaries(dir);
  const fs::path latest = fs::path(dir) / "LATEST";
  std::ifstream in(latest);
  std::string name;
  if (!in || !std::getline(in, name) || name.empty()) {
    return Status::NotFound("no checkpoint in " + dir + ": " + latest.string() +
                            " is missing or empty (was the directory written by actorrec train --checkpoint-dir?)");
  }
  if (name.rfind("batch-", 0) != 0 || name.size() == 6 || name.size() > 26 ||
      name.find_first_not_of("0123456789", 6) != std::string::npos) {
    return Status::Corruption(latest.string() + " names '" + name + "', not a checkpoint batch-<k> (the file is "
                              "damaged; write the name of a complete batch-<k> directory into it)");
  }
  const fs::path ckpt = fs::path(dir) / name;
  const std::string dense_path = (ckpt / "dense.safetensors").string();
  auto dense = ReadSafetensors(dense_path);
  if (!dense.ok()) return dense.status();
  const auto& meta = dense->metadata;
  if (auto it = meta.find("format"); it != meta.end() && it->second == kFormatUnchecked) {
    return Status::NotSupported(dense_path + " is of format " + kFormatUnchecked +
                                ", whose metadata has no checksum; this build reads " + kFormat +
                                " only (resume with the build that wrote it, or start over)");
  } else if (it == meta.end() || it->second != kFormat) {
    return Status::InvalidArgument(dense_path + " is not an actorrec checkpoint of format " + kFormat);
  }
  {
    std::vector<const NamedTensor*> all;
    for (const NamedTensor& t : dense->tensors) all.push_back(&t);
    auto it = meta.find(kChecksumKey);
    if (it == meta.end() || it->second != Checksum(meta, all)) {
      return Status::Corruption(dense_path + ": the checksum over the metadata and tensors does not match (the file "
                                "is damaged; resume from an older checkpoint or start over)");
    }
  }
  for (const auto& [key, value] : Identity(*parts)) {
    auto it = meta.find(key);
    if (it == meta.end() || it->second != value) {
      return Status::InvalidArgument(dense_path + " was made with " + key + " = " +
                                     (it == meta.end() ? "(unrecorded)" : it->second) + ", the config has " + value +
                                     "; use the config that made it");
    }
  }
  bool ok = true;
  RunPosition position;
  position.batches = ParseNumber(meta, "position.batches", &ok);
  position.next.epoch = static_cast<uint32_t>(ParseNumber(meta, "position.epoch", &ok));
  position.next.batch = ParseNumber(meta, "position.batch", &ok);
  if (!ok) return Status::Corruption(dense_path + ": the position metadata is missing or not a number");
  if (name != "batch-" + std::to_string(position.batches)) {
    return Status::Corruption(dense_path + " holds the state after " + std::to_string(position.batches) +
                              " batches, but its directory is " + name + " (the checkpoint was moved or damaged)");
  }

  auto load = [&](const std::string& prefix, const std::vector<models::TensorInfo>& infos, std::span<float> buffer) {
    for (const auto& info : infos) {
      const NamedTensor* t = dense->Find(prefix + info.name);
      if (!t) return Status::Corruption(dense_path + ": tensor " + prefix + info.name + " is missing");
      if (t->values.size() != info.size) {
        return Status::InvalidArgument(dense_path + ": tensor " + prefix + info.name + " has " +
                                       std::to_string(t->values.size()) + " values, the config's model needs " +
                                       std::to_string(info.size) + "; use the config that made it");
      }
      std::copy(t->values.begin(), t->values.end(), buffer.begin() + static_cast<std::ptrdiff_t>(info.offset));
    }
    return Status::Ok();
  };
  for (auto& trainer : parts->trainers) {
    if (Status st = load("model.", trainer->model().tensors(), trainer->model().params()); !st.ok()) return st;
    auto& opt = trainer->dense_optimizer();
    if (Status st = load("optimizer.", opt.state_tensors(), opt.state()); !st.ok()) return st;
  }
  const RunParts* self = parts;
  for (uint32_t s = 0; s < parts->S(); ++s) {
    if (shards != nullptr && (s >= shards->size() || !(*shards)[s])) continue;
    const std::string path = (ckpt / ShardFile(s, parts->S())).string();
    int64_t batch = 0;
    auto store = embedding::ShardStore::LoadCheckpoint(
        path, [self](uint32_t t, uint64_t r, float* out) { self->InitRow(t, r, out); }, &batch);
    if (!store.ok()) return store.status();
    if (batch != static_cast<int64_t>(position.batches) || store->shard() != s || store->shards() != parts->S() ||
        store->format().floats() != parts->row_optimizer->row_floats() || store->table_rows() != parts->table_rows) {
      return Status::Corruption(path + " does not belong to this checkpoint (batch " + std::to_string(batch) +
                                ", shard " + std::to_string(store->shard()) + " of " +
                                std::to_string(store->shards()) + ")");
    }
    *parts->shards[s] = std::move(store).value();
  }
  return position;
}

}  // namespace actorrec::trainer
