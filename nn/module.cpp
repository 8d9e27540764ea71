#include "nn/module.h"

namespace nl {

Var& Module::register_parameter(const std::string& name, Tensor value) {
  params_.emplace_back(name, Var(std::move(value), true));
  params_.back().second.impl()->name = name;
  return params_.back().second;
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Var>>& out) const {
  for (const auto& [name, p] : params_) out.emplace_back(prefix + name, p);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Var>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Var>> out;
  collect("", out);
  return out;
}

std::vector<Var> Module::parameters() const {
  std::vector<Var> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (auto& [name, p] : named_parameters()) n += p.value().numel();
  return n;
}

Var Module::parameter(const std::string& dotted_name) const {
  for (auto& [name, p] : named_parameters())
    if (name == dotted_name) return p;
  fail("module: no parameter named '", dotted_name, "'");
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (auto& [name, p] : named_parameters()) p.zero_grad();
}

void Module::to(Device device) {
  for (auto& [name, p] : named_parameters()) {
    p.value() = p.value().to(device);
    p.grad() = Tensor();
  }
}

FlatParameters flatten_parameters(Module& module) {
  FlatParameters flat;
  flat.params = module.named_parameters();
  int64_t total = 0;
  for (auto& [name, p] : flat.params) {
    flat.offsets.push_back(total);
    total += p.value().numel();
  }
  const Device device = flat.params.empty() ? Device::CPU : flat.params[0].second.value().device();
  flat.values = Tensor::empty({total}, DType::F32, device);
  flat.grads = Tensor::zeros({total}, DType::F32, device);
  for (size_t i = 0; i < flat.params.size(); ++i) {
    Var& p = flat.params[i].second;
    const Shape shape = p.value().shape();
    const int64_t n = p.value().numel();
    Tensor value = flat.values.slice(0, flat.offsets[i], flat.offsets[i] + n).view(shape);
    value.copy_from(p.value());
    p.value() = value;
    p.grad() = flat.grads.slice(0, flat.offsets[i], flat.offsets[i] + n).view(shape);
  }
  return flat;
}

}  // namespace nl
