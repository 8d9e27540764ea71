// LayerNorm folding (NORMS.md, "CBWC + RMSNorm"; the paper's Algorithm 1), on the graph
// autograd records. After one forward pass with recording on, detect_foldable walks
// the graph back from the output and decides, for every layer_norm node, whether its
// input is zero-mean over the normalised (last) axis:
//   foldable as is           the input is provably zero-mean: LN = RMSNorm + beta now;
//   foldable if centred      it becomes so once named parameters are centred (linears:
//                            W -= mean of W over the outputs, b -= mean(b)) and an
//                            explicit centring x - mean(x) is inserted after named nodes;
//   not foldable             a named node breaks zero-mean on every path we can prove.
// The walk knows ops, never models: it works on any graph built from the library's ops.
//
// The rules (a query is "is tensor t zero-mean along axis a?"):
//   sources     sub(x, mean(x, {a}, keepdim)) (explicit centring; a CBWC weight is this
//               with a = 0, its bias with a = 0);
//   linear      matmul: along the output's last axis, C = op(A) op(B) is zero-mean when
//               every row of op(B) is (sum_j C_ij = sum_k A_ik sum_j B_kj), for any A;
//               along the rows, when op(A)'s columns are. A Linear layer's fused op
//               (ag::linear: x W^T + b) is that matmul followed by the add of its bias;
//               with a GELU in its epilogue it breaks zero-mean. A parameter leaf that must be
//               zero-mean is *regulable*: centring it along that axis makes it so. For
//               a weight read by matmul this is CBWC; for a bias it is b - mean(b);
//   preserving  add/sub of zero-mean terms (a term broadcast along the axis is a
//               per-token constant and breaks it), neg, mul_scalar, mul/div by a factor
//               constant along the axis (a per-token scale), dropout in eval mode or
//               with p = 0, contiguous, slice/expand/reduction along other axes, concat
//               (each part zero-mean), reshape/squeeze/unsqueeze/permute/transpose with
//               the axis followed through the view;
//   heads       reshape (B, T, C) -> (B, T, H, hd) *splits* the channel axis: a row that
//               is zero-mean over C need not be zero-mean within each head, so the
//               split breaks it. Merging (B, T, H, hd) -> (B, T, C) keeps it when each
//               head is zero-mean over its hd channels (sufficient, not necessary).
//               Attention's weighted sum of values, matmul(P, v) with v (B, H, T, hd),
//               is zero-mean over hd when v is, for any weights P (the matmul rule; the
//               fused attention op follows the same rule to its v).
//               So attention output is zero-mean only from per-head zero-mean values;
//               in a transformer the out-projection after it is the regulable linear;
//   embedding   a lookup is regulable by inserting x - mean(x) after it; an add whose
//               terms all need only such insertions gets one insertion after the add
//               (P(a + b) = P a + P b: the GPT's token + position sum needs one);
//   everything else (gelu, tanh, softmax, norms' affine outputs, training-mode
//               dropout, inputs, ...) breaks it. A norm's fused op is known by the
//               registry's fused_ops (nn/norms/registry.h); a norm without one is
//               walked through the ops of its composite like any other graph.
// A change is also checked to be *safe*: centring a parameter or inserting a centring
// shifts a tensor by a per-token constant along the axis. That shift is followed forward
// to every consumer; it must end in ops that ignore it (the fused op of a norm whose kind
// declares ignores_shift: layer_norm; softmax, log_softmax, cross_entropy along their
// last axis; an explicit centring), passing only
// through ops that carry it (add, sub, scalars, views, a matmul whose B it shifts along
// op(B)'s rows, a linear without a GELU likewise). If it reaches the output or any other op (a GELU, attention's q/k/v
// projection, a second use of a tied weight), the fold would change the model's outputs
// and the norm is reported as not foldable, naming that op. Applying the union of the
// changes of all foldable norms then leaves every output unchanged, and each folded
// norm sees an exactly zero-mean input, so LN(z) = RMS(z) + beta there.
#pragma once
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "nn/model_json.h"  // the descriptions fold_ln reads back
#include "nn/vit.h"

namespace nl {

enum class ZeroMean { Yes, IfCentred, No };

// One change that makes tensors zero-mean: centre a parameter along an axis, or insert
// x - mean(x) over the last axis after a node.
struct Centring {
  enum class Kind { After, Parameter };
  Kind kind = Kind::Parameter;
  std::shared_ptr<VarImpl> target;  // the parameter, or the node output to centre
  int axis = 0;                     // the axis centred along (After: the last)
  std::string name;                 // the parameter's dotted name, or the node described
  bool linear_weight = false;       // a parameter read as a matmul's right operand
};

struct ZeroMeanVerdict {
  ZeroMean status = ZeroMean::No;
  std::vector<Centring> needs;   // IfCentred: the changes, sorted (insertions first), unique
  std::string breaker_op;        // No: the op of the node that breaks it ("gelu", "input", ...)
  std::string breaker;           // No: that node, described ("gelu after blocks.0.mlp.fc")
  std::string why;               // No: the rule that fails
  std::string change;            // No, when the input could be centred but this change would also
                                 // alter `breaker`, an op that does not ignore it (else empty)
  std::string to_string() const;
};

struct NormSite {
  std::string name;  // the norm's module, from its weight's name ("blocks.0.ln1"), else "<op> #k"
  ZeroMeanVerdict verdict;  // about the norm's input, along its last axis
};

struct FoldReport {
  std::string norm_op;          // the op whose input was analysed ("layer_norm")
  int64_t graph_nodes = 0;      // ops recorded in the graph walked
  std::vector<NormSite> norms;  // every such node, in forward order
  std::vector<Centring> plan;   // the union of the needs of all foldable norms
  int64_t foldable() const;     // as is or with centring
  bool all_foldable() const { return foldable() == (int64_t)norms.size(); }
  std::vector<std::string> linears() const;     // weight names in the plan, sorted
  std::vector<std::string> insertions() const;  // nodes after which to centre
  std::string to_string() const;                // the printable report
};

// Walks the graph recorded behind `output` (one forward pass with recording on). Names
// come from `names`' named_parameters() (dotted: "blocks.0.attn.proj.weight"), else from
// VarImpl::name. The report holds on to the nodes it names (the insertion points).
FoldReport detect_foldable(const Var& output, const Module* names = nullptr,
                           const std::string& norm_op = "layer_norm");

// Centres in place every parameter the plan names, along its axis: W -= mean(W, axis).
// Parameters are found by dotted name in `model` (which may be a copy of the analysed one).
void centre_parameters(Module& model, const std::vector<Centring>& plan);

// Copies every parameter of `from` into the parameter of `to` with the same name and
// shape (an ln model into its cbwc twin: LN weight/bias become RMSNorm weight/bias), then
// centres those the plan names. Throws naming a parameter without a twin.
void load_folded(const Module& from, Module& to, const std::vector<Centring>& plan);

// ---- pieces shared by the GPT and ViT folds (nn/fold.cpp)

// Runs `forward` once in eval mode with recording on (the training flag is restored)
// and returns the report for the graph behind its output, with `model`'s names.
FoldReport detect_in_eval_mode(Module& model, const std::function<Var()>& forward);

// Throws unless `report` has the 2L+1 norm sites of a Pre-LN `model_kind` ("GPT",
// "ViT") of `layers` blocks whose norm is ln, all foldable. Returns the parameters its
// cbwc form centres in the blocks: "blocks.l.attn.proj.weight", ... ".mlp.proj.bias".
std::set<std::string> check_cbwc_sites(const std::string& model_kind, const NormConfig& norm, int64_t layers,
                                       const FoldReport& report);

// Marks every block's out-projections as holding folded weights (Linear::set_folded).
void set_blocks_folded(const std::vector<std::shared_ptr<Block>>& blocks, bool folded);

// The folded twin of `model` (a GPT or a ViT): built from `folded_cfg` (the model's
// config with its norm switched to the kind it folds into), given the model's parameters
// with the plan's centring, its blocks marked as holding folded weights or not, and in
// the model's training or eval mode.
template <class Model, class Config>
std::shared_ptr<Model> build_folded(const Model& model, const Config& folded_cfg, const std::vector<Centring>& plan,
                                    bool weights_folded) {
  Generator unused(0);  // every parameter is overwritten by load_folded
  auto folded = std::make_shared<Model>(folded_cfg, unused);
  load_folded(model, *folded, plan);
  set_blocks_folded(folded->blocks, weights_folded);
  folded->train(model.training());
  return folded;
}

// ---- GPT: folding an `ln` model into its `cbwc` form (nn/fold_gpt.cpp)

// The report for one eval-mode forward pass of `model` (a few tokens: the structure of
// the graph is what counts), its modules' dotted names attached.
FoldReport detect_gpt(GPT& model);

// Folds an ln GPT whose report (detect_gpt) is exactly the cbwc form: all 2L+1 norms
// foldable; a centring after the token + position sum; every attention out-projection
// and MLP down-projection centred; nothing else. Returns a cbwc GPT holding the folded
// weights: LN weight/bias become RMSNorm weight/bias under the same names, the named
// linears hold V, c. With weights_folded its linears use them as they are instead of
// recomputing V = W - mean(W) at each forward (inference); either way it computes the
// same function. Throws a one-line error naming the first mismatch.
std::shared_ptr<GPT> fold_gpt(GPT& ln_model, const FoldReport& report, bool weights_folded = true);

// ---- ViT: the same for an `ln` ViT (nn/fold_vit.cpp)

// The report for one eval-mode forward pass of `model` on one blank image.
FoldReport detect_vit(ViT& model);

// Folds an ln ViT whose report is the cbwc form: all 2L+1 norms foldable; the token
// sum [cls ; patches] + pos_embed made zero-mean (by centring the patch projection,
// cls_token and pos_embed, or by a centring inserted after the sum); every attention
// out-projection and MLP down-projection centred; nothing else. Returns a cbwc ViT with
// the centred weights (its own centring of the token sum then has nothing left to do).
std::shared_ptr<ViT> fold_vit(ViT& ln_model, const FoldReport& report, bool weights_folded = true);

}  // namespace nl
