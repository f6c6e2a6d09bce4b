// The batch_sampler: batches in epoch order, identical after a restart, and
// never more in flight than the consumer granted.
#include "actors/sampler/batch_sequence.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/common/atoms.hpp"
#include "actors/sampler/sampler_actor.hpp"
#include "messages/batch_codec.hpp"
#include "messages/registry.hpp"
#include "tests/actors/counting_reader.hpp"

using namespace actorrec;
using namespace std::chrono_literals;

namespace {

std::vector<data::Batch> Drain(BatchSequence& seq) {
  std::vector<data::Batch> out;
  for (;;) {
    data::Batch b;
    REQUIRE(seq.Next(&b).ok());
    if (seq.done() && b.samples.empty()) return out;
    out.push_back(std::move(b));
  }
}

BatchSequence::Options Options(uint32_t batch_size, uint32_t epochs, uint64_t max_batches = 0,
                               BatchPosition start = {}) {
  BatchSequence::Options o;
  o.batch_size = batch_size;
  o.epochs = epochs;
  o.max_batches = max_batches;
  o.start = start;
  return o;
}

}  // namespace

TEST_CASE("batches come in epoch order, full except an epoch's last", "[actors]") {
  BatchSequence seq(testing::CountingSource(1000), Options(64, 2));
  auto batches = Drain(seq);
  REQUIRE(batches.size() == 2 * 16);
  REQUIRE(batches[0].samples.size() == 64);
  REQUIRE(batches[15].samples.size() == 1000 - 15 * 64);
  REQUIRE(batches[16].epoch == 1);
  REQUIRE(batches[16].index == 0);
  REQUIRE(batches[5].first_sample == 5 * 64);
  REQUIRE(batches[5].samples.dense[0] == Approx(5 * 64));
}

TEST_CASE("a sequence restarted at (epoch, batch) continues with identical batches", "[actors]") {
  const auto restart_at = GENERATE(0u, 1u, 7u, 15u, 16u, 20u);
  BatchSequence full(testing::CountingSource(1000), Options(64, 2));
  auto all = Drain(full);
  auto options = Options(64, 2, 0, {static_cast<uint32_t>(restart_at / 16), restart_at % 16});
  BatchSequence resumed(testing::CountingSource(1000), options);
  auto rest = Drain(resumed);
  REQUIRE(rest.size() == all.size() - restart_at);
  for (size_t i = 0; i < rest.size(); ++i) REQUIRE(rest[i] == all[restart_at + i]);
}

TEST_CASE("max_batches stops the sequence, and a restart past the epoch is an error", "[actors]") {
  BatchSequence limited(testing::CountingSource(1000), Options(100, 3, 12));
  REQUIRE(Drain(limited).size() == 12);
  auto options = Options(100, 1, 0, {0, 50});
  BatchSequence bad(testing::CountingSource(1000), options);
  data::Batch b;
  auto st = bad.Next(&b);
  REQUIRE_THAT(st.message(), Catch::Contains("the epoch has only 10 batches"));
}

TEST_CASE("the sampler sends only as many batches as it was granted, in order, then ends", "[actors]") {
  caf::actor_system_config cfg;
  wire::AddMessageTypes(cfg);
  caf::actor_system sys{cfg};
  {
    caf::scoped_actor consumer{sys};
    SamplerArgs args;
    args.source = testing::CountingSource(500);
    args.options = Options(50, 1);
    args.consumer = consumer;
    args.dedup_groups = data::SingletonGroups(2);
    auto sampler = SpawnSampler(sys, args);
    BatchSequence reference(testing::CountingSource(500), args.options);
    auto expected = Drain(reference);

    auto receive_batch = [&](uint64_t index) {
      data::Batch got;
      consumer->receive([&](const wire::Frame<wire::Batch>& f) { REQUIRE(wire::DecodeBatch(f, &got).ok()); },
                        caf::after(10s) >> [] { FAIL("no batch within 10 s"); });
      REQUIRE(got == expected[index]);
    };
    consumer->send(sampler, credit_atom::value, uint32_t{3});
    for (uint64_t i = 0; i < 3; ++i) receive_batch(i);
    bool extra = false;
    consumer->receive([&](const wire::Frame<wire::Batch>&) { extra = true; }, caf::after(300ms) >> [] {});
    REQUIRE_FALSE(extra);  // backpressure: nothing beyond the credits

    consumer->send(sampler, credit_atom::value, uint32_t{100});
    for (uint64_t i = 3; i < 10; ++i) receive_batch(i);
    uint64_t sent = 0;
    consumer->receive([&](end_atom, uint64_t n) { sent = n; }, caf::after(10s) >> [] { FAIL("no end"); });
    REQUIRE(sent == 10);
    caf::anon_send(sampler, stop_atom::value);
  }
  sys.await_all_actors_done();
}
