// The docs that quote code quote the code as it is: every ```cpp block of
// docs/autograd.md must stand, line for line, in a file of autograd/.
#include <catch2/catch.hpp>

#include <filesystem>
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
