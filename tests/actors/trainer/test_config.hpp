// Small training configs for the trainer tests: four tiny tables, 64-sample
// batches (by default), two shards, every knob a test varies in one Case.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace actorrec::trainer {

struct Case {
  std::string model = "dlrm";
  // dataset.dense_features; 0 leaves DLRM without its bottom MLP.
  int dense_features = 3;
  std::string mode = "no_cache";
  int trainers = 2;
  int lookahead = 3;
  uint64_t cache_rows = 8192;
  std::string dense = "sgd";
  std::string sparse = "sgd";
  std::string pooling = "sum";
  uint64_t seed = 7;
  int batches = 10;  // per epoch
  int batch_size = 64;  // a multiple of trainers
  int epochs = 1;
  std::string skew = "zipf";
  // training.backend: the CPU unless a test asks for the GPU
  // (tests/gpu/gpu_device_test.cpp), so that these tests check the same
  // backend on every machine instead of `auto` picking a GPU where one is.
  std::string backend = "cpu";
  // Sessions of the generator (RecD): samples per session and each table's
  // probability of repeating the previous sample's bag,
  int session_length = 1;
  std::string session_dup;  // TOML value, e.g. "[0.9, 0.9, 0.0, 0.0]"; empty: none
  // and the probability of repeating its dense features.
  double session_dense_dup = 0.0;
  // [[dataset.dedup_groups]], one TOML array of table indices each, e.g.
  // "[0, 1]", optionally followed by more keys of the group ("[0, 1]\ndense = true").
  std::vector<std::string> dedup_groups;
  // More [model] lines, e.g. "wide_dense = true\n".
  std::string model_extra;
  // training.devices as TOML (e.g. "[0, 1]") and cluster.collective; empty:
  // absent (the GPU tests of several devices, tests/gpu/gpu_device_test.cpp).
  std::string devices, collective;
};

inline std::string ConfigText(const Case& c) {
  std::ostringstream t;
  t << "[run]\nname = \"eq\"\nseed = " << c.seed << "\n";
  t << "[model]\nkind = \"" << c.model << "\"\nembedding_dim = 4\npooling = \"" << c.pooling << "\"\n";
  if (c.model == "dlrm") {
    if (c.dense_features > 0) t << "bottom_mlp = [8, 4]\n";
    t << "top_mlp = [8, 1]\n";
  } else {
    t << "deep_mlp = [8, 1]\n";
    if (c.model == "dcn") t << "cross_layers = 2\n";
  }
  t << c.model_extra;
  t << "[optimizer]\ndense = \"" << c.dense << "\"\ndense_lr = 0.05\nsparse = \"" << c.sparse
    << "\"\nsparse_lr = 0.05\n";
  t << "[dataset]\nsource = \"generated\"\npreset = \"custom\"\ntable_rows = [50, 300, 2000, 7]\n"
       "dense_features = "
    << c.dense_features << "\nsamples = " << c.batch_size * c.batches << "\neval_samples = 128\n";
  t << "[dataset.generator]\nskew = \"" << c.skew << "\"\nbag = \"uniform\"\nbag_min = 0\nbag_max = 3\n";
  if (c.session_length != 1) t << "session_length = " << c.session_length << "\n";
  if (!c.session_dup.empty()) t << "session_dup = " << c.session_dup << "\n";
  if (c.session_dense_dup != 0.0) t << "session_dense_dup = " << c.session_dense_dup << "\n";
  for (const std::string& g : c.dedup_groups) t << "[[dataset.dedup_groups]]\ntables = " << g << "\n";
  t << "[training]\nmode = \"" << c.mode << "\"\nbatch_size = " << c.batch_size << "\nepochs = " << c.epochs << "\nlookahead = " << c.lookahead
    << "\ncache_rows = " << c.cache_rows << "\n";
  t << "backend = \"" << c.backend << "\"\n";
  if (!c.devices.empty()) t << "devices = " << c.devices << "\n";
  t << "[cluster]\nsecret = \"equivalence-test-secret\"\n";
  if (!c.collective.empty()) t << "collective = \"" << c.collective << "\"\n";
  t << "[[cluster.member]]\nname = \"l\"\naddress = \"127.0.0.1\"\n"
       "roles = [\"all\"]\ntrainers = "
    << c.trainers << "\nembedding_shards = 2\n";
  return t.str();
}

}  // namespace actorrec::trainer
