// The one place where a norm's name becomes behaviour. Each kind says how to build its
// layer at a site and what the model around it must do: the models, the folding pass,
// the activation statistics, the flags and the studies ask this registry and never
// compare names themselves. The kinds are listed in nn/norms/kinds.def, each defined in
// a file beside this one (the README's table of norms says which).
// A kind's file defines its layer (a Norm: its parameters and its composite forward,
// nn/norms/norm.h) and a function returning its NormKind; registering it is one line in
// kinds.def. Every program, study and generic test then takes it (docs/your-own-norm.md).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nn/norms/norm.h"
// The layers other files use by name (LayerNorm, RMSNorm, DyT, BHyT), declared to every
// kind's file: a new kind's class of one of these names fails to compile (a
// redefinition, or an ambiguous name from an anonymous namespace) instead of linking
// against the built-in class's vtable and crashing at run time. Every other layer lives
// in its file's anonymous namespace, as docs/your-own-norm.md's example does.
#include "nn/norms/norms.h"
#include "nn/norms/site_pair.h"

namespace nl {

// The bounded nonlinearity f a layer ends in, y = gamma f(u) (+ beta) with u its argument
// (Norm::bounded_arg): the activation statistics measure how much of u lies where f is
// flat (|u| > 1, 2, 3: studies/instruments/act_stats.h).
struct BoundedNonlinearity {
  std::string name;           // "tanh", "clip", ...; empty: the layer ends in none
  std::vector<double> kinks;  // arguments where f has no derivative (a clip's -1 and 1)
};

struct NormKind {
  std::string name;     // what --norm takes
  std::string summary;  // one line for --help, listings and the docs
  std::string source;   // where it comes from (the paper), for listings and the docs; optional
  // The layer for one site: any callable, e.g. a lambda returning std::make_shared<Layer>.
  std::function<std::shared_ptr<Norm>(const NormConfig& config, int64_t dim, NormPlace place)> make;
  // Its settings (flags --<name>), read with NormConfig::option; kinds may share one
  // (bhyt and bhyt-exact), declared alike.
  std::vector<NormOption> options;
  // The model keeps its residual stream zero-mean for this norm: it centres the
  // embedding sum once and makes every projection into the stream a CBWC linear (cbwc).
  bool centres_stream = false;
  // The layer reduces over each token (a mean, a variance, a mean square); false for an
  // elementwise layer with no statistics at all (dyt).
  bool statistics = true;
  // What the layer ends in: with a name, bounded_arg() is defined and its saturation
  // is measured.
  BoundedNonlinearity bounded;
  bool ends_bounded() const { return !bounded.name.empty(); }
  // Verma 2026's saturation screen (studies/instruments/screening.h) was fitted on DyT
  // runs and is applied to this kind's runs only when it says so: another tanh norm
  // without statistics is not thereby DyT.
  bool screened = false;
  // compare_norms --tune-dyt: this kind's runs are tuned on those axes instead of --tune's
  // (DyT's paper tunes its alpha0 per model).
  bool tuned_as_dyt = false;
  // The ops its layer's fused forward records (autograd/norms.h); empty when forward()
  // is the composite. The fold pass (nn/fold.cpp) cannot look inside these ops: it
  // knows them as norms through this list, and by the trait below.
  std::vector<std::string> fused_ops;
  // The output stays the same when a constant is added to every channel of a token
  // (LayerNorm subtracts the mean first): the fold pass lets such a shift end here.
  bool ignores_shift = false;
  // The kind's two sites in a block are coupled (nn/norms/site_pair.h): the pair a block
  // builds from its parts, or null where the pair does not apply (Peri-LN for BHyT).
  // Unset for a kind that acts alone at each site.
  std::function<std::unique_ptr<SitePair>(const SitePairParts& parts)> make_site_pair;
  // The blocks' site-pair states in a checkpoint written before kNormStateKey existed,
  // one per block, from its metadata (bhyt's "bhyt_c_attn"); empty when it holds none.
  std::function<std::vector<std::string>(const std::map<std::string, std::string>& metadata)> legacy_pair_states;
  // What its pair does, for the studies and the tests (the pair itself is what the block
  // runs): a Pre-LN block's second site reduces over the block input instead of h (bhyt's
  // block-level variance approximation)...
  bool approximates_site2 = false;
  // ... or the block reports that approximation beside the exact site-2 variance, for
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
// The kind called `name`, or null (a results file may name a kind this build lacks).
const NormKind* find_norm_kind(const std::string& name);
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

// The norm the comparisons read every other against (compare_norms' "vs ln" column and
// status): LayerNorm, the standard the others claim to match or beat.
inline constexpr const char* kReferenceNorm = "ln";

// "ln | rms | cbwc | dyt | bhyt | bhyt-exact": for help texts.
std::string norm_choices(const char* separator = " | ");

// The layer of kind config.name for `site`.
std::shared_ptr<Norm> make_norm(const NormConfig& config, int64_t dim, NormPlace place = NormPlace::Final);

}  // namespace nl
