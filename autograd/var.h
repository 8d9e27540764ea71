// The graph-recording value. A Var holds a value tensor, its gradient, and (when it was
// computed by a recorded op) the Node that made it. A Node keeps its inputs and a
// backward function whose closure holds whatever the backward needs; backward() runs
// those functions in reverse topological order and then frees them.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace nl {

struct Node;

struct VarImpl {
  Tensor value;
  Tensor grad;                  // accumulated by backward(); leaves keep it between calls
  bool requires_grad = false;
  std::shared_ptr<Node> node;   // null for leaves (parameters, inputs)
  std::string name;             // optional: parameters carry their dotted name
};

// Given the gradient of the loss with respect to the node's output, returns the
// gradient with respect to each input (an undefined Tensor where an input needs none).
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_out)>;

struct Node {
  ~Node();  // unlinks its inputs iteratively: a long chain must not recurse once per op
  std::string op;                                // "matmul", "layernorm", ...: named in errors, read by graph walks
  std::vector<std::shared_ptr<VarImpl>> inputs;
  BackwardFn backward;                           // empty after it ran (saved tensors freed)
  bool has_backward = true;                      // false: reaching it in backward() throws
  bool released = false;                         // true once backward() ran it and freed its state
  std::vector<float> attrs;                      // small op parameters (scalar factors, p of dropout, ...)
  bool training = false;                         // for dropout-like ops: recorded in training mode
  std::weak_ptr<VarImpl> output;                 // the Var this node produced
  const char* phase = nullptr;                   // profile::Scope open when recorded (profiling only)
};

class Var {
 public:
  Var() = default;
  explicit Var(Tensor value, bool requires_grad = false);
  explicit Var(std::shared_ptr<VarImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Tensor& value() const { return impl_->value; }
  Tensor& value() { return impl_->value; }
  const Tensor& grad() const { return impl_->grad; }
  Tensor& grad() { return impl_->grad; }
  bool requires_grad() const { return impl_ && impl_->requires_grad; }
  const std::shared_ptr<Node>& node() const { return impl_->node; }
  const std::shared_ptr<VarImpl>& impl() const { return impl_; }
  const Shape& shape() const { return impl_->value.shape(); }
  int dim() const { return impl_->value.dim(); }
  int64_t size(int64_t axis) const { return impl_->value.size(axis); }
  float item() const { return impl_->value.item(); }

  // Backward from a one-element value (upstream gradient 1), or from a given upstream
  // gradient of the value's shape. retain_graph keeps the nodes' saved state.
  void backward(bool retain_graph = false) const;
  void backward(const Tensor& upstream, bool retain_graph = false) const;
  // The same value, cut from the graph.
  Var detach() const;
  void zero_grad();

 private:
  std::shared_ptr<VarImpl> impl_;
};

// Turns recording off in its scope (evaluation, optimizer updates).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;
 private:
  bool previous_;
};
bool grad_enabled();

// Records an op: returns a Var holding `value`, with a Node pointing at `inputs` when
// recording is on and any input requires a gradient; otherwise a plain constant.
Var record(const char* op, Tensor value, std::vector<Var> inputs, BackwardFn backward);
// Records an op that has no backward: reaching it in backward() throws, naming `op`.
Var record_no_backward(const char* op, Tensor value, std::vector<Var> inputs);

}  // namespace nl
