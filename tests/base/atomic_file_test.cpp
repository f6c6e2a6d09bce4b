// Atomic file replacement: the new file appears whole, and every failure
// leaves the old file and no temporary behind.
#include "base/atomic_file.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace actorrec;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test case, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("actorrec_atomic_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  size_t Entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path_), {})); }

 private:
  fs::path path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("WriteFileAtomically creates and then replaces a file", "[base]") {
  ScratchDir dir;
  const std::string path = dir.File("ckpt");
  REQUIRE(WriteFileAtomically(path, std::string_view("first")).ok());
  CHECK(Slurp(path) == "first");
  REQUIRE(WriteFileAtomically(path, std::string_view("second, longer")).ok());
  CHECK(Slurp(path) == "second, longer");
  CHECK(dir.Entries() == 1);  // no temporary left behind
}

TEST_CASE("a failing write callback leaves the old file and removes the temporary", "[base]") {
  ScratchDir dir;
  const std::string path = dir.File("ckpt");
  REQUIRE(WriteFileAtomically(path, std::string_view("old")).ok());
  const Status st = WriteFileAtomically(path, [&](AtomicFileWriter& w) {
    REQUIRE(w.Write("half of the new").ok());
    CHECK(fs::exists(AtomicTempPath(path)));
    return Status::Corruption("the producer gave up");
  });
  CHECK(st.code() == Status::Code::kCorruption);
  CHECK(st.message() == "the producer gave up");
  CHECK(Slurp(path) == "old");
  CHECK_FALSE(fs::exists(AtomicTempPath(path)));
  CHECK(dir.Entries() == 1);
}

TEST_CASE("a writer destroyed without Commit leaves the old file", "[base]") {
  ScratchDir dir;
  const std::string path = dir.File("ckpt");
  REQUIRE(WriteFileAtomically(path, std::string_view("old")).ok());
  {
    auto w = AtomicFileWriter::Create(path);
    REQUIRE(w.ok());
    REQUIRE((*w)->Write("new").ok());
  }
  CHECK(Slurp(path) == "old");
  CHECK(dir.Entries() == 1);
}

TEST_CASE("WriteAt patches a header written first", "[base]") {
  ScratchDir dir;
  const std::string path = dir.File("f");
  auto w = AtomicFileWriter::Create(path);
  REQUIRE(w.ok());
  REQUIRE((*w)->Write("????body").ok());
  REQUIRE((*w)->WriteAt(0, "HEAD").ok());
  CHECK((*w)->bytes_written() == 8);
  // Past the end is refused, and the error sticks.
  CHECK((*w)->WriteAt(6, "xyz").code() == Status::Code::kInvalidArgument);
  CHECK_FALSE((*w)->Commit().ok());
  CHECK_FALSE(fs::exists(path));
  CHECK(dir.Entries() == 0);

  auto w2 = AtomicFileWriter::Create(path);
  REQUIRE(w2.ok());
  REQUIRE((*w2)->Write("????body").ok());
  REQUIRE((*w2)->WriteAt(0, "HEAD").ok());
  REQUIRE((*w2)->Commit().ok());
  CHECK(Slurp(path) == "HEADbody");
}

TEST_CASE("atomic writes name the path and the errno text on failure", "[base]") {
  ScratchDir dir;
  SECTION("a missing directory") {
    const std::string path = dir.File("no/such/dir/ckpt");
    const Status st = WriteFileAtomically(path, std::string_view("x"));
    CHECK(st.code() == Status::Code::kIoError);
    CHECK_THAT(st.message(), Catch::Contains(AtomicTempPath(path)) && Catch::Contains("No such file or directory"));
  }
  SECTION("a rename over a non-empty directory fails and leaves it") {
    const std::string path = dir.File("taken");
    fs::create_directories(fs::path(path) / "child");
    const Status st = WriteFileAtomically(path, std::string_view("x"));
    CHECK(st.code() == Status::Code::kIoError);
    CHECK_THAT(st.message(), Catch::Contains("cannot rename") && Catch::Contains(path));
    CHECK(fs::is_directory(path));
    CHECK_FALSE(fs::exists(AtomicTempPath(path)));
  }
  SECTION("an empty path") { CHECK(WriteFileAtomically("", std::string_view("x")).code() == Status::Code::kInvalidArgument); }
}
