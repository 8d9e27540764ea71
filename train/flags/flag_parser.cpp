// CLI11 splits the command line; every value is read and checked here, so that each
// program's messages have one form: "--seed must lie in [0, ...], got -1".
#include "train/flags/flag_parser.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <set>
#include <sstream>

#include "tensor/decimal.h"
#include "tensor/error.h"
#include "train/io/files.h"

namespace nl {
namespace {

enum class Kind { Integer, Real, Text, Toggle, Number };  // Number: a custom flag recorded as a number when it is one

// Whether s is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF):
// config.json records every value as JSON text, which holds UTF-8 only.
bool valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned c = p[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return false;
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// Words of `text` in lines of at most `width` columns; a line of the text that starts
// with spaces (a list under a flag, as --norm's kinds) keeps them and indents its
// continuation lines two more. A word longer than a line is cut at the line's end.
std::vector<std::string> wrap_text(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::stringstream paragraphs(text);
  std::string paragraph;
  while (std::getline(paragraphs, paragraph)) {
    const size_t lead = paragraph.find_first_not_of(' ');
    if (lead == std::string::npos) {
      lines.emplace_back();
      continue;
    }
    const std::string indent(lead, ' '), hanging(lead > 0 ? lead + 2 : 0, ' ');
    std::stringstream words(paragraph.substr(lead));
    std::string word, line = indent;
    bool first_word = true;
    while (words >> word) {
      if (!first_word && line.size() + 1 + word.size() > width) {
        lines.push_back(line);
        line = hanging;
        first_word = true;
      }
      // a word longer than the line (a long default list) is cut where the line ends
      while (line.size() + (first_word ? 0 : 1) + word.size() > width && line.size() + 2 < width) {
        const size_t room = width - line.size() - (first_word ? 0 : 1);
        lines.push_back(line + (first_word ? "" : " ") + word.substr(0, room));
        word = word.substr(room);
        line = hanging;
        first_word = true;
      }
      line += (first_word ? "" : " ") + word;
      first_word = false;
    }
    lines.push_back(line);
  }
  return lines;
}

// --help within kHelpWidth columns: the summary and each flag's text word-wrapped, the
// flags under their families' headings (FlagParser::group).
constexpr size_t kHelpWidth = 100, kHelpNameWidth = 30;
class WrappingFormatter : public CLI::Formatter {
 public:
  WrappingFormatter() { column_width(kHelpNameWidth); }
  std::string make_description(const CLI::App* app) const override {
    std::string out;
    for (const std::string& line : wrap_text(app->get_description(), kHelpWidth)) out += line + "\n";
    return out;
  }
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    std::string opts = make_option_opts(opt), text = make_option_desc(opt);
    const std::string flag = "  " + make_option_name(opt, is_positional);
    // a default too long for the flag's line goes under its text
    const size_t eq = opts.find('=');
    if (flag.size() + opts.size() > kHelpNameWidth + 20 && eq != std::string::npos) {
      text += "\n  default: " + opts.substr(eq + 1);
      opts = opts.substr(0, eq);
    }
    const std::string name = flag + opts;
    const std::vector<std::string> desc = wrap_text(text, kHelpWidth - kHelpNameWidth);
    const std::string pad(kHelpNameWidth, ' ');
    std::string out = name;
    size_t first = 0;
    if (name.size() < kHelpNameWidth && !desc.empty()) {
      out += std::string(kHelpNameWidth - name.size(), ' ') + desc[0];
      first = 1;
    }
    out += "\n";
    for (size_t i = first; i < desc.size(); ++i) out += pad + desc[i] + "\n";
    return out;
  }
};

// A flag's help with the values it accepts, e.g. "transformer blocks (1 to 256)"; a help
// that already states its interval ("in [0, 1)") is left as it is.
std::string with_range(const std::string& help, double lo, double hi, bool lo_open, bool integer,
                       const std::string& prefix = "") {
  if (help.find("in [") != std::string::npos || help.find("in (") != std::string::npos) return help;
  auto num = [&](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);  // 10, 0.5, 1e-05: shortest_decimal would write 1e+01
    return integer ? std::to_string((long long)v) : std::string(text);
  };
  const bool no_top = hi >= 1e15;  // INT64_MAX or infinity: only the bottom is a rule worth reading
  std::string range;
  if (integer)
    range = no_top ? "at least " + num(lo) : num(lo) + " to " + num(hi);
  else if (no_top)
    range = (lo_open ? "above " : "at least ") + num(lo);
  else
    range = std::string(lo_open ? "in (" : "in [") + num(lo) + ", " + num(hi) + "]";
  return help + (help.empty() ? "" : " ") + "(" + prefix + range + ")";
}

}  // namespace

int64_t flag_integer(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  NL_CHECK(!v.empty() && *end == '\0', flag, " needs an integer, got '", v, "'");
  NL_CHECK(errno != ERANGE && x >= lo && x <= hi, flag, " must lie in [", lo, ", ", hi, "], got ", v);
  return x;
}

double flag_real(const std::string& flag, const std::string& v, double lo, double hi, bool lo_open) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  NL_CHECK(!v.empty() && *end == '\0', flag, " needs a number, got '", v, "'");
  NL_CHECK(std::isfinite(x) && (lo_open ? x > lo : x >= lo) && x <= hi, flag, " must lie in ", lo_open ? "(" : "[",
           shortest_decimal(lo), ", ", shortest_decimal(hi), "], got ", v);
  return x;
}

std::vector<std::string> flags_from_values(const nlohmann::ordered_json& values, const std::vector<std::string>& skip) {
  std::vector<std::string> out;
  for (const auto& [key, value] : values.items()) {
    if (key == "program" || std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    const std::string flag = flag_of_key(key);
    if (value.is_boolean()) {
      if (value.get<bool>()) out.push_back(flag);
      continue;
    }
    NL_CHECK(value.is_string() || value.is_number(), flag, " must be a number, a string or true/false, got ",
             value.dump());
    out.push_back(flag);
    out.push_back(value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

struct FlagParser::Impl {
  struct Entry {
    std::string flag;
    Kind kind;
    FlagRole role;
    std::string raw;       // the value as given, or the default
    bool on = false;       // toggles
    CLI::Option* option = nullptr;
    std::function<void(const std::string&)> store;  // checks raw and sets the target
  };
  std::string program, summary;
  CLI::App app;
  std::deque<Entry> entries;  // declaration order; a deque keeps the strings CLI11 writes to in place
  std::vector<std::function<void()>> checks;
  std::string config_path;  // only for --help
  std::vector<std::string> omitted;
  std::vector<std::pair<std::string, std::function<std::vector<std::string>(const std::string&)>>> implications;
  std::vector<std::pair<std::string, std::function<std::string()>>> infos;
  std::vector<std::pair<std::string, std::string>> aliases;  // (older name, the flag it stands for)
  std::string group = "Options";  // the heading of the flags declared next

  Impl(std::string p, std::string s) : program(std::move(p)), summary(std::move(s)), app(summary, program) {
    app.formatter(std::make_shared<WrappingFormatter>());
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.allow_extras();
    app.add_option("--config", config_path,
                   "read the flags a run recorded in FILE (its config.json); flags after --config override them")
        ->type_name("FILE");
  }

  Entry& add(const std::string& flag, Kind kind, FlagRole role, std::string default_raw, const std::string& help,
             const std::string& type_name) {
    for (const Entry& e : entries) NL_CHECK(e.flag != flag, program, ": internal: ", flag, " is declared twice");
    entries.push_back(Entry{flag, kind, role, std::move(default_raw), false, nullptr, nullptr});
    Entry& e = entries.back();
    if (std::find(omitted.begin(), omitted.end(), flag) != omitted.end()) {
      e.role = FlagRole::Control;  // not recorded; it has no option, so the command line cannot set it
      if (kind == Kind::Toggle) e.on = e.raw == "1";
      return e;
    }
    if (kind == Kind::Toggle) {
      e.option = app.add_flag(flag, help);
    } else {
      e.option = app.add_option(flag, e.raw, help)->type_name(type_name);
      e.option->default_str(e.raw);
    }
    e.option->group(group);
    return e;
  }

  Entry* find(const std::string& flag) {
    for (Entry& e : entries)
      if (e.flag == flag) return &e;
    return nullptr;
  }

  // --config FILE (or --config=FILE) replaced, in place, by the flags the file records
  std::vector<std::string> expand_config(const std::vector<std::string>& args) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
      std::string path;
      if (args[i] == "--config") {
        NL_CHECK(i + 1 < args.size(), "--config needs a value (a run's config.json)");
        path = args[++i];
      } else if (args[i].rfind("--config=", 0) == 0) {
        path = args[i].substr(9);
      } else {
        out.push_back(args[i]);
        continue;
      }
      for (const std::string& a : config_flags(path)) out.push_back(a);
    }
    return out;
  }

  // args with every implication's flags put in front, in the order they were added
  std::vector<std::string> expand_implied(std::vector<std::string> args) {
    for (const auto& [flag, expand] : implications) {
      const Entry* e = find(flag);
      std::string value = e ? e->raw : "";
      for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == flag && i + 1 < args.size()) value = args[++i];
        else if (args[i].rfind(flag + "=", 0) == 0) value = args[i].substr(flag.size() + 1);
      }
      std::vector<std::string> implied;
      const std::vector<std::string> all = expand(value);
      for (size_t i = 0; i < all.size(); ++i) {
        const Entry* f = find(all[i]);
        const bool with_value = !f || f->kind != Kind::Toggle;
        if (!f || f->option) {  // not omitted
          implied.push_back(all[i]);
          if (with_value && i + 1 < all.size()) implied.push_back(all[i + 1]);
        }
        if (with_value) ++i;
      }
      args.insert(args.begin(), implied.begin(), implied.end());
    }
    return args;
  }

  // A recorded value of the JSON type its flag takes: true/false for a toggle, a number
  // for a number, a string for text. Checked here, naming the key and file, because the
  // values become command-line words: a toggle's false would vanish without a word and a
  // number's true would leave a stray argument that names neither.
  static void check_config_value(const Entry& e, const std::string& key, const nlohmann::ordered_json& value,
                                 const std::string& path) {
    const char* wanted = nullptr;
    if (e.kind == Kind::Toggle && !value.is_boolean()) wanted = "true or false";
    if ((e.kind == Kind::Integer || e.kind == Kind::Real) && !value.is_number()) wanted = "a number";
    if (e.kind == Kind::Text && !value.is_string()) wanted = "a string";
    if (e.kind == Kind::Number && !value.is_number() && !value.is_string()) wanted = "a number or a string";
    NL_CHECK(!wanted, "--config: ", path, ": \"", key, "\" is ", value.dump(), ", not ", wanted, " (the value of ",
             e.flag, ")");
  }

  std::vector<std::string> config_flags(const std::string& path) {
    nlohmann::ordered_json j;
    // a key given twice would silently take its last value: the parser's callback sees each
    std::set<std::string> keys;
    std::string twice;
    const auto note_key = [&](int depth, nlohmann::ordered_json::parse_event_t event, nlohmann::ordered_json& parsed) {
      if (depth == 1 && event == nlohmann::ordered_json::parse_event_t::key && parsed.is_string() &&
          !keys.insert(parsed.get<std::string>()).second && twice.empty())
        twice = parsed.get<std::string>();
      return true;
    };
    try {
      j = nlohmann::ordered_json::parse(read_text_file(path, "--config", 1 << 20), note_key);
    } catch (const nlohmann::json::exception& e) {
      fail("--config: ", path, " is not valid JSON: ", e.what());
    }
    NL_CHECK(j.is_object(), "--config: ", path, " does not hold a JSON object");
    NL_CHECK(twice.empty(), "--config: ", path, " gives \"", twice, "\" twice");
    if (j.contains("program"))
      NL_CHECK(j["program"] == program, "--config: ", path, " records a ", j["program"].dump(), " run, not ", program);
    for (const auto& [key, value] : j.items()) {
      if (key == "program") continue;
      const Entry* e = find(flag_of_key(key));
      NL_CHECK(e && e->role != FlagRole::Control, "--config: ", path, " sets ", flag_of_key(key), ", which ", program,
               " does not take");
      check_config_value(*e, key, value, path);
    }
    try {
      return flags_from_values(j);
    } catch (const Error& e) {
      fail("--config: ", path, ": ", e.what());
    }
  }
};

FlagParser::FlagParser(std::string program, std::string summary)
    : impl_(std::make_unique<Impl>(std::move(program), std::move(summary))) {}
FlagParser::~FlagParser() = default;

const std::string& FlagParser::program() const { return impl_->program; }

void FlagParser::group(const std::string& name) { impl_->group = name; }

void FlagParser::integer(const std::string& flag, int64_t& target, int64_t lo, int64_t hi, const std::string& help,
                         FlagRole role) {
  auto& e = impl_->add(flag, Kind::Integer, role, std::to_string(target), with_range(help, lo, hi, false, true), "INT");
  e.store = [&target, flag, lo, hi](const std::string& v) { target = flag_integer(flag, v, lo, hi); };
}

void FlagParser::integer(const std::string& flag, int& target, int64_t lo, int64_t hi, const std::string& help,
                         FlagRole role) {
  auto& e = impl_->add(flag, Kind::Integer, role, std::to_string(target), with_range(help, lo, hi, false, true), "INT");
  e.store = [&target, flag, lo, hi](const std::string& v) { target = (int)flag_integer(flag, v, lo, hi); };
}

void FlagParser::integer(const std::string& flag, uint64_t& target, int64_t lo, int64_t hi, const std::string& help,
                         FlagRole role) {
  auto& e = impl_->add(flag, Kind::Integer, role, std::to_string(target), with_range(help, lo, hi, false, true), "INT");
  e.store = [&target, flag, lo, hi](const std::string& v) { target = (uint64_t)flag_integer(flag, v, lo, hi); };
}

void FlagParser::real(const std::string& flag, float& target, double lo, double hi, const std::string& help,
                      FlagRole role) {
  auto& e = impl_->add(flag, Kind::Real, role, shortest_decimal(target), with_range(help, lo, hi, false, false), "X");
  e.store = [&target, flag, lo, hi](const std::string& v) { target = (float)flag_real(flag, v, lo, hi, false); };
}

void FlagParser::real(const std::string& flag, double& target, double lo, double hi, const std::string& help,
                      FlagRole role) {
  auto& e = impl_->add(flag, Kind::Real, role, shortest_decimal(target), with_range(help, lo, hi, false, false), "X");
  e.store = [&target, flag, lo, hi](const std::string& v) { target = flag_real(flag, v, lo, hi, false); };
}

void FlagParser::positive(const std::string& flag, float& target, double hi, const std::string& help,
                          FlagRole role) {
  auto& e = impl_->add(flag, Kind::Real, role, shortest_decimal(target), with_range(help, 0, hi, true, false), "X");
  e.store = [&target, flag, hi](const std::string& v) {
    // A double above 0 can still round to 0 in float (7e-62), which would pass "positive" and then divide by zero.
    const float x = (float)flag_real(flag, v, 0.0, hi, true);
    NL_CHECK(x > 0, flag, " must be positive, and ", v, " rounds to 0 in single precision (smallest: ",
             shortest_decimal(std::numeric_limits<float>::denorm_min()), ")");
    target = x;
  };
}

void FlagParser::text(const std::string& flag, std::string& target, const std::string& help, FlagRole role) {
  auto& e = impl_->add(flag, Kind::Text, role, target, help, "TEXT");
  e.store = [&target](const std::string& v) { target = v; };
}

void FlagParser::choice(const std::string& flag, std::string& target, const std::vector<std::string>& choices,
                        const std::string& help, FlagRole role) {
  std::string names;
  for (const auto& c : choices) names += (names.empty() ? "" : ", ") + c;
  auto& e = impl_->add(flag, Kind::Text, role, target, help, "NAME");
  e.store = [&target, flag, choices, names](const std::string& v) {
    for (const auto& c : choices)
      if (c == v) {
        target = v;
        return;
      }
    fail(flag, ": unknown value '", v, "' (choose one of: ", names, ")");
  };
}

void FlagParser::toggle(const std::string& flag, bool& target, const std::string& help, FlagRole role) {
  auto& e = impl_->add(flag, Kind::Toggle, role, target ? "1" : "0", help, "");
  e.on = target;
  e.store = [&target](const std::string& v) { target = v == "1"; };
}

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

}  // namespace

void FlagParser::list(const std::string& flag, std::vector<std::string>& target, const std::string& help,
                      FlagRole role) {
  auto& e = impl_->add(flag, Kind::Text, role, join(target), help, "A,B,...");
  e.store = [&target, flag](const std::string& v) {
    target = split_list(v);
    NL_CHECK(!target.empty(), flag, " is empty");
  };
}

void FlagParser::integer_list(const std::string& flag, std::vector<int64_t>& target, int64_t lo, int64_t hi,
                              const std::string& help, FlagRole role) {
  std::vector<std::string> items;
  for (int64_t v : target) items.push_back(std::to_string(v));
  auto& e = impl_->add(flag, Kind::Text, role, join(items), with_range(help, lo, hi, false, true, "each "), "N,M,...");
  e.store = [&target, flag, lo, hi](const std::string& v) {
    target.clear();
    for (const std::string& item : split_list(v)) target.push_back(flag_integer(flag, item, lo, hi));
    NL_CHECK(!target.empty(), flag, " is empty");
  };
}

void FlagParser::custom(const std::string& flag, const std::string& default_text,
                        std::function<void(const std::string&)> store, const std::string& help, FlagRole role,
                        bool numeric) {
  auto& e = impl_->add(flag, numeric ? Kind::Number : Kind::Text, role, default_text, help, numeric ? "X" : "TEXT");
  e.store = std::move(store);
}

void FlagParser::omit(const std::vector<std::string>& flags) {
  impl_->omitted.insert(impl_->omitted.end(), flags.begin(), flags.end());
}

void FlagParser::check(std::function<void()> c) { impl_->checks.push_back(std::move(c)); }

void FlagParser::alias(const std::string& flag, const std::string& older) {
  Impl::Entry* e = impl_->find(flag);
  NL_CHECK(e && !impl_->find(older), impl_->program, ": internal: alias ", older, " for ", flag);
  impl_->aliases.emplace_back(older, flag);
  if (e->option) e->option->description(e->option->get_description() + " (also " + older + ", its older name)");
}

void FlagParser::implies(const std::string& flag,
                         std::function<std::vector<std::string>(const std::string& value)> expand) {
  NL_CHECK(impl_->find(flag), impl_->program, ": internal: ", flag, " implies flags but was never declared");
  impl_->implications.emplace_back(flag, std::move(expand));
}

void FlagParser::info(const std::string& flag, const std::string& help, std::function<std::string()> print) {
  impl_->app.add_flag(flag, help)->group(impl_->group);
  impl_->infos.emplace_back(flag, std::move(print));
}

bool FlagParser::parse(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parse(args);
}

bool FlagParser::parse(const std::vector<std::string>& as_given) {
  Impl& m = *impl_;
  // an older name becomes the flag's own, alone or as --older=VALUE; a flag's value is
  // left as it is, even when it reads like an older name (--note --runs)
  std::vector<std::string> given_args = as_given;
  bool is_value = false;
  for (std::string& a : given_args) {
    if (is_value) {
      is_value = false;
      continue;
    }
    for (const auto& [older, flag] : m.aliases)
      if (a == older || a.rfind(older + "=", 0) == 0) a = flag + a.substr(older.size());
    const Impl::Entry* e = a.rfind("--", 0) == 0 && a.find('=') == std::string::npos ? m.find(a) : nullptr;
    is_value = a == "--config" || (e && e->kind != Kind::Toggle);
  }
  for (const std::string& a : given_args) {
    if (a == "--help" || a == "-h") {
      std::printf("%s", help().c_str());
      return false;
    }
    for (const auto& [flag, print] : m.infos)
      if (a == flag) {
        std::printf("%s", print().c_str());
        return false;
      }
  }
  for (size_t i = 0; i < given_args.size(); ++i)
    NL_CHECK(valid_utf8(given_args[i]), "argument ", i + 1,
             i > 0 && given_args[i - 1].rfind("--", 0) == 0 ? " (after " + given_args[i - 1] + ")" : std::string(),
             " is not valid UTF-8 text: every value is recorded in config.json, which holds UTF-8 only");
  std::vector<std::string> args;
  // CLI11 would take `--quiet=1`; a switch has no value to give. `--flag=VALUE` becomes
  // `--flag VALUE` here: CLI11 read an empty `--norm=` as no value and took the next
  // flag's value for a stray argument ("unexpected argument 'X'" for `--norm= --out X`)
  for (const std::string& a : m.expand_implied(m.expand_config(given_args))) {
    const size_t eq = a.find('=');
    const Impl::Entry* e = a.rfind("--", 0) == 0 && eq != std::string::npos ? m.find(a.substr(0, eq)) : nullptr;
    if (!e) {
      args.push_back(a);
      continue;
    }
    NL_CHECK(e->kind != Kind::Toggle, "flag ", a.substr(0, eq), " takes no value (got '", a, "')");
    args.push_back(a.substr(0, eq));
    args.push_back(a.substr(eq + 1));
  }
  // CLI11 takes the arguments last first
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    m.app.parse(reversed);
  } catch (const CLI::ArgumentMismatch& e) {
    const std::string what = e.what();
    fail(what.substr(0, what.find(':')), " needs a value");
  } catch (const CLI::ParseError& e) {
    fail(e.what(), " (see ", m.program, " --help)");
  }
  const std::vector<std::string> extras = m.app.remaining();
  if (!extras.empty()) {
    const std::string& x = extras.front();
    if (x.rfind("-", 0) == 0) fail("unknown flag '", x.substr(0, x.find('=')), "' (see ", m.program, " --help)");
    fail("unexpected argument '", x, "' (flags take the form --name value; see ", m.program, " --help)");
  }
  for (auto& e : m.entries) {
    if (e.kind == Kind::Toggle) {
      if (e.option && e.option->count() > 0) {
        e.on = true;
        e.raw = "1";
      }
    }
    e.store(e.raw);
  }
  for (const auto& c : m.checks) c();
  return true;
}

bool FlagParser::given(const std::string& flag) const {
  for (const auto& e : impl_->entries)
    if (e.flag == flag) return e.option && e.option->count() > 0;
  fail(impl_->program, ": internal: flag ", flag, " was never declared");
}

nlohmann::ordered_json FlagParser::values() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["program"] = impl_->program;
  for (const auto& e : impl_->entries) {
    if (e.role == FlagRole::Control) continue;
    const std::string key = flag_key(e.flag);
    switch (e.kind) {
      case Kind::Integer: j[key] = std::strtoll(e.raw.c_str(), nullptr, 10); break;
      case Kind::Real: j[key] = std::strtod(e.raw.c_str(), nullptr); break;
      case Kind::Text: j[key] = e.raw; break;
      case Kind::Number: {
        char* end = nullptr;
        const long long i = std::strtoll(e.raw.c_str(), &end, 10);
        if (!e.raw.empty() && *end == '\0') {
          j[key] = i;
          break;
        }
        const double x = std::strtod(e.raw.c_str(), &end);
        if (!e.raw.empty() && *end == '\0' && std::isfinite(x)) j[key] = x;
        else j[key] = e.raw;
        break;
      }
      case Kind::Toggle: j[key] = e.on; break;
    }
  }
  return j;
}

std::string FlagParser::config_json() const { return values().dump(2) + "\n"; }

std::vector<std::string> FlagParser::recipe_keys() const {
  std::vector<std::string> keys;
  for (const auto& e : impl_->entries)
    if (e.role == FlagRole::Recipe) keys.push_back(flag_key(e.flag));
  return keys;
}

std::string FlagParser::help() const { return impl_->app.help(); }

}  // namespace nl
