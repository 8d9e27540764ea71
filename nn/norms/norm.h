// What every normalization layer is: a Module mapping x (..., C) to a tensor of the same
// shape, token by token, built from a NormConfig for one site of the model. Which layer
// a name stands for, and what the model around it must do for it, is the registry's
// (nn/norms/registry.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "nn/module.h"

namespace nl {

// The settings of the norms of one model. Each kind reads the fields it needs.
struct NormConfig {
  std::string name = "ln";
  float eps = 1e-5f;
  float dyt_alpha0 = 0.5f;       // DyT's initial alpha
  float bhyt_lambda0 = 1.0f;     // BHyT's initial lambda (every site without its own below)
  std::optional<float> bhyt_lambda_attn, bhyt_lambda_mlp;  // the attention / MLP branch's sites
  float bhyt_p = 0.99f;          // target probability: kappa = 1 / sqrt(1 - p)
  int64_t bhyt_refresh = 1;      // training steps between recomputations of c_attn (bhyt)
  float kappa() const;
};

// Where in the model a norm sits: its kind may start it differently per site (BHyT's
// lambda at the attention and MLP sites).
enum class NormPlace {
  Attention,  // before the attention branch (ln1), and after it in Peri-LN (ln1_out)
  Mlp,        // before the MLP branch (ln2), and after it in Peri-LN (ln2_out)
  Final,      // before the head (ln_f)
  Embedding,  // Peri-LN's norm of the embedding output (emb_norm)
};

class Norm : public Module {
 public:
  virtual Var forward(const Var& x) const = 0;
  // The argument of the norm's tanh for input x (no graph); undefined for norms
  // without one (the registry's ends_in_tanh says which have one).
  virtual Tensor pre_tanh(const Tensor& x) const { return Tensor(); }
};

}  // namespace nl
