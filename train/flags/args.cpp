#include "train/flags/args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "tensor/error.h"

namespace nl {

void Args::add(const std::string& flag, const std::string& default_value, const std::string& help) {
  order_.push_back(flag);
  options_[flag] = Option{default_value, help, false, false};
}

void Args::add_switch(const std::string& flag, const std::string& help) {
  order_.push_back(flag);
  options_[flag] = Option{"0", help, true, false};
}

bool Args::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s", help().c_str());
      return false;
    }
    std::string flag = a, value;
    bool has_value = false;
    if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      flag = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    auto it = options_.find(flag);
    NL_CHECK(it != options_.end(), "unknown flag '", flag, "' (see ", program_, " --help)");
    Option& opt = it->second;
    if (opt.is_switch) {
      NL_CHECK(!has_value, "flag ", flag, " takes no value");
      opt.value = "1";
    } else {
      if (!has_value) {
        NL_CHECK(i + 1 < argc, "flag ", flag, " needs a value");
        value = argv[++i];
      }
      opt.value = value;
    }
    opt.given = true;
  }
  return true;
}

const Args::Option& Args::get(const std::string& flag) const {
  auto it = options_.find(flag);
  NL_CHECK(it != options_.end(), program_, ": internal: flag ", flag, " was never declared");
  return it->second;
}

std::string Args::str(const std::string& flag) const { return get(flag).value; }
bool Args::on(const std::string& flag) const { return get(flag).value == "1"; }
bool Args::given(const std::string& flag) const { return get(flag).given; }

int64_t Args::integer(const std::string& flag) const {
  const std::string& v = get(flag).value;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v.c_str(), &end, 10);
  NL_CHECK(!v.empty() && *end == '\0', "flag ", flag, " needs an integer, got '", v, "'");
  NL_CHECK(errno != ERANGE, "flag ", flag, ": ", v, " is out of range");
  return x;
}

int64_t Args::integer(const std::string& flag, int64_t min, int64_t max) const {
  const int64_t x = integer(flag);
  NL_CHECK(x >= min && x <= max, "flag ", flag, " must lie in [", min, ", ", max, "], got ", x);
  return x;
}

double Args::real(const std::string& flag) const {
  const std::string& v = get(flag).value;
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  NL_CHECK(!v.empty() && *end == '\0', "flag ", flag, " needs a number, got '", v, "'");
  NL_CHECK(std::isfinite(x), "flag ", flag, " needs a finite number, got '", v, "'");
  return x;
}

std::string Args::help() const {
  std::ostringstream os;
  os << "usage: " << program_ << " [flags]\n" << summary_ << "\n\nflags:\n";
  for (const auto& flag : order_) {
    const Option& o = options_.at(flag);
    std::string left = "  " + flag + (o.is_switch ? "" : " " + (o.value.empty() ? std::string("X") : o.value));
    os << left << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << o.help << "\n";
  }
  return os.str();
}

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace nl
