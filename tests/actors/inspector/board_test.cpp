// The inspector's board and routes, without a server: what a batch does to
// the snapshot, the bounded curve, Prometheus text, the token and the
// report of a metrics file.
#include "actors/inspector/board.hpp"

#include <catch2/catch.hpp>

#include <string>

#include "actors/inspector/inspector_service.hpp"
#include "actors/inspector/run_report.hpp"
#include "http/request_parser.hpp"

using namespace actorrec;
using namespace actorrec::inspector;

namespace {

trainer::StepReport Batch(uint64_t b, double loss) {
  trainer::StepReport f;
  f.batch = b;
  f.samples = 100;
  f.loss_sum = loss * 100;
  f.unique_rows = 10;
  f.missed_rows = 4;
  f.forward_s = 0.0025;
  return f;
}

// Since the run began working, at batch b's end.
double Elapsed(uint64_t b) { return 0.1 * static_cast<double>(b + 1); }

http::Request Get(const std::string& target) {
  http::RequestParser p;
  REQUIRE(p.Feed("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n") == http::RequestParser::State::kComplete);
  return p.request();
}

}  // namespace

TEST_CASE("the board's snapshot follows the batches, evaluations and actors", "[inspector]") {
  Board board;
  RunInfo run;
  run.name = "r\"1";
  run.planned_batches = 10;
  board.SetRun(run);
  board.SetActors({{"m", "h", "trainer[0]", "trainer"}, {"m", "h", "oracle", "oracle"}});
  board.SetState("training");
  const uint64_t v0 = board.version();
  for (uint64_t b = 0; b < 4; ++b) board.AddBatch(Batch(b, 0.5), Elapsed(b));
  board.AddEval(4, 0.75, 0.4);
  REQUIRE(board.version() > v0);
  const std::string j = board.Json();
  REQUIRE_THAT(j, Catch::Contains("\"name\":\"r\\\"1\""));  // escaped
  REQUIRE_THAT(j, Catch::Contains("\"batches\":4,\"global_batch\":4,"));
  REQUIRE_THAT(j, Catch::Contains("\"samples_per_s\":1000,"));
  REQUIRE_THAT(j, Catch::Contains("\"eta_s\":0.6,\"fraction\":0.4"));
  REQUIRE_THAT(j, Catch::Contains("\"hit_share\":0.6,"));
  REQUIRE_THAT(j, Catch::Contains("\"members\":[{\"name\":\"m\",\"host\":\"h\",\"actors\":[{\"name\":\"trainer[0]\","
                                  "\"role\":\"trainer\",\"state\":\"running\",\"mailbox\":null,"));
  REQUIRE_THAT(j, Catch::Contains("\"eval\":[{\"batches\":4,\"auc\":0.75,\"log_loss\":0.4}]"));
  REQUIRE_THAT(j, Catch::Contains("\"loss_curve\":[[1,0.5],[2,0.5],[3,0.5],[4,0.5]]"));
  REQUIRE_THAT(j, Catch::Contains("\"trainers\":[],\"shards\":[],\"gemm\":null,"));  // lockstep-like, no roofline
  const std::string text = board.Text();
  REQUIRE_THAT(text, Catch::Contains("batch 4/10 (40 %)"));
  REQUIRE_THAT(text, Catch::Contains("AUC 0.7500"));
  const std::string prom = board.Prometheus();
  REQUIRE_THAT(prom, Catch::Contains("# TYPE actorrec_batches_total counter\nactorrec_batches_total 4\n"));
  REQUIRE_THAT(prom, Catch::Contains("actorrec_phase_ms{phase=\"forward\"} 2.5\n"));
  REQUIRE_THAT(prom, Catch::Contains("actorrec_eval_auc 0.75\n"));
}

TEST_CASE("the board's memory stays bounded however long the run", "[inspector]") {
  Board board;
  for (uint64_t b = 0; b < 20000; ++b) board.AddBatch(Batch(b, 1.0 / static_cast<double>(b + 1)), Elapsed(b));
  const std::string j = board.Json();
  size_t points = 0;
  const size_t curve = j.find("\"loss_curve\":[");
  for (size_t at = j.find("[", curve + 14); at < j.find("]]", curve); at = j.find("[", at + 1)) ++points;
  REQUIRE(points < Board::kCurvePoints);
  REQUIRE(points > Board::kCurvePoints / 4);
  size_t recent = 0;
  for (size_t at = j.find("{\"batch\":"); at != std::string::npos; at = j.find("{\"batch\":", at + 1)) ++recent;
  REQUIRE(recent == Board::kRecent + 1);  // the ring and last_batch
}

TEST_CASE("routes: the page, the API, Prometheus, wrong methods and paths, and the token", "[inspector]") {
  Board board;
  board.AddBatch(Batch(0, 0.3), Elapsed(0));
  SECTION("no token needed") {
    auto page = Route(board, Get("/"), "");
    REQUIRE(page.status == 200);
    REQUIRE_THAT(page.content_type, Catch::StartsWith("text/html"));
    REQUIRE_THAT(page.body, Catch::Contains("<canvas id=\"phases\""));
    REQUIRE(Route(board, Get("/api/snapshot"), "").body == board.Json());
    REQUIRE(Route(board, Get("/api/events"), "").stream);
    REQUIRE(Route(board, Get("/metrics"), "").body == board.Prometheus());
    REQUIRE(Route(board, Get("/nope"), "").status == 404);
    http::Request post = Get("/");
    post.method = "POST";
    REQUIRE(Route(board, post, "").status == 405);
  }
  SECTION("a token") {
    const std::string token = InspectorToken("a cluster secret of some length");
    REQUIRE(token.size() == 32);
    REQUIRE(token != InspectorToken("another cluster secret, longer"));
    REQUIRE(Route(board, Get("/api/snapshot"), token).status == 401);
    REQUIRE(Route(board, Get("/api/snapshot?token=wrong"), token).status == 401);
    REQUIRE(Route(board, Get("/api/snapshot?token=" + token), token).status == 200);
    http::Request bearer = Get("/metrics");
    bearer.headers.emplace_back("authorization", "Bearer " + token);
    REQUIRE(Route(board, bearer, token).status == 200);
  }
}

TEST_CASE("the service binds loopback without a secret, and refuses another address without one", "[inspector]") {
  auto board = std::make_shared<Board>();
  REQUIRE(IsLoopback("127.0.0.1"));
  REQUIRE(IsLoopback("::1"));
  REQUIRE_FALSE(IsLoopback("0.0.0.0"));
  auto open = InspectorService::Start("0.0.0.0:0", "", board);
  REQUIRE_FALSE(open.ok());
  REQUIRE_THAT(open.status().message(), Catch::Contains("needs cluster.secret"));
  auto bad = InspectorService::Start("127.0.0.1", "", board);
  REQUIRE_FALSE(bad.ok());
  REQUIRE_THAT(bad.status().message(), Catch::Contains("not HOST:PORT"));
  auto local = InspectorService::Start("127.0.0.1:0", "", board);
  REQUIRE(local.ok());
  REQUIRE_THAT((*local)->url(), Catch::StartsWith("http://127.0.0.1:"));
}

TEST_CASE("a report renders each attempt of a metrics file, and names a line that is not one", "[inspector]") {
  const std::string metrics =
      "{\"event\":\"attempt\",\"started\":\"T1\",\"first_batch\":0}\n"
      "{\"event\":\"batch\",\"epoch\":0,\"batch\":0,\"samples\":2,\"loss\":0.7}\n"
      "{\"event\":\"batch\",\"epoch\":0,\"batch\":1,\"samples\":2,\"loss\":0.6}\n"
      "{\"event\":\"eval\",\"batches\":2,\"samples\":9,\"auc\":0.7,\"log_loss\":0.5}\n"
      "{\"event\":\"summary\",\"batches\":2,\"samples_per_s\":1234.4,\"ms_per_batch\":{\"fetch\":1,\"forward\":2,"
      "\"backward\":3,\"dense_sync\":0,\"exposed_delayed_sync\":0,\"sparse_sync\":0,\"write_back\":0,\"optimizer\":1},"
      "\"parameter_digest\":\"0123456789abcdef\"}\n"
      "{\"event\":\"attempt\",\"started\":\"T2\",\"first_batch\":2}\n"
      "{\"event\":\"batch\",\"epoch\":0,\"batch\":2,\"samples\":2,\"loss\":0.5}\n";
  auto html = RenderReport("t<1>", metrics);
  REQUIRE(html.ok());
  REQUIRE_THAT(*html, Catch::Contains("actorrec report: t&lt;1&gt;"));
  REQUIRE_THAT(*html, Catch::Contains("<tr><td>1</td><td>T1</td><td>0</td><td>2</td><td>1234</td><td>0123456789abcdef"));
  REQUIRE_THAT(*html, Catch::Contains("<tr><td>2</td><td>T2</td><td>2</td><td>1</td>"));
  REQUIRE_THAT(*html, Catch::Contains("<title>forward 2 ms</title>"));
  auto bad = RenderReport("t", metrics + "not json\n");
  REQUIRE_FALSE(bad.ok());
  REQUIRE_THAT(bad.status().message(), Catch::Contains("line 8 is not a metrics event"));
  REQUIRE_FALSE(RenderReport("t", "").ok());
}

TEST_CASE("actor rates are the handled count's slope over a second or more", "[inspector]") {
  ActorRates rates;
  auto at = [&](double t, uint64_t handled) { rates.Sample({{"oracle", handled + 2, handled}}, t); };
  at(10.0, 0);
  REQUIRE_FALSE(rates.Rate("oracle").has_value());  // one read: no slope yet
  at(10.5, 10);
  REQUIRE_FALSE(rates.Rate("oracle").has_value());  // closer than the window
  at(11.0, 20);
  REQUIRE(rates.Rate("oracle") == Approx(20.0));
  at(11.5, 100);
  REQUIRE(rates.Rate("oracle") == Approx(20.0));  // kept until a window passed
  at(12.5, 170);
  REQUIRE(rates.Rate("oracle") == Approx(100.0));
  REQUIRE_FALSE(rates.Rate("trainer[0]").has_value());
}

TEST_CASE("the board shows each actor's mailbox, each trainer's partition and plan, the shards and the GEMM rate",
          "[inspector]") {
  Board board;
  RunInfo run;
  run.trainers = 2;
  run.cache_slots = 200;
  run.row_bytes = 16;
  board.SetRun(run);
  board.SetActors({{"m", "h", "trainer[0]", "trainer"}, {"m", "h", "supervisor", "supervisor"}});
  uint64_t handled = 4;
  board.SetActorCounters([&] { return std::vector<ActorCount>{{"trainer[0]", handled + 3, handled}}; });
  for (uint64_t b = 0; b < 2; ++b) {
    trainer::StepReport r = Batch(b, 0.5);
    r.trainers.resize(2);
    trainer::TrainerFigures& t = r.trainers[1];
    t.rows = 100;
    t.read_misses = 25;
    t.fetched = 30;
    t.private_misses = 5;
    t.critical = 7;
    t.delayed = 8;
    t.private_rows = 9;
    t.evictions = 11;
    t.written = 6;
    t.sync_floats = 1000;
    t.occupancy = 50 + static_cast<uint32_t>(b);
    t.lookahead = 12;
    t.wait_rows_s = 0.001;
    t.critical_sync_s = 0.002;
    t.delayed_sync_s = 0.004;
    board.AddBatch(r, Elapsed(b));
  }
  board.SetShards({{10, 1000}, {20, 2000}});
  board.SetGemm(100, 1e6);
  const std::string j = board.Json();
  INFO(j);
  // The mailbox where counted, null where not (the supervisor here).
  REQUIRE_THAT(j, Catch::Contains("\"name\":\"trainer[0]\",\"role\":\"trainer\",\"state\":\"starting\",\"mailbox\":3,"
                                  "\"messages\":4,\"messages_per_s\":null}"));
  REQUIRE_THAT(j, Catch::Contains("\"name\":\"supervisor\",\"role\":\"supervisor\",\"state\":\"starting\",\"mailbox\":null,"));
  // Trainer 1's partition: the last plan's occupancy, the hit share over the attempt.
  REQUIRE_THAT(j, Catch::Contains("{\"trainer\":1,\"partition\":{\"occupancy\":51,\"slots\":200,\"occupancy_share\":0.255,"
                                  "\"hit_share\":0.75,\"last_hit_share\":0.75}"));
  REQUIRE_THAT(j, Catch::Contains("\"plan\":{\"batch\":1,\"epoch\":0,\"lookahead\":12,\"rows\":100,\"misses\":25,\"fetched\":30,"
                                  "\"private_misses\":5,\"critical\":7,\"delayed\":8,\"private\":9,\"evictions\":11,"
                                  "\"written\":6,\"wait_rows_ms\":1,"));
  REQUIRE_THAT(j, Catch::Contains("\"sync_exposed_ms\":2,\"exposed_delayed_ms\":0,\"sync_hidden_ms\":4,"));
  // Two batches of 30 rows in, 6 out, of 16 bytes; 1000 floats synced each.
  REQUIRE_THAT(j, Catch::Contains("\"bytes\":{\"shards_to_partition\":960,\"partition_to_shards\":192,\"sync\":8000}"));
  REQUIRE_THAT(j, Catch::Contains("\"shards\":[{\"shard\":0,\"rows\":10,\"bytes\":1000},{\"shard\":1,\"rows\":20,"));
  // 200 samples in 0.2 s at 1 MFLOP a sample: 1 GFLOP/s of 100.
  REQUIRE_THAT(j, Catch::Contains("\"gemm\":{\"roofline_gflops\":100,\"flops_per_sample\":1000000,\"gflops\":1,"
                                  "\"of_roofline\":0.01,"));
  const std::string text = board.Text();
  REQUIRE_THAT(text, Catch::Contains("trainer[1]: cache 51/200 slots, hit 75.0 %; plan L 12: 100 rows, 30 fetched, "
                                     "7 critical, 8 delayed, 9 private, 11 evicted"));
  REQUIRE_THAT(text, Catch::Contains("shards: [0] 10 rows"));
  REQUIRE_THAT(text, Catch::Contains("GEMM 1.0 GFLOP/s of a 100.0 GFLOP/s roofline (1.0 %)"));
  REQUIRE_THAT(text, Catch::Contains("trainer[0] (3 queued) supervisor\n"));
  handled = 5;
  const std::string prom = board.Prometheus();
  REQUIRE_THAT(prom, Catch::Contains("actorrec_actor_mailbox_depth{actor=\"trainer[0]\"} 3\n"));
  REQUIRE_THAT(prom, Catch::Contains("actorrec_actor_messages_total{actor=\"trainer[0]\"} 5\n"));
  REQUIRE_THAT(prom, Catch::Contains("actorrec_cache_occupancy_slots{trainer=\"1\"} 51\n"));
  REQUIRE_THAT(prom, Catch::Contains("actorrec_cache_hit_share{trainer=\"1\"} 0.75\n"));
  REQUIRE_THAT(prom, Catch::Contains("actorrec_link_bytes_total{trainer=\"1\",link=\"shards_to_partition\"} 960\n"));
  REQUIRE_THAT(prom, Catch::Contains("actorrec_shard_rows{shard=\"1\"} 20\n"));
  REQUIRE_THAT(prom, Catch::Contains("actorrec_gemm_roofline_gflops 100\n"));
}

TEST_CASE("a report shows the partitions, shards and GEMM rate of the inspector's last figures", "[inspector]") {
  Board board;
  RunInfo run;
  run.cache_slots = 200;
  run.row_bytes = 1000;
  board.SetRun(run);
  trainer::StepReport r = Batch(0, 0.5);
  r.trainers.resize(1);
  r.trainers[0].rows = 100;
  r.trainers[0].read_misses = 20;
  r.trainers[0].fetched = 20;
  r.trainers[0].written = 3000;
  r.trainers[0].sync_floats = 500000;
  r.trainers[0].occupancy = 150;
  board.AddBatch(r, Elapsed(0));
  board.SetShards({{7, 3000000}});
  board.SetGemm(50, 1e6);
  const std::string parts = board.PartsJson();
  REQUIRE_THAT(parts, Catch::StartsWith("{\"trainers\":[{\"trainer\":0,"));
  const std::string metrics = "{\"event\":\"batch\",\"epoch\":0,\"batch\":0,\"samples\":2,\"loss\":0.7}\n"
                              "{\"event\":\"inspector\"," + parts.substr(1) + "\n";
  auto html = RenderReport("t", metrics);
  REQUIRE(html.ok());
  INFO(*html);
  // 20 rows of 1000 bytes in, 3000 out (3 MB), 500000 floats (2 MB) synced.
  REQUIRE_THAT(*html, Catch::Contains("<tr><td>trainer[0]</td><td>150 / 200</td><td>80.0 %</td><td>0.0</td><td>3.0</td><td>2.0</td></tr>"));
  REQUIRE_THAT(*html, Catch::Contains("<tr><td>embedding_shard[0]</td><td>7</td><td>3.0</td></tr>"));
  // 100 samples in 0.1 s at 1 MFLOP each: 1 GFLOP/s of 50.
  REQUIRE_THAT(*html, Catch::Contains("1.0 GFLOP/s of a 50.0 GFLOP/s roofline: 2.0 %"));
}
