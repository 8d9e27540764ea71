// libFuzzer target: the command-line parser (train/flags/flag_parser.h). The input is
// split at NUL bytes into the arguments; flags of every kind are declared (integer,
// real, positive real, text, choice, switch, list, integer list, custom) with a check
// over several of them, and every reader is called. Anything must parse or throw
// nl::Error. (An input asking for --help is skipped: parse() would print the help;
// help() itself is called for every other input. --config reads a file, which the
// fuzzer's words do not name.)
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor/error.h"
#include "train/flags/flag_parser.h"

namespace nl::fuzz {

// One input; returns 0 (libFuzzer's convention). Aborts on a broken invariant.
inline int args_one(const uint8_t* data, size_t size) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.push_back(word);
      word.clear();
    } else {
      word += (char)data[i];
    }
  }
  words.push_back(word);
  for (const auto& w : words)
    if (w == "--help" || w == "-h" || w.rfind("--config", 0) == 0) return 0;

  nl::FlagParser p("fuzz_args", "fuzzing the parser");
  int64_t steps = 10;
  float lr = 1e-3f, wd = 0.1f;
  std::string out = "runs/x", norm = "ln", scale = "none";
  bool quiet = false;
  std::vector<std::string> norms = {"ln"};
  std::vector<int64_t> sizes = {1, 2};
  p.integer("--steps", steps, 1, 1000, "an integer");
  p.positive("--lr", lr, 1e35, "a positive real");
  p.real("--wd", wd, 0, 1, "a real");
  p.text("--out", out, "a text", nl::FlagRole::Setting);
  p.choice("--norm", norm, {"ln", "rms"}, "a choice");
  p.toggle("--quiet", quiet, "a switch", nl::FlagRole::Control);
  p.list("--norms", norms, "a list");
  p.integer_list("--sizes", sizes, -1, 1 << 20, "an integer list");
  p.custom("--emb-scale", scale, [&](const std::string& v) { scale = v; }, "a custom flag");
  p.check([&] { NL_CHECK(wd <= lr || steps > 0, "a check over several flags"); });
  try {
    if (!p.parse(words)) return 0;
    (void)p.given("--lr");
    (void)p.values().dump();
    (void)p.help();
    if (steps < 1 || steps > 1000 || !(lr > 0) || wd < 0 || wd > 1 || norms.empty()) __builtin_trap();
  } catch (const nl::Error&) {
    return 0;
  }
  return 0;
}

}  // namespace nl::fuzz

// tests/train/test_fuzz_regressions.cpp includes this file to replay kept inputs
#ifndef NL_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return nl::fuzz::args_one(data, size); }
#endif
