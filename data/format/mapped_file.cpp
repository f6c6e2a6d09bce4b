// mmap of a whole file.
#include "data/format/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace actorrec::data::format {

Result<MappedFile> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = "cannot open " + path + ": " + std::strerror(err);
    return err == ENOENT ? Status::NotFound(msg) : Status::IoError(msg);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string msg = "cannot stat " + path + ": " + std::strerror(errno);
    ::close(fd);
    return Status::IoError(msg);
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const std::string msg = "cannot mmap " + path + ": " + std::strerror(errno);
      ::close(fd);
      return Status::IoError(msg);
    }
  }
  ::close(fd);  // the mapping keeps the file open
  return MappedFile(data, size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace actorrec::data::format
