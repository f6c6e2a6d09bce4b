// The sync scheduler actor's resident sums (a buffer of the trainer's
// backend named by its address): followed for a trainer of this process,
// refused for any other sender, since an address means this process's
// memory.
#include "actors/sync/sync_scheduler_actor.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "actors/common/atoms.hpp"
#include "gpu/cpu_backend.hpp"
#include "gpu/shared_memory_collective.hpp"

using namespace actorrec;
using namespace std::chrono_literals;

TEST_CASE("the sync scheduler sums a local trainer's buffer by its address and refuses an address from no sender",
          "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  std::unique_ptr<gpu::Backend> backend = gpu::MakeCpuBackend();
  auto group = std::make_shared<gpu::SharedMemoryGroup>(1, 5000ms);
  caf::scoped_actor driver{sys};
  trainer::SyncSchedulerArgs args;
  args.rank = 0;
  args.connect = [group] { return gpu::ConnectSharedMemory(group, 0); };
  args.driver = driver;
  args.backend = backend.get();
  caf::actor scheduler = trainer::SpawnSyncScheduler(sys, std::move(args));

  std::vector<float> sums = {1.0f, -2.0f, 0.5f};
  const uint8_t critical = static_cast<uint8_t>(trainer::SyncKind::kCritical);
  // A trainer of this process (the scoped actor): summed in place (one rank:
  // unchanged) and answered with the count.
  driver->send(scheduler, sync_atom::value, int64_t{0}, critical, 0.0, trainer::ResidentAddress(sums.data()),
               uint64_t{sums.size()});
  uint64_t answered = 0;
  driver->receive([&](synced_atom, int64_t, uint8_t, double, uint64_t n) { answered = n; },
                  [&](error_atom, const std::string& what) { FAIL(what); },
                  caf::after(10s) >> [] { FAIL("no answer to a local resident sum"); });
  CHECK(answered == sums.size());
  CHECK(sums == std::vector<float>{1.0f, -2.0f, 0.5f});

  // No sender (as a message from outside would not be this process's
  // trainer): refused, the driver told, nothing touched.
  std::vector<float> other = {3.0f};
  caf::anon_send(scheduler, sync_atom::value, int64_t{1}, critical, 0.0, trainer::ResidentAddress(other.data()),
                 uint64_t{1});
  std::string error;
  driver->receive([&](error_atom, const std::string& what) { error = what; },
                  caf::after(10s) >> [] { FAIL("no error for a resident sum without a sender"); });
  CHECK_THAT(error, Catch::Contains("a sum in a backend's memory from another process (no sender), refused"));
  CHECK(other == std::vector<float>{3.0f});
  caf::anon_send(scheduler, stop_atom::value);
}
