// The request parser on whole, partial, malformed and oversized heads.
#include "http/request_parser.hpp"

#include <catch2/catch.hpp>

#include <string>

using actorrec::http::RequestParser;
using State = RequestParser::State;

TEST_CASE("a GET head is parsed with its headers, target and query", "[http]") {
  RequestParser p;
  REQUIRE(p.Feed("GET /api/snapshot?token=ab&x=1 HTTP/1.1\r\nHost: h\r\nX-Thing:  v v \r\n\r\n") == State::kComplete);
  const auto& r = p.request();
  REQUIRE(r.method == "GET");
  REQUIRE(r.Path() == "/api/snapshot");
  REQUIRE(r.Query("token") == "ab");
  REQUIRE(r.Query("x") == "1");
  REQUIRE(r.Query("y").empty());
  REQUIRE(r.Header("x-thing") == "v v");
  REQUIRE(r.KeepAlive());
}

TEST_CASE("a head arriving one byte at a time completes at its last byte", "[http]") {
  const std::string head = "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
  RequestParser p;
  for (size_t i = 0; i + 1 < head.size(); ++i) REQUIRE(p.Feed(head.substr(i, 1)) == State::kIncomplete);
  REQUIRE(p.Feed(head.substr(head.size() - 1)) == State::kComplete);
  REQUIRE(p.request().minor_version == 0);
  REQUIRE(p.request().KeepAlive());
}

TEST_CASE("pipelined requests come out one after the other", "[http]") {
  RequestParser p;
  REQUIRE(p.Feed("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\nHost: h\nConnection: close\n\n") ==
          State::kComplete);
  REQUIRE(p.request().target == "/a");
  REQUIRE(p.Next() == State::kComplete);
  REQUIRE(p.request().target == "/b");
  REQUIRE_FALSE(p.request().KeepAlive());
  REQUIRE(p.Next() == State::kIncomplete);
  REQUIRE(p.buffered() == 0);
}

TEST_CASE("malformed heads are refused with the status that says why", "[http]") {
  struct Case {
    const char* head;
    int status;
  };
  const Case cases[] = {
      {"GET\r\n\r\n", 400},
      {"GET / HTTP/1.1 extra\r\nHost: h\r\n\r\n", 400},
      {"G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
      {"GET noslash HTTP/1.1\r\nHost: h\r\n\r\n", 400},
      {"GET / FTP/1.1\r\nHost: h\r\n\r\n", 400},
      {"GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
      {"GET / HTTP/1.1\r\n\r\n", 400},  // no Host
      {"GET / HTTP/1.1\r\nHost h\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: a\x01b\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", 413},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
  };
  for (const Case& c : cases) {
    INFO(c.head);
    RequestParser p;
    REQUIRE(p.Feed(c.head) == State::kError);
    REQUIRE(p.error_status() == c.status);
    REQUIRE_FALSE(p.error().empty());
    // Once failed, it stays failed and holds nothing.
    REQUIRE(p.Feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n") == State::kError);
    REQUIRE(p.buffered() == 0);
  }
}

TEST_CASE("a head beyond the limit is 431 and never buffered beyond it", "[http]") {
  RequestParser p(1024);
  REQUIRE(p.Feed("GET / HTTP/1.1\r\nHost: h\r\n") == State::kIncomplete);
  const std::string line = "X-Big: " + std::string(200, 'a') + "\r\n";
  State s = State::kIncomplete;
  for (int i = 0; i < 100 && s == State::kIncomplete; ++i) {
    s = p.Feed(line);
    REQUIRE(p.buffered() <= 1025);
  }
  REQUIRE(s == State::kError);
  REQUIRE(p.error_status() == 431);
  // One huge read is cut at the limit too.
  RequestParser q(1024);
  REQUIRE(q.Feed(std::string(1 << 20, 'A')) == State::kError);
  REQUIRE(q.error_status() == 431);
}

TEST_CASE("random bytes never crash the parser and end in an error or wait", "[http]") {
  auto seed = GENERATE(take(50, random(0u, 1000000u)));
  uint64_t x = seed * 2654435761u + 1;
  RequestParser p(4096);
  for (int i = 0; i < 64 && p.state() != State::kError; ++i) {
    std::string chunk;
    for (int j = 0; j < 97; ++j) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      chunk.push_back(static_cast<char>(x & 0xff));
    }
    const State s = p.Feed(chunk);
    if (s == State::kComplete) p.Next();
    REQUIRE(p.buffered() <= 4097);
  }
}
