// Folding the Pre-LN GPT (nn/fold.h): the model description read back from a
// checkpoint, the detector run on one forward pass, and the fold into the cbwc GPT.
#include <set>

#include "nn/fold.h"
#include "nn/model_json.h"

namespace nl {

FoldReport detect_gpt(GPT& model) {
  const int64_t T = std::min<int64_t>(model.config.context, 8);
  return detect_in_eval_mode(model, [&] {
    return model.forward(Tensor::from_ints(std::vector<int32_t>(T, 0), {1, T}));
  });
}

std::shared_ptr<GPT> fold_gpt(GPT& ln_model, const FoldReport& rep, bool weights_folded) {
  const GPTConfig& cfg = ln_model.config;
  // folding is derived and tested for the plain Pre-LN GPT: an lns model has pre's
  // parameter names, so without these checks it would fold and compute another function
  NL_CHECK(cfg.block == "pre", "fold: block '", cfg.block,
           "' cannot be folded here (only pre-norm blocks are supported)");
  NL_CHECK(cfg.mlp == "gelu" && cfg.emb_scale0 == 0.0f && cfg.final_norm_name() == cfg.norm.name && cfg.bias &&
               cfg.tied_head,
           "fold: the options mlp '", cfg.mlp, "', emb_scale0 ", cfg.emb_scale0, ", final_norm '",
           cfg.final_norm_name(), "', bias ", cfg.bias, ", tied_head ", cfg.tied_head,
           " cannot be folded here (only the plain GPT is supported)");
  // the plan must be what the cbwc GPT does (nn/gpt.cpp), no more and no less
  const std::set<std::string> expected = check_cbwc_sites("GPT", cfg.norm, cfg.layers, rep);
  std::set<std::string> planned;
  int insertions = 0;
  for (const Centring& c : rep.plan) {
    if (c.kind == Centring::Kind::Parameter) {
      NL_CHECK(expected.count(c.name) && c.axis == 0, "fold: the plan centres ", c.name, " along axis ", c.axis,
               "; the cbwc GPT centres only the attention and MLP output projections, along axis 0");
      planned.insert(c.name);
      continue;
    }
    ++insertions;
    const VarImpl* x = c.target.get();
    auto embedding_of = [&](size_t i, const Var& table) {
      const auto& in = x->node->inputs[i];
      return in->node && in->node->op == "embedding" && in->node->inputs[0] == table.impl();
    };
    const bool embedding_sum = x->node && x->node->op == "add" && x->node->inputs.size() == 2 &&
                               embedding_of(0, ln_model.wte->weight) && embedding_of(1, ln_model.wpe->weight);
    NL_CHECK(embedding_sum, "fold: the plan inserts a centring after ", c.name,
             "; the cbwc GPT centres only the token + position sum");
  }
  NL_CHECK(insertions == 1, "fold: the plan inserts ", insertions, " centrings; the cbwc GPT inserts one");
  for (const auto& name : expected)
    NL_CHECK(planned.count(name), "fold: the plan leaves ", name, " uncentred; the cbwc GPT centres it");

  GPTConfig folded_cfg = cfg;
  folded_cfg.norm.name = norm_kind(cfg.norm.name).folds_into;
  folded_cfg.final_norm = "";  // the folded kind's own (cfg's final norm was its blocks' kind)
  return build_folded(ln_model, folded_cfg, rep.plan, weights_folded);
}

}  // namespace nl
