// What the tests of the studies' results files share: a committed results file
// (docs/results/NAME.json) read as JSON, and a document with one key renamed, the edit
// every study's reader must refuse with one line naming the key and the file.
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tests/test_files.h"

namespace nl::test {

using json = nlohmann::json;

// The path of the committed results file NAME, as the messages name it.
inline std::string committed_path(const std::string& name) { return "docs/results/" + name + ".json"; }

inline json committed(const std::string& name) { return json::parse(read_bytes(committed_path(name))); }

// doc with the key at `pointer` (a JSON pointer, "/runs/3/val_end") renamed `to`, beside
// where it was. The key must be there and `to` must not: else the test would check nothing.
inline json renamed(json doc, const std::string& pointer, const std::string& to) {
  const json::json_pointer p(pointer);
  REQUIRE(doc.contains(p));
  json& parent = doc[p.parent_pointer()];
  REQUIRE(parent.is_object());
  REQUIRE_FALSE(parent.contains(to));
  parent[to] = std::move(parent[p.back()]);
  parent.erase(p.back());
  return doc;
}

}  // namespace nl::test
