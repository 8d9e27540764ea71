#include "nn/norms/registry.h"

#include <cmath>

#include "tensor/decimal.h"
#include "tensor/error.h"

namespace nl {

// The kinds of nn/norms/kinds.def, each function defined in its kind's file.
#define NL_NORM_KIND(make_kind) NormKind make_kind();
#include "nn/norms/kinds.def"
#undef NL_NORM_KIND

const std::vector<NormKind>& norm_kinds() {
  static const std::vector<NormKind> kinds = {
#define NL_NORM_KIND(make_kind) make_kind(),
#include "nn/norms/kinds.def"
#undef NL_NORM_KIND
  };
  return kinds;
}

Tensor Norm::bounded_arg_value(const Tensor& x) const {
  NoGradGuard no_graph;
  Var u = bounded_arg(Var(x));
  return u.defined() ? u.value() : Tensor();
}

std::string norm_choices(const char* separator) {
  std::string all;
  for (const NormKind& k : norm_kinds()) all += (all.empty() ? "" : separator) + k.name;
  return all;
}

const NormKind* find_norm_kind(const std::string& name) {
  for (const NormKind& k : norm_kinds())
    if (k.name == name) return &k;
  return nullptr;
}

const NormKind& norm_kind(const std::string& name) {
  if (const NormKind* k = find_norm_kind(name)) return *k;
  fail("unknown norm '", name, "' (choose one of: ", norm_choices(", "), ")");
}

const std::vector<NormOption>& norm_options() {
  static const std::vector<NormOption> all = [] {
    std::vector<NormOption> out;
    for (const NormKind& k : norm_kinds())
      for (const NormOption& o : k.options) {
        bool seen = false;
        for (const NormOption& have : out) seen |= have.name == o.name;
        if (!seen) out.push_back(o);
      }
    return out;
  }();
  return all;
}

const NormOption& norm_option(const std::string& name) {
  for (const NormOption& o : norm_options())
    if (o.name == name) return o;
  std::string all;
  for (const NormOption& o : norm_options()) all += (all.empty() ? "" : ", ") + o.name;
  fail("no norm has the option '", name, "' (the options: ", all, ")");
}

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string all;
  for (const std::string& i : items) all += (all.empty() ? "" : ", ") + i;
  return all;
}

}  // namespace

void check_norm_config(const NormConfig& c) {
  norm_kind(c.name);
  for (const auto& [name, v] : c.options) {
    const NormOption& o = norm_option(name);
    if (!o.choices.empty()) {
      NL_CHECK(v >= 0 && v < (double)o.choices.size() && v == std::floor(v), "--", name, " must be one of ",
               joined(o.choices), ", got the index ", shortest_decimal(v));
      continue;
    }
    if (o.auto_value && v == 0) continue;  // auto
    const bool ok = std::isfinite(v) && (o.lo_open ? v > o.lo : v >= o.lo) && (o.hi_open ? v < o.hi : v <= o.hi) &&
                    (!o.integer || v == std::floor(v));
    NL_CHECK(ok, "--", name, " must ", o.integer ? "be an integer and " : "", "lie in ", o.lo_open ? "(" : "[",
             shortest_decimal(o.lo), ", ", shortest_decimal(o.hi), o.hi_open ? ")" : "]",
             o.auto_value ? " or be auto" : "", ", got ", shortest_decimal(v));
  }
}

NormConfig resolve_for_run(NormConfig c, int64_t steps) {
  for (const NormOption& o : norm_options())
    if (o.auto_value && c.has(o.name) && c.option(o.name) == 0) c.set(o.name, (double)o.auto_value(steps));
  return c;
}

std::string final_norm_kind(const std::string& norm, const std::string& final_norm) {
  if (!final_norm.empty()) return norm_kind(final_norm).name;
  const NormKind& kind = norm_kind(norm);
  return kind.default_final_norm.empty() ? kind.name : kind.default_final_norm;
}

double NormConfig::option(const std::string& option_name) const {
  auto it = options.find(option_name);
  if (it != options.end()) return it->second;
  const NormOption& o = norm_option(option_name);
  if (!std::isnan(o.initial)) return o.initial;
  NL_CHECK(!o.follows.empty(), "norm option --", option_name, " is not set and has no default");
  return option(o.follows);
}

const std::string& NormConfig::choice(const std::string& option_name) const {
  const NormOption& o = norm_option(option_name);
  NL_CHECK(!o.choices.empty(), "norm option --", option_name, " is a number, not a choice");
  return o.choices.at((size_t)option(option_name));
}

bool NormConfig::has(const std::string& option_name) const {
  const NormOption& o = norm_option(option_name);
  return options.count(option_name) > 0 || !std::isnan(o.initial) || (!o.follows.empty() && has(o.follows));
}

NormConfig& NormConfig::set(const std::string& option_name, double value) {
  norm_option(option_name);  // a name some kind declares
  options[option_name] = value;
  return *this;
}

NormConfig& NormConfig::set_choice(const std::string& option_name, const std::string& value) {
  const NormOption& o = norm_option(option_name);
  for (size_t i = 0; i < o.choices.size(); ++i)
    if (o.choices[i] == value) return set(option_name, (double)i);
  fail("--", option_name, ": unknown value '", value, "' (choose one of: ", joined(o.choices), ")");
}

std::shared_ptr<Norm> make_norm(const NormConfig& config, int64_t dim, NormPlace place) {
  check_norm_config(config);
  return norm_kind(config.name).make(config, dim, place);
}

}  // namespace nl
