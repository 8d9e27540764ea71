// The names of nanoGPT's state_dict (karpathy/nanoGPT, model.py) and normlab's, both ways,
// for convert_nanogpt (apps/convert_nanogpt.cpp; docs/using-a-trained-gpt.md):
//   transformer.wte.weight            wte.weight          (vocab, C)
//   transformer.wpe.weight            wpe.weight          (context, C)
//   transformer.h.I.ln_1.*            blocks.I.ln1.*      (C)
//   transformer.h.I.attn.c_attn.*     blocks.I.attn.qkv.* (3C, C), (3C)
//   transformer.h.I.attn.c_proj.*     blocks.I.attn.proj.* (C, C), (C)
//   transformer.h.I.ln_2.*            blocks.I.ln2.*
//   transformer.h.I.mlp.c_fc.*        blocks.I.mlp.fc.*   (4C, C), (4C)
//   transformer.h.I.mlp.c_proj.*      blocks.I.mlp.proj.* (C, 4C), (C)
//   transformer.ln_f.*                ln_f.*
//   lm_head.weight                    (tied to wte: dropped; another value: lm_head.weight)
// The layouts agree, so tensors move unchanged: both store a linear's weight (out, in), and
// both split qkv's output into q, k, v in that order, heads contiguous within each.
// nanoGPT's `bias` switches the biases of its linears and LayerNorms together; normlab's
// --bias and --norm-bias follow it. Names may carry torch.compile's "_orig_mod." prefix,
// and the causal-mask buffer (transformer.h.I.attn.bias, (1, 1, T, T)) is skipped.
// What does not map is refused, naming the tensor or field: a vocabulary other than
// normlab's 256 bytes, a missing or unknown tensor, a wrong shape, and (the other way) a
// model nanoGPT has no layout for (another norm or block, SwiGLU, an untied head, ...).
// The one difference that stays: nanoGPT's MLP uses the exact GELU (nn.GELU(), erf),
// normlab's the tanh approximation (the two differ by at most 4.7e-4, at x = -2.7):
// on the reference model of tests/train/test_nanogpt_names.cpp the logits move by 1.2e-3.
#pragma once
#include <map>
#include <string>

#include "nn/gpt.h"
#include "tensor/tensor.h"

namespace nl {

using NamedTensors = std::map<std::string, Tensor>;

struct NormlabWeights {
  GPTConfig config;  // the GPT the tensors are of (norm ln, block pre, mlp gelu)
  NamedTensors tensors;
};

// nanoGPT's tensors (any order, F32, as load_safetensors gives them) -> normlab's. nanoGPT
// does not store n_head: `heads` gives it. `file` names the source in messages.
NormlabWeights from_nanogpt(const NamedTensors& nano, int64_t heads, const std::string& file);

// normlab's parameters (Module::named_parameters' names) of a GPT built from `config`
// -> nanoGPT's, lm_head.weight left out (nanoGPT ties it to transformer.wte.weight).
NamedTensors to_nanogpt(const NamedTensors& ours, const GPTConfig& config, const std::string& file);

// The train_gpt flags that build `config`'s model ("--layers 2 --dim 32 --heads 2 --seq 16").
std::string train_gpt_flags(const GPTConfig& config);
// nanoGPT's GPTConfig for it ("GPTConfig(n_layer=2, n_head=2, ...)").
std::string nanogpt_config(const GPTConfig& config);

}  // namespace nl
