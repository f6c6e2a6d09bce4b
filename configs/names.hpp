// How each enumerated config value is spelled in files and messages. The
// order of each list is the order of its enum, so an index is an enum value.
#pragma once

#include <string_view>

namespace actorrec::config {

inline constexpr std::string_view kRoleNames[] = {"sampler", "oracle", "embedding", "trainer"};
// Roles as written in files: the four roles plus "all", which expands to
// them, and "spare", alone: a member with no roles of its own that takes
// over those of a member lost for good (its Member::roles stay empty).
inline constexpr std::string_view kRoleSpellings[] = {"sampler", "oracle", "embedding", "trainer",
                                                      "all",     "spare"};
inline constexpr std::string_view kModelKindNames[] = {"dlrm", "wide_deep", "deepfm", "dcn"};
inline constexpr std::string_view kModeNames[] = {"lrpp_delayed", "lrpp",      "replicated",
                                                  "no_cache",     "static_hot", "ideal"};
inline constexpr std::string_view kDenseOptimizerNames[] = {"sgd", "adagrad", "adam"};
inline constexpr std::string_view kSparseOptimizerNames[] = {"sgd", "adagrad", "rowwise_adagrad",
                                                             "adam"};

// Values kept as strings in the structs; the loader only checks membership.
inline constexpr std::string_view kLogLevels[] = {"trace", "debug", "info", "warn", "error"};
inline constexpr std::string_view kPoolings[] = {"sum", "mean"};
inline constexpr std::string_view kSources[] = {"generated",    "criteo_tsv", "avazu_csv",
                                                "dlrm_binary",  "torchrec_npy", "csv",
                                                "libfm",        "actorrec"};
inline constexpr std::string_view kPresets[] = {"criteo-kaggle", "custom"};
inline constexpr std::string_view kBadRecordPolicies[] = {"fail", "skip"};
inline constexpr std::string_view kCategoricalMappings[] = {"dictionary", "hash"};
inline constexpr std::string_view kSkews[] = {"zipf", "top_share", "half_normal", "exponential", "uniform"};
inline constexpr std::string_view kCollectives[] = {"tls", "gloo", "nccl", "auto"};
inline constexpr std::string_view kBagLengths[] = {"fixed", "uniform", "geometric", "poisson"};
inline constexpr std::string_view kDenseTransforms[] = {"none", "log1p"};
inline constexpr std::string_view kBackends[] = {"auto", "cpu", "cuda"};

}  // namespace actorrec::config
