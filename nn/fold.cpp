// LayerNorm folding on the recorded graph: the rules are listed in nn/fold.h. Two walks:
//   zero_mean(t, a)  backwards from a norm's input: is t zero-mean along axis a, as is,
//                    if centred (which changes), or not (which node breaks it)?
//   unsafe(change)   forwards from a change: the per-token shift it makes must be
//                    ignored by every op it reaches, or the fold would change outputs.
// Both are iterative (a graph may be thousands of ops deep) and memoised.
#include "nn/fold.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "autograd/ops.h"

namespace nl {
namespace {

using Key = std::pair<const VarImpl*, int>;

const Shape& shape_of(const VarImpl* t) { return t->value.shape(); }
int rank_of(const VarImpl* t) { return (int)t->value.shape().size(); }
VarImpl* input(const VarImpl* t, size_t i) { return t->node->inputs[i].get(); }

// The module of a dotted parameter name: "blocks.0.ln1.weight" -> "blocks.0.ln1".
std::string module_of(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

// ---- following one axis through views and reductions

struct AxisMap {
  enum Kind { Same, Merged, Split, Unit } kind;
  int axis = -1;
};

// For a reshape between `from` and `to` (same numel): where axis a of `to` comes from.
// Same: from one axis of the same size; Merged: from several axes of `from` flattened
// together (axis = the innermost of them); Split: it is one piece of a `from` axis cut
// into several (or of a many-to-many regrouping); Unit: it has size 1.
AxisMap map_reshape_axis(const Shape& from, const Shape& to, int a) {
  if (to[a] == 1) return {AxisMap::Unit};
  std::vector<int> f, t;
  for (int i = 0; i < (int)from.size(); ++i)
    if (from[i] != 1) f.push_back(i);
  for (int j = 0; j < (int)to.size(); ++j)
    if (to[j] != 1) t.push_back(j);
  // group the axes of size > 1 into runs with equal products, left to right
  size_t p = 0, q = 0;
  while (p < f.size() && q < t.size()) {
    std::vector<int> gf{f[p]}, gt{t[q]};
    int64_t pf = from[f[p]], pt = to[t[q]];
    while (pf != pt) {
      if (pf < pt) {
        if (++p >= f.size()) return {AxisMap::Split};
        pf *= from[f[p]];
        gf.push_back(f[p]);
      } else {
        if (++q >= t.size()) return {AxisMap::Split};
        pt *= to[t[q]];
        gt.push_back(t[q]);
      }
    }
    if (std::find(gt.begin(), gt.end(), a) != gt.end()) {
      if (gt.size() > 1) return {AxisMap::Split};
      return {gf.size() == 1 ? AxisMap::Same : AxisMap::Merged, gf.back()};
    }
    ++p;
    ++q;
  }
  return {AxisMap::Split};
}

// permute and transpose return views: an axis of the output is the axis of the input
// with the same size and stride. -1 when that is not unique (repeated strides of a
// broadcast view) or absent.
int match_view_axis(const Tensor& from, int a, const Tensor& to) {
  int found = -1;
  for (int i = 0; i < to.dim(); ++i)
    if (to.shape()[i] == from.shape()[a] && to.strides()[i] == from.strides()[a]) {
      if (found >= 0) return -1;
      found = i;
    }
  return found;
}

// For a reduction in -> out (keepdim or not): per axis of out, the axis of in it keeps;
// -1 where it was reduced (keepdim) or where the alignment is ambiguous.
std::vector<int> reduction_axes(const Shape& in, const Shape& out) {
  const int n = (int)in.size(), m = (int)out.size();
  std::vector<int> map(m, -1);
  if (n == m) {
    for (int j = 0; j < m; ++j) map[j] = (out[j] == 1 && in[j] != 1) ? -1 : j;
    return map;
  }
  // without keepdim: every increasing choice of m axes of `in` whose sizes are out's
  bool first = true;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != m) continue;
    std::vector<int> kept;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i)) kept.push_back(i);
    bool fits = true;
    for (int j = 0; j < m; ++j) fits &= in[kept[j]] == out[j];
    if (!fits) continue;
    for (int j = 0; j < m; ++j) {
      if (first) map[j] = kept[j];
      else if (map[j] != kept[j]) map[j] = -1;
    }
    first = false;
  }
  return map;
}

// The transposes of a recorded matmul. The node does not store them; the shapes tell,
// except for square operands, where a few entries of the output are recomputed each
// possible way (in double) and the one way that reproduces them is taken.
struct MatmulLayout {
  bool ok = false, ta = false, tb = false;
};

bool reproduces(const Tensor& A, const Tensor& B, const Tensor& C, bool ta, bool tb) {
  const int64_t M = C.size(-2), N = C.size(-1), K = ta ? A.size(-2) : A.size(-1);
  const std::pair<int64_t, int64_t> probes[] = {{0, 0}, {M - 1, N - 1}, {M / 2, N / 3}, {M / 3, (2 * N) / 3}};
  for (auto [i, j] : probes) {
    std::vector<int64_t> ia(A.dim(), 0), ib(B.dim(), 0), ic(C.dim(), 0);
    ic[C.dim() - 2] = i;
    ic[C.dim() - 1] = j;
    double s = 0, scale = 0;
    for (int64_t k = 0; k < K; ++k) {
      ia[A.dim() - 2] = ta ? k : i;
      ia[A.dim() - 1] = ta ? i : k;
      ib[B.dim() - 2] = tb ? j : k;
      ib[B.dim() - 1] = tb ? k : j;
      const double term = (double)A.at(ia) * (double)B.at(ib);
      s += term;
      scale += std::abs(term);
    }
    if (std::abs(s - (double)C.at(ic)) > 1e-4 * scale + 1e-6) return false;
  }
  return true;
}

// (A node that stores {trans_a, trans_b} in its attrs is read directly.)
MatmulLayout matmul_layout(const VarImpl* out) {
  const Node& n = *out->node;
  if (n.attrs.size() == 2) return {true, n.attrs[0] != 0.0f, n.attrs[1] != 0.0f};
  const Tensor &A = n.inputs[0]->value, &B = n.inputs[1]->value, &C = out->value;
  if (A.dim() < 2 || B.dim() < 2 || C.dim() < 2) return {};
  std::vector<MatmulLayout> fits;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const int64_t am = ta ? A.size(-1) : A.size(-2), ak = ta ? A.size(-2) : A.size(-1);
      const int64_t bk = tb ? B.size(-1) : B.size(-2), bn = tb ? B.size(-2) : B.size(-1);
      if (am == C.size(-2) && bn == C.size(-1) && ak == bk) fits.push_back({true, ta == 1, tb == 1});
    }
  if (fits.size() == 1) return fits[0];
  std::vector<MatmulLayout> match;
  for (const auto& l : fits)
    if (reproduces(A, B, C, l.ta, l.tb)) match.push_back(l);
  return match.size() == 1 ? match[0] : MatmulLayout{};
}

bool known(const std::set<std::string>& ops, const std::string& op) { return ops.count(op) > 0; }

// A recorded ag::linear stores {has bias, has GELU} in its attrs.
// A linear node's attrs (autograd/linear.cpp): has a bias, has a GELU, has a residual input
// (the last one: x, W, then b, then r)
bool linear_has_bias(const VarImpl* out) { return !out->node->attrs.empty() && out->node->attrs[0] != 0.0f; }
bool linear_has_gelu(const VarImpl* out) { return out->node->attrs.size() >= 2 && out->node->attrs[1] != 0.0f; }
int linear_residual_slot(const VarImpl* out) {
  const auto& attrs = out->node->attrs;
  return attrs.size() >= 3 && attrs[2] != 0.0f ? (int)out->node->inputs.size() - 1 : -1;
}

const std::set<std::string> kElementwise = {"gelu", "relu", "silu", "tanh", "erf", "exp", "log", "sqrt",
                                            "rsqrt", "abs", "pow_scalar", "add_scalar"};

// The kind whose layer records `op` as its fused forward (nn/norms/registry.h), or null.
// Ops a norm composes are followed like any other; a fused one is opaque, so its kind
// says what it does.
const NormKind* fused_norm(const std::string& op) {
  for (const NormKind& k : norm_kinds())
    if (std::find(k.fused_ops.begin(), k.fused_ops.end(), op) != k.fused_ops.end()) return &k;
  return nullptr;
}

// ---- the analysis of one graph

struct Use {
  VarImpl* out;  // the consumer's output
  int slot;      // which input of the consumer
};

struct Rule {
  bool done = false;
  ZeroMeanVerdict verdict;            // when done
  std::vector<Key> children;  // otherwise: every one must be zero-mean along its axis
  bool hoist = false;         // an add: insertions needed by all its terms move after it
};

struct Step {
  enum Kind { Absorb, Carry, Block } kind;
  int axis = -1;
  std::string why;
};

bool needs_less(const Centring& a, const Centring& b) {
  if (a.kind != b.kind) return a.kind < b.kind;
  if (a.name != b.name) return a.name < b.name;
  return std::make_pair(a.target.get(), a.axis) < std::make_pair(b.target.get(), b.axis);
}
bool needs_same(const Centring& a, const Centring& b) {
  return a.kind == b.kind && a.target == b.target && a.axis == b.axis;
}
void normalise(std::vector<Centring>& needs) {
  std::sort(needs.begin(), needs.end(), needs_less);
  needs.erase(std::unique(needs.begin(), needs.end(), needs_same), needs.end());
}

class Analysis {
 public:
  Analysis(const Var& root, const Module* names);
  ZeroMeanVerdict zero_mean(VarImpl* t, int axis);
  std::optional<ZeroMeanVerdict> unsafe(const Centring& change);
  std::string describe(const VarImpl* t) const;
  std::string name_of(const VarImpl* t) const;
  std::vector<VarImpl*> order;  // every Var of the graph, inputs before their consumers

 private:
  Rule rule(VarImpl* t, int a);
  ZeroMeanVerdict combine(const Key& key, const Rule& r) const;
  Step carry(const Use& use, VarImpl* t, int k);
  bool is_centring(const VarImpl* out, int a) const;
  bool only_centring_uses(const VarImpl* mean_out, const VarImpl* x, int k) const;
  Rule broken(const VarImpl* t, const std::string& why) const;
  Centring insertion_after(VarImpl* t) const;

  std::shared_ptr<VarImpl> root_;
  std::unordered_map<const VarImpl*, std::vector<Use>> uses_;
  std::unordered_map<const VarImpl*, std::shared_ptr<VarImpl>> owner_;
  std::unordered_map<const VarImpl*, std::string> names_;
  std::map<Key, ZeroMeanVerdict> memo_;
  std::map<std::pair<const VarImpl*, int>, std::optional<ZeroMeanVerdict>> safety_;
  std::unordered_map<const VarImpl*, MatmulLayout> layouts_;
  MatmulLayout layout(const VarImpl* out) {
    auto it = layouts_.find(out);
    if (it == layouts_.end()) it = layouts_.emplace(out, matmul_layout(out)).first;
    return it->second;
  }
};

Analysis::Analysis(const Var& root, const Module* names) : root_(root.impl()) {
  if (names)
    for (const auto& [name, p] : names->named_parameters()) names_[p.impl().get()] = name;
  // iterative post-order DFS: a Var is appended after all of its inputs
  std::unordered_set<const VarImpl*> seen{root_.get()};
  std::vector<std::pair<VarImpl*, size_t>> stack{{root_.get(), 0}};
  owner_[root_.get()] = root_;
  while (!stack.empty()) {
    auto& [t, next] = stack.back();
    if (t->node && next < t->node->inputs.size()) {
      const auto& in = t->node->inputs[next++];
      if (in && seen.insert(in.get()).second) {
        owner_[in.get()] = in;
        stack.push_back({in.get(), 0});
      }
      continue;
    }
    order.push_back(t);
    stack.pop_back();
  }
  for (VarImpl* t : order)
    if (t->node)
      for (size_t i = 0; i < t->node->inputs.size(); ++i)
        if (t->node->inputs[i]) uses_[t->node->inputs[i].get()].push_back({t, (int)i});
}

std::string Analysis::name_of(const VarImpl* t) const {
  auto it = names_.find(t);
  return it != names_.end() ? it->second : t->name;
}

// "input (2, 3)", "parameter blocks.0.ln1.weight", "matmul blocks.0.mlp.fc" (a parameter
// it reads names the module), "gelu after blocks.0.mlp.fc" (the nearest one upstream).
std::string Analysis::describe(const VarImpl* t) const {
  if (!t->node) {
    const std::string name = name_of(t);
    return name.empty() ? "input " + to_string(shape_of(t)) : "parameter " + name;
  }
  const std::string& op = t->node->op;
  for (const auto& in : t->node->inputs)
    if (in && !in->node && !name_of(in.get()).empty()) return op + " " + module_of(name_of(in.get()));
  std::vector<const VarImpl*> queue;
  std::unordered_set<const VarImpl*> seen;
  for (const auto& in : t->node->inputs) queue.push_back(in.get());
  for (size_t i = 0; i < queue.size() && i < 64; ++i) {
    const VarImpl* v = queue[i];
    if (!v || !seen.insert(v).second) continue;
    if (!v->node) {
      if (!name_of(v).empty()) return op + " after " + module_of(name_of(v));
      continue;
    }
    for (const auto& in : v->node->inputs) queue.push_back(in.get());
  }
  return op;
}

Centring Analysis::insertion_after(VarImpl* t) const {
  Centring c;
  c.kind = Centring::Kind::After;
  c.target = owner_.at(t);
  c.axis = rank_of(t) - 1;
  if (t->node->op == "embedding") {
    c.name = describe(t);
  } else {
    c.name = t->node->op + "(";
    for (size_t i = 0; i < t->node->inputs.size(); ++i)
      c.name += (i ? ", " : "") + describe(input(t, i));
    c.name += ")";
  }
  return c;
}

Rule Analysis::broken(const VarImpl* t, const std::string& why) const {
  Rule r;
  r.done = true;
  r.verdict.status = ZeroMean::No;
  r.verdict.breaker_op = t->node ? t->node->op : (name_of(t).empty() ? "input" : "parameter");
  r.verdict.breaker = describe(t);
  r.verdict.why = why;
  return r;
}

// out = sub(x, mean(x, {a}, keepdim=true)): zero-mean along a, whatever x is.
bool Analysis::is_centring(const VarImpl* out, int a) const {
  if (!out->node || out->node->op != "sub") return false;
  const VarImpl *x = input(out, 0), *m = input(out, 1);
  if (!m->node || m->node->op != "mean" || input(m, 0) != x || rank_of(m) != rank_of(x)) return false;
  for (int i = 0; i < rank_of(x); ++i) {
    const bool reduced = shape_of(m)[i] == 1 && shape_of(x)[i] != 1;
    if (reduced != (i == a)) return false;
  }
  return true;
}

// mean_out = mean(x, {k}, keepdim) read only by centrings sub(x, mean_out) along k.
bool Analysis::only_centring_uses(const VarImpl* mean_out, const VarImpl* x, int k) const {
  auto it = uses_.find(mean_out);
  if (it == uses_.end() || mean_out == root_.get()) return false;
  for (const Use& u : it->second)
    if (u.slot != 1 || input(u.out, 0) != x || !is_centring(u.out, k)) return false;
  return true;
}

Rule Analysis::rule(VarImpl* t, int a) {
  Rule r;
  const Shape& s = shape_of(t);
  const int rank = rank_of(t);
  if (s[a] == 1) return broken(t, "the axis has size 1");
  if (!t->node) {
    const std::string name = name_of(t);
    if (name.empty()) return broken(t, "an input is not zero-mean");
    Centring c;
    c.kind = Centring::Kind::Parameter;
    c.target = owner_.at(t);
    c.axis = a;
    c.name = name;
    for (const Use& u : uses_[t])
      c.linear_weight |= (u.out->node->op == "matmul" || u.out->node->op == "linear") && u.slot == 1;
    r.done = true;
    r.verdict.status = ZeroMean::IfCentred;
    r.verdict.needs = {c};
    return r;
  }
  const std::string& op = t->node->op;
  const auto& ins = t->node->inputs;
  auto child = [&](VarImpl* x, int axis) {
    r.children.push_back({x, axis});
    return r;
  };
  // axis a of t in an operand broadcast against t (NumPy alignment from the right);
  // -1 when the operand is constant along it
  auto aligned = [&](const VarImpl* x) {
    const int k = a - (rank - rank_of(x));
    return (k < 0 || shape_of(x)[k] == 1) ? -1 : k;
  };

  if (op == "sub" && is_centring(t, a)) {
    r.done = true;
    r.verdict.status = ZeroMean::Yes;
    return r;
  }
  if (op == "add" || op == "sub") {
    for (const auto& x : ins) {
      const int k = aligned(x.get());
      if (k < 0)
        return broken(t, "one term (" + describe(x.get()) + ") is broadcast along the axis: a per-token constant");
      r.children.push_back({x.get(), k});
    }
    r.hoist = a == rank - 1;  // an insertion centres the last axis
    return r;
  }
  if (op == "neg" || op == "mul_scalar" || op == "contiguous") return child(ins[0].get(), a);
  if (op == "dropout") {
    const bool identity = !t->node->training || (!t->node->attrs.empty() && t->node->attrs[0] == 0.0f);
    if (identity) return child(ins[0].get(), a);
    return broken(t, "dropout in training mode scales each element by its own 0 or 1/(1-p)");
  }
  if (op == "mul" || op == "div") {
    const int k0 = aligned(ins[0].get()), k1 = aligned(ins[1].get());
    if (k1 < 0 && k0 >= 0) return child(ins[0].get(), k0);  // a per-token factor (or divisor)
    if (op == "mul" && k0 < 0 && k1 >= 0) return child(ins[1].get(), k1);
    return broken(t, "an elementwise product with a factor that varies along the axis");
  }
  if (op == "reshape" || op == "squeeze" || op == "unsqueeze") {
    const AxisMap m = map_reshape_axis(shape_of(ins[0].get()), s, a);
    if (m.kind == AxisMap::Same || m.kind == AxisMap::Merged) return child(ins[0].get(), m.axis);
    return broken(t, "it splits the axis (e.g. channels into heads): a row zero-mean over all its channels "
                     "need not be zero-mean in each part");
  }
  if (op == "permute" || op == "transpose") {
    const int k = match_view_axis(t->value, a, ins[0]->value);
    if (k >= 0) return child(ins[0].get(), k);
    return broken(t, "the axis cannot be followed through this view");
  }
  if (op == "slice") {
    if (shape_of(ins[0].get())[a] != s[a])
      return broken(t, "it slices the axis: part of a zero-mean row need not be zero-mean");
    return child(ins[0].get(), a);
  }
  if (op == "expand") {
    const int k = aligned(ins[0].get());
    if (k < 0) return broken(t, "it broadcasts along the axis: a per-token constant");
    return child(ins[0].get(), k);
  }
  if (op == "concat") {
    for (const auto& x : ins) r.children.push_back({x.get(), a});
    return r;
  }
  if (op == "mean" || op == "sum") {
    const int k = reduction_axes(shape_of(ins[0].get()), s)[a];
    if (k < 0) return broken(t, "the axis is reduced, or cannot be matched to the input's");
    return child(ins[0].get(), k);  // an average of zero-mean rows (pooling) is zero-mean
  }
  if (op == "matmul") {
    const MatmulLayout l = layout(t);
    if (!l.ok) return broken(t, "its transposes cannot be told from the shapes and values");
    VarImpl *A = ins[0].get(), *B = ins[1].get();
    const int rA = rank_of(A), rB = rank_of(B);
    if (a == rank - 1) return child(B, l.tb ? rB - 2 : rB - 1);  // rows of op(B) zero-mean
    if (a == rank - 2) return child(A, l.ta ? rA - 1 : rA - 2);  // columns of op(A) zero-mean
    const int kA = a - (rank - rA), kB = a - (rank - rB);
    const bool a_const = kA < 0 || shape_of(A)[kA] == 1, b_const = kB < 0 || shape_of(B)[kB] == 1;
    if (b_const && !a_const) return child(A, kA);
    if (a_const && !b_const) return child(B, kB);
    return broken(t, "both operands vary along this batch axis");
  }
  if (op == "linear") {  // act(x W^T + b) or r + x W^T + b: as matmul(x, W, false, true), then add(b), then
                         // the GELU or add(r, .)
    if (linear_has_gelu(t)) return broken(t, "an elementwise non-linearity (the GELU in the linear's epilogue)");
    const int rs = linear_residual_slot(t);
    if (a == rank - 1) {  // rows of W^T zero-mean, and b, and the residual's rows
      for (int i = 1; i < (int)ins.size(); ++i) r.children.push_back({ins[i].get(), i == rs ? a : 0});
      return r;
    }
    if (linear_has_bias(t))
      return broken(t, "one term (" + describe(ins[2].get()) + ") is broadcast along the axis: a per-token constant");
    r.children.push_back({ins[0].get(), 0});  // columns of x zero-mean
    if (rs >= 0) r.children.push_back({ins[rs].get(), a});
    return r;
  }
  if (op == "attention") {  // out = P v per head, rows of P summing to 1: as matmul(P, v)
    if (a == rank - 1) return child(ins[2].get(), rank_of(ins[2].get()) - 1);
    return broken(t, "attention mixes the tokens of a head");
  }
  if (op == "embedding") {
    if (a != rank - 1) return broken(t, "a lookup is not zero-mean across tokens");
    r.done = true;
    r.verdict.status = ZeroMean::IfCentred;
    r.verdict.needs = {insertion_after(t)};
    return r;
  }
  if (known(kElementwise, op)) return broken(t, "an elementwise non-linearity");
  if (const NormKind* kind = fused_norm(op))
    return broken(t, kind->statistics ? "a norm's affine output (gamma * xhat + beta) is not zero-mean"
                                      : "an elementwise norm (gamma * f(x) + beta) is not zero-mean");
  if (op == "softmax" || op == "log_softmax") return broken(t, "a softmax is not zero-mean");
  return broken(t, "'" + op + "' is not known to keep zero-mean");
}

ZeroMeanVerdict Analysis::combine(const Key& key, const Rule& r) const {
  ZeroMeanVerdict v;
  v.status = ZeroMean::Yes;
  bool only_insertions = true;
  for (const Key& c : r.children) {
    const ZeroMeanVerdict& cv = memo_.at(c);
    if (cv.status == ZeroMean::No) return cv;  // the first broken term names the breaker
    if (cv.status == ZeroMean::Yes) only_insertions = false;
    for (const Centring& n : cv.needs) {
      only_insertions &= n.kind == Centring::Kind::After;
      v.needs.push_back(n);
    }
    if (cv.status == ZeroMean::IfCentred) v.status = ZeroMean::IfCentred;
  }
  // one centring after a sum replaces one after each of its terms: P(a + b) = P a + P b
  if (r.hoist && v.status == ZeroMean::IfCentred && only_insertions)
    v.needs = {insertion_after(const_cast<VarImpl*>(key.first))};
  normalise(v.needs);
  return v;
}

ZeroMeanVerdict Analysis::zero_mean(VarImpl* t, int axis) {
  std::vector<std::pair<Key, bool>> stack{{{t, axis}, false}};
  std::map<Key, Rule> pending;
  while (!stack.empty()) {
    auto [key, expanded] = stack.back();
    stack.pop_back();
    if (memo_.count(key)) continue;
    if (!expanded) {
      if (pending.count(key)) continue;
      Rule r = rule(const_cast<VarImpl*>(key.first), key.second);
      if (r.done) {
        memo_[key] = r.verdict;
        continue;
      }
      stack.push_back({key, true});
      for (const Key& c : r.children)
        if (!memo_.count(c)) stack.push_back({c, false});
      pending[key] = std::move(r);
    } else {
      memo_[key] = combine(key, pending.at(key));
      pending.erase(key);
    }
  }
  return memo_.at({t, axis});
}

// What a consumer does with a per-token shift of its input t along axis k (t += d with
// d constant along k): ignore it, carry it on to its output along some axis, or be changed.
Step Analysis::carry(const Use& use, VarImpl* t, int k) {
  VarImpl* out = use.out;
  const std::string& op = out->node->op;
  const auto& ins = out->node->inputs;
  const int r = rank_of(out), rt = rank_of(t);
  const int last = rt - 1;
  auto block = [](const std::string& why) { return Step{Step::Block, -1, why}; };
  auto to = [](int axis) { return Step{Step::Carry, axis, ""}; };
  const Step absorb{Step::Absorb, -1, ""};
  const NormKind* norm = fused_norm(op);
  if ((norm && norm->ignores_shift) || op == "softmax" || op == "log_softmax" || op == "cross_entropy") {
    if (use.slot == 0 && k == last) return absorb;
    return block("it does not ignore this shift");
  }
  if (op == "sub" && use.slot == 0 && is_centring(out, k)) return absorb;
  if (op == "add" || op == "sub" || op == "expand") return to(k + r - rt);
  if (op == "neg" || op == "mul_scalar" || op == "contiguous" || op == "slice") return to(k);
  if (op == "dropout") {
    const bool identity = !out->node->training || (!out->node->attrs.empty() && out->node->attrs[0] == 0.0f);
    return identity ? to(k) : block("dropout in training mode");
  }
  if (op == "mul" || op == "div") {
    const VarImpl* other = ins[1 - use.slot].get();
    if (other == t || (op == "div" && use.slot == 1)) return block("a product with the shifted tensor");
    const int ko = k + r - rt - (r - rank_of(other));
    if (ko < 0 || shape_of(other)[ko] == 1) return to(k + r - rt);
    return block("a factor that varies along the shifted axis");
  }
  if (op == "reshape" || op == "squeeze" || op == "unsqueeze") {
    const AxisMap m = map_reshape_axis(shape_of(out), shape_of(t), k);
    if (m.kind == AxisMap::Same || m.kind == AxisMap::Merged) return to(m.axis);
    return block("the shifted axis is merged with others");
  }
  if (op == "permute" || op == "transpose") {
    const int j = match_view_axis(t->value, k, out->value);
    return j >= 0 ? to(j) : block("the axis cannot be followed through this view");
  }
  if (op == "concat") {
    for (int i = 0; i < rt; ++i)
      if (shape_of(out)[i] != shape_of(t)[i]) return i == k ? block("a concatenation along the shifted axis") : to(k);
    return to(k);
  }
  if (op == "mean" || op == "sum") {
    if (op == "mean" && only_centring_uses(out, t, k)) return absorb;
    const std::vector<int> m = reduction_axes(shape_of(t), shape_of(out));
    for (int j = 0; j < (int)m.size(); ++j)
      if (m[j] == k) return to(j);
    return block("a reduction over the shifted axis");
  }
  if (op == "matmul") {
    const MatmulLayout l = layout(out);
    if (!l.ok || ins[0] == ins[1]) return block("a matmul that cannot be followed");
    if (use.slot == 1 && k == (l.tb ? rt - 2 : rt - 1)) return to(r - 1);  // op(B) rows += c: C += (A c) 1^T
    if (use.slot == 0 && k == (l.ta ? rt - 1 : rt - 2)) return to(r - 2);  // op(A) columns += c
    if (k < rt - 2) {  // a batch axis, carried when the other operand is broadcast along it
      const VarImpl* other = ins[1 - use.slot].get();
      const int ko = k + r - rt - (r - rank_of(other));
      if (ko < 0 || shape_of(other)[ko] == 1) return to(k + r - rt);
    }
    return block("the shift enters the matmul along its contracted axis");
  }
  if (op == "linear") {  // act(x W^T + b) or r + x W^T + b, x (M, K), W (N, K), b (N), r (M, N)
    if (ins[0] == ins[1]) return block("a linear that cannot be followed");
    if (linear_has_gelu(out)) return block("the GELU in the linear's epilogue does not ignore this shift");
    if (use.slot == linear_residual_slot(out)) return to(k);  // r += c along k: out += c along k
    if (use.slot == 1 && k == 0) return to(r - 1);  // W's columns += c: out += (x c) 1^T
    if (use.slot == 0 && k == 0) return to(r - 2);  // x's columns += c: out += 1 (W c)^T
    if (use.slot == 2) return to(r - 1);            // b += c
    return block("the shift enters the product along its contracted axis");
  }
  if (op == "embedding" && k == 1) return to(r - 1);  // a shifted table row shifts its tokens
  return block("it does not ignore this shift");
}

std::optional<ZeroMeanVerdict> Analysis::unsafe(const Centring& change) {
  const Key start{change.target.get(), change.axis};
  auto memo = safety_.find(start);
  if (memo != safety_.end()) return memo->second;
  std::optional<ZeroMeanVerdict> result;
  std::vector<Key> work{start};
  std::set<Key> seen{start};
  const std::string what = change.kind == Centring::Kind::After ? "inserting x - mean(x) after " + change.name
                                                                 : "centring " + change.name;
  while (!work.empty() && !result) {
    auto [t, k] = work.back();
    work.pop_back();
    if (t == root_.get()) {
      result = ZeroMeanVerdict{ZeroMean::No, {}, "output", "the graph's output", "it would be shifted", what};
      break;
    }
    for (const Use& u : uses_[t]) {
      const Step s = carry(u, const_cast<VarImpl*>(t), k);
      if (s.kind == Step::Block) {
        result = ZeroMeanVerdict{ZeroMean::No, {}, u.out->node->op, describe(u.out), s.why, what};
        break;
      }
      if (s.kind == Step::Carry && seen.insert({u.out, s.axis}).second) work.push_back({u.out, s.axis});
    }
  }
  safety_[start] = result;
  return result;
}

std::string need_text(const Centring& c) {
  if (c.kind == Centring::Kind::After) return "insert x - mean(x) after " + c.name;
  return "centre " + c.name + " along axis " + std::to_string(c.axis);
}

// The needs in words, a linear's weight and bias on one line.
std::vector<std::string> need_lines(const std::vector<Centring>& needs, bool short_form) {
  std::set<std::string> params, linears;  // linears: modules whose weight and bias are both centred
  for (const auto& c : needs)
    if (c.kind == Centring::Kind::Parameter) params.insert(c.name);
  for (const auto& c : needs)
    if (c.kind == Centring::Kind::Parameter && c.linear_weight && c.name == module_of(c.name) + ".weight" &&
        params.count(module_of(c.name) + ".bias"))
      linears.insert(module_of(c.name));
  std::vector<std::string> lines;
  for (const auto& c : needs) {
    const std::string module = module_of(c.name);
    if (c.kind == Centring::Kind::After || !linears.count(module)) {
      lines.push_back(need_text(c));
    } else if (c.name == module + ".weight") {
      lines.push_back(short_form ? "centre linear " + module
                                 : "centre linear " + c.name + " along axis " + std::to_string(c.axis) + " (+ " +
                                       module + ".bias)");
    }
  }
  return lines;
}

}  // namespace

std::string ZeroMeanVerdict::to_string() const {
  if (status == ZeroMean::Yes) return "foldable as is (input zero-mean)";
  if (status == ZeroMean::No && !change.empty())
    return "not foldable: " + change + " would change " + breaker + " (" + why + ")";
  if (status == ZeroMean::No) return "not foldable: " + breaker + " breaks zero-mean: " + why;
  std::string s = "foldable if centred:", linears;
  for (const auto& line : need_lines(needs, true)) {
    const std::string prefix = "centre linear ";
    if (line.compare(0, prefix.size(), prefix) == 0)
      linears += (linears.empty() ? "" : ", ") + line.substr(prefix.size());
    else s += " " + line + ";";
  }
  if (!linears.empty()) s += " centre linears " + linears;
  else s.pop_back();
  return s;
}

int64_t FoldReport::foldable() const {
  int64_t n = 0;
  for (const auto& s : norms) n += s.verdict.status != ZeroMean::No;
  return n;
}

std::vector<std::string> FoldReport::linears() const {
  std::vector<std::string> out;
  for (const auto& c : plan)
    if (c.kind == Centring::Kind::Parameter && c.linear_weight) out.push_back(c.name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> FoldReport::insertions() const {
  std::vector<std::string> out;
  for (const auto& c : plan)
    if (c.kind == Centring::Kind::After) out.push_back(c.name);
  return out;
}

std::string FoldReport::to_string() const {
  std::ostringstream os;
  int64_t as_is = 0;
  for (const auto& s : norms) as_is += s.verdict.status == ZeroMean::Yes;
  os << (norm_op == "layer_norm" ? "LayerNorm folding: " : "Zero-mean inputs: ") << norms.size() << " " << norm_op
     << " nodes in a graph of " << graph_nodes << " ops: " << foldable() << " foldable (" << as_is << " as is, "
     << foldable() - as_is << " if centred), " << norms.size() - foldable() << " not foldable\n";
  size_t width = 0;
  for (const auto& s : norms) width = std::max(width, s.name.size());
  for (const auto& s : norms)
    os << "  " << s.name << std::string(width - s.name.size() + 2, ' ') << s.verdict.to_string() << "\n";
  if (plan.empty()) {
    os << (foldable() ? "Fold plan: nothing to change; swap each foldable norm for RMSNorm + beta\n" : "");
    return os.str();
  }
  os << "Fold plan (all foldable norms together), then swap each for RMSNorm + beta:\n";
  for (const auto& line : need_lines(plan, false)) os << "  " << line << "\n";
  if (!linears().empty())
    os << "  (a linear is centred as W -= mean of W over its outputs, per column; b -= mean(b))\n";
  return os.str();
}

FoldReport detect_foldable(const Var& output, const Module* names, const std::string& norm_op) {
  NL_CHECK(output.defined() && output.node(), "fold: the output has no recorded graph (run the forward pass with "
           "recording on: no NoGradGuard, parameters requiring gradients)");
  Analysis an(output, names);
  FoldReport report;
  report.norm_op = norm_op;
  int count = 0;
  for (VarImpl* t : an.order) {
    if (!t->node) continue;
    ++report.graph_nodes;
    if (t->node->op != norm_op) continue;
    NormSite site;
    const std::string weight = t->node->inputs.size() > 1 ? an.name_of(t->node->inputs[1].get()) : "";
    site.name = weight.empty() ? norm_op + " #" + std::to_string(count) : module_of(weight);
    ++count;
    VarImpl* x = t->node->inputs[0].get();
    site.verdict = an.zero_mean(x, rank_of(x) - 1);
    if (site.verdict.status == ZeroMean::IfCentred)
      for (const Centring& c : site.verdict.needs)
        if (auto bad = an.unsafe(c)) {
          site.verdict = *bad;
          break;
        }
    if (site.verdict.status != ZeroMean::No)
      report.plan.insert(report.plan.end(), site.verdict.needs.begin(), site.verdict.needs.end());
    report.norms.push_back(std::move(site));
  }
  normalise(report.plan);
  return report;
}

void centre_parameters(Module& model, const std::vector<Centring>& plan) {
  for (const Centring& c : plan) {
    if (c.kind != Centring::Kind::Parameter) continue;
    Var p = model.parameter(c.name);
    Tensor v = p.value();
    NL_CHECK(c.axis >= 0 && c.axis < v.dim(), "fold: cannot centre ", c.name, " ", describe(v), " along axis ", c.axis);
    v.copy_from(nl::sub(v, nl::mean(v, {c.axis}, true)));
  }
}

void load_folded(const Module& from, Module& to, const std::vector<Centring>& plan) {
  const auto src = from.named_parameters(), dst = to.named_parameters();
  NL_CHECK(src.size() == dst.size(), "fold: the models have ", src.size(), " and ", dst.size(), " parameters");
  for (size_t i = 0; i < src.size(); ++i) {
    NL_CHECK(src[i].first == dst[i].first && src[i].second.shape() == dst[i].second.shape(), "fold: parameter ",
             src[i].first, " ", to_string(src[i].second.shape()), " has no twin (found ", dst[i].first, " ",
             to_string(dst[i].second.shape()), ")");
    dst[i].second.impl()->value.copy_from(src[i].second.value());
  }
  centre_parameters(to, plan);
}

FoldReport detect_in_eval_mode(Module& model, const std::function<Var()>& forward) {
  const bool was_training = model.training();
  model.eval();
  FoldReport report;
  {
    const Var output = forward();
    report = detect_foldable(output, &model);
  }
  model.train(was_training);
  return report;
}

std::set<std::string> check_cbwc_sites(const std::string& model_kind, const NormConfig& norm, int64_t layers,
                                       const FoldReport& report) {
  std::string foldable;
  for (const NormKind& k : norm_kinds())
    if (!k.folds_into.empty()) foldable += (foldable.empty() ? "" : " or ") + k.name;
  NL_CHECK(!norm_kind(norm.name).folds_into.empty(), "fold: the model's norm is '", norm.name, "'; only an ",
           foldable, " model can be folded");
  const int64_t sites = 2 * layers + 1;
  NL_CHECK((int64_t)report.norms.size() == sites, "fold: the graph has ", report.norms.size(), " ", report.norm_op,
           " nodes, the ", model_kind, " has ", sites, " norm sites");
  for (const NormSite& s : report.norms)
    NL_CHECK(s.verdict.status != ZeroMean::No, "fold: ", s.name, " is ", s.verdict.to_string());
  std::set<std::string> projections;
  for (int64_t l = 0; l < layers; ++l)
    for (const char* m : {".attn.proj.", ".mlp.proj."})
      for (const char* p : {"weight", "bias"}) projections.insert("blocks." + std::to_string(l) + m + p);
  return projections;
}

void set_blocks_folded(const std::vector<std::shared_ptr<Block>>& blocks, bool folded) {
  for (const auto& block : blocks) {
    (block->attn ? block->attn->proj : block->diff_attn->proj)->set_folded(folded);
    block->mlp->proj->set_folded(folded);
  }
}

}  // namespace nl
