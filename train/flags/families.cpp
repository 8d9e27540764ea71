#include "train/flags/families.h"

#include <cmath>
#include <cstdint>

#include "tensor/decimal.h"
#include "tensor/device.h"
#include "nn/norms/registry.h"
#include "tensor/error.h"
#include "train/safety/limits.h"

namespace nl {

void add_trunk_flags(FlagParser& p, int64_t& layers, int64_t& dim, int64_t& heads) {
  p.group("Model");
  p.integer("--layers", layers, 1, kMaxLayers, "transformer blocks");
  p.integer("--dim", dim, 1, kMaxDim, "model width");
  p.integer("--heads", heads, 1, kMaxDim, "attention heads (must divide --dim)");
  p.check([&] {
    NL_CHECK(heads <= dim, "--heads must lie in [1, ", dim, "] (--dim), got ", heads);
    NL_CHECK(dim % heads == 0, "--dim ", dim, " is not divisible by --heads ", heads);
  });
}

void add_final_norm_flag(FlagParser& p, std::string& final_norm) {
  p.group("Norm");
  std::vector<std::string> names = {""};
  for (const NormKind& k : norm_kinds()) names.push_back(k.name);
  p.choice("--final-norm", final_norm, names,
           "the norm before the head, one of --norm's kinds (empty: the --norm kind's default, an RMSNorm for bhyt "
           "and bhyt-exact, the norm itself for the others)");
}

void add_norm_flags(FlagParser& p, NormConfig& n) {
  p.group("Norm");
  std::vector<std::string> names;
  std::string help = "the normalization layer, one of:";
  for (const NormKind& k : norm_kinds()) {
    names.push_back(k.name);
    help += "\n  " + k.name + ": " + k.summary;
  }
  p.choice("--norm", n.name, names, help);
  p.custom(
      "--norm-bias", n.bias ? "on" : "off",
      [&n](const std::string& v) {
        NL_CHECK(v == "on" || v == "off", "--norm-bias: unknown value '", v, "' (choose one of: on, off)");
        n.bias = v == "on";
      },
      "beta, the learnt shift of the norms that have one (ln, cbwc, dyt, hardtanh, derf): on | off (Verma's "
      "bias=False)");
  // every option the registered kinds declare, as --<option>, checked against its range
  for (const NormOption& o : norm_options()) {
    const std::string flag = "--" + o.name;
    if (!o.choices.empty()) {
      p.custom(
          flag, n.choice(o.name), [&n, o](const std::string& v) { n.set_choice(o.name, v); }, o.help);
      continue;
    }
    // an option that follows another is unset unless given, so that it keeps following
    const bool own_value = n.options.count(o.name) > 0 || !std::isnan(o.initial);
    const bool is_auto = o.auto_value && own_value && n.option(o.name) == 0;
    p.custom(
        flag,
        is_auto     ? "auto"
        : own_value ? shortest_decimal(n.option(o.name))
                    : "",
        [&n, o, flag](const std::string& v) {
          if (v.empty()) {
            NL_CHECK(std::isnan(o.initial), flag, " needs a value");
            n.options.erase(o.name);
            return;
          }
          if (o.auto_value) {
            if (v == "auto") {
              n.set(o.name, 0);
              return;
            }
            try {
              n.set(o.name, (double)flag_integer(flag, v, (int64_t)o.lo, (int64_t)o.hi));
            } catch (const Error&) {
              fail(flag, " must be auto or an integer in [", (int64_t)o.lo, ", ", (int64_t)o.hi, "], got '", v, "'");
            }
            return;
          }
          const double x = o.integer ? (double)flag_integer(flag, v, (int64_t)o.lo, (int64_t)o.hi)
                                     : flag_real(flag, v, o.lo, o.hi, o.lo_open);
          n.set(o.name, x);
          check_norm_config(n);  // the open upper ends and the integers
        },
        o.help + (o.follows.empty() ? "" : " (default: --" + o.follows + "'s value)"), FlagRole::Recipe,
        /*numeric=*/true);
  }
}

void add_seed_flag(FlagParser& p, uint64_t& seed) {
  p.integer("--seed", seed, 0, INT64_MAX, "seed for initialisation, batches and sampling");
}

void add_schedule_flags(FlagParser& p, TrainConfig& c, int64_t min_steps) {
  p.group("Optimizer and schedule");
  p.integer("--batch", c.batch, 1, kMaxBatch, "examples per step (the global batch over all ranks)");
  p.integer("--steps", c.steps, min_steps, kMaxSteps,
            min_steps == 0 ? "training steps (the schedule's length; 0: from --epochs)"
                           : "training steps (the schedule's length)");
  p.integer("--warmup", c.warmup, 0, kMaxSteps, "linear warmup steps");
  p.positive("--lr", c.lr, 1e35, "peak learning rate");
  p.real("--min-lr", c.min_lr, 0, 1e35, "learning rate at the end of the cosine (at most --lr)");
  p.choice("--schedule", c.schedule, {"cosine", "flat"},
           "after the warmup: cosine from --lr to --min-lr at the last step, or flat at --lr to the end");
  p.real("--wd", c.wd, 0, 1e6, "AdamW weight decay (of the 2-D weights; every parameter with --wd-all)");
  p.toggle("--wd-all", c.wd_all, "weight decay on every parameter (gains, biases, scalars too), as DyT's LLaMA recipe");
  p.real("--beta1", c.beta1, 0, 1, "AdamW's beta1 (in [0, 1))");
  p.real("--beta2", c.beta2, 0, 1, "AdamW's beta2 (in [0, 1))");
  p.real("--clip", c.clip, 0, 1e30, "global gradient-norm clip (0: off)");
  add_seed_flag(p, c.seed);
  p.check([&c] {
    NL_CHECK(c.min_lr <= c.lr, "--min-lr must lie in [0, ", c.lr, "] (--lr), got ", c.min_lr);
    NL_CHECK(c.beta1 < 1.0f, "--beta1 must lie in [0, 1), got ", c.beta1);
    NL_CHECK(c.beta2 < 1.0f, "--beta2 must lie in [0, 1), got ", c.beta2);
  });
}

void add_threads_flag(FlagParser& p, int& threads) {
  p.group("Run");
  p.integer("--threads", threads, 1, kMaxThreads, "CPU threads (OpenMP and OpenBLAS)", FlagRole::Setting);
}

void add_run_flags(FlagParser& p, TrainConfig& c) {
  p.group("Run");
  p.integer("--eval-every", c.eval_every, 1, kMaxSteps, "validate every N steps (and at the last)", FlagRole::Setting);
  add_threads_flag(p, c.threads);
  p.choice("--threads-adapt", c.threads_adapt, {"on", "off"},
           "on: while another process holds a core, try half the threads and keep the faster count (never changes "
           "a result; train/loop/thread_governor.h); off: always --threads",
           FlagRole::Setting);
  add_device_flag(p, c.device, "where the model trains");
  // not recorded: a run rerun from its config.json goes where the new command says
  p.text("--out", c.out_dir, "output directory", FlagRole::Control);
  p.toggle("--resume", c.resume, "continue the run in --out from its checkpoint.safetensors (same recipe)",
           FlagRole::Control);
  p.toggle("--overwrite", c.overwrite, "replace the run in --out: its files are deleted once every check has passed",
           FlagRole::Control);
  // recorded, but not a recipe a resumed run must repeat: the checkpoint holds what it gave
  p.text("--init-from", c.init_from,
         "start from the weights in this safetensors file, or in a run folder's checkpoint.safetensors (the "
         "model's parameter names and shapes; F16 and BF16 read as F32; a fresh optimizer)",
         FlagRole::Setting);
  p.integer("--extend-to", c.extend_to, 0, kMaxSteps,
            "train past --steps to this step at the lr of step --steps held flat (the cosine's end, about --min-lr): "
            "with --resume, a finished run trained further (0: end at --steps)",
            FlagRole::Setting);
  p.integer("--stop-after", c.stop_after, -1, kMaxSteps, "stop after this step, writing the checkpoint (-1: run all)",
            FlagRole::Control);
  p.toggle("--quiet", c.quiet, "no progress lines", FlagRole::Control);
  p.integer("--checkpoint-every", c.safety.checkpoints.every, 0, kMaxSteps,
            "also write the checkpoint every N steps (0: only at the end)", FlagRole::Setting);
  p.integer("--keep-checkpoints", c.safety.checkpoints.keep, 1, 1000,
            "checkpoints kept on disk, the newest included (older: DIR/checkpoint-stepN)", FlagRole::Setting);
  p.custom(
      "--on-nonfinite", to_string(c.safety.on_nonfinite),
      [&c](const std::string& v) { c.safety.on_nonfinite = parse_nonfinite_action(v); },
      "on a NaN/inf loss or gradient: stop (keeping the last checkpoint) | skip the step", FlagRole::Setting);
  p.check([&c] {
    NL_CHECK(!(c.resume && c.overwrite), "--resume continues the run in --out and --overwrite replaces it: give one");
    NL_CHECK(c.extend_to == 0 || c.extend_to >= c.steps, "--extend-to must be 0 or at least --steps ", c.steps,
             ", got ", c.extend_to);
    NL_CHECK(!(c.resume && !c.init_from.empty()),
             "--init-from starts a new run from weights and --resume continues one from its checkpoint: give one");
  });
}

void add_device_flag(FlagParser& p, std::string& device, const std::string& what) {
  p.group("Run");
  p.choice("--device", device, {"cpu", "cuda"}, what + " (cuda needs make CUDA=1 and a GPU)", FlagRole::Setting);
  // refused here, before any data is read or model built, rather than at the first tensor op
  p.check([&device] {
    if (device != "cuda") return;
    NL_CHECK(cuda_built(), "--device cuda: this build has no CUDA (rebuild with make CUDA=1: docs/cuda.md)");
    NL_CHECK(cuda_available(), "--device cuda: this CUDA build found no GPU that answers (nvidia-smi shows what the "
                               "driver sees)");
  });
}

void add_norms_list_flag(FlagParser& p, std::vector<std::string>& norms) {
  p.list("--norms", norms, "the norms to run, one run each (" + norm_choices(", ") + ")");
  p.check([&norms] {
    for (const auto& n : norms) norm_kind(n);
  });
}

void add_data_flag(FlagParser& p, std::string& dir, const std::string& what) {
  p.group("Data");
  p.text("--data", dir, "directory of " + what);
}

}  // namespace nl
