// Helpers shared by the reader tests.
#include "reader_test_util.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace actorrec::data::readers::testing {

Drained Drain(SampleReader& reader, size_t block) {
  Drained d;
  d.samples.Reset(reader.schema());
  SampleBlock piece;
  for (;;) {
    ++d.calls;
    d.status = reader.Next(block, &piece);
    if (!d.status.ok()) return d;
    REQUIRE(piece.size() <= block);
    if (piece.empty()) return d;
    d.samples.Append(piece, 0, piece.size());
  }
}

std::string DatasetFile(const std::string& relative) { return std::string(ACTORREC_DATASETS) + "/" + relative; }

}  // namespace actorrec::data::readers::testing
