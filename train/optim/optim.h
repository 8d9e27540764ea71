// Optimizers over a model's flat parameter buffer (nn/module.h: flatten_parameters),
// a learning-rate schedule, and global-norm gradient clipping.
#pragma once
#include <string>

#include "nn/module.h"
#include "tensor/optim.h"

namespace nl {

// The state lives on the parameters' device; each step is one kernel over the whole
// buffer (tensor/optim.h: tensor/cpu/optim.cpp, tensor/cuda/optim.cu).
//
// AdamW as torch.optim.AdamW computes it (decoupled weight decay):
//   p <- p (1 - lr wd)                       only for 2-D weights, as nanoGPT and llm.c
//                                            (every parameter with decay_all, as
//                                            torch.optim.AdamW over model.parameters())
//   m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
//   p <- p - (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
struct AdamWConfig {
  float beta1 = 0.9f, beta2 = 0.99f, eps = 1e-8f, weight_decay = 0.1f;
  bool decay_all = false;
};

class AdamW {
 public:
  AdamW(FlatParameters& params, AdamWConfig config);
  void step(float lr);
  int64_t steps() const { return t_; }
  // State for checkpoints: first and second moments (total) and the step count.
  Tensor m, v;
  void set_steps(int64_t t) { t_ = t; }
  AdamWConfig config;
 private:
  FlatParameters& params_;
  ParamSegments segments_;  // where each parameter sits; decay for those with >= 2 dims (or all)
  int64_t t_ = 0;
};

// SGD with momentum (PyTorch's form: b <- mu b + g; p <- p - lr b), weight decay
// added to the gradient of 2-D weights.
class SGD {
 public:
  SGD(FlatParameters& params, float momentum, float weight_decay);
  void step(float lr);
  Tensor buf;
 private:
  FlatParameters& params_;
  ParamSegments segments_;
  float momentum_, weight_decay_;
  bool started_ = false;
};

// The learning rate at `step` (counting from 0): a linear warmup from lr/warmup to lr over
// `warmup` steps, then, by `schedule`, "cosine" to min_lr at `total` steps (nanoGPT's), or
// "flat": lr to the end (Verma's released schedule, whose cosine over 600 000 steps
// barely moves in 5000).
float lr_at(int64_t step, int64_t total, int64_t warmup, float lr, float min_lr,
            const std::string& schedule = "cosine");

// Scales all gradients so that their global L2 norm is at most max_norm (no-op when
// max_norm <= 0). Returns the norm before clipping.
float clip_grad_norm(FlatParameters& params, float max_norm);
// The same with the gradients' sum of squares already taken (sum_squares(params.grads)).
float clip_grad_norm(FlatParameters& params, float max_norm, double grad_sum_squares);

}  // namespace nl
