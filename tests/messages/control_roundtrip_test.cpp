// Every control-plane kind survives Encode and Open with every field intact.
#include <catch2/catch.hpp>

#include <string>

#include "messages/kinds.hpp"
#include "messages/text.hpp"
#include "tests/messages/examples.hpp"

namespace actorrec::wire {
namespace {

using testing::MakeHeartbeat;
using testing::MakeStats;

TEST_CASE("a Hello round-trips with member, build and config digest", "[messages]") {
  auto frame = Encode<Hello>([](Hello::Builder b) {
    b.setMember("node-b");
    b.setBuild("0.1.0-3-gdeadbeef0123");
    b.setConfigDigest("9f86d081884c7d65");
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto r = view->root();
  REQUIRE(Str(r.getMember()) == "node-b");
  REQUIRE(Str(r.getBuild()) == "0.1.0-3-gdeadbeef0123");
  REQUIRE(Str(r.getConfigDigest()) == "9f86d081884c7d65");
  REQUIRE_FALSE(view->copied());
}

TEST_CASE("a Challenge round-trips its nonce byte for byte, zeros included", "[messages]") {
  const std::string nonce("\x00\x01\xfe\xff\x10\x20\x30\x00\x7f\x80\x81\x90\xa0\xb0\xc0\xd0", 16);
  auto frame = Encode<Challenge>([&](Challenge::Builder b) { b.setNonce(AsData(nonce)); });
  auto view = Open(frame);
  REQUIRE(view.ok());
  REQUIRE(Bytes(view->root().getNonce()) == nonce);
}

TEST_CASE("a Join round-trips proof, identity and process details", "[messages]") {
  const std::string proof(32, '\xab');
  auto frame = Encode<Join>([&](Join::Builder b) {
    b.setMember("node-b");
    b.setProof(AsData(proof));
    b.setBuild("0.1.0");
    b.setConfigDigest("abc");
    b.setPid(4242);
    b.setHostName("host-7");
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto r = view->root();
  REQUIRE(Str(r.getMember()) == "node-b");
  REQUIRE(Bytes(r.getProof()) == proof);
  REQUIRE(Str(r.getBuild()) == "0.1.0");
  REQUIRE(Str(r.getConfigDigest()) == "abc");
  REQUIRE(r.getPid() == 4242);
  REQUIRE(Str(r.getHostName()) == "host-7");
}

TEST_CASE("a JoinReply round-trips either an admission or a refusal", "[messages]") {
  SECTION("admitted") {
    auto frame = Encode<JoinReply>([](JoinReply::Builder b) {
      auto a = b.initAdmitted();
      a.setCoordinator("node-a");
      a.setMembers(3);
    });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().isAdmitted());
    REQUIRE(Str(view->root().getAdmitted().getCoordinator()) == "node-a");
    REQUIRE(view->root().getAdmitted().getMembers() == 3);
  }
  SECTION("refused") {
    auto frame = Encode<JoinReply>([](JoinReply::Builder b) {
      auto r = b.initRefused();
      r.setReason(JoinReply::Refused::Reason::CONFIG_MISMATCH);
      r.setMessage("config digest abc differs from def");
    });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().isRefused());
    REQUIRE(view->root().getRefused().getReason() == JoinReply::Refused::Reason::CONFIG_MISMATCH);
    REQUIRE(Str(view->root().getRefused().getMessage()) == "config digest abc differs from def");
  }
}

TEST_CASE("a Register round-trips member, role, index and name", "[messages]") {
  auto frame = Encode<Register>([](Register::Builder b) {
    b.setMember("node-b");
    b.setRole(Role::CACHE_PARTITION);
    b.setIndex(5);
    b.setName("cache_partition[5]");
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto r = view->root();
  REQUIRE(Str(r.getMember()) == "node-b");
  REQUIRE(r.getRole() == Role::CACHE_PARTITION);
  REQUIRE(r.getIndex() == 5);
  REQUIRE(Str(r.getName()) == "cache_partition[5]");
}

TEST_CASE("a Heartbeat round-trips sequence, clock and actor count", "[messages]") {
  auto frame = MakeHeartbeat();
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto r = view->root();
  REQUIRE(Str(r.getMember()) == "node-a");
  REQUIRE(r.getSeq() == 41);
  REQUIRE(r.getSentUnixNanos() == 1700000000123456789);
  REQUIRE(r.getActors() == 9);
}

TEST_CASE("a PeerDown round-trips the lost member, the reason and a negative last batch", "[messages]") {
  auto frame = Encode<PeerDown>([](PeerDown::Builder b) {
    b.setMember("node-c");
    b.setReason("no heartbeat for 3000 ms");
    b.setLastBatch(-1);
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  REQUIRE(Str(view->root().getMember()) == "node-c");
  REQUIRE(Str(view->root().getReason()) == "no heartbeat for 3000 ms");
  REQUIRE(view->root().getLastBatch() == -1);
}

TEST_CASE("a Stop round-trips its reason and message", "[messages]") {
  auto frame = Encode<Stop>([](Stop::Builder b) {
    b.setReason(Stop::Reason::PEER_LOST);
    b.setMessage("node-c lost");
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  REQUIRE(view->root().getReason() == Stop::Reason::PEER_LOST);
  REQUIRE(Str(view->root().getMessage()) == "node-c lost");
}

TEST_CASE("a Stats report round-trips every stat in order", "[messages]") {
  auto frame = MakeStats();
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto r = view->root();
  REQUIRE(Str(r.getActor()) == "trainer[1]");
  REQUIRE(r.getRole() == Role::TRAINER);
  REQUIRE(r.getBatch() == 12);
  REQUIRE(r.getStats().size() == 2);
  REQUIRE(Str(r.getStats()[0].getName()) == "cache.occupancy");
  REQUIRE(r.getStats()[0].getValue() == 8.0);
  REQUIRE(Str(r.getStats()[0].getUnit()) == "rows");
  REQUIRE(Str(r.getStats()[1].getName()) == "train.throughput");
  REQUIRE(r.getStats()[1].getValue() == 1234.5);
  REQUIRE(Str(r.getStats()[1].getUnit()) == "samples/s");
}

TEST_CASE("an InspectorQuery round-trips each of its three questions", "[messages]") {
  SECTION("list actors") {
    auto frame = Encode<InspectorQuery>([](InspectorQuery::Builder b) { b.setListActors(); });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().isListActors());
  }
  SECTION("actor stats") {
    auto frame = Encode<InspectorQuery>([](InspectorQuery::Builder b) { b.setActorStats("oracle"); });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().isActorStats());
    REQUIRE(Str(view->root().getActorStats()) == "oracle");
  }
  SECTION("plan") {
    auto frame = Encode<InspectorQuery>([](InspectorQuery::Builder b) {
      auto p = b.initPlan();
      p.setBatch(12);
      p.setTrainer(3);
    });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().isPlan());
    REQUIRE(view->root().getPlan().getBatch() == 12);
    REQUIRE(view->root().getPlan().getTrainer() == 3);
  }
}

TEST_CASE("an InspectorReply round-trips actors, stats or a plan", "[messages]") {
  SECTION("actors") {
    auto frame = Encode<InspectorReply>([](InspectorReply::Builder b) {
      auto actors = b.initActors(2);
      actors[0].setName("oracle");
      actors[0].setRole(Role::ORACLE);
      actors[0].setMember("node-a");
      actors[0].setMailbox(17);
      actors[0].setAlive(true);
      actors[1].setName("embedding_shard[2]");
      actors[1].setRole(Role::EMBEDDING);
      actors[1].setMember("node-b");
      actors[1].setMailbox(0);
      actors[1].setAlive(false);
    });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().isActors());
    auto actors = view->root().getActors();
    REQUIRE(actors.size() == 2);
    REQUIRE(Str(actors[0].getName()) == "oracle");
    REQUIRE(actors[0].getRole() == Role::ORACLE);
    REQUIRE(Str(actors[0].getMember()) == "node-a");
    REQUIRE(actors[0].getMailbox() == 17);
    REQUIRE(actors[0].getAlive());
    REQUIRE(Str(actors[1].getName()) == "embedding_shard[2]");
    REQUIRE(actors[1].getRole() == Role::EMBEDDING);
    REQUIRE(Str(actors[1].getMember()) == "node-b");
    REQUIRE(actors[1].getMailbox() == 0);
    REQUIRE_FALSE(actors[1].getAlive());
  }
  SECTION("stats") {
    auto frame = Encode<InspectorReply>([](InspectorReply::Builder b) {
      auto s = b.initStats();
      s.setActor("sync_scheduler[0]");
      s.setRole(Role::SYNC_SCHEDULER);
      s.setBatch(-1);
      s.initStats(1)[0].setName("sync.queue");
    });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().isStats());
    auto s = view->root().getStats();
    REQUIRE(Str(s.getActor()) == "sync_scheduler[0]");
    REQUIRE(s.getRole() == Role::SYNC_SCHEDULER);
    REQUIRE(s.getBatch() == -1);
    REQUIRE(s.getStats().size() == 1);
    REQUIRE(Str(s.getStats()[0].getName()) == "sync.queue");
    REQUIRE(s.getStats()[0].getValue() == 0.0);
    REQUIRE(Str(s.getStats()[0].getUnit()).empty());
  }
  SECTION("plan json") {
    auto frame = Encode<InspectorReply>([](InspectorReply::Builder b) { b.setPlanJson("{\"batch\": 12}"); });
    auto view = Open(frame);
    REQUIRE(view.ok());
    REQUIRE(view->root().isPlanJson());
    REQUIRE(Str(view->root().getPlanJson()) == "{\"batch\": 12}");
  }
}

TEST_CASE("a CheckpointControl round-trips id, batch, directory and each step", "[messages]") {
  auto step = GENERATE(CheckpointControl::BEGIN, CheckpointControl::COMMIT, CheckpointControl::ABORT);
  auto frame = Encode<CheckpointControl>([&](CheckpointControl::Builder b) {
    b.setCheckpointId(5);
    b.setBatch(1000);
    b.setDirectory("/ckpt/run-1/5");
    if (step == CheckpointControl::BEGIN) b.setBegin();
    if (step == CheckpointControl::COMMIT) b.setCommit();
    if (step == CheckpointControl::ABORT) b.setAbort();
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto r = view->root();
  REQUIRE(r.getCheckpointId() == 5);
  REQUIRE(r.getBatch() == 1000);
  REQUIRE(Str(r.getDirectory()) == "/ckpt/run-1/5");
  REQUIRE(r.which() == step);
}

TEST_CASE("a CheckpointAck round-trips the part's size, digest and outcome", "[messages]") {
  auto frame = Encode<CheckpointAck>([](CheckpointAck::Builder b) {
    b.setCheckpointId(5);
    b.setActor("embedding_shard[1]");
    b.setOk(false);
    b.setBytes(uint64_t{5} << 33);
    b.setDigest("0123456789abcdef");
    b.setMessage("disk full");
  });
  auto view = Open(frame);
  REQUIRE(view.ok());
  auto r = view->root();
  REQUIRE(r.getCheckpointId() == 5);
  REQUIRE(Str(r.getActor()) == "embedding_shard[1]");
  REQUIRE_FALSE(r.getOk());
  REQUIRE(r.getBytes() == (uint64_t{5} << 33));
  REQUIRE(Str(r.getDigest()) == "0123456789abcdef");
  REQUIRE(Str(r.getMessage()) == "disk full");
}

TEST_CASE("an ErrorReply round-trips its kind and message", "[messages]") {
  auto frame = MakeError(ErrorReply::Kind::OVERLOADED, "embedding_shard[1]: 900 fetches queued");
  auto view = Open(frame);
  REQUIRE(view.ok());
  REQUIRE(view->root().getKind() == ErrorReply::Kind::OVERLOADED);
  REQUIRE(Str(view->root().getMessage()) == "embedding_shard[1]: 900 fetches queued");
}

}  // namespace
}  // namespace actorrec::wire
