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

BatchFigures Batch(uint64_t b, double loss) {
  BatchFigures f;
  f.batch = b;
  f.samples = 100;
  f.loss = loss;
  f.unique_rows = 10;
  f.missed_rows = 4;
  f.forward_ms = 2.5;
  f.elapsed_s = 0.1 * static_cast<double>(b + 1);
  return f;
}

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
  for (uint64_t b = 0; b < 4; ++b) board.AddBatch(Batch(b, 0.5));
  board.AddEval(4, 0.75, 0.4);
  REQUIRE(board.version() > v0);
  const std::string j = board.Json();
  REQUIRE_THAT(j, Catch::Contains("\"name\":\"r\\\"1\""));  // escaped
  REQUIRE_THAT(j, Catch::Contains("\"batches\":4,\"global_batch\":4,"));
  REQUIRE_THAT(j, Catch::Contains("\"samples_per_s\":1000,"));
  REQUIRE_THAT(j, Catch::Contains("\"eta_s\":0.6,\"fraction\":0.4"));
  REQUIRE_THAT(j, Catch::Contains("\"hit_share\":0.6,"));
  REQUIRE_THAT(j, Catch::Contains("\"members\":[{\"name\":\"m\",\"host\":\"h\",\"actors\":[{\"name\":\"trainer[0]\","
                                  "\"role\":\"trainer\",\"state\":\"running\"},{\"name\":\"oracle\""));
  REQUIRE_THAT(j, Catch::Contains("\"eval\":[{\"batches\":4,\"auc\":0.75,\"log_loss\":0.4}]"));
  REQUIRE_THAT(j, Catch::Contains("\"loss_curve\":[[1,0.5],[2,0.5],[3,0.5],[4,0.5]]"));
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
  for (uint64_t b = 0; b < 20000; ++b) board.AddBatch(Batch(b, 1.0 / static_cast<double>(b + 1)));
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
  board.AddBatch(Batch(0, 0.3));
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
