// POSIX file helpers.
#include "data/readers/posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace actorrec::data::readers {
namespace {

Status Errno(std::string_view what, const std::string& path) {
  return Status::IoError(std::string(what) + " " + path + ": " + std::strerror(errno));
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

Result<ReadFile> ReadFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status s = Errno("cannot stat", path);
    ::close(fd);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::IoError("cannot read " + path + ": it is a directory");
  }
  // Sequential scans: ask the kernel for aggressive read-ahead.
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return ReadFile(fd, static_cast<uint64_t>(st.st_size), path);
}

ReadFile& ReadFile::operator=(ReadFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

ReadFile::~ReadFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status ReadFile::Read(char* buf, size_t n, size_t* got) {
  for (;;) {
    const ssize_t r = ::read(fd_, buf, n);
    if (r >= 0) {
      *got = static_cast<size_t>(r);
      return Status::Ok();
    }
    if (errno != EINTR) return Errno("cannot read", path_);
  }
}

Status ReadFile::Seek(uint64_t offset) {
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) return Errno("cannot seek in", path_);
  return Status::Ok();
}

Status ReadFile::ReadAt(uint64_t offset, char* buf, size_t n) const {
  while (n > 0) {
    const ssize_t r = ::pread(fd_, buf, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot read", path_);
    }
    if (r == 0) return Status::IoError("cannot read " + path_ + ": the file ended early (did it shrink?)");
    buf += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  // The pid keeps two processes saving the same path from sharing a temporary.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", tmp);
  Status s = WriteAll(fd, bytes, tmp);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("cannot fsync", tmp);
  if (::close(fd) != 0 && s.ok()) s = Errno("cannot close", tmp);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = Errno("cannot rename onto", path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = std::string(".");  // not = ".": g++ 12 warns falsely (-Wrestrict)
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Errno("cannot open directory", dir);
  if (::fsync(dfd) != 0) s = Errno("cannot fsync directory", dir);
  ::close(dfd);
  return s;
}

Result<std::string> ReadWholeFile(const std::string& path) {
  auto file = ReadFile::Open(path);
  if (!file.ok()) return file.status();
  std::string bytes(file->size(), '\0');
  if (Status s = file->ReadAt(0, bytes.data(), bytes.size()); !s.ok()) return s;
  return bytes;
}

}  // namespace actorrec::data::readers
