// Var, recording, and the backward engine.
#include "autograd/var.h"

#include <chrono>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "autograd/interrupt.h"
#include "autograd/profile.h"
#include "tensor/ops.h"

namespace nl {

static thread_local bool g_grad_enabled = true;

bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

// Dropping the last reference to a graph would destroy Node -> input VarImpl -> Node ...
// recursively, one stack frame per op, which overflows on chains of ~100k ops. Instead
// every node this one alone keeps alive is detached onto a worklist and destroyed
// after its own inputs were taken away, so each destructor does constant work.
Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  auto detach_inputs = [&pending](Node& n) {
    for (auto& in : n.inputs)
      if (in && in.use_count() == 1 && in->node) pending.push_back(std::move(in->node));
    n.inputs.clear();
  };
  detach_inputs(*this);
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() == 1) detach_inputs(*n);
  }
}

Var::Var(Tensor value, bool requires_grad) : impl_(std::make_shared<VarImpl>()) {
  impl_->value = std::move(value);
  impl_->requires_grad = requires_grad;
}

Var Var::detach() const { return Var(impl_->value, false); }

void Var::zero_grad() {
  if (impl_->grad.defined()) impl_->grad.fill_(0.0f);
}

Var record(const char* op, Tensor value, std::vector<Var> inputs, BackwardFn backward) {
  bool needs = false;
  if (g_grad_enabled)
    for (const Var& v : inputs) needs |= v.requires_grad();
  if (!needs) return Var(std::move(value), false);
  auto node = std::make_shared<Node>();
  node->op = op;
  for (const Var& v : inputs) node->inputs.push_back(v.impl());
  node->backward = std::move(backward);
  node->phase = profile::current_phase();
  Var out(std::move(value), true);
  out.impl()->node = node;
  node->output = out.impl();
  return out;
}

Var record_no_backward(const char* op, Tensor value, std::vector<Var> inputs) {
  Var out = record(op, std::move(value), std::move(inputs), nullptr);
  if (out.node()) out.node()->has_backward = false;
  return out;
}

void Var::backward(bool retain_graph) const {
  NL_CHECK(impl_ && impl_->value.numel() == 1, "backward: called on ", impl_ ? describe(impl_->value) : "nothing",
           " without an upstream gradient; only a one-element value can start backward on its own");
  backward(Tensor::ones(impl_->value.shape(), impl_->value.device()), retain_graph);
}

// Reverse-mode sweep: order the graph so that every Var comes after all Vars computed
// from it (iterative depth-first search, no recursion), then walk that order backwards,
// handing each node the sum of the gradients flowing into its output.
void Var::backward(const Tensor& upstream, bool retain_graph) const {
  NL_CHECK(impl_ && impl_->requires_grad, "backward: this value does not require a gradient (",
           impl_ ? describe(impl_->value) : "nothing", ")");
  NL_CHECK(upstream.shape() == impl_->value.shape(), "backward: upstream gradient ", describe(upstream),
           " does not match the value ", describe(impl_->value));

  using Clock = std::chrono::steady_clock;
  const bool profiling = profile::enabled();
  auto charge = [](const std::string& phase, Clock::time_point since) {
    profile::add(phase, std::chrono::duration<double>(Clock::now() - since).count());
  };
  Clock::time_point walk_start = profiling ? Clock::now() : Clock::time_point{};

  std::vector<VarImpl*> order;  // post-order: inputs before the Vars computed from them
  std::unordered_set<VarImpl*> visited;
  std::vector<std::pair<VarImpl*, size_t>> stack{{impl_.get(), 0}};
  visited.insert(impl_.get());
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    if (v->node && next < v->node->inputs.size()) {
      VarImpl* in = v->node->inputs[next++].get();
      if (in->requires_grad && visited.insert(in).second) stack.push_back({in, 0});
    } else {
      order.push_back(v);
      stack.pop_back();
    }
  }

  std::unordered_map<VarImpl*, Tensor> pending;  // gradients of non-leaf Vars, summed
  pending[impl_.get()] = upstream;
  if (profiling) charge("graph walk backward", walk_start);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    poll_interrupt();  // a stop signal need not wait for the whole sweep of a large batch
    VarImpl* v = *it;
    auto found = pending.find(v);
    if (found == pending.end()) continue;
    Tensor g = std::move(found->second);
    pending.erase(found);
    const Clock::time_point node_start = profiling ? Clock::now() : Clock::time_point{};
    if (!v->node) {  // a leaf: accumulate into .grad, which persists between calls
      if (!v->grad.defined()) v->grad = g.clone();
      else add_(v->grad, g);
      if (profiling) charge("leaf grad sum backward", node_start);
      continue;
    }
    Node& node = *v->node;
    NL_CHECK(node.has_backward, "backward: op '", node.op, "' has no backward");
    NL_CHECK(!node.released, "backward: the graph through '", node.op,
             "' was already freed by an earlier backward (pass retain_graph to backward twice)");
    std::vector<Tensor> grads = node.backward(g);
    NL_CHECK(grads.size() == node.inputs.size(), "backward: op '", node.op, "' returned ", grads.size(),
             " gradients for ", node.inputs.size(), " inputs");
    for (size_t i = 0; i < grads.size(); ++i) {
      VarImpl* in = node.inputs[i].get();
      if (!in->requires_grad || !grads[i].defined()) continue;
      NL_CHECK(grads[i].shape() == in->value.shape(), "backward: op '", node.op, "' gave a gradient ",
               describe(grads[i]), " for input ", i, " of shape ", to_string(in->value.shape()));
      auto p = pending.find(in);
      if (p == pending.end()) pending.emplace(in, std::move(grads[i]));
      else p->second = add(p->second, grads[i]);  // a Var used twice: its gradients add up
    }
    if (!retain_graph) {
      node.backward = nullptr;  // frees the tensors the closure saved
      node.released = true;
    }
    if (profiling) charge(std::string(node.phase ? node.phase : "unscoped") + " backward", node_start);
  }
}

}  // namespace nl
