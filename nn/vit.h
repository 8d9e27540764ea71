// ViT (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words") for small grey images:
//   patches  (B, C, H, W) -> (B, N, C p p), N = (H / p) (W / p), patch k = row-major over
//            the grid of p x p squares, its pixels in (channel, row, column) order
//   tokens   [cls_token ; patches W_patch^T + b_patch] + pos_embed      (B, N + 1, dim)
//   L pre-norm blocks with non-causal attention (nn/block.h), a final norm (final_norm,
//   else the norm kind's default final norm, nn/norms/registry.h: an RMSNorm for bhyt),
//   and a linear head on the class token (token 0): logits (B, classes).
// For `cbwc` the token sum is centred over channels once, as in nn/gpt.cpp; the blocks
// then keep the stream zero-mean, so each RMSNorm + beta equals the LayerNorm it replaces.
// Init: normal(0, 0.02) for the patch projection, cls_token and pos_embed (the blocks
// as nn/block.cpp), biases 0, and the head weight 0 as in the ViT paper, so a fresh
// model predicts the uniform distribution (loss ln 10).
#pragma once
#include <string>
#include <vector>

#include "nn/block.h"

namespace nl {

struct ViTConfig {
  int64_t image = 28, channels = 1, patch = 7, classes = 10;
  int64_t layers = 4, dim = 48, heads = 4;
  NormConfig norm;
  std::string final_norm;  // the kind of ln_f; empty: final_norm_kind's default for norm.name
  std::string final_norm_name() const { return final_norm_kind(norm.name, final_norm); }
  int64_t patches() const { return (image / patch) * (image / patch); }
  void validate() const;  // throws naming the bad field
};

// (B, C, H, W) -> (B, (H/p)(W/p), C p p) by reshape and permute: differentiable, and a
// plain view-and-copy when the input needs no gradient.
Var patchify(const Var& images, int64_t p);

class ViT : public Module {
 public:
  ViT(const ViTConfig& config, Generator& gen);
  // images float32 (B, channels, image, image) -> logits (B, classes)
  Var forward(const Var& images) const;
  // mean cross-entropy against labels int32 (B)
  Var loss(const Var& images, const Tensor& labels) const;
  // Makes every later forward report its intermediate tensors to `probe` (null: stop),
  // the blocks' sites of nn/probe.h and, at layer L, the stream leaving the last block;
  // and ln_f's output on the class token (with its bounded argument, for a probe that
  // wants detail); returns the probe it replaces.
  ActivationProbe* set_probe(ActivationProbe* probe);

  ViTConfig config;
  std::shared_ptr<Linear> patch;   // (dim, channels p p)
  Var cls_token;                   // (dim)
  Var pos_embed;                   // (N + 1, dim)
  std::vector<std::shared_ptr<Block>> blocks;
  std::shared_ptr<Norm> ln_f;
  std::shared_ptr<Linear> head;    // (classes, dim)

 private:
  ActivationProbe* probe_ = nullptr;
};

}  // namespace nl
