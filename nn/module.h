// Module: a tree of named parameters and submodules, as in PyTorch. Names are dotted
// paths ("blocks.2.attn.qkv.weight") that stay stable, so optimizers, checkpoints and
// the LayerNorm folding find every parameter by name.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/var.h"

namespace nl {

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Every parameter of this module and its submodules, in registration order.
  std::vector<std::pair<std::string, Var>> named_parameters() const;
  std::vector<Var> parameters() const;
  int64_t num_parameters() const;
  Var parameter(const std::string& dotted_name) const;  // throws naming the missing name

  void train(bool on = true);
  void eval() { train(false); }
  bool training() const { return training_; }
  void zero_grad();
  // Moves every parameter to `device` (its gradient is dropped). Call it before
  // flatten_parameters: the flat buffers are made on the parameters' device.
  void to(Device device);

 protected:
  Var& register_parameter(const std::string& name, Tensor value);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Var>>& out) const;
  std::vector<std::pair<std::string, Var>> params_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// Moves every parameter of `module` into one contiguous value buffer and one gradient
// buffer (as llm.c does): each parameter's value and grad become views into them, so
// zero_grad is one fill and the optimizer and gradient clipping are one loop each.
struct FlatParameters {
  Tensor values, grads;                                  // (total)
  std::vector<std::pair<std::string, Var>> params;       // in buffer order
  std::vector<int64_t> offsets;                          // start of each parameter
};
FlatParameters flatten_parameters(Module& module);

}  // namespace nl
