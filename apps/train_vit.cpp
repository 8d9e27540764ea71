// train_vit: trains a ViT on Fashion-MNIST with one of the five norms.
//   build/release/train_vit --norm rms --epochs 3 --out runs/vit-rms
// Bad input (an unknown flag or norm, a shape that does not fit, missing data, a bad
// checkpoint) prints one line naming the problem and exits with code 2.
#include <cstdint>
#include <cstdio>

#include "tensor/threads.h"
#include "train/flags/args.h"
#include "train/safety/flag_checks.h"
#include "train/safety/stop_signals.h"
#include "train/vit/vit_run.h"

using namespace nl;

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  Args args("train_vit", "Train a ViT on Debian's Fashion-MNIST and compare normalization layers.");
  args.add("--norm", "ln", "ln | rms | cbwc | dyt | bhyt | bhyt-exact");
  args.add("--layers", "4", "transformer blocks");
  args.add("--dim", "48", "model width");
  args.add("--heads", "4", "attention heads (must divide --dim)");
  args.add("--patch", "7", "patch size in pixels (must divide 28: 4 gives 49 patches, 7 gives 16)");
  args.add("--batch", "128", "images per step");
  args.add("--epochs", "12", "training epochs (the schedule's length, rounded up to whole steps)");
  args.add("--steps", "0", "train exactly this many steps instead of --epochs (0: use --epochs)");
  args.add("--lr", "3e-3", "peak learning rate");
  args.add("--min-lr", "1e-5", "learning rate at the end of the cosine");
  args.add("--warmup", "100", "linear warmup steps");
  args.add("--wd", "0.1", "AdamW weight decay (2-D weights only)");
  args.add("--clip", "1.0", "global gradient-norm clip (0: off)");
  args.add("--seed", "1337", "seed for initialisation, shuffling and augmentation");
  args.add("--split-seed", "1", "seed of the permutation that picks the validation images");
  args.add("--val-size", "5000", "training images held out for validation");
  args.add("--crop-pad", "0", "augmentation: random crop with this much zero padding (0: off; 2 or 4)");
  args.add_switch("--flip", "augmentation: random horizontal flips");
  args.add("--eval-every", "500", "validate every N steps (on the whole validation split)");
  args.add("--eval-batch", "500", "images per evaluation batch");
  args.add("--threads", "2", "CPU threads (OpenMP and OpenBLAS)");
  args.add("--device", "cpu", "cpu | cuda (needs a build with make CUDA=1 and a GPU)");
  args.add("--dyt-alpha0", "0.5", "DyT's initial alpha");
  args.add("--bhyt-lambda", "1.0", "BHyT's initial lambda");
  args.add("--bhyt-p", "0.99", "BHyT's target probability p (kappa = 1/sqrt(1-p))");
  args.add("--data", kFashionMnistDir, "directory of the gzipped IDX files");
  args.add("--out", "runs/vit", "output directory");
  args.add_switch("--resume", "continue from DIR/checkpoint.safetensors");
  args.add("--stop-after", "-1", "stop after this step, writing the checkpoint (-1: run all)");
  args.add_switch("--quiet", "no progress lines");
  add_run_safety_flags(args);
  try {
    if (!args.parse(argc, argv)) return 0;
    ViTRunConfig c;
    c.model.norm.name = args.str("--norm");
    c.model.layers = args.integer("--layers");
    c.model.dim = args.integer("--dim");
    c.model.heads = args.integer("--heads");
    c.model.patch = args.integer("--patch");
    c.model.norm.dyt_alpha0 = (float)args.real("--dyt-alpha0");
    c.model.norm.bhyt_lambda0 = (float)args.real("--bhyt-lambda");
    c.model.norm.bhyt_p = (float)args.real("--bhyt-p");
    c.batch = args.integer("--batch");
    c.steps = args.integer("--steps");
    c.epochs = args.real("--epochs");
    c.lr = (float)args.real("--lr");
    c.min_lr = (float)args.real("--min-lr");
    c.warmup = args.integer("--warmup");
    c.wd = (float)args.real("--wd");
    c.clip = (float)args.real("--clip");
    c.seed = (uint64_t)args.integer("--seed", 0, INT64_MAX);
    c.split_seed = (uint64_t)args.integer("--split-seed", 0, INT64_MAX);
    c.val_size = args.integer("--val-size");
    c.augment.crop_pad = (int)args.integer("--crop-pad", 0, 8);
    c.augment.flip = args.on("--flip");
    c.eval_every = args.integer("--eval-every");
    c.eval_batch = args.integer("--eval-batch");
    c.threads = (int)args.integer("--threads", 1, kMaxThreads);
    c.device = args.str("--device");
    c.data_dir = args.str("--data");
    c.out_dir = args.str("--out");
    c.resume = args.on("--resume");
    c.stop_after = args.integer("--stop-after");
    c.quiet = args.on("--quiet");
    c.safety = read_run_safety_flags(args);
    install_stop_signals();
    ViTRunResult r = run_vit(c);
    if (const int code = report_run_end("train_vit", r.end)) return code;
    if (r.tested)
      std::printf("done: %lld steps, train loss %.4f, val acc %.2f%%, test loss %.4f, test acc %.2f%%, %.0f img/s%s\n",
                  (long long)r.steps_done, r.final_train_loss, 100.0 * r.val_accuracy, r.test_loss,
                  100.0 * r.test_accuracy, r.images_per_s, r.diverged ? " (DIVERGED: NaN/inf loss)" : "");
    else
      std::printf("stopped after %lld of %lld steps (checkpoint written): train loss %.4f, val acc %.2f%%\n",
                  (long long)r.steps_done, (long long)r.steps, r.final_train_loss, 100.0 * r.val_accuracy);
    return r.diverged ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_vit: error: %s\n", e.what());
    return 2;
  }
}
