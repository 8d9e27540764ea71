// The one place where a norm's name becomes behaviour. Each kind says how to build its
// layer at a site and what the model around it must do: the models, the folding pass,
// the activation statistics, the flags and the studies ask this registry and never
// compare names themselves. The kinds, one file each beside this one:
//   ln          LayerNorm                            nn/norms/layernorm.cpp
//   rms         RMSNorm                              nn/norms/rmsnorm.cpp
//   cbwc        RMSNorm + beta in a centred model    nn/norms/rmsnorm.cpp
//   dyt         DyT, gamma tanh(alpha x) + beta      nn/norms/dyt.cpp
//   bhyt        BHyT, the block-level approximation at each block's second site
//   bhyt-exact  BHyT* at every site                  nn/norms/bhyt.cpp (both)
// Registering a kind is one line in registry.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/norms/norm.h"

namespace nl {

struct NormKind {
  std::string name;     // what --norm takes
  std::string summary;  // one line for --help and the docs
  std::shared_ptr<Norm> (*make)(const NormConfig& config, int64_t dim, NormPlace place) = nullptr;
  // Its settings (flags --<name>), read with NormConfig::option; kinds may share one
  // (bhyt and bhyt-exact), declared alike.
  std::vector<NormOption> options;
  // The model keeps its residual stream zero-mean for this norm: it centres the
  // embedding sum once and makes every projection into the stream a CBWC linear (cbwc).
  bool centres_stream = false;
  // The layer reduces over each token (a mean, a variance, a mean square); false for an
  // elementwise layer with no statistics at all (dyt).
  bool statistics = true;
  // The layer ends in a tanh, so pre_tanh() is defined and its saturation is measured.
  bool ends_in_tanh = false;
  // A Pre-LN block's second site reduces over the block input instead of h (bhyt's
  // block-level variance approximation, nn/norms/bhyt.h); its ||W_V W_O||^2 cache is
  // state that checkpoints keep.
  bool approximates_site2 = false;
  // The block reports the approximation beside the exact site-2 variance, for
  // comparison, without using it (bhyt-exact).
  bool reports_site2 = false;
  // A trained model of this kind can be folded into a model of that kind with the same
  // outputs (nn/fold.h: ln -> cbwc); empty: not foldable.
  std::string folds_into;
  // The kind of the norm before the head when the model names none (--final-norm
  // empty); empty: this kind itself. bhyt's released recipe ends in an RMSNorm.
  std::string default_final_norm;
};

// Every registered kind, in the order --help lists them.
const std::vector<NormKind>& norm_kinds();
// The kind called `name`; throws "unknown norm 'x' (choose one of: ln, rms, ...)".
const NormKind& norm_kind(const std::string& name);
// Every kind's options, each once, in registration order.
const std::vector<NormOption>& norm_options();
// The option called `name` (throws naming the choices).
const NormOption& norm_option(const std::string& name);
// Throws naming the flag when config names no kind, or sets an option no kind
// declares or a value outside its option's range.
void check_norm_config(const NormConfig& config);

// config with every `auto` option (NormOption::auto_value) replaced by its value for a
// run of `steps` steps; a model built from an unresolved config treats auto as 1.
NormConfig resolve_for_run(NormConfig config, int64_t steps);

// The kind of the final norm of a model with norms `norm` whose final norm is named
// `final_norm` (empty: the kind's default_final_norm, else the kind itself).
std::string final_norm_kind(const std::string& norm, const std::string& final_norm);

// "ln | rms | cbwc | dyt | bhyt | bhyt-exact": for help texts.
std::string norm_choices(const char* separator = " | ");

// The layer of kind config.name for `site`.
std::shared_ptr<Norm> make_norm(const NormConfig& config, int64_t dim, NormPlace place = NormPlace::Final);

}  // namespace nl
