// libFuzzer target: the command-line parser (train/flags/args.h). The input is split at NUL
// bytes into argv; flags of every kind are declared (integer, real, string, empty
// default, switch) and every accessor is called. Anything must parse or throw nl::Error.
// (An input asking for --help is skipped: parse() would print the help; help() itself
// is called for every other input.)
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/error.h"
#include "train/flags/args.h"

namespace nl::fuzz {

// One input; returns 0 (libFuzzer's convention). Aborts on a broken invariant.
inline int args_one(const uint8_t* data, size_t size) {
  std::vector<std::string> words(1, "fuzz_args");
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
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  nl::Args args("fuzz_args", "fuzzing the parser");
  args.add("--steps", "10", "an integer");
  args.add("--lr", "1e-3", "a real");
  args.add("--norm", "ln", "a string");
  args.add("--empty", "", "an empty default");
  args.add_switch("--quiet", "a switch");
  args.add("--keep-checkpoints", "1", "an integer flag given a range below");
  for (size_t i = 1; i < words.size(); ++i)
    if (words[i] == "--help" || words[i] == "-h") return 0;  // prints the help and stops: help() is called below
  try {
    if (!args.parse((int)words.size(), argv.data())) return 0;
    (void)args.str("--norm");
    (void)args.on("--quiet");
    (void)args.given("--lr");
    (void)args.help();
  } catch (const nl::Error&) {
    return 0;
  }
  for (const char* flag : {"--steps", "--empty", "--keep-checkpoints"}) {
    try {
      (void)args.integer(flag);
      (void)args.integer(flag, -5, 5);
    } catch (const nl::Error&) {
    }
  }
  try {
    (void)args.real("--lr");
  } catch (const nl::Error&) {
  }
  return 0;
}

}  // namespace nl::fuzz

// tests/train/test_fuzz_regressions.cpp includes this file to replay kept inputs
#ifndef NL_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return nl::fuzz::args_one(data, size); }
#endif
