#include "actors/run/rendezvous.hpp"

#include <caf/all.hpp>
#include <gloo/common/error.h>
#include <gloo/rendezvous/store.h>

#include <map>
#include <string>
#include <vector>

#include "actors/common/ask.hpp"
#include "actors/common/atoms.hpp"
#include "actors/common/unexpected.hpp"

namespace actorrec::trainer {
namespace {

struct RendezvousState {
  static inline const char* name = "rendezvous";
  std::map<std::string, std::vector<char>> values;
  std::map<std::string, std::vector<caf::response_promise>> waiting;  // gets of keys not stored yet
};

caf::behavior Rendezvous(caf::stateful_actor<RendezvousState>* self) {
  self->set_default_handler(ReportUnexpected);
  return {
      [=](put_atom, const std::string& key, const std::vector<char>& value) {
        auto& st = self->state;
        st.values[key] = value;
        if (auto it = st.waiting.find(key); it != st.waiting.end()) {
          for (auto& rp : it->second) rp.deliver(value);
          st.waiting.erase(it);
        }
      },
      [=](get_atom, const std::string& key) {
        auto rp = self->make_response_promise();
        auto& st = self->state;
        if (auto it = st.values.find(key); it != st.values.end()) {
          rp.deliver(it->second);
        } else {
          st.waiting[key].push_back(rp);
        }
        return rp;
      },
  };
}

class ActorStore final : public gloo::rendezvous::Store {
 public:
  ActorStore(caf::actor_system& sys, caf::actor rendezvous, std::chrono::milliseconds timeout)
      : sys_(sys), rendezvous_(std::move(rendezvous)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    caf::scoped_actor self{sys_};
    self->send(rendezvous_, put_atom::value, key, data);
  }

  std::vector<char> get(const std::string& key) override { return Get(key, timeout_); }

  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }

  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    for (const auto& key : keys) Get(key, timeout);
  }

 private:
  std::vector<char> Get(const std::string& key, std::chrono::milliseconds timeout) {
    std::vector<char> value;
    Status asked = AskAndWait(
        sys_, rendezvous_, timeout, [&](std::vector<char>& v) { value = std::move(v); }, get_atom::value, key);
    if (!asked.ok()) {
      throw gloo::IoException("the cluster's Gloo rendezvous did not give key '" + key + "' within " +
                              std::to_string(timeout.count()) + " ms: " + asked.message());
    }
    return value;
  }

  caf::actor_system& sys_;
  caf::actor rendezvous_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

caf::actor SpawnRendezvous(caf::actor_system& sys) { return sys.spawn(Rendezvous); }

std::shared_ptr<gloo::rendezvous::Store> MakeActorStore(caf::actor_system& sys, caf::actor rendezvous,
                                                        std::chrono::milliseconds timeout) {
  return std::make_shared<ActorStore>(sys, std::move(rendezvous), timeout);
}

}  // namespace actorrec::trainer
