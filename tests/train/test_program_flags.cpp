// Every program refuses bad flags the same way (issue 18): each program in apps/ (read
// from the folder, so a new program is covered without a change here) is given an
// unknown flag, and, where its --help lists them, --threads 0, --seed -1, --seeds -1,
// --jobs -1, --dim 0, --lr nan, --doc into /proc, --reuse of a study never run. Each must
// exit 2 with one line naming the flag, the same line in every program that shares the
// flag (after "program: error: "), and write nothing: it runs
// in an empty folder of its own (where its default --out and --doc would land), which
// must stay empty, and the --out it is given must not appear. Its --help keeps within
// 100 columns, and a training program's lists the flags under their families' headings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "tests/train/run_fixtures.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

std::vector<std::string> programs_in_apps() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator("apps"))
    if (e.path().extension() == ".cpp") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("program flags: every program in apps/ refuses bad flags with exit 2, one line, no file touched", "[cli]") {
  const std::vector<std::string> programs = programs_in_apps();
  REQUIRE(programs.size() >= 7);
  std::map<std::string, std::map<std::string, std::string>> message_of;  // flag -> program -> its error line
  for (const std::string& name : programs) {
    const std::string program = fs::absolute(build_dir() + "/" + name).string();
    INFO(program);
    REQUIRE(fs::exists(program));
    TempDir tmp;
    const std::string work = tmp.sub("work"), out = tmp.sub("out");
    fs::create_directories(work);
    // in the empty folder, under a time limit (exit 124: it hung)
    const std::string in_work = "cd " + work + " && timeout -k 5 60 " + program;
    const RunResult help = run_program(in_work, "--help", tmp);
    REQUIRE(help.code == 0);
    auto lists = [&](const std::string& flag) { return help.out.find("  " + flag + " ") != std::string::npos; };
    // --help within 100 columns, a training program's flags under their families' headings
    std::istringstream help_lines(help.out);
    size_t widest = 0;
    for (std::string line; std::getline(help_lines, line);) widest = std::max(widest, line.size());
    CHECK(widest <= 100);
    if (lists("--lr"))
      CHECK_THAT(help.out, Contains("\nModel:\n") && Contains("\nNorm:\n") &&
                               Contains("\nOptimizer and schedule:\n") && Contains("\nRun:\n"));

    std::vector<std::pair<std::string, std::string>> bad = {{"--no-such-flag 1", "--no-such-flag"}};
    for (const char* flag : {"--threads 0", "--seed -1", "--seeds -1", "--jobs -1", "--dim 0", "--lr nan"}) {
      const std::string f = std::string(flag).substr(0, std::string(flag).find(' '));
      if (lists(f)) bad.emplace_back(flag, f);
    }
    // a study's report into a folder that cannot take it, found before any training; a
    // report from results that do not exist
    if (lists("--doc")) bad.emplace_back("--doc /proc/none/report.md", "--doc");
    if (lists("--reuse"))
      bad.emplace_back("--reuse" + (lists("--doc") ? " --doc " + tmp.sub("report.md") : std::string()), "--reuse");
    // the ones every program that computes on tensors has: a program without them would be missed
    // (what_reproduces only reads results files and writes a table, convert_nanogpt only renames tensors)
    const bool computes = name != "what_reproduces" && name != "convert_nanogpt";
    if (computes && name != "fold_ln") CHECK(lists("--seed") + lists("--seeds") >= 1);
    if (computes) CHECK(lists("--threads"));
    const std::string out_flag = lists("--out") ? " --out " + out : "";
    for (const auto& [args, flag] : bad) {
      const RunResult r = run_program(in_work, args + out_flag, tmp);
      INFO(name << " " << args << "\nexit " << r.code << "\nstderr: " << r.err);
      CHECK(r.code == 2);
      CHECK(count_lines(r.err) == 1);
      CHECK_THAT(r.err, Contains(name + ": error: ") && Contains(flag));
      CHECK(fs::is_empty(work));
      CHECK_FALSE(fs::exists(out));
      CHECK_FALSE(fs::exists(tmp.sub("report.md")));
      const std::string prefix = name + ": error: ";
      if (flag != "--no-such-flag" && flag != "--doc" && flag != "--reuse" && r.err.rfind(prefix, 0) == 0)
        message_of[args][name] = r.err.substr(prefix.size());
    }
  }
  // one definition per flag: the same value is refused in the same words everywhere
  for (const auto& [args, by_program] : message_of) {
    REQUIRE_FALSE(by_program.empty());
    const auto& [first_program, first_message] = *by_program.begin();
    for (const auto& [program, message] : by_program) {
      INFO(args << ": " << first_program << " says '" << first_message << "', " << program << " says '" << message
                << "'");
      CHECK(message == first_message);
    }
  }
}
