// docs/your-own-norm.md runs as written: its code blocks are added to a scratch copy of
// the tree (the sources, and this build's objects with their times, so that make
// rebuilds only what the blocks change), then its sh blocks run there in order, each of
// which must succeed; the test reads what they made. The page's own last section says
// what is checked. Under 2 minutes on 2 busy cores: two files compile, the programs and
// the test binary relink, and the trainings are a few seconds each.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_files.h"

namespace fs = std::filesystem;
using namespace nl::test;

namespace {

const char kPage[] = "docs/your-own-norm.md";

struct Block {
  std::string lang, path;  // path: the file the block goes into; empty for commands
  std::string text;
  int line = 0;  // where it starts in the page
};

// The fenced blocks of a markdown text, with their info strings "lang [path]".
std::vector<Block> fenced_blocks(const std::string& markdown) {
  std::vector<Block> blocks;
  std::istringstream in(markdown);
  std::string line;
  Block* open = nullptr;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("```", 0) == 0) {
      if (open) {
        open = nullptr;
        continue;
      }
      Block b;
      std::istringstream info(line.substr(3));
      info >> b.lang >> b.path;
      b.line = number;
      blocks.push_back(b);
      open = &blocks.back();
      continue;
    }
    if (open) open->text += line + "\n";
  }
  REQUIRE_FALSE(open);  // every block closed
  return blocks;
}

// The make variables that select this build's folder (build/asan -> SANITIZE=1, ...),
// for the page's make commands to reuse the copied objects. Empty with ok = false for
// builds that do not run the whole suite (fuzz, tsan).
std::string build_variables(const std::string& build, bool& ok, std::string& base) {
  std::string name = fs::path(build).filename().string(), vars;
  ok = true;
  for (const auto& [suffix, var] : {std::pair<std::string, std::string>{"-mpi", "MPI=1"}, {"-cuda", "CUDA=1"}})
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
      vars += " " + var;
    }
  if (name == "asan") vars += " SANITIZE=1";
  else if (name == "debug") vars += " DEBUG=1";
  else if (name != "release") ok = false;
  base = (fs::path(build).parent_path() / name).string();  // where a CUDA=1 / MPI=1 build's shared objects are
  return vars;
}

std::string tail(const std::string& text, size_t chars) {
  return text.size() <= chars ? text : "..." + text.substr(text.size() - chars);
}

}  // namespace

TEST_CASE("docs/your-own-norm.md: its norm is added, tested, compared and measured in a scratch tree", "[docs]") {
  REQUIRE(fs::exists(kPage));
  std::ifstream page(kPage);
  const std::string markdown((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  const std::vector<Block> blocks = fenced_blocks(markdown);

  bool supported = false;
  std::string base_build;
  const std::string make_vars = build_variables(::nl::test::build_dir(), supported, base_build);
  if (!supported) {
    WARN("skipped: the page's make commands build " << ::nl::test::build_dir() << " only in its own make target");
    return;
  }
  const fs::path build = ::nl::test::build_dir();
  REQUIRE(fs::is_directory(build));

  // the norm's file: one new file under nn/norms, under 30 lines; its registration one line
  std::vector<const Block*> files, commands;
  for (const Block& b : blocks) {
    if (!b.path.empty()) files.push_back(&b);
    if (b.lang == "sh") commands.push_back(&b);
  }
  REQUIRE(files.size() == 2);
  const Block& norm_file = *files[0];
  INFO("the norm's file " << norm_file.path << " (line " << norm_file.line << " of " << kPage << ")");
  CHECK(norm_file.path.rfind("nn/norms/", 0) == 0);
  CHECK_FALSE(fs::exists(norm_file.path));
  CHECK(count_lines(norm_file.text) < 32);  // two of them its anonymous namespace
  CHECK(files[1]->path == "nn/norms/kinds.def");
  CHECK(count_lines(files[1]->text) == 1);
  std::smatch name;
  REQUIRE(std::regex_search(norm_file.text, name, std::regex("k\\.name = \"([a-z0-9-]+)\"")));
  const std::string norm = name[1];
  REQUIRE(commands.size() >= 3);
  std::smatch out_dir;
  REQUIRE(std::regex_search(markdown, out_dir, std::regex("DEMO_OUT=([^ ]+)")));
  const fs::path demo = out_dir[1].str();

  // the scratch tree: every top-level entry but builds and runs, then this build's folder
  TempDir scratch;
  const fs::path tree = scratch.path / "tree";
  fs::create_directories(tree / build.parent_path());
  std::string copy = "cp -a";
  for (const auto& entry : fs::directory_iterator(fs::current_path())) {
    const std::string n = entry.path().filename().string();
    if (n == "build" || n == "runs" || n[0] == '.') continue;
    copy += " '" + entry.path().string() + "'";
  }
  REQUIRE(std::system((copy + " '" + tree.string() + "'").c_str()) == 0);
  std::vector<fs::path> copied = {build};
  if (fs::path(base_build) != build && fs::is_directory(base_build)) copied.push_back(base_build);
  for (const fs::path& dir : copied)
    REQUIRE(std::system(("cp -a '" + dir.string() + "' '" + (tree / build.parent_path()).string() + "'").c_str()) == 0);
  for (const Block* f : files) {
    std::ofstream out(tree / f->path, std::ios::app);
    out << f->text;
  }

  // the page's commands, each block one bash script in the tree, with this build's make
  // variables and none inherited from the make that runs this test
  const std::string expected_checks = [&] {
    int n = 0;
    for (const Catch::TestCase& t : Catch::getRegistryHub().getTestCaseRegistry().getAllTests())
      n += t.name.rfind("norm ln: ", 0) == 0;
    return std::to_string(n);
  }();
  INFO("the page says how many checks FILTER=" << norm << " runs: " << expected_checks);
  CHECK(markdown.find("`" + expected_checks + " passed, 0 failed, 0 skipped`") != std::string::npos);
  for (size_t i = 0; i < commands.size(); ++i) {
    const std::string script = scratch.sub("block" + std::to_string(i) + ".sh");
    write_bytes(script, "set -euo pipefail\ncd '" + tree.string() + "'\n" + commands[i]->text);
    const RunResult r = run_program("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES" + make_vars,
                                    "timeout 900 bash " + script, scratch);
    INFO("the sh block at line " << commands[i]->line << " of " << kPage << ":\n"
                                 << commands[i]->text << "exit " << r.code << "\nstdout: " << tail(r.out, 3000)
                                 << "\nstderr: " << tail(r.err, 3000));
    REQUIRE(r.code == 0);
    if (commands[i]->text.find("make test") != std::string::npos)
      CHECK(r.out.find("\n" + expected_checks + " passed, 0 failed, 0 skipped") != std::string::npos);
    if (commands[i]->text.find("bounded_all") != std::string::npos)
      CHECK(r.out.find(",bounded_all,") != std::string::npos);
  }

  // the comparison has the norm's row, its run the statistics of its bounded argument
  const std::string summary = read_bytes((tree / demo / "summary.csv").string());
  CHECK(summary.find("\n" + norm + ",") != std::string::npos);
  const auto rows = read_csv_rows((tree / demo / norm / "act_stats.csv").string());
  REQUIRE(rows.size() > 1);
  CHECK(rows[0][7] == "sat_gt1");
  int saturation_rows = 0;
  for (const auto& row : rows) saturation_rows += row.size() > 2 && row[2] == "bounded_all";
  CHECK(saturation_rows >= 2);
}

// The page's layer under the name of a built-in one (the issue-35 crash: a second
// nl::RMSNorm linked against the built-in's vtable and segfaulted) must not compile, and
// the compiler must name the clash: as written (its anonymous namespace makes the name
// ambiguous) and with that namespace left out (a redefinition). The page's file as
// written compiles, so the failures are the name's.
TEST_CASE("docs/your-own-norm.md: its layer named like a built-in one fails to compile, naming it", "[docs]") {
  std::ifstream page(kPage);
  const std::string markdown((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  const Block* norm_file = nullptr;
  const std::vector<Block> blocks = fenced_blocks(markdown);
  for (const Block& b : blocks)
    if (!norm_file && !b.path.empty()) norm_file = &b;
  REQUIRE(norm_file);
  std::smatch cls;
  REQUIRE(std::regex_search(norm_file->text, cls, std::regex("struct (\\w+) : Norm")));
  const char* cxx = std::getenv("CXX");
  TempDir scratch;
  auto compile = [&](const std::string& text) {
    write_bytes(scratch.sub("clash.cpp"), text);
    return run_program(std::string(cxx && *cxx ? cxx : "g++"),
                       "-std=c++17 -fsyntax-only -I. -I" + ::nl::test::build_dir() + "/gen " + scratch.sub("clash.cpp"),
                       scratch);
  };
  const RunResult as_written = compile(norm_file->text);
  INFO("compiler errors: " << tail(as_written.err, 2000));
  REQUIRE(as_written.code == 0);
  const std::string anonymous = "namespace {", closing = "}  // namespace\n";
  for (const char* name : {"RMSNorm", "DyT"})
    for (bool keep_namespace : {true, false}) {
      std::string text = std::regex_replace(norm_file->text, std::regex("\\b" + cls[1].str() + "\\b"), name);
      if (!keep_namespace) {
        REQUIRE(text.find(anonymous) != std::string::npos);
        REQUIRE(text.find(closing) != std::string::npos);
        text.erase(text.find(anonymous), text.find('\n', text.find(anonymous)) - text.find(anonymous));
        text.erase(text.find(closing), closing.size());
      }
      const RunResult r = compile(text);
      INFO("class " << name << (keep_namespace ? " in its anonymous namespace" : " directly in nl") << "\n"
                    << text << "\ncompiler errors: " << tail(r.err, 2000));
      CHECK(r.code != 0);
      CHECK(r.err.find("error") != std::string::npos);
      CHECK(r.err.find(name) != std::string::npos);
    }
}
