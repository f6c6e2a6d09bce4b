#include "actors/run/snapshot_store.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "actors/run/checkpoint.hpp"
#include "base/atomic_file.hpp"

namespace actorrec::trainer {
namespace {

namespace fs = std::filesystem;

std::string BatchName(uint64_t k) { return "batch-" + std::to_string(k); }

Result<std::string> ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("no snapshot piece " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return Status::IoError("cannot read the snapshot piece " + path.string());
  return std::move(bytes).str();
}

// The k of a file holding "batch-<k>"; nullopt when absent or malformed.
std::optional<uint64_t> ReadBatchName(const fs::path& path) {
  std::ifstream in(path);
  std::string name;
  if (!in || !std::getline(in, name) || !name.starts_with("batch-") || name.size() == 6 || name.size() > 26 ||
      name.find_first_not_of("0123456789", 6) != std::string::npos) {
    return std::nullopt;
  }
  return std::stoull(name.substr(6));
}

}  // namespace

bool SnapshotStore::ValidName(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<std::string> SnapshotStore::Begin(uint64_t k) {
  auto tmp = BeginCheckpoint(dir_, k);
  if (!tmp.ok()) return tmp.status();
  pending_[k] = *tmp;
  return tmp;
}

Status SnapshotStore::Put(uint64_t k, const std::string& name, const std::string& bytes) {
  if (!ValidName(name)) return Status::InvalidArgument("snapshot piece name '" + name + "' is not a plain file name");
  if (pending_.find(k) == pending_.end()) {
    if (auto tmp = Begin(k); !tmp.ok()) return tmp.status();
  }
  return WriteFileAtomically((fs::path(pending_[k]) / name).string(), bytes);
}

Result<std::string> SnapshotStore::ReadPending(uint64_t k, const std::string& name) const {
  if (!ValidName(name)) return Status::InvalidArgument("snapshot piece name '" + name + "' is not a plain file name");
  auto it = pending_.find(k);
  if (it == pending_.end()) return Status::NotFound("snapshot " + BatchName(k) + " was not begun in " + dir_);
  return ReadWhole(fs::path(it->second) / name);
}

Status SnapshotStore::Commit(uint64_t k) {
  auto it = pending_.find(k);
  if (it == pending_.end()) return Status::NotFound("snapshot " + BatchName(k) + " was not begun in " + dir_);
  const std::string tmp = it->second;
  pending_.erase(it);
  return CommitCheckpoint(dir_, tmp, k);
}

std::optional<uint64_t> SnapshotStore::Latest() const { return ReadBatchName(fs::path(dir_) / "LATEST"); }

Status SnapshotStore::MarkCommitted(uint64_t k) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError("cannot create " + dir_ + ": " + ec.message());
  return WriteFileAtomically((fs::path(dir_) / "COMMITTED").string(), BatchName(k) + "\n");
}

std::optional<uint64_t> SnapshotStore::Committed() const { return ReadBatchName(fs::path(dir_) / "COMMITTED"); }

Result<std::string> SnapshotStore::Read(uint64_t k, const std::string& name) const {
  if (!ValidName(name)) return Status::InvalidArgument("snapshot piece name '" + name + "' is not a plain file name");
  return ReadWhole(fs::path(dir_) / BatchName(k) / name);
}

Result<std::string> SnapshotStore::ReadRange(uint64_t k, const std::string& name, uint64_t offset,
                                             uint64_t length) const {
  if (!ValidName(name)) return Status::InvalidArgument("snapshot piece name '" + name + "' is not a plain file name");
  const fs::path path = fs::path(dir_) / BatchName(k) / name;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("no snapshot piece " + path.string());
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  if (offset > size) return Status::InvalidArgument("byte " + std::to_string(offset) + " is past the end of " + path.string());
  std::string bytes(std::min(length, size - offset), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!in) return Status::IoError("cannot read the snapshot piece " + path.string());
  return bytes;
}

bool SnapshotStore::Has(uint64_t k, const std::string& name) const {
  std::error_code ec;
  return ValidName(name) && fs::is_regular_file(fs::path(dir_) / BatchName(k) / name, ec);
}

Status SnapshotStore::Adopt(uint64_t k, const std::string& name, const std::string& bytes) {
  if (!ValidName(name)) return Status::InvalidArgument("snapshot piece name '" + name + "' is not a plain file name");
  std::error_code ec;
  const fs::path batch = fs::path(dir_) / BatchName(k);
  fs::create_directories(batch, ec);
  if (ec) return Status::IoError("cannot create " + batch.string() + ": " + ec.message());
  return WriteFileAtomically((batch / name).string(), bytes);
}

Status SnapshotStore::Select(uint64_t k) {
  std::error_code ec;
  std::vector<fs::path> newer;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string n = entry.path().filename().string();
    if (!n.starts_with("batch-") || n.find(".tmp-") != std::string::npos) continue;
    try {
      if (std::stoull(n.substr(6)) > k) newer.push_back(entry.path());
    } catch (...) {
    }
  }
  for (const fs::path& p : newer) fs::remove_all(p, ec);
  return WriteFileAtomically((fs::path(dir_) / "LATEST").string(), BatchName(k) + "\n");
}

}  // namespace actorrec::trainer
