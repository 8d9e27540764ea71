// A norm whose two sites in a block are coupled. Most kinds act alone at each site: the
// block calls ln1 before the attention and ln2 before the MLP. BHyT (nn/norms/bhyt.cpp)
// computes a Pre-LN block's second site from the block input's statistics and the
// attention's weights instead of from h, and keeps a cache between forwards. Such a kind
// provides a SitePair (NormKind::make_site_pair, nn/norms/registry.h): the block builds
// one from its parts, holds it without knowing its type, and asks it for site 2, for
// what it reports to the probes, and for the state a checkpoint keeps.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "nn/norms/norm.h"

namespace nl {

class ActivationProbe;

// What a block lends the pair of its two norm sites; the pair may keep the references
// (the block owns both).
struct SitePairParts {
  const NormConfig& config;
  const Module& block;  // its training() says whether a forward is a training step
  const Norm& site1;    // ln1, before the attention
  const Norm& site2;    // ln2, before the MLP
  // ||W_V W_O||_F^2 of the attention between them, in the x W convention (no gradient)
  std::function<float()> value_output_frobenius2;
  float out_scale;  // the block's factor on every norm output (lns: 1/sqrt(layer), else 1)
  int64_t dim;
  // Peri-LN: the attention output passes through a norm (ln1_out) before the stream
  bool branch_output_normed;
};

class SitePair {
 public:
  virtual ~SitePair() = default;
  // Whether forward() computes site 2; when false the block runs site2 on h itself and
  // the pair only reports.
  virtual bool replaces_site2() const = 0;
  // Site 2's output, before the block's out_scale, for the block input x (B, T, C) and
  // h = x + attention(site1(x)).
  virtual Var forward(const Var& x, const Var& h) const = 0;
  // Called after each forward when the probe wants detail (nn/probe.h): the sites the
  // pair adds, for layer `layer` (0-based). For a pair that replaces site 2 the block has
  // reported "ln2" itself, and the pair reports "ln2.bounded_arg" if there is one.
  virtual void report(const Tensor& x, const Tensor& h, ActivationProbe& probe, int64_t layer) const {}
  // Why the key/value-cached forward (generation) is refused; empty: it is allowed.
  virtual std::string cached_form_refusal() const { return {}; }
  // What the pair keeps beside the parameters, as text (empty: nothing), and back: a
  // checkpoint saves every block's under kNormStateKey so that a resumed run continues
  // exactly. restore() throws naming the entry for a text state() cannot have written.
  virtual std::string state() const { return {}; }
  virtual void restore(const std::string& state) {}
};

// The checkpoint metadata key of the blocks' site-pair states (a JSON array, one string
// per block: train/gpt/gpt_checkpoint.h).
inline constexpr const char* kNormStateKey = "norm_state";

}  // namespace nl
