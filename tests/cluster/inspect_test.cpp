// The inspector of a running `actorrec train`, over real HTTP on 127.0.0.1:
// its JSON API, the page, /metrics, the terminal view, and a fuzz of
// malformed requests that must not change the run's result.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <thread>

#include "http/client.hpp"
#include "tests/cluster/child_process.hpp"
#include "tests/cluster/topology.hpp"

using namespace actorrec::testing;
using namespace std::chrono_literals;

namespace {

// The port of the "inspector: http://127.0.0.1:PORT/" line, once printed.
uint16_t InspectorPort(const ChildProcess& train) {
  REQUIRE(train.WaitForLog("inspector: http://127.0.0.1:", 60s));
  std::smatch m;
  const std::string log = train.Log();
  REQUIRE(std::regex_search(log, m, std::regex("inspector: http://127\\.0\\.0\\.1:([0-9]+)/")));
  return static_cast<uint16_t>(std::stoi(m[1]));
}

std::vector<std::string> TrainArgs(const TempDir& dir, int batches, const std::string& inspect) {
  return {ActorrecBinary(), "train", "--set", "training.max_batches=" + std::to_string(batches), "--set",
          "run.output_dir=" + dir.File("runs"), "--inspect", inspect};
}

// Polls the snapshot until `pred` holds for it (or the run is gone).
std::string SnapshotWhen(uint16_t port, const std::function<bool(const std::string&)>& pred) {
  std::string body;
  for (int i = 0; i < 600; ++i) {
    auto r = actorrec::http::Get("127.0.0.1", port, "/api/snapshot");
    if (r.ok() && r->status == 200) {
      body = r->body;
      if (pred(body)) return body;
    }
    std::this_thread::sleep_for(100ms);
  }
  return body;
}

}  // namespace

TEST_CASE("a training run serves its inspector: JSON snapshot, stream, page, /metrics and the terminal view",
          "[cli][inspect]") {
  TempDir dir;
  std::vector<std::string> args = TrainArgs(dir, 400, "127.0.0.1:0");
  args.push_back("--roofline");  // the GEMM rate against it
  ChildProcess train(args, dir.File("train.log"));
  const uint16_t port = InspectorPort(train);
  // Batches move while we watch.
  const std::string early = SnapshotWhen(port, [](const std::string& s) {
    return s.find("\"state\":\"training\"") != std::string::npos &&
           !std::regex_search(s, std::regex("\"global_batch\":0,"));
  });
  INFO(early.substr(0, 2000));
  REQUIRE_THAT(early, Catch::Contains("\"state\":\"training\""));
  REQUIRE_THAT(early, Catch::Contains("\"run\":{\"name\":\"local\",\"model\":\"dlrm\",\"mode\":\"lrpp_delayed\""));
  for (const char* actor : {"\"name\":\"oracle\",\"role\":\"oracle\"", "\"name\":\"trainer[1]\",\"role\":\"trainer\"",
                            "\"name\":\"embedding_shard[0]\"", "\"name\":\"batch_sampler\""}) {
    REQUIRE_THAT(early, Catch::Contains(actor));
  }
  REQUIRE_THAT(early, Catch::Contains("\"recent\":[{\"batch\":"));
  REQUIRE_THAT(early, Catch::Contains("\"loss_curve\":[["));
  REQUIRE_THAT(early, Catch::Contains("\"samples_per_s\":"));
  std::smatch m;
  REQUIRE(std::regex_search(early, m, std::regex("\"global_batch\":([0-9]+)")));
  const int first_seen = std::stoi(m[1]);
  const std::string later = SnapshotWhen(port, [&](const std::string& s) {
    std::smatch n;
    return std::regex_search(s, n, std::regex("\"global_batch\":([0-9]+)")) && std::stoi(n[1]) > first_seen;
  });
  REQUIRE(std::regex_search(later, m, std::regex("\"global_batch\":([0-9]+)")));
  REQUIRE(std::stoi(m[1]) > first_seen);

  // Each actor's mailbox and messages/s (a rate once reads a second apart
  // saw it work); each trainer's partition and current plan; the shards;
  // the GEMM rate against the roofline.
  const std::regex oracle_rate("\"name\":\"oracle\",\"role\":\"oracle\",\"state\":\"running\",\"mailbox\":[0-9]+,"
                               "\"messages\":([0-9]+),\"messages_per_s\":([0-9.e+]+)\\}");
  const std::string busy = SnapshotWhen(port, [&](const std::string& s) {
    std::smatch r;
    return std::regex_search(s, r, oracle_rate) && std::stod(r[2]) > 0 && s.find("\"shards\":[{") != std::string::npos;
  });
  INFO(busy.substr(0, 4000));
  REQUIRE(std::regex_search(busy, m, oracle_rate));
  REQUIRE(std::stod(m[2]) > 0);
  REQUIRE(std::regex_search(busy, std::regex("\"name\":\"trainer\\[1\\]\",\"role\":\"trainer\",\"state\":\"running\","
                                             "\"mailbox\":[0-9]+,\"messages\":[1-9][0-9]*,")));
  REQUIRE_THAT(busy, Catch::Contains("\"name\":\"supervisor\",\"role\":\"supervisor\",\"state\":\"running\",\"mailbox\":null"));
  REQUIRE(std::regex_search(busy, m, std::regex("\\{\"trainer\":1,\"partition\":\\{\"occupancy\":([0-9]+),\"slots\":([0-9]+),"
                                                "\"occupancy_share\":[0-9.e-]+,\"hit_share\":([0-9.e-]+),")));
  REQUIRE(std::stoll(m[1]) > 0);
  REQUIRE(std::stoll(m[1]) <= std::stoll(m[2]));
  REQUIRE(std::stod(m[3]) > 0);
  REQUIRE(std::stod(m[3]) < 1);
  REQUIRE(std::regex_search(busy, std::regex("\"plan\":\\{\"batch\":[0-9]+,\"epoch\":0,\"lookahead\":[1-9][0-9]*,\"rows\":[1-9]")));
  REQUIRE(std::regex_search(busy, std::regex("\"bytes\":\\{\"shards_to_partition\":[1-9][0-9]*,\"partition_to_shards\":[0-9]+,"
                                             "\"sync\":[1-9][0-9]*\\}")));
  REQUIRE(std::regex_search(busy, std::regex("\"shards\":\\[\\{\"shard\":0,\"rows\":[1-9][0-9]*,\"bytes\":[1-9]")));
  REQUIRE(std::regex_search(busy, m, std::regex("\"gemm\":\\{\"roofline_gflops\":([0-9.e+]+),\"flops_per_sample\":[1-9][0-9]*,"
                                                "\"gflops\":([0-9.e+-]+),\"of_roofline\":")));
  REQUIRE(std::stod(m[1]) > 0);
  REQUIRE(std::stod(m[2]) > 0);

  auto page = actorrec::http::Get("127.0.0.1", port, "/");
  REQUIRE(page.ok());
  REQUIRE(page->status == 200);
  REQUIRE_THAT(page->content_type, Catch::StartsWith("text/html"));
  REQUIRE_THAT(page->body, Catch::Contains("<canvas id=\"loss\""));
  REQUIRE_THAT(page->body, Catch::Contains("EventSource"));
  REQUIRE(page->body.find("http://") == std::string::npos);  // nothing from outside
  REQUIRE(page->body.find("https://") == std::string::npos);

  auto metrics = actorrec::http::Get("127.0.0.1", port, "/metrics");
  REQUIRE(metrics.ok());
  REQUIRE_THAT(metrics->body, Catch::Contains("# TYPE actorrec_batches_total counter\nactorrec_batches_total "));
  REQUIRE_THAT(metrics->body, Catch::Contains("actorrec_phase_ms{phase=\"forward\"} "));
  for (const char* family : {"actorrec_actor_mailbox_depth{actor=\"oracle\"} ", "actorrec_actor_messages_total{actor=\"trainer[0]\"} ",
                             "actorrec_cache_occupancy_slots{trainer=\"1\"} ", "actorrec_cache_hit_share{trainer=\"0\"} ",
                             "actorrec_link_bytes_total{trainer=\"0\",link=\"sync\"} ", "actorrec_shard_rows{shard=\"1\"} ",
                             "actorrec_gemm_roofline_gflops "}) {
    REQUIRE_THAT(metrics->body, Catch::Contains(family));
  }

  auto stream = actorrec::http::Exchange("127.0.0.1", port, "GET /api/events HTTP/1.1\r\nHost: t\r\n\r\n", 1500ms);
  REQUIRE(stream.ok());
  REQUIRE_THAT(*stream, Catch::Contains("text/event-stream"));
  REQUIRE_THAT(*stream, Catch::Contains("\r\n\r\ndata: {\"version\":"));

  auto once = Actorrec(dir, {"inspect", "127.0.0.1:" + std::to_string(port), "--once", "--json"}, "once.log", 30s);
  REQUIRE(once.code == 0);
  REQUIRE_THAT(once.output, Catch::StartsWith("{\"version\":"));
  REQUIRE_THAT(once.output, Catch::Contains("\"members\":[{\"name\":"));
  auto text = Actorrec(dir, {"inspect", "127.0.0.1:" + std::to_string(port), "--once"}, "text.log", 30s);
  REQUIRE(text.code == 0);
  REQUIRE_THAT(text.output, Catch::Contains("actorrec local  dlrm lrpp_delayed (actor pipeline, 2 trainers"));
  REQUIRE_THAT(text.output, Catch::Contains("samples/s"));
  REQUIRE(std::regex_search(text.output, std::regex("trainer\\[1\\]: cache [1-9][0-9]*/[0-9]+ slots, hit [0-9.]+ %; plan L")));
  REQUIRE(std::regex_search(text.output, std::regex(" oracle \\([0-9]+ queued(, [0-9]+/s)?\\)")));
  REQUIRE(std::regex_search(text.output, std::regex("GEMM [0-9.]+ GFLOP/s of a [0-9.]+ GFLOP/s roofline")));

  auto exit = train.WaitExit(240s);
  REQUIRE(exit.has_value());
  REQUIRE(*exit == 0);
  auto gone = Actorrec(dir, {"inspect", "127.0.0.1:" + std::to_string(port), "--once"}, "gone.log", 30s);
  REQUIRE(gone.code == 1);
  REQUIRE_THAT(gone.output, Catch::Contains("cannot connect to 127.0.0.1:"));
}

TEST_CASE("the inspector on a non-local address asks for a token; bad addresses are named", "[cli][inspect]") {
  TempDir dir;
  // The embedded default has a cluster secret: the address printed carries its token.
  auto open = Actorrec(dir, {"train", "--set", "training.max_batches=1", "--inspect", "0.0.0.0:0"});
  REQUIRE(open.code == 0);
  REQUIRE_THAT(open.output, Catch::Contains("inspector: http://0.0.0.0:"));
  REQUIRE_THAT(open.output, Catch::Contains("/?token="));
  auto bad = Actorrec(dir, {"train", "--set", "run.inspect_address=nowhere"});
  REQUIRE(bad.code == 2);
  REQUIRE_THAT(bad.output, Catch::Contains("run.inspect_address: expected HOST:PORT"));
  auto client = Actorrec(dir, {"inspect", "no-port"});
  REQUIRE(client.code == 2);
  REQUIRE_THAT(client.output, Catch::Contains("'no-port' is not HOST:PORT"));
}

TEST_CASE("a fuzz of malformed requests during training is answered and changes nothing in the result",
          "[cli][inspect]") {
  TempDir quiet_dir, fuzz_dir;
  auto quiet = Actorrec(quiet_dir, {"train", "--set", "training.max_batches=120", "--inspect", "off"});
  INFO(quiet.output);
  REQUIRE(quiet.code == 0);
  REQUIRE(quiet.output.find("inspector: ") == std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(quiet.output, m, std::regex("parameter digest: ([0-9a-f]{16})")));
  const std::string quiet_digest = m[1];

  ChildProcess train(TrainArgs(fuzz_dir, 120, "127.0.0.1:0"), fuzz_dir.File("train.log"));
  const uint16_t port = InspectorPort(train);
  const std::string malformed[] = {
      "GARBAGE\r\n\r\n",
      "GET / HTTP/9.9\r\nHost: x\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(40000, 'z') + "\r\n\r\n",
      "GET / HTTP/1.1\r\n\x01\x02\x03\r\n\r\n",
      "POST /api/snapshot HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody",
      std::string("\0\0\0\0GET /\r\n\r\n", 14),
      "GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  };
  uint64_t x = 88172645463325252ull;
  int answered = 0, sent = 0;
  std::string unanswered;
  // Until the run ends: once a connection is refused, the service has
  // stopped (the end of the run), and what was sent before must have been
  // answered.
  bool gone = false;
  for (int round = 0; round < 40 && !gone; ++round) {
    for (size_t i = 0; i < std::size(malformed) && !gone; ++i) {
      auto r = actorrec::http::Exchange("127.0.0.1", port, malformed[i], 5s);
      // Refused, or closed unanswered as the service stopped: the run ended.
      const bool closed = r.ok() && r->empty() && !actorrec::http::Get("127.0.0.1", port, "/healthz", 2s).ok();
      if (closed || (!r.ok() && r.status().message().find("cannot connect") != std::string::npos)) {
        gone = true;
        break;
      }
      ++sent;
      if (r.ok() && (r->rfind("HTTP/1.1 4", 0) == 0 || r->rfind("HTTP/1.1 505", 0) == 0)) {
        ++answered;
      } else {
        unanswered += " " + std::to_string(round) + ":" + std::to_string(i) + (r.ok() ? "" : " " + r.status().message());
      }
    }
    std::string noise(300, '\0');
    for (char& c : noise) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>(x);
    }
    (void)actorrec::http::Exchange("127.0.0.1", port, noise, 300ms);
    (void)actorrec::http::Exchange("127.0.0.1", port, "GET /api/snapshot HTTP/1.1\r\nHo", 50ms);  // hangs up
  }
  INFO("unanswered (round:request):" << unanswered);
  REQUIRE(sent > 0);
  REQUIRE(answered == sent);
  auto exit = train.WaitExit(240s);
  REQUIRE(exit.has_value());
  REQUIRE(*exit == 0);
  const std::string log = train.Log();
  REQUIRE_THAT(log, Catch::Contains("parameter digest: " + quiet_digest));
  REQUIRE_THAT(log, Catch::Contains("inspector: HTTP 400 to 127.0.0.1"));
}

TEST_CASE("a run directory keeps every attempt, and report renders it as one HTML page", "[cli][inspect]") {
  TempDir dir;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto r = Actorrec(dir, {"train", "--set", "training.max_batches=3", "--inspect", "off"},
                      "attempt" + std::to_string(attempt) + ".log");
    INFO(r.output);
    REQUIRE(r.code == 0);
  }
  const std::string metrics = ReadBytes(dir.File("runs/local/metrics.jsonl"));
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  REQUIRE(count(metrics, "{\"event\":\"attempt\",") == 2);
  REQUIRE(count(metrics, "{\"event\":\"batch\",") == 6);
  REQUIRE(count(metrics, "{\"event\":\"summary\",") == 2);
  const std::string log = ReadBytes(dir.File("runs/local/train.log"));
  REQUIRE(count(log, "---- attempt ") == 2);
  REQUIRE(count(log, "summary: 3 batches") == 2);
  const std::string config = ReadBytes(dir.File("runs/local/config.toml"));
  REQUIRE_THAT(config, Catch::Contains("# with --set training.max_batches=3\n"));
  REQUIRE_THAT(config, Catch::Contains("[training]"));

  auto report = Actorrec(dir, {"report", "runs/local"}, "report.log", 60s);
  INFO(report.output);
  REQUIRE(report.code == 0);
  REQUIRE_THAT(report.output, Catch::Contains("report: runs/local/report.html"));
  const std::string html = ReadBytes(dir.File("runs/local/report.html"));
  REQUIRE_THAT(html, Catch::StartsWith("<!DOCTYPE html>"));
  REQUIRE(count(html, "<polyline") == 2);  // loss and eval AUC
  REQUIRE(count(html, "class=\"breakdown\"") == 2);  // one per attempt
  REQUIRE_THAT(html, Catch::Contains("<tr><td>2</td>"));
  REQUIRE(html.find("<script") == std::string::npos);
  REQUIRE(html.find("https://") == std::string::npos);

  auto missing = Actorrec(dir, {"report", "runs/none"}, "missing.log", 60s);
  REQUIRE(missing.code == 2);
  REQUIRE_THAT(missing.output, Catch::Contains("cannot read runs/none/metrics.jsonl"));
}

TEST_CASE("a cluster's coordinator serves the inspector at node --inspect, with every member's actors",
          "[cli][inspect]") {
  TempDir dir;
  const uint16_t port_a = FreePort(), port_b = FreePort(), inspect_port = FreePort();
  WriteBytes(dir.File("topology.toml"),
             SplitRun(dir.File("runs"),
                      Member("a", port_a, "\"sampler\", \"oracle\"") +
                          Member("b", port_b, "\"embedding\", \"trainer\"", "trainers = 2\nembedding_shards = 2\n"),
                      "lrpp_delayed", 40960));
  const std::string at = "127.0.0.1:" + std::to_string(inspect_port);
  ChildProcess a({ActorrecBinary(), "node", "--config", dir.File("topology.toml"), "--member", "a", "--inspect", at},
                 dir.File("a.log"));
  ChildProcess b({ActorrecBinary(), "node", "--config", dir.File("topology.toml"), "--member", "b"}, dir.File("b.log"));
  INFO("log of a:\n" << a.Log() << "\nlog of b:\n" << b.Log());
  REQUIRE(a.WaitForLog("inspector: http://" + at + "/", 60s));
  const std::string seen = SnapshotWhen(inspect_port, [](const std::string& s) {
    return s.find("\"state\":\"training\"") != std::string::npos &&
           s.find("\"name\":\"trainer[1]\"") != std::string::npos;
  });
  INFO(seen.substr(0, 2000));
  CHECK_THAT(seen, Catch::Contains("\"name\":\"trainer[1]\",\"role\":\"trainer\""));
  CHECK_THAT(seen, Catch::Contains("\"name\":\"oracle\",\"role\":\"oracle\""));
  REQUIRE(a.WaitExit(120s) == 0);
  REQUIRE(b.WaitExit(30s) == 0);
}
