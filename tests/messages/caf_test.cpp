// Frames through CAF: its serializers, an in-process actor, and the real
// middleman between two actor systems.
#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "messages/kinds.hpp"
#include "messages/registry.hpp"
#include "messages/text.hpp"
#include "tests/messages/examples.hpp"

namespace actorrec::wire {
namespace {

using namespace std::chrono_literals;

// A config as every process builds it: our kinds, then the middleman.
struct TestConfig : caf::actor_system_config {
  TestConfig() {
    AddMessageTypes(*this);
    load<caf::io::middleman>();
  }
};

TEST_CASE("a frame survives CAF's binary serializer byte for byte", "[messages]") {
  TestConfig cfg;
  caf::actor_system sys{cfg};
  auto frame = testing::MakeRows(64);
  std::vector<char> buffer;
  caf::binary_serializer sink{sys, buffer};
  REQUIRE_FALSE(sink(frame));
  // A length prefix and the bytes, nothing per element.
  REQUIRE(buffer.size() < frame.bytes.size() + 16);

  Frame<Rows> copy;
  caf::binary_deserializer source{sys, buffer};
  REQUIRE_FALSE(source(copy));
  REQUIRE(copy.bytes == frame.bytes);
  auto view = Open(copy);
  REQUIRE(view.ok());
  REQUIRE(view->root().getKeys().size() == 64);
  REQUIRE(view->root().getKeys()[63].getRow() == testing::ExampleRow(63));
}

TEST_CASE("a frame announcing more bytes than its message holds is refused before anything is allocated",
          "[messages]") {
  TestConfig cfg;
  caf::actor_system sys{cfg};
  Frame<Rows> frame;
  frame.bytes.assign(10, 'x');
  std::vector<char> buffer;
  caf::binary_serializer sink{sys, buffer};
  REQUIRE_FALSE(sink(frame));
  REQUIRE(buffer.size() == 11);  // the length 10 as one varbyte, then the bytes
  REQUIRE(buffer[0] == 10);
  // A forged length of 64 MiB, as CAF writes it: 7 bits a byte, low first.
  std::vector<char> forged;
  for (uint32_t n = uint32_t{64} << 20; ; n >>= 7) {
    forged.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
    if (n <= 0x7f) break;
  }
  forged.insert(forged.end(), buffer.begin() + 1, buffer.end());

  Frame<Rows> copy;
  caf::binary_deserializer source{sys, forged};
  auto err = source(copy);
  REQUIRE(err);
  CHECK_THAT(sys.render(err), Catch::Contains("more than its message holds"));
  // CAF's own byte-vector load would have resized to 64 MiB first.
  CHECK(copy.bytes.capacity() < 1024);
}

// Wraps a frame of kind S in a caf::message, serializes it as the middleman
// does (type names included) and reads it back.
template <class S>
void RequireMessageRoundTrip(caf::actor_system& sys, const char* name) {
  INFO(name);
  auto frame = Encode<S>([](typename S::Builder) {});
  auto message = caf::make_message(frame);
  std::vector<char> buffer;
  caf::binary_serializer sink{sys, buffer};
  REQUIRE_FALSE(sink(message));
  // The registered name travels with the message.
  REQUIRE(std::search(buffer.begin(), buffer.end(), name, name + std::strlen(name)) != buffer.end());
  caf::message back;
  caf::binary_deserializer source{sys, buffer};
  REQUIRE_FALSE(source(back));
  REQUIRE(back.match_elements<Frame<S>>());
  REQUIRE(back.get_as<Frame<S>>(0).bytes == frame.bytes);
  REQUIRE(Open(back.get_as<Frame<S>>(0)).ok());
}

TEST_CASE("every kind in kinds.hpp crosses CAF's message serialization under its name", "[messages]") {
  TestConfig cfg;
  caf::actor_system sys{cfg};
  int kinds = 0;
#define ACTORREC_TEST_KIND(S, NAME) \
  RequireMessageRoundTrip<S>(sys, NAME); \
  ++kinds;
  ACTORREC_ALL_MESSAGES(ACTORREC_TEST_KIND)
#undef ACTORREC_TEST_KIND
  REQUIRE(kinds == 21);
}

// A shell in miniature: opens the Heartbeat, answers with the next one, and
// answers bytes it cannot read with an ErrorReply instead of dying.
caf::behavior HeartbeatResponder(caf::event_based_actor*) {
  return {
      [](const Frame<Heartbeat>& frame) -> caf::message {
        auto view = Open(frame);
        if (!view.ok()) {
          return caf::make_message(MakeError(ErrorReply::Kind::FAILED, "responder: " + view.status().message()));
        }
        return caf::make_message(testing::MakeHeartbeat(view->root().getSeq() + 1));
      },
  };
}

// What a request from a scoped actor got back: a reply of type R, or the
// error CAF reported (a reply of another type reads as unexpected_response,
// naming it).
template <class R>
struct Reply {
  std::optional<R> frame;
  std::string caf_error;
};

template <class R>
Reply<R> Ask(caf::actor_system& sys, const caf::actor& whom, const Frame<Heartbeat>& frame) {
  Reply<R> reply;
  caf::scoped_actor self{sys};
  self->request(whom, 5s, frame)
      .receive([&](R& r) { reply.frame = std::move(r); }, [&](caf::error& e) { reply.caf_error = sys.render(e); });
  return reply;
}

TEST_CASE("an actor answers a heartbeat frame, refuses a malformed one with an ErrorReply and lives on",
          "[messages]") {
  TestConfig cfg;
  caf::actor_system sys{cfg};
  auto responder = sys.spawn(HeartbeatResponder);

  auto first = Ask<Frame<Heartbeat>>(sys, responder, testing::MakeHeartbeat(41));
  INFO(first.caf_error);
  REQUIRE(first.frame);
  REQUIRE(Open(*first.frame)->root().getSeq() == 42);

  auto malformed = testing::MakeHeartbeat(41);
  malformed.bytes.resize(malformed.bytes.size() - 8);
  auto refused = Ask<Frame<ErrorReply>>(sys, responder, malformed);
  INFO(refused.caf_error);
  REQUIRE(refused.frame);
  auto error = Open(*refused.frame);
  REQUIRE(error.ok());
  REQUIRE(error->root().getKind() == ErrorReply::Kind::FAILED);
  REQUIRE(Str(error->root().getMessage()).rfind("responder: malformed actorrec.Heartbeat message", 0) == 0);

  auto after = Ask<Frame<Heartbeat>>(sys, responder, testing::MakeHeartbeat(99));
  INFO(after.caf_error);
  REQUIRE(after.frame);
  REQUIRE(Open(*after.frame)->root().getSeq() == 100);

  caf::anon_send_exit(responder, caf::exit_reason::user_shutdown);
}

caf::behavior RowsEcho(caf::event_based_actor*) {
  return {
      [](const Frame<Rows>& frame) -> caf::message {
        if (auto view = Open(frame); !view.ok()) {
          return caf::make_message(MakeError(ErrorReply::Kind::FAILED, "echo: " + view.status().message()));
        }
        return caf::make_message(frame);
      },
  };
}

// An actor published on the middleman, shut down however the test leaves: a
// published actor still alive makes ~actor_system hang (STACK.md §11).
class Published {
 public:
  Published(caf::actor_system& sys, caf::actor actor) : sys_(sys), actor_(std::move(actor)) {
    if (auto port = sys_.middleman().publish(actor_, 0, "127.0.0.1")) port_ = *port;
  }
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;
  ~Published() { (void)Shutdown(); }

  uint16_t port() const { return port_; }

  // Quits the actor, waits until it is gone, then unpublishes it. True when
  // both happened (the first time it is called).
  bool Shutdown() {
    if (done_) return false;
    done_ = true;
    bool down = false;
    {
      caf::scoped_actor self{sys_};
      self->monitor(actor_);
      self->send_exit(actor_, caf::exit_reason::user_shutdown);
      self->receive([&](const caf::down_msg&) { down = true; }, caf::after(std::chrono::seconds(5)) >> [] {});
    }
    const bool unpublished = port_ != 0 && static_cast<bool>(sys_.middleman().unpublish(actor_, port_));
    return down && unpublished;
  }

 private:
  caf::actor_system& sys_;
  caf::actor actor_;
  uint16_t port_ = 0;
  bool done_ = false;
};

TEST_CASE("a megabyte of rows crosses the middleman between two actor systems unchanged", "[messages]") {
  // 4096 rows of dim 32 with 32 floats of Adam state: 1 MiB of floats.
  auto frame = testing::MakeRows(4096, 32, 32);
  REQUIRE(frame.bytes.size() > (1u << 20));

  TestConfig server_cfg;
  caf::actor_system server{server_cfg};
  Published echo{server, server.spawn(RowsEcho)};
  REQUIRE(echo.port() != 0);

  std::optional<Frame<Rows>> echoed;
  std::string failure;
  {
    TestConfig client_cfg;
    caf::actor_system client{client_cfg};
    auto remote = client.middleman().remote_actor("127.0.0.1", echo.port());
    REQUIRE(remote);
    caf::scoped_actor self{client};
    self->request(*remote, 10s, frame)
        .receive([&](Frame<Rows>& reply) { echoed = std::move(reply); },
                 [&](caf::error& e) { failure = client.render(e); });
  }  // the client system shuts down first; its proxy and scoped actor go before it
  REQUIRE(echo.Shutdown());

  REQUIRE(failure.empty());
  REQUIRE(echoed);
  REQUIRE(echoed->bytes == frame.bytes);
  auto view = Open(*echoed);
  REQUIRE(view.ok());
  REQUIRE(view->root().getDim() == 32);
  REQUIRE(view->root().getStateWidth() == 32);
  REQUIRE(view->root().getKeys().size() == 4096);
  float last;
  std::memcpy(&last, view->root().getData().end() - sizeof(float), sizeof(float));
  REQUIRE(last == testing::RowValue(4095, 63));
}

}  // namespace
}  // namespace actorrec::wire
