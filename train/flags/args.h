// A small command-line parser: options are declared with a default and a help line,
// `--help` prints them, and an unknown flag or a malformed number is an error that
// names it. Both `--flag value` and `--flag=value` work; a boolean flag takes no value.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace nl {

// "a,b,,c" -> {"a", "b", "c"}: a list flag's items (empty items dropped).
std::vector<std::string> split_list(const std::string& s, char sep = ',');

class Args {
 public:
  Args(std::string program, std::string summary) : program_(std::move(program)), summary_(std::move(summary)) {}
  void add(const std::string& flag, const std::string& default_value, const std::string& help);
  void add_switch(const std::string& flag, const std::string& help);
  // Parses argv; returns false when --help was asked for (help already printed).
  bool parse(int argc, char** argv);

  std::string str(const std::string& flag) const;
  int64_t integer(const std::string& flag) const;
  int64_t integer(const std::string& flag, int64_t min, int64_t max) const;  // and in [min, max]
  double real(const std::string& flag) const;  // finite: "nan" and "inf" are errors
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

}  // namespace nl
