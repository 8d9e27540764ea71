#include "train/flags/recipes.h"

#include "nn/norms/registry.h"
#include "tensor/error.h"

namespace nl {

const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> all = {
      {"plain",
       "the demo's GPT-2 recipe with the norm of --norm swapped in at every site, nothing else changed",
       {"--block", "pre", "--mlp", "gelu", "--bias", "on", "--tied-head", "on", "--emb-scale", "none", "--lr",
        "0.001", "--beta1", "0.9", "--beta2", "0.99"},
       "normlab's demo (make demo): the tiny GPT of ../shared/BENCHMARKS.md, GPT-2's block (Pre-LN, learned "
       "positions, GELU MLP, biases, head tied to the token embedding), AdamW lr 1e-3, betas (0.9, 0.99), weight "
       "decay 0.1 on the 2-D weights. Each norm keeps its own defaults: for bhyt and bhyt-exact that is the "
       "released lambdas 2 / 1 and a final RMSNorm (BHyT* with lambda 1 everywhere: --final-norm bhyt "
       "--bhyt-lambda-attn 1 --bhyt-lambda-mlp 1)."},
      {"bhyt-released",
       "BHyT as its released code trains it: Llama block, lambda 2 / 1, the code's denominator, a final RMSNorm",
       {"--norm", "bhyt", "--block", "llama", "--tied-head", "on", "--bhyt-form", "code", "--bhyt-lambda-attn", "2",
        "--bhyt-lambda-mlp", "1", "--bhyt-refresh", "auto", "--beta2", "0.95"},
       "MLAI-Yonsei/BHyT. models/hf_src/llama/modeling_llama.py: BHyT with rstd = rsqrt(mean(x^2) + eps) / kappa "
       "(--bhyt-form code), the block-level approximation LayerWiseVarApproxParrallel at each block's second site, "
       "a LlamaRMSNorm before the head when last_layer_lam = 0 (bhyt's default final norm, so that --norm ln or rms "
       "with this recipe is the same model with another norm), learnable lambda; "
       "scripts/bhyt/pt_bhyt_sweep.sh: (input, post, last) lambdas (2, 1, 0) and (3, 3, 0); "
       "src/llamafactory/train/callbacks.py (UpdateScalerCallback): c_attn refreshed every max(1, min(1000, "
       "steps / 50)) steps (--bhyt-refresh auto); examples/train_pt/llama_pt.yaml: AdamW betas (0.9, 0.95). The "
       "models are Llama 3.2 (1B, 3B), whose configs tie the head to the token embedding (--tied-head on). Kept "
       "from the demo: lr 1e-3 and its schedule (the sweep's lr 1e-4 to 5e-4 and 5-10 % warmup are for 1B-3B "
       "models), weight decay 0.1 on 2-D weights (the sweep: 0 or 0.1). docs/norms/bhyt.md lists what still "
       "differs (eps, RoPE's base and layout, grouped-query attention, bf16)."},
      {"dyt-llm",
       "DyT's LLaMA recipe: Llama block, per-site alpha0 for width 128, no beta, embedding scalar sqrt(d), lr 3e-4",
       {"--norm", "dyt", "--block", "llama", "--dyt-alpha0-attn", "4.53", "--dyt-alpha0-mlp", "1.13",
        "--dyt-alpha0-final", "1.13", "--dyt-beta", "off", "--emb-scale", "sqrt", "--lr", "0.0003", "--min-lr",
        "0.00003", "--beta1", "0.9", "--beta2", "0.95", "--wd-all"},
       "jiachenzhu/DyT, other_tasks/LLaMA. fms_fsdp/models/llama.py: DyT = weight * tanh(alpha x), no beta "
       "(--dyt-beta off), at the attention, FFN and final sites with their own alpha0; shared_scale, a learnable "
       "scalar on the embedding initialised to sqrt(emb_dim) (--emb-scale sqrt); no biases, untied head, RoPE "
       "base 10000, SwiGLU (--block llama). main_training_llama.py: AdamW lr 3e-4, betas (0.9, 0.95), weight "
       "decay 0.1 over model.parameters() (--wd-all), cosine to 0.1 lr (--min-lr 3e-5), clip 1. alpha0 by width "
       "(README): 0.8 / 0.2 / 0.2 at width 4096 (LLaMA-2 7B), 0.6 / 0.15 / 0.15 at 5120 (13B), 0.2 / 0.05 / 0.05 "
       "at 8192 (34B and 70B: depth does not change it); narrower models larger, the attention site 4x the others. "
       "Applied to width 128: the stream at initialisation is sqrt(d) times the embedding's N(0, 0.02), so alpha0 "
       "is scaled by sqrt(4096 / 128) = 5.66 from the 7B setting, which keeps alpha0 x as spread as there: 4.53 / "
       "1.13 / 1.13 (extrapolating the table's own fall, faster than 1/sqrt(d), would give alpha0 above 20, a "
       "saturated tanh from the first step). For another --dim give the three alpha0 flags. Kept from the demo: "
       "the warmup (theirs: min(2000, steps / 20) steps, quadratic) and the GPT-2 initialisation of the "
       "projections (theirs: N(0, 0.02) for every linear)."},
      {"dyt-verma",
       "DyT as the Verma study trains GPT-2: alpha0 2 at every DyT, the final one included, no biases",
       {"--norm", "dyt", "--block", "pre", "--mlp", "gelu", "--tied-head", "on", "--dyt-alpha0", "2", "--bias",
        "off"},
       "Verma 2026, \"When Does Removing LayerNorm Help?\" (arXiv 2604.23434, github.com/lucky-verma/"
       "dyt-composition-study): GPT-2 models with every LayerNorm replaced by DyT, alpha0 = 2.0 everywhere, linears "
       "without biases. Kept from the demo: the optimizer and schedule."},
      {"verma",
       "Verma's released schedule on GPT-2's block: lr 3e-4, 2000 warmup steps of 5000, then flat; no biases at all",
       {"--block", "pre", "--mlp", "gelu", "--bias", "off", "--norm-bias", "off", "--tied-head", "on", "--emb-scale",
        "none", "--dropout", "0", "--dyt-alpha0", "2", "--lr", "0.0003", "--steps", "5000", "--warmup", "2000",
        "--schedule", "flat", "--beta1", "0.9", "--beta2", "0.95", "--wd", "0.1", "--clip", "1"},
       "lucky-verma/dyt-composition-study, read from the files: code/train.py's defaults with code/run_3seed.sh's "
       "flags. AdamW lr 3e-4, betas (0.9, 0.95), weight decay 0.1, clip 1.0; a 2000-step linear warmup out of "
       "5000 steps, then a cosine over 600 000 steps, which stays within 0.01 % of 3e-4 over the 3000 steps left: "
       "--schedule flat says so; bias=False on every linear and every norm (LayerNorm's and DyT's beta: "
       "--bias off --norm-bias off); dropout 0; tied head; alpha0 2.0 at every DyT, the final one included. Any "
       "--norm: the regime study's arms set it. Kept from normlab's scale: the model (4 x 128 here, theirs 12 x "
       "512 x 8 heads), the batch (16 x 64 bytes here, theirs 64 x 512 tokens), fp32 (theirs bf16); the "
       "evaluation cadence is the study's."},
  };
  return all;
}

const Recipe& recipe(const std::string& name) {
  std::string all;
  for (const Recipe& r : recipes()) {
    if (r.name == name) return r;
    all += (all.empty() ? "" : ", ") + r.name;
  }
  fail("--recipe: unknown recipe '", name, "' (choose one of: ", all, "; --list-recipes describes them)");
}

std::string recipes_listing() {
  std::string out = "Recipes (--recipe NAME; flags given on the command line override the recipe's):\n";
  for (const Recipe& r : recipes()) {
    std::string flags;
    for (const std::string& f : r.flags) flags += " " + f;
    out += "\n" + r.name + ": " + r.summary + "\n  flags:" + flags + "\n  source: " + r.source + "\n";
  }
  out += "\nNorms (--norm NAME):\n";
  for (const NormKind& k : norm_kinds()) out += "  " + k.name + ": " + k.summary + "\n";
  return out;
}

void add_recipe_flags(FlagParser& p, std::string& recipe_name) {
  p.group("Recipe");
  p.text("--recipe", recipe_name,
         "a named bundle of flags (plain, bhyt-released, dyt-llm, dyt-verma, verma: --list-recipes); flags given "
         "override it");
  p.implies("--recipe", [](const std::string& name) {
    return name.empty() ? std::vector<std::string>{} : recipe(name).flags;
  });
  p.info("--list-recipes", "print the recipes with their flags and sources, and the norms", recipes_listing);
}

}  // namespace nl
