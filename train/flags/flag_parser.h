// A program's command line, built from families of flags (train/flags/families.h and
// the studies' own), each flag declared once with its default, range check and help
// text. Parsing is CLI11's (Debian's libcli11-dev): `--flag value` and `--flag=value`,
// switches without a value, the last of a repeated flag wins, `--help` lists them all.
// A value is checked as it is read, and every check the families add over several
// flags runs right after, so a bad command line is one nl::Error naming the flag
// before the program touches any file.
//
// `--config FILE` reads the flags a run recorded in its config.json (values()) and
// puts them where --config stood, so flags after it override them:
//   train_gpt --config runs/a/config.json --out runs/b --seed 2
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "train/io/text_fields.h"  // split_list, flag_key: the flags' lists and names

namespace nl {

// What a flag is to a run, for config.json and for --resume (train/loop/trainer.h):
enum class FlagRole {
  Recipe,   // changes what is trained (model, data, optimizer, schedule, seed): recorded,
            // and a resumed run must not change it
  Setting,  // recorded, but free to change on resume (threads, logging, checkpoint cadence)
  Control,  // how this invocation runs (--resume, --quiet, --stop-after): not recorded
};

class FlagParser {
 public:
  FlagParser(std::string program, std::string summary);
  ~FlagParser();
  FlagParser(const FlagParser&) = delete;
  FlagParser& operator=(const FlagParser&) = delete;

  // The heading --help lists the flags declared from now on under ("Model", "Norm",
  // "Optimizer and schedule", "Data", "Run", "Study"): each family names its own.
  void group(const std::string& name);

  // Flags a family declares that this program does not take (a study sets --norm and
  // --out itself): they keep their default, are refused as unknown, and are not
  // recorded. Call before the families declare them.
  void omit(const std::vector<std::string>& flags);

  // Declarations: `target` holds the default and receives the value. A number outside
  // [lo, hi] (or not finite, or not a number) is refused naming the flag.
  void integer(const std::string& flag, int64_t& target, int64_t lo, int64_t hi, const std::string& help,
               FlagRole role = FlagRole::Recipe);
  void integer(const std::string& flag, int& target, int64_t lo, int64_t hi, const std::string& help,
               FlagRole role = FlagRole::Recipe);
  void integer(const std::string& flag, uint64_t& target, int64_t lo, int64_t hi, const std::string& help,
               FlagRole role = FlagRole::Recipe);
  void real(const std::string& flag, float& target, double lo, double hi, const std::string& help,
            FlagRole role = FlagRole::Recipe);
  void real(const std::string& flag, double& target, double lo, double hi, const std::string& help,
            FlagRole role = FlagRole::Recipe);
  // As real(), but lo itself is refused too ("must lie in (0, 1e35]").
  void positive(const std::string& flag, float& target, double hi, const std::string& help,
                FlagRole role = FlagRole::Recipe);
  void text(const std::string& flag, std::string& target, const std::string& help, FlagRole role = FlagRole::Recipe);
  // One of `choices`; anything else is refused listing them.
  void choice(const std::string& flag, std::string& target, const std::vector<std::string>& choices,
              const std::string& help, FlagRole role = FlagRole::Recipe);
  void toggle(const std::string& flag, bool& target, const std::string& help, FlagRole role = FlagRole::Recipe);
  // Comma-separated lists ("ln,rms,cbwc"; empty items dropped). An empty list, or an
  // integer item that is not one or lies outside [lo, hi], is refused naming the flag.
  void list(const std::string& flag, std::vector<std::string>& target, const std::string& help,
            FlagRole role = FlagRole::Recipe);
  void integer_list(const std::string& flag, std::vector<int64_t>& target, int64_t lo, int64_t hi,
                    const std::string& help, FlagRole role = FlagRole::Recipe);
  // A flag whose text `store` turns into settings, throwing naming the flag on a bad
  // value (--emb-scale sqrt|none|X). default_text is what --help shows, and what `store`
  // gets when the flag is absent. Stores run in declaration order, so `store` may read
  // the flags declared before it.
  // `numeric`: values() records the text as a number when it is one.
  void custom(const std::string& flag, const std::string& default_text, std::function<void(const std::string&)> store,
              const std::string& help, FlagRole role = FlagRole::Recipe, bool numeric = false);

  // A check over several flags (or a conversion of a text flag), run in declaration
  // order once every flag has its value; it throws nl::Error naming the flag.
  void check(std::function<void()> check);

  // A declared flag whose value stands for other flags (--recipe NAME, --block llama):
  // `expand` returns them for the value the flag ends with (its last occurrence, else
  // its default), and parse() puts them before the command line, so that the command
  // line's own flags override them wherever they stand; values() then records the
  // expanded values. Expansions run in the order they were added, each over the
  // arguments the earlier ones produced (a recipe may set --block llama). Flags the
  // program omits are left out of an expansion: the program sets them itself.
  // `expand` throws nl::Error naming the flag for a value it does not know.
  void implies(const std::string& flag, std::function<std::vector<std::string>(const std::string& value)> expand);
  // `older` as another name of the declared `flag` (the same idea had other names in
  // other programs: --runs, --variants for --arms): parse() reads it as `flag`, values()
  // records `flag`, --help names both.
  void alias(const std::string& flag, const std::string& older);
  // A flag that prints what `print` returns, as --help prints the help: parse() then
  // returns false (--list-recipes).
  void info(const std::string& flag, const std::string& help, std::function<std::string()> print);

  // Parses argv and runs the checks. Returns false when --help (or an info flag) was
  // asked for (the help is printed). Throws nl::Error: an unknown flag, a missing or malformed value, a
  // value out of range, a --config file that cannot be read or holds unknown flags.
  bool parse(int argc, const char* const* argv);
  bool parse(const std::vector<std::string>& args);  // the arguments after the program name

  // Set on the command line (or by --config), not defaulted.
  bool given(const std::string& flag) const;
  // Every recorded flag (Recipe and Setting) with its value, keyed by its name without
  // the dashes and with '_' for '-' ("min_lr"), beside "program": what config.json holds.
  nlohmann::ordered_json values() const;
  // values() as config.json holds it: indented, one flag a line.
  std::string config_json() const;
  // The names of the Recipe flags, as values() keys them.
  std::vector<std::string> recipe_keys() const;
  std::string help() const;
  const std::string& program() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs every check of a run's flags (declared by `add`) over a config made in code,
// as if the program had been given exactly those values, and returns the config.json
// the program would record for them. Throws nl::Error naming the flag.
template <class Config>
std::string check_config(const std::string& program, Config config, void (*add)(FlagParser&, Config&)) {
  FlagParser p(program, "");
  add(p, config);
  p.parse(std::vector<std::string>{});
  return p.config_json();
}

// The checked reads the declarations use, for custom() stores: an integer or a finite
// number in [lo, hi] (lo excluded when lo_open), or an nl::Error naming the flag.
int64_t flag_integer(const std::string& flag, const std::string& text, int64_t lo, int64_t hi);
double flag_real(const std::string& flag, const std::string& text, double lo, double hi, bool lo_open = false);

// The command-line flags that reproduce recorded values (values(), a config.json),
// "program" and the keys in `skip` left out: {"--lr", "0.001", "--flip", ...}.
std::vector<std::string> flags_from_values(const nlohmann::ordered_json& values,
                                           const std::vector<std::string>& skip = {});

}  // namespace nl
