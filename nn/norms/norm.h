// What every normalization layer is: a Module mapping x (..., C) to a tensor of the same
// shape, token by token, built from a NormConfig for one site of the model. Which layer
// a name stands for, and what the model around it must do for it, is the registry's
// (nn/norms/registry.h).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nn/module.h"

namespace nl {

// One setting of a norm kind, declared by the kind (nn/norms/registry.h): its name is
// also its flag (--dyt-alpha0) and, with '_' for '-', its key in model descriptions.
struct NormOption {
  std::string name;       // "dyt-alpha0"
  double initial;         // the default; NaN: none of its own (unset unless given, or `follows`)
  double lo, hi;          // the range a value must lie in
  std::string help;
  bool integer = false;   // a whole number (bhyt-refresh)
  bool lo_open = false, hi_open = false;  // lo or hi itself excluded
  // A text option (--bhyt-form paper|code): its value is the index of one of these,
  // and flags and model descriptions write the text.
  std::vector<std::string> choices = {};
  // Unset and without a default of its own, the option has this option's value
  // (dyt-alpha0-attn follows dyt-alpha0).
  std::string follows = {};
  // The value 0 stands for `auto` (the flag takes the word), which a run of `steps`
  // steps replaces by auto_value(steps) (resolve_for_run, nn/norms/registry.h).
  int64_t (*auto_value)(int64_t steps) = nullptr;
  // Described (nn/model_json.h) only when not at its default: an option added to a kind
  // after models of it were saved leaves their descriptions, and so the resumption of
  // their checkpoints, as they were.
  bool quiet_default = false;
};

// The settings of the norms of one model: the kind's name, eps, and the options the
// kinds declare. An option not set here has its declared default, or follows another.
struct NormConfig {
  std::string name = "ln";
  float eps = 1e-5f;
  // beta, the learnt shift, in the kinds that have one (ln, cbwc, dyt, hardtanh, derf):
  // false builds them without it, as Verma's GPT-2 with bias=False (--norm-bias off)
  bool bias = true;
  std::map<std::string, double> options;  // set by name ("dyt-alpha0")

  // The option's value: set, its declared default, or the value of the option it
  // follows (throws for a name no kind declares, or an option with no value).
  double option(const std::string& option_name) const;
  // A text option's value ("paper" for bhyt-form).
  const std::string& choice(const std::string& option_name) const;
  // Whether option() has a value (an optional option may be unset).
  bool has(const std::string& option_name) const;
  NormConfig& set(const std::string& option_name, double value);
  // Sets a text option; throws naming the choices for another text.
  NormConfig& set_choice(const std::string& option_name, const std::string& value);
  float kappa() const;  // BHyT's 1 / sqrt(1 - p)
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
  // The layer's definition, composed of autograd ops (autograd/ops.h), which also gives
  // its backward. This is all a new norm writes besides its parameters.
  virtual Var composite(const Var& x) const = 0;
  // What the models run: the composite, unless the layer has a fused kernel pair
  // (autograd/norms.h, the ops its kind lists in fused_ops) computing the same. A
  // generic test (tests/nn/test_norm_registry.cpp) holds every registered layer's
  // forward to its composite, values and gradients.
  virtual Var forward(const Var& x) const { return composite(x); }
  // For a layer that ends in a bounded nonlinearity (NormKind::bounded): its argument u
  // for input x, composed of autograd ops (composite() builds on it). Undefined for the
  // others.
  virtual Var bounded_arg(const Var& x) const { return Var(); }
  // bounded_arg of a tensor, with no graph recorded: what the probes report.
  Tensor bounded_arg_value(const Tensor& x) const;
};

}  // namespace nl
