// A small command-line parser: options are declared with a default and a help line,
// `--help` prints them, and an unknown flag or a malformed number is an error that
// names it. Both `--flag value` and `--flag=value` work; a boolean flag takes no value.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace nl {

class Args {
 public:
  Args(std::string program, std::string summary) : program_(std::move(program)), summary_(std::move(summary)) {}
  void add(const std::string& flag, const std::string& default_value, const std::string& help);
  void add_switch(const std::string& flag, const std::string& help);
  // Parses argv; returns false when --help was asked for (help already printed).
  bool parse(int argc, char** argv);

  std::string str(const std::string& flag) const;
  int64_t integer(const std::string& flag) const;
  double real(const std::string& flag) const;
  bool on(const std::string& flag) const;
  bool given(const std::string& flag) const;  // set on the command line, not defaulted
  std::string help() const;

 private:
  struct Option {
    std::string value, help;
    bool is_switch = false, given = false;
  };
  std::string program_, summary_;
  std::vector<std::string> order_;
  std::map<std::string, Option> options_;
  const Option& get(const std::string& flag) const;
};

// "a,b,,c" -> {"a", "b", "c"}: the value of a list flag such as --configs.
std::vector<std::string> split_commas(const std::string& list);

}  // namespace nl
