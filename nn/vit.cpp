#include "nn/vit.h"

#include <cmath>

#include "autograd/interrupt.h"
#include "autograd/ops.h"

namespace nl {

void ViTConfig::validate() const {
  norm_kind(norm.name);  // throws naming the choices
  if (!final_norm.empty()) norm_kind(final_norm);
  NL_CHECK(image > 0 && channels > 0 && patch > 0 && classes > 0 && layers > 0 && dim > 0 && heads > 0,
           "vit config: image, channels, patch, classes, layers, dim and heads must be positive");
  NL_CHECK(image % patch == 0, "vit config: --patch ", patch, " does not divide the image size ", image);
  NL_CHECK(dim % heads == 0, "vit config: --dim ", dim, " is not divisible by --heads ", heads);
  check_norm_config(norm);
}

Var patchify(const Var& images, int64_t p) {
  NL_CHECK(images.dim() == 4 && p > 0 && images.shape()[2] % p == 0 && images.shape()[3] % p == 0,
           "patchify: images must be (B, C, H, W) with H and W multiples of the patch size ", p, ", got ",
           describe(images.value()));
  const int64_t B = images.shape()[0], C = images.shape()[1];
  const int64_t gh = images.shape()[2] / p, gw = images.shape()[3] / p;
  // (B, C, gh, p, gw, p) -> (B, gh, gw, C, p, p): pixel (r, c) sits at grid cell
  // (r / p, c / p), offset (r % p, c % p) inside it
  Var x = ag::reshape(images, {B, C, gh, p, gw, p});
  x = ag::permute(x, {0, 2, 4, 1, 3, 5});
  return ag::reshape(x, {B, gh * gw, C * p * p});
}

ViT::ViT(const ViTConfig& c, Generator& gen) : config(c) {
  c.validate();
  const int64_t N = c.patches();
  patch = register_module("patch", std::make_shared<Linear>(c.channels * c.patch * c.patch, c.dim, true, gen));
  cls_token = register_parameter("cls_token", gen.normal({c.dim}, 0.0f, 0.02f));
  pos_embed = register_parameter("pos_embed", gen.normal({N + 1, c.dim}, 0.0f, 0.02f));
  BlockConfig b;
  b.dim = c.dim, b.heads = c.heads, b.causal = false, b.norm = c.norm, b.variant = "pre", b.layers = c.layers;
  blocks = make_blocks(b, gen);
  for (size_t l = 0; l < blocks.size(); ++l) register_module("blocks." + std::to_string(l), blocks[l]);
  NormConfig final_norm = c.norm;
  final_norm.name = c.final_norm_name();
  ln_f = register_module("ln_f", make_norm(final_norm, c.dim, NormPlace::Final));
  head = register_module("head", std::make_shared<Linear>(c.dim, c.classes, true, gen, 0.0f));
}

ActivationProbe* ViT::set_probe(ActivationProbe* probe) {
  ActivationProbe* previous = probe_;
  probe_ = probe;
  for (auto& block : blocks) block->probe = probe;
  return previous;
}

Var ViT::forward(const Var& images) const {
  const auto& c = config;
  NL_CHECK(images.dim() == 4 && images.shape()[1] == c.channels && images.shape()[2] == c.image &&
               images.shape()[3] == c.image,
           "vit: images must be (B, ", c.channels, ", ", c.image, ", ", c.image, "), got ", describe(images.value()));
  const int64_t B = images.shape()[0];
  Var tokens = patch->forward(patchify(images, c.patch));                          // (B, N, dim)
  Var cls = ag::expand(ag::reshape(cls_token, {1, 1, c.dim}), {B, 1, c.dim});      // (B, 1, dim)
  Var x = ag::add(ag::concat({cls, tokens}, 1), pos_embed);                        // (B, N + 1, dim)
  if (norm_kind(c.norm.name).centres_stream) x = ag::sub(x, ag::mean(x, {-1}, true));  // centre the stream once
  for (const auto& block : blocks) {
    poll_interrupt();  // between blocks: a stop signal need not wait for a large batch's forward
    x = block->forward(x);
  }
  if (probe_) probe_->record(c.layers, "resid", x.value());
  // only the class token reaches the head, and the norms act per token: normalise it alone
  Var first = ag::reshape(ag::slice(x, 1, 0, 1), {B, c.dim});
  Var normed = ln_f->forward(first);
  if (probe_ && probe_->wants_detail()) {
    probe_->record(c.layers, "ln_f", normed.value());
    Tensor arg = ln_f->bounded_arg_value(first.value());
    if (arg.defined()) probe_->record(c.layers, "ln_f.bounded_arg", arg);
  }
  return head->forward(normed);
}

Var ViT::loss(const Var& images, const Tensor& labels) const {
  NL_CHECK(labels.dim() == 1 && labels.dtype() == DType::I32 && labels.shape()[0] == images.shape()[0],
           "vit: labels must be int32 (B) matching the images, got ", describe(labels), " for ",
           describe(images.value()));
  return ag::cross_entropy(forward(images), labels);
}

}  // namespace nl
