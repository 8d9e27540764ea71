// The state a model's norms keep beyond their parameters (a site pair's: BHyT's
// ||W_V W_O||^2 cache and its refresh counter, nn/norms/site_pair.h), as checkpoint
// metadata, for the GPT and the ViT alike: an exact resume needs it.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nn/block.h"

namespace nl {

// The blocks' site-pair states as a checkpoint's kNormStateKey metadata holds them: a
// JSON array of one string per block (SitePair::state); empty when no block keeps any.
std::string encode_norm_state(const std::vector<std::shared_ptr<Block>>& blocks);

// Restores them from a checkpoint's metadata: kNormStateKey, or in a checkpoint written
// before that key the entries the blocks' norm kind `norm` reads (NormKind::legacy_pair_states).
// A checkpoint that holds neither changes nothing; one whose entries do not fit the
// blocks is refused naming the key.
void restore_norm_state(const std::vector<std::shared_ptr<Block>>& blocks, const std::string& norm,
                        const std::map<std::string, std::string>& metadata);

}  // namespace nl
