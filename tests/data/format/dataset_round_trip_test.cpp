// Random blocks written in random pieces read back identically, whole, by
// range, and by batch, across chunk boundaries.
#include "data/format/dataset.hpp"

#include <catch2/catch.hpp>

#include <thread>

#include "format_test_util.hpp"

using namespace actorrec;
using namespace actorrec::data;
using namespace actorrec::data::format;
using namespace actorrec::data::format::testing;

namespace {

// Writes n random samples and checks every way of reading them back against
// the block they came from (the model).
void CheckRoundTrip(uint64_t seed, bool any_multi_hot) {
  std::mt19937_64 rng(seed);
  const DatasetSchema schema = RandomSchema(rng, 4, 4);
  std::vector<bool> multi_hot(schema.num_tables(), false);
  for (size_t t = 0; t < multi_hot.size(); ++t) multi_hot[t] = any_multi_hot && rng() % 2 == 0;
  const size_t n = rng() % 120;
  const SampleBlock expected = RandomBlock(rng, schema, multi_hot, n);
  DatasetWriterOptions options;
  options.samples_per_chunk = static_cast<uint32_t>(1 + rng() % 17);
  options.multi_hot = multi_hot;
  ScratchDir dir;
  const std::string path = dir.File("d.ards");
  WriteInPieces(rng, path, schema, expected, options);
  CAPTURE(seed, n, options.samples_per_chunk);

  DatasetOptions open_options;
  open_options.verify_at_open = rng() % 2 == 0;
  auto dataset = Dataset::Open(path, open_options);
  REQUIRE(dataset.ok());
  const Dataset& ds = **dataset;
  CHECK(SameSchema(ds.schema(), schema));
  CHECK(ds.size() == n);
  CHECK(ds.num_chunks() == (n + options.samples_per_chunk - 1) / options.samples_per_chunk);
  for (size_t t = 0; t < schema.num_tables(); ++t) CHECK(ds.multi_hot(t) == multi_hot[t]);

  SampleBlock got;
  REQUIRE(ds.Read(0, n, &got).ok());
  CHECK(got == expected);
  for (int k = 0; k < 20; ++k) {
    const uint64_t a = rng() % (n + 1);
    const uint64_t b = rng() % (n + 1);
    SampleBlock want;
    want.Reset(schema);
    want.Append(expected, std::min(a, b), std::max(a, b));
    REQUIRE(ds.Read(std::min(a, b), std::max(a, b), &got).ok());
    CHECK(got == want);
  }

  EpochOptions epoch_options;
  epoch_options.seed = seed;
  epoch_options.batch_size = 1 + rng() % 13;
  epoch_options.window_chunks = static_cast<uint32_t>(rng() % 3);
  epoch_options.shuffle = rng() % 4 != 0;
  const EpochOrder order = ds.Order(epoch_options, rng() % 5);
  std::vector<uint64_t> samples;
  for (uint64_t b = 0; b < order.num_batches(); ++b) {
    order.BatchSamples(b, &samples);
    SampleBlock want;
    want.Reset(schema);
    for (uint64_t s : samples) want.Append(expected, s, s + 1);
    REQUIRE(ds.ReadBatch(order, b, &got).ok());
    CHECK(got == want);
  }
}

}  // namespace

TEST_CASE("Random single-hot blocks read back identically across chunk boundaries", "[data]") {
  CheckRoundTrip(GENERATE(take(12, random(uint64_t{0}, uint64_t{1} << 40))), false);
}

TEST_CASE("Random multi-hot blocks read back identically across chunk boundaries", "[data]") {
  CheckRoundTrip(GENERATE(take(12, random(uint64_t{0}, uint64_t{1} << 40))), true);
}

TEST_CASE("An empty dataset is valid", "[data]") {
  DatasetSchema schema{{"I1"}, {{"C1", 10}}};
  ScratchDir dir;
  const std::string path = dir.File("empty.ards");
  auto writer = DatasetWriter::Create(path, schema);
  REQUIRE(writer.ok());
  REQUIRE((*writer)->Finish().ok());
  auto dataset = Dataset::Open(path, {.verify_at_open = true});
  REQUIRE(dataset.ok());
  CHECK((*dataset)->size() == 0);
  CHECK((*dataset)->num_chunks() == 0);
  CHECK(SameSchema((*dataset)->schema(), schema));
  SampleBlock got;
  REQUIRE((*dataset)->Read(0, 0, &got).ok());
  CHECK(got.empty());
  CHECK((*dataset)->Order({}, 0).num_batches() == 0);
}

TEST_CASE("Reads outside the dataset are refused with its size", "[data]") {
  std::mt19937_64 rng(7);
  DatasetSchema schema{{}, {{"C1", 5}}};
  ScratchDir dir;
  const std::string path = dir.File("d.ards");
  WriteInPieces(rng, path, schema, RandomBlock(rng, schema, {false}, 10), {});
  auto dataset = Dataset::Open(path);
  REQUIRE(dataset.ok());
  SampleBlock got;
  Status s = (*dataset)->Read(3, 11, &got);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("not in [0, 10)"));
  const std::vector<uint64_t> samples{2, 10};
  CHECK((*dataset)->ReadSamples(samples, &got).code() == Status::Code::kInvalidArgument);
  CHECK((*dataset)->ReadBatch((*dataset)->Order({}, 0), 1, &got).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("Threads reading one unverified dataset at once get the same batches", "[data]") {
  std::mt19937_64 rng(31);
  const DatasetSchema schema{{"I1", "I2"}, {{"C1", 100}, {"C2", 100}}};
  const SampleBlock samples = RandomBlock(rng, schema, {false, true}, 3000);
  ScratchDir dir;
  const std::string path = dir.File("d.ards");
  WriteInPieces(rng, path, schema, samples, WriterOptions(64));
  auto dataset = Dataset::Open(path);
  REQUIRE(dataset.ok());
  EpochOptions options;
  options.batch_size = 100;
  const EpochOrder order = (*dataset)->Order(options, 2);
  std::vector<std::vector<SampleBlock>> got(4, std::vector<SampleBlock>(order.num_batches()));
  std::vector<std::thread> threads;
  for (auto& batches : got) {
    threads.emplace_back([&] {
      for (uint64_t b = 0; b < order.num_batches(); ++b) {
        // REQUIRE is not thread-safe in Catch2 2.13; a failed read aborts.
        ACTORREC_ASSERT((*dataset)->ReadBatch(order, b, &batches[b]).ok(), "concurrent read failed");
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (size_t t = 1; t < got.size(); ++t) CHECK(got[t] == got[0]);
}
