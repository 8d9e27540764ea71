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

const NormKind& norm_kind(const std::string& name) {
  for (const NormKind& k : norm_kinds())
    if (k.name == name) return k;
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

void check_norm_config(const NormConfig& c) {
  norm_kind(c.name);
  for (const auto& [name, v] : c.options) {
    const NormOption& o = norm_option(name);
    const bool ok = std::isfinite(v) && (o.lo_open ? v > o.lo : v >= o.lo) && (o.hi_open ? v < o.hi : v <= o.hi) &&
                    (!o.integer || v == std::floor(v));
    NL_CHECK(ok, "--", name, " must ", o.integer ? "be an integer and " : "", "lie in ", o.lo_open ? "(" : "[",
             shortest_decimal(o.lo), ", ", shortest_decimal(o.hi), o.hi_open ? ")" : "]", ", got ", shortest_decimal(v));
  }
}

double NormConfig::option(const std::string& option_name) const {
  auto it = options.find(option_name);
  if (it != options.end()) return it->second;
  const double v = norm_option(option_name).initial;
  NL_CHECK(!std::isnan(v), "norm option --", option_name, " is not set and has no default");
  return v;
}

bool NormConfig::has(const std::string& option_name) const {
  return options.count(option_name) > 0 || !std::isnan(norm_option(option_name).initial);
}

NormConfig& NormConfig::set(const std::string& option_name, double value) {
  norm_option(option_name);  // a name some kind declares
  options[option_name] = value;
  return *this;
}

std::shared_ptr<Norm> make_norm(const NormConfig& config, int64_t dim, NormPlace place) {
  check_norm_config(config);
  return norm_kind(config.name).make(config, dim, place);
}

}  // namespace nl
