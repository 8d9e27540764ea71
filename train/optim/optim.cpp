#include "train/optim/optim.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/threads.h"

namespace nl {
namespace {

std::vector<bool> decay_mask(const FlatParameters& params) {
  std::vector<bool> decay;
  for (auto& [name, p] : params.params) decay.push_back(p.value().dim() >= 2);
  return decay;
}

int64_t param_size(const FlatParameters& params, size_t i) { return params.params[i].second.value().numel(); }

bool on_gpu(const FlatParameters& params) { return params.values.device() == Device::CUDA; }

// The optimizer's state buffers: zeros beside the parameters, on their device.
Tensor zeros_like_values(const FlatParameters& params) {
  return Tensor::zeros(params.values.shape(), DType::F32, params.values.device());
}

}  // namespace

AdamW::AdamW(FlatParameters& params, AdamWConfig c) : config(c), params_(params) {
  m = zeros_like_values(params);
  v = zeros_like_values(params);
  decay_ = decay_mask(params);
  if (on_gpu(params)) segments_ = cuda::upload_segments(params.offsets, params.values.numel(), decay_);
}

void AdamW::step(float lr) {
  ++t_;
  // the bias corrections in double, then rounded once, as PyTorch computes them
  const float bc1 = (float)(1.0 - std::pow((double)config.beta1, (double)t_));
  const float bc2_sqrt = (float)std::sqrt(1.0 - std::pow((double)config.beta2, (double)t_));
  const float step_size = lr / bc1;
  const float b1 = config.beta1, b2 = config.beta2, eps = config.eps;
  if (on_gpu(params_)) {
    cuda::adamw_step(params_.values, params_.grads, m, v, segments_, lr, config.weight_decay, b1, b2, eps, step_size,
                     bc2_sqrt);
    return;
  }
  float* p = params_.values.data();
  const float* g = params_.grads.data();
  float* pm = m.data();
  float* pv = v.data();
  for (size_t i = 0; i < params_.params.size(); ++i) {
    const int64_t begin = params_.offsets[i], end = begin + param_size(params_, i);
    const float keep = decay_[i] ? 1.0f - lr * config.weight_decay : 1.0f;
#pragma omp parallel for if (end - begin > kParallelGrain)
    for (int64_t j = begin; j < end; ++j) {
      p[j] *= keep;
      pm[j] = b1 * pm[j] + (1.0f - b1) * g[j];
      pv[j] = b2 * pv[j] + (1.0f - b2) * g[j] * g[j];
      const float denom = std::sqrt(pv[j]) / bc2_sqrt + eps;
      p[j] -= step_size * (pm[j] / denom);
    }
  }
}

SGD::SGD(FlatParameters& params, float momentum, float weight_decay)
    : params_(params), momentum_(momentum), weight_decay_(weight_decay) {
  buf = zeros_like_values(params);
  decay_ = decay_mask(params);
  if (on_gpu(params)) segments_ = cuda::upload_segments(params.offsets, params.values.numel(), decay_);
}

void SGD::step(float lr) {
  if (on_gpu(params_)) {
    cuda::sgd_step(params_.values, params_.grads, buf, segments_, lr, momentum_, weight_decay_, started_);
    started_ = true;
    return;
  }
  float* p = params_.values.data();
  const float* g = params_.grads.data();
  float* b = buf.data();
  for (size_t i = 0; i < params_.params.size(); ++i) {
    const int64_t begin = params_.offsets[i], end = begin + param_size(params_, i);
    const float wd = decay_[i] ? weight_decay_ : 0.0f;
    for (int64_t j = begin; j < end; ++j) {
      const float d = g[j] + wd * p[j];
      b[j] = started_ ? momentum_ * b[j] + d : d;  // the first step starts the buffer at g
      p[j] -= lr * b[j];
    }
  }
  started_ = true;
}

float lr_at(int64_t step, int64_t total, int64_t warmup, float lr, float min_lr) {
  if (step < warmup) return lr * (float)(step + 1) / (float)warmup;
  if (step >= total) return min_lr;
  const double progress = (double)(step - warmup) / (double)std::max<int64_t>(total - warmup, 1);
  return min_lr + (float)(0.5 * (1.0 + std::cos(M_PI * progress))) * (lr - min_lr);
}

float clip_grad_norm(FlatParameters& params, float max_norm) {
  if (on_gpu(params)) {
    const float norm = (float)std::sqrt(cuda::sum_squares(params.grads));
    if (max_norm > 0.0f && norm > max_norm) cuda::scale_(params.grads, max_norm / (norm + 1e-6f));
    return norm;
  }
  float* g = params.grads.data();
  const int64_t n = params.grads.numel();
  // sums of fixed blocks, added in block order: the same bits at any thread count and
  // in any order the threads finish (an OpenMP reduction adds partials as they come)
  constexpr int64_t kBlock = 16384;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> block_ss((size_t)blocks, 0.0);
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t b = 0; b < blocks; ++b) {
    double s = 0;
    for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) s += (double)g[i] * g[i];
    block_ss[b] = s;
  }
  double ss = 0;
  for (double s : block_ss) ss += s;
  const float norm = (float)std::sqrt(ss);
  if (max_norm > 0.0f && norm > max_norm) {
    const float scale = max_norm / (norm + 1e-6f);  // as torch.nn.utils.clip_grad_norm_
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) g[i] *= scale;
  }
  return norm;
}

}  // namespace nl
