#include "nn/norm_state.h"

#include <nlohmann/json.hpp>

#include "nn/norms/registry.h"
#include "nn/norms/site_pair.h"
#include "tensor/error.h"

namespace nl {

std::string encode_norm_state(const std::vector<std::shared_ptr<Block>>& blocks) {
  nlohmann::json states = nlohmann::json::array();
  bool any = false;
  for (const auto& b : blocks) {
    const std::string s = b->site_pair() ? b->site_pair()->state() : "";
    any |= !s.empty();
    states.push_back(s);
  }
  return any ? states.dump() : "";
}

void restore_norm_state(const std::vector<std::shared_ptr<Block>>& blocks, const std::string& norm,
                        const std::map<std::string, std::string>& metadata) {
  std::vector<std::string> states;
  std::string key = kNormStateKey;
  auto saved = metadata.find(key);
  if (saved != metadata.end()) {
    const auto parsed = nlohmann::json::parse(saved->second, nullptr, /*allow_exceptions=*/false);
    NL_CHECK(parsed.is_array(), "checkpoint: ", key, " is not a JSON array of strings");
    for (const auto& s : parsed) {
      NL_CHECK(s.is_string(), "checkpoint: ", key, " is not a JSON array of strings");
      states.push_back(s.get<std::string>());
    }
  } else {
    const NormKind& kind = norm_kind(norm);
    if (kind.legacy_pair_states) states = kind.legacy_pair_states(metadata);
    key = "the " + norm + " state of an older checkpoint";
  }
  if (states.empty()) return;
  NL_CHECK(states.size() == blocks.size(), "checkpoint: ", key, " holds ", states.size(), " entries for ",
           blocks.size(), " blocks");
  for (size_t i = 0; i < states.size(); ++i) {
    if (states[i].empty()) continue;
    SitePair* pair = blocks[i]->site_pair();
    NL_CHECK(pair, "checkpoint: ", key, " holds a state for block ", i, ", whose norm keeps none");
    pair->restore(states[i]);
  }
}

}  // namespace nl
