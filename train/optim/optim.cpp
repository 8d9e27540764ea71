#include "train/optim/optim.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/error.h"

namespace nl {
namespace {

// Weight decay for 2-D weights only, as nanoGPT and llm.c, or for every parameter.
ParamSegments segments_of(const FlatParameters& params, bool decay_all = false) {
  std::vector<bool> decay;
  for (auto& [name, p] : params.params) decay.push_back(decay_all || p.value().dim() >= 2);
  return make_param_segments(params.offsets, params.values.numel(), decay, params.values.device());
}

// The optimizer's state buffers: zeros beside the parameters, on their device.
Tensor zeros_like_values(const FlatParameters& params) {
  return Tensor::zeros(params.values.shape(), DType::F32, params.values.device());
}

}  // namespace

AdamW::AdamW(FlatParameters& params, AdamWConfig c) : config(c), params_(params) {
  m = zeros_like_values(params);
  v = zeros_like_values(params);
  segments_ = segments_of(params, c.decay_all);
}

void AdamW::step(float lr) {
  ++t_;
  // the bias corrections in double, then rounded once, as PyTorch computes them
  const float bc1 = (float)(1.0 - std::pow((double)config.beta1, (double)t_));
  const float bc2_sqrt = (float)std::sqrt(1.0 - std::pow((double)config.beta2, (double)t_));
  adamw_step(params_.values, params_.grads, m, v, segments_,
             AdamWScalars{lr, config.weight_decay, config.beta1, config.beta2, config.eps, lr / bc1, bc2_sqrt});
}

SGD::SGD(FlatParameters& params, float momentum, float weight_decay)
    : params_(params), momentum_(momentum), weight_decay_(weight_decay) {
  buf = zeros_like_values(params);
  segments_ = segments_of(params);
}

void SGD::step(float lr) {
  sgd_step(params_.values, params_.grads, buf, segments_, lr, momentum_, weight_decay_, started_);
  started_ = true;
}

float lr_at(int64_t step, int64_t total, int64_t warmup, float lr, float min_lr, const std::string& schedule) {
  NL_CHECK(schedule == "cosine" || schedule == "flat", "lr_at: unknown schedule '", schedule, "' (cosine, flat)");
  if (step < warmup) return lr * (float)(step + 1) / (float)warmup;
  if (schedule == "flat") return lr;
  if (step >= total) return min_lr;
  const double progress = (double)(step - warmup) / (double)std::max<int64_t>(total - warmup, 1);
  return min_lr + (float)(0.5 * (1.0 + std::cos(M_PI * progress))) * (lr - min_lr);
}

float clip_grad_norm(FlatParameters& params, float max_norm) {
  return clip_grad_norm(params, max_norm, sum_squares(params.grads));
}

float clip_grad_norm(FlatParameters& params, float max_norm, double grad_sum_squares) {
  const float norm = (float)std::sqrt(grad_sum_squares);
  if (max_norm > 0.0f && norm > max_norm)
    scale_(params.grads, max_norm / (norm + 1e-6f));  // as torch.nn.utils.clip_grad_norm_
  return norm;
}

}  // namespace nl
