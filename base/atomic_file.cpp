// Atomic file replacement: temporary, fsync, rename, directory fsync.
#include "base/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace actorrec {
namespace {

Status Errno(const std::string& what, const std::string& path, int error) {
  std::string msg = what;
  msg.append(" ").append(path).append(": ").append(std::strerror(error));
  return Status::IoError(std::move(msg));
}

// Makes the rename durable. Unlike the data fsync this is a hard error: a
// checkpoint the supervisor believes durable must survive a power cut.
// Some file systems (e.g. some FUSE mounts) refuse to fsync a directory with
// EINVAL; the rename is then as durable as that file system can make it.
Status SyncParentDir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open the directory", dir, errno);
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0 && error != EINVAL) return Errno("cannot sync the directory", dir, error);
  return Status::Ok();
}

}  // namespace

std::string AtomicTempPath(const std::string& path) {
  std::string temp = path;
  temp.append(".tmp.").append(std::to_string(::getpid()));
  return temp;
}

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("cannot write a file with an empty path");
  std::string temp = AtomicTempPath(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", temp, errno);
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, std::move(temp), fd));
}

AtomicFileWriter::AtomicFileWriter(std::string path, std::string temp_path, int fd)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

Status AtomicFileWriter::Fail(Status status) {
  if (status_.ok()) status_ = std::move(status);
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  ::unlink(temp_path_.c_str());
  return status_;
}

Status AtomicFileWriter::Write(std::string_view bytes) {
  if (!status_.ok()) return status_;
  if (committed_) return Fail(Status::InvalidArgument(path_ + ": written after commit"));
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(Errno("cannot write", temp_path_, errno));
    p += n;
    left -= static_cast<size_t>(n);
  }
  bytes_written_ += bytes.size();
  return Status::Ok();
}

Status AtomicFileWriter::WriteAt(uint64_t offset, std::string_view bytes) {
  if (!status_.ok()) return status_;
  if (committed_) return Fail(Status::InvalidArgument(path_ + ": written after commit"));
  if (offset > bytes_written_ || bytes.size() > bytes_written_ - offset) {
    return Fail(Status::InvalidArgument(path_ + ": WriteAt past the bytes written so far"));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(Errno("cannot write", temp_path_, errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  if (!status_.ok()) return status_;
  if (committed_) return Status::InvalidArgument(path_ + ": committed twice");
  if (::fsync(fd_) != 0) return Fail(Errno("cannot sync", temp_path_, errno));
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return Fail(Errno("cannot close", temp_path_, errno));
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    std::string what = "cannot rename ";
    what.append(temp_path_).append(" to");
    return Fail(Errno(what, path_, errno));
  }
  committed_ = true;
  // The new file is in place; a failed directory sync is still reported so
  // that the caller does not count the file as durable.
  if (Status st = SyncParentDir(path_); !st.ok()) {
    status_ = st;
    return st;
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const std::function<Status(AtomicFileWriter&)>& write) {
  auto writer = AtomicFileWriter::Create(path);
  if (!writer.ok()) return writer.status();
  if (Status st = write(**writer); !st.ok()) return st;  // the destructor removes the temporary
  return (*writer)->Commit();
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  return WriteFileAtomically(path, [bytes](AtomicFileWriter& writer) { return writer.Write(bytes); });
}

}  // namespace actorrec
