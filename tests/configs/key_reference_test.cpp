// The config reference: complete (every accepted key has a meaning and a
// type, no meaning names a key the loader refuses) and read off the loader.
#include <catch2/catch.hpp>

#include <string>

#include "configs/key_reference.hpp"

using namespace actorrec::config;

TEST_CASE("every key the loader accepts has a type, a default and a meaning in the reference", "[configs]") {
  const std::vector<std::string> problems = ReferenceProblems();
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  REQUIRE(problems.empty());
}

TEST_CASE("the reference gives the loader's own types and the defaults of absent keys", "[configs]") {
  const std::vector<KeyReference> reference = ConfigKeyReference();
  auto find = [&](const std::string& table, const std::string& key) -> const KeyReference& {
    for (const KeyReference& r : reference) {
      if (r.table == table && r.key == key) return r;
    }
    FAIL("no " << table << "." << key);
    return reference.front();
  };
  REQUIRE(find("training", "batch_size").type == "an integer in [1, 2147483647]");
  REQUIRE(find("training", "batch_size").default_value == "2048");
  REQUIRE(find("training", "mode").type ==
          "one of lrpp_delayed, lrpp, replicated, no_cache, static_hot, ideal");
  REQUIRE(find("optimizer", "beta1").default_value == "0.9");
  REQUIRE(find("model", "cross_layers").type == "an integer in [1, 64]");
  REQUIRE(find("cluster.member", "port").type == "an integer in [0, 65535]");
  REQUIRE(find("dataset.csv", "label").meaning.starts_with("Required"));
  // Tables in file order, starting with [run].
  REQUIRE(reference.front().table == "run");
  REQUIRE(reference.back().table == "cluster.member");
}
