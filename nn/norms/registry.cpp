#include "nn/norms/registry.h"

#include "tensor/error.h"

namespace nl {

// Each kind's file defines its function; listing it here registers it.
NormKind layernorm_kind();
NormKind rmsnorm_kind();
NormKind cbwc_kind();
NormKind dyt_kind();
NormKind bhyt_kind();
NormKind bhyt_exact_kind();

const std::vector<NormKind>& norm_kinds() {
  static const std::vector<NormKind> kinds = {layernorm_kind(), rmsnorm_kind(),  cbwc_kind(),
                                              dyt_kind(),       bhyt_kind(),     bhyt_exact_kind()};
  return kinds;
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

std::shared_ptr<Norm> make_norm(const NormConfig& config, int64_t dim, NormPlace place) {
  return norm_kind(config.name).make(config, dim, place);
}

}  // namespace nl
