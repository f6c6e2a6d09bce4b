// Readers for the sections of a config file. Each fills its struct from one
// TableReader, keeps the struct's default for an absent key, records every
// problem in the reader's ProblemList, and reports the table's unknown keys.
// Checks that span sections (batch size vs trainers) live in config.cpp,
// except which keys apply: ReadModel takes the dataset, since DLRM has a
// bottom MLP only with dense features and crosses name its tables.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "configs/config.hpp"
#include "configs/toml_reader.hpp"

namespace actorrec::config {

void ReadRun(TableReader& table, RunConfig* run);
// `dataset` is read first: DLRM's bottom_mlp is required with dense
// features and refused without, and Wide&Deep's crosses name tables the
// dataset may count.
void ReadModel(TableReader& table, const DatasetConfig& dataset, ModelConfig* model);
void ReadOptimizer(TableReader& table, OptimizerConfig* optimizer);
// Relative paths resolve against `base_dir` (empty: the working directory).
void ReadDataset(TableReader& table, const std::filesystem::path& base_dir, DatasetConfig* dataset);
void ReadTraining(TableReader& table, TrainingConfig* training);

// Reads [cluster] and its [[cluster.member]]s and checks the topology: unique
// names and endpoints, one sampler, one oracle, at least one embedding and one
// trainer, a reachable coordinator; fills the derived fields. Returns whether
// every member's roles and counts were valid, i.e. whether TotalTrainers() can
// be trusted by later checks.
bool ReadCluster(TableReader& table, const std::filesystem::path& base_dir, ClusterConfig* cluster);

// [A-Za-z0-9_.-]{1,64}: run and member names end up in file names and logs.
bool IsValidName(std::string_view name);

// `path` unchanged when absolute or when `base_dir` is empty, else
// base_dir/path, normalized.
std::string ResolvePath(const std::filesystem::path& base_dir, const std::string& path);

// Reads the whole file into *text. On failure returns false and sets *error
// to the operating system's reason ("No such file or directory").
bool ReadFileText(const std::string& path, std::string* text, std::string* error);

}  // namespace actorrec::config
