// The docs that quote code quote the code as it is: every ```cpp block of
// docs/autograd.md must stand, line for line, in a file of autograd/.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_files.h"

using namespace nl::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> cpp_blocks(const std::string& md) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = md.find("```cpp\n", at)) != std::string::npos) {
    const size_t start = at + 7, end = md.find("```", start);
    REQUIRE(end != std::string::npos);
    out.push_back(md.substr(start, end - start));
    at = end + 3;
  }
  return out;
}

}  // namespace

TEST_CASE("docs: the code docs/autograd.md quotes is the code in autograd/", "[docs]") {
  const std::string md = read_bytes("docs/autograd.md");
  const std::vector<std::string> blocks = cpp_blocks(md);
  REQUIRE_FALSE(blocks.empty());
  std::vector<std::string> sources;
  for (const auto& entry : fs::directory_iterator("autograd")) sources.push_back(read_bytes(entry.path().string()));
  for (const std::string& block : blocks) {
    INFO("the block:\n" << block);
    bool found = false;
    for (const std::string& src : sources) found |= src.find(block) != std::string::npos;
    CHECK(found);
  }
}

// The README is edited by hand after every results block; an edit that lands in the wrong
// place (a results bullet pasted above the title) or leaves a stale copy of a bullet must
// show up here, as must a link to a results page that was never committed.
TEST_CASE("docs: the README opens with its title, holds each bold bullet once, and its local links exist", "[docs]") {
  const std::string md = read_bytes("README.md");
  CHECK(md.rfind("# normlab\n", 0) == 0);
  std::istringstream lines(md);
  std::vector<std::string> bullets;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("- **", 0) == 0) bullets.push_back(line);
  for (size_t i = 0; i < bullets.size(); ++i)
    for (size_t j = i + 1; j < bullets.size(); ++j) {
      INFO("bullet: " << bullets[i]);
      CHECK(bullets[i] != bullets[j]);
    }
  size_t at = 0, links = 0;
  while ((at = md.find("](", at)) != std::string::npos) {
    const size_t start = at + 2, end = md.find(')', start);
    REQUIRE(end != std::string::npos);
    std::string target = md.substr(start, end - start);
    at = end;
    target = target.substr(0, target.find('#'));
    if (target.empty() || target.find("://") != std::string::npos || target.rfind("../", 0) == 0) continue;
    INFO("README links to " << target);
    CHECK(fs::exists(target));
    ++links;
  }
  CHECK(links > 10);
  // a newcomer reads it whole: the long narratives live in docs/
  CHECK(std::count(md.begin(), md.end(), '\n') <= 300);
}

TEST_CASE("docs: each regime page links figures of its own, and no two pages' figures are the same file",
          "[docs][plots]") {
  // a figure drawn from another page's cells (the width pages once showed the base width's
  // curves) would be byte for byte that page's
  std::map<std::string, std::string> page_of_bytes;  // a figure's bytes -> the page linking it
  size_t figures = 0;
  for (const auto& entry : fs::directory_iterator("docs/results")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("regime", 0) != 0 || entry.path().extension() != ".md") continue;
    const std::string stem = entry.path().stem().string(), md = read_bytes(entry.path().string());
    size_t at = 0;
    while ((at = md.find("](", at)) != std::string::npos) {
      const size_t start = at + 2, end = md.find(')', start);
      at = end;
      const std::string target = md.substr(start, end - start);
      if (target.size() < 4 || target.substr(target.size() - 4) != ".png") continue;
      INFO(name << " links " << target);
      CHECK(target.rfind(stem + "_", 0) == 0);  // named after its page
      const std::string path = "docs/results/" + target;
      REQUIRE(fs::exists(path));
      const std::string bytes = read_bytes(path);
      const auto [it, fresh] = page_of_bytes.emplace(bytes, name);
      INFO("the same figure as " << it->second << "'s");
      CHECK(fresh);
      ++figures;
    }
  }
  CHECK(figures > 10);
}

TEST_CASE("source: no line of the C++ and CUDA sources is wider than 120 columns", "[docs]") {
  size_t files = 0;
  for (const char* folder : {"tensor", "autograd", "nn", "train", "studies", "apps", "tests", "bench", "fuzz"}) {
    if (!std::filesystem::exists(folder)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(folder)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh") continue;
      ++files;
      std::istringstream lines(nl::test::read_bytes(e.path().string()));
      size_t n = 0;
      for (std::string line; std::getline(lines, line);) {
        ++n;
        INFO(e.path().string() << ":" << n);
        CHECK(line.size() <= 120);
      }
    }
  }
  CHECK(files > 100);
}
