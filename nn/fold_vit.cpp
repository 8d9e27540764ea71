// Folding the Pre-LN ViT (nn/fold.h): its description read back from a checkpoint, the
// detector run on one forward pass, and the fold into the cbwc ViT.
#include <set>

#include "nn/fold.h"
#include "nn/model_json.h"

namespace nl {

FoldReport detect_vit(ViT& model) {
  const ViTConfig& c = model.config;
  return detect_in_eval_mode(model, [&] {
    return model.forward(Var(Tensor::zeros({1, c.channels, c.image, c.image})));
  });
}

std::shared_ptr<ViT> fold_vit(ViT& ln_model, const FoldReport& rep, bool weights_folded) {
  const ViTConfig& cfg = ln_model.config;
  NL_CHECK(cfg.final_norm_name() == cfg.norm.name, "fold: the ViT's final norm '", cfg.final_norm_name(),
           "' is not its blocks' '", cfg.norm.name, "': only a model of one kind folds");
  // the blocks' projections must all be centred, as the cbwc ViT's blocks are
  const std::set<std::string> required = check_cbwc_sites("ViT", cfg.norm, cfg.layers, rep);
  std::set<std::string> planned;
  // the token sum may be made zero-mean through its parameters (what the cbwc ViT's
  // explicit centring then finds already done) or by an insertion after the sum
  const std::set<std::string> token_sum = {"patch.weight", "patch.bias", "cls_token", "pos_embed"};
  int insertions = 0;
  for (const Centring& c : rep.plan) {
    if (c.kind == Centring::Kind::After) {
      ++insertions;
      const VarImpl* x = c.target.get();
      const bool after_token_sum = x->node && x->node->op == "add" && x->node->inputs.size() == 2 &&
                                   x->node->inputs[1] == ln_model.pos_embed.impl();
      NL_CHECK(after_token_sum, "fold: the plan inserts a centring after ", c.name,
               "; the cbwc ViT centres only the token sum [cls ; patches] + pos_embed");
      continue;
    }
    const bool last_axis = c.axis == (c.name == "pos_embed" ? 1 : 0);
    NL_CHECK((required.count(c.name) || token_sum.count(c.name)) && last_axis, "fold: the plan centres ", c.name,
             " along axis ", c.axis,
             "; the cbwc ViT centres only the token sum's parameters and the blocks' output projections");
    planned.insert(c.name);
  }
  NL_CHECK(insertions <= 1, "fold: the plan inserts ", insertions, " centrings; the cbwc ViT inserts one");
  for (const auto& name : required)
    NL_CHECK(planned.count(name), "fold: the plan leaves ", name, " uncentred; the cbwc ViT centres it");

  ViTConfig folded_cfg = cfg;
  folded_cfg.norm.name = norm_kind(cfg.norm.name).folds_into;
  folded_cfg.final_norm = "";  // the folded kind's own, as the blocks'
  return build_folded(ln_model, folded_cfg, rep.plan, weights_folded);
}

}  // namespace nl
