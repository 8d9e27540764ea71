#include "train/flags/gpt_flags.h"

#include <cmath>
#include <cstdint>

#include "train/safety/flag_checks.h"
#include "train/safety/run_safety.h"

namespace nl {

void add_gpt_run_flags(Args& args) {
  args.add("--norm", "ln", "ln | rms | cbwc | dyt | bhyt | bhyt-exact");
  args.add("--block", "pre", "pre (Pre-LN) | peri (Peri-LN) | lns (LayerNorm Scaling: norm outputs of layer l times 1/sqrt(l))");
  args.add("--mlp", "gelu", "gelu (fc 4C, GELU) | swiglu (gated SiLU, hidden round(8C/3))");
  args.add("--final-norm", "", "the norm before the head (default: --norm)");
  args.add("--emb-scale", "none", "multiply the embedding sum by a learnable scalar starting at this value, "
                                  "`sqrt` for sqrt(--dim) (DyT's LLaMA recipe), or none");
  args.add("--layers", "4", "transformer blocks");
  args.add("--dim", "128", "model width");
  args.add("--heads", "4", "attention heads (must divide --dim)");
  args.add("--seq", "64", "sequence length (the model's context)");
  args.add("--batch", "16", "sequences per step");
  args.add("--steps", "500", "training steps (the schedule's length)");
  args.add("--lr", "1e-3", "peak learning rate");
  args.add("--min-lr", "1e-4", "learning rate at the end of the cosine");
  args.add("--warmup", "50", "linear warmup steps");
  args.add("--wd", "0.1", "AdamW weight decay (2-D weights only)");
  args.add("--clip", "1.0", "global gradient-norm clip (0: off)");
  args.add("--seed", "1337", "seed for initialisation, batches and sampling");
  args.add("--eval-every", "100", "validate every N steps");
  args.add("--eval-batches", "20", "validation batches of 32 sequences");
  args.add("--train-bytes", "-1", "keep only the first N training bytes (-1: all)");
  args.add("--threads", "2", "CPU threads (OpenMP and OpenBLAS)");
  args.add("--device", "cpu", "cpu | cuda (needs a build with make CUDA=1 and a GPU)");
  args.add("--dyt-alpha0", "0.5", "DyT's initial alpha");
  args.add("--bhyt-lambda", "1.0", "BHyT's initial lambda at every site");
  args.add("--bhyt-lambda-attn", "", "initial lambda of the attention branch's sites (default: --bhyt-lambda)");
  args.add("--bhyt-lambda-mlp", "", "initial lambda of the MLP branch's sites (default: --bhyt-lambda)");
  args.add("--bhyt-p", "0.99", "BHyT's target probability p (kappa = 1/sqrt(1-p))");
  args.add("--bhyt-refresh", "1", "bhyt: training steps between recomputations of c_attn = ||W_V W_O||^2/(T d)");
  args.add("--act-stats-every", "100", "per-layer activation statistics every N steps into DIR/act_stats.csv (0: off)");
  args.add("--act-stats-batch", "16", "sequences of the fixed held-out batch the activation statistics are taken on");
  args.add("--dropout", "0", "dropout on the attention and MLP outputs, training only (0: none)");
  args.add("--data", "/usr/share/games/fortunes", "directory of the fortunes text");
  args.add("--out", "runs/gpt", "output directory");
  args.add_switch("--resume", "continue from DIR/checkpoint.safetensors");
  args.add("--stop-after", "-1", "stop after this step, writing the checkpoint (-1: run all)");
  args.add_switch("--quiet", "no progress lines");
  add_run_safety_flags(args);
}

GPTRunConfig gpt_run_config_from(const Args& args) {
  GPTRunConfig c;
  c.model.norm.name = args.str("--norm");
  c.model.layers = args.integer("--layers");
  c.model.dim = args.integer("--dim");
  c.model.heads = args.integer("--heads");
  c.model.context = args.integer("--seq");
  c.model.mlp = args.str("--mlp");
  c.model.final_norm = args.str("--final-norm");
  const std::string emb_scale = args.str("--emb-scale");
  if (emb_scale == "sqrt")
    c.model.emb_scale0 = std::sqrt((float)c.model.dim);
  else if (emb_scale != "none")
    c.model.emb_scale0 = (float)args.real("--emb-scale");
  c.model.norm.dyt_alpha0 = (float)args.real("--dyt-alpha0");
  c.model.norm.bhyt_lambda0 = (float)args.real("--bhyt-lambda");
  if (args.given("--bhyt-lambda-attn")) c.model.norm.bhyt_lambda_attn = (float)args.real("--bhyt-lambda-attn");
  if (args.given("--bhyt-lambda-mlp")) c.model.norm.bhyt_lambda_mlp = (float)args.real("--bhyt-lambda-mlp");
  c.model.norm.bhyt_p = (float)args.real("--bhyt-p");
  c.model.norm.bhyt_refresh = args.integer("--bhyt-refresh");
  c.model.block = args.str("--block");
  c.act_stats_every = args.integer("--act-stats-every");
  c.act_stats_batch = args.integer("--act-stats-batch");
  c.model.dropout = (float)args.real("--dropout");
  c.batch = args.integer("--batch");
  c.steps = args.integer("--steps");
  c.lr = (float)args.real("--lr");
  c.min_lr = (float)args.real("--min-lr");
  c.warmup = args.integer("--warmup");
  c.wd = (float)args.real("--wd");
  c.clip = (float)args.real("--clip");
  c.seed = (uint64_t)args.integer("--seed", 0, INT64_MAX);
  c.eval_every = args.integer("--eval-every");
  c.eval_batches = args.integer("--eval-batches");
  c.train_bytes = args.integer("--train-bytes");
  c.threads = (int)args.integer("--threads", 1, kMaxThreads);
  c.device = args.str("--device");
  c.data_dir = args.str("--data");
  c.out_dir = args.str("--out");
  c.resume = args.on("--resume");
  c.stop_after = args.integer("--stop-after");
  c.quiet = args.on("--quiet");
  c.safety = read_run_safety_flags(args);
  return c;
}

}  // namespace nl
