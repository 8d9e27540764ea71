#include "train/flags/vit_flags.h"

#include <algorithm>

#include "tensor/error.h"
#include "train/flags/families.h"
#include "train/safety/limits.h"

namespace nl {

void add_vit_model_flags(FlagParser& p, ViTConfig& m) {
  add_trunk_flags(p, m.layers, m.dim, m.heads);
  p.integer("--patch", m.patch, 1, m.image, "patch size in pixels (must divide 28: 4 gives 49 patches, 7 gives 16)");
  add_final_norm_flag(p, m.final_norm);
  add_norm_flags(p, m.norm);
}

void add_vit_run_flags(FlagParser& p, ViTRunConfig& c) {
  add_vit_model_flags(p, c.model);
  add_schedule_flags(p, c, 0);
  p.real("--epochs", c.epochs, 0, 1e6, "training epochs (the schedule's length, rounded up to whole steps)");
  add_data_flag(p, c.data_dir, "the gzipped Fashion-MNIST IDX files");
  p.integer("--split-seed", c.split_seed, 0, INT64_MAX, "seed of the permutation that picks the validation images");
  p.integer("--val-size", c.val_size, 1, kMaxBatch * 64, "training images held out for validation");
  p.integer("--train-images", c.train_images, -1, kMaxBatch * 64,
            "train on only this many of the training images, a seeded random subset (-1: all)");
  p.integer("--crop-pad", c.augment.crop_pad, 0, 8, "augmentation: random crop with this much zero padding (0: off)");
  p.toggle("--flip", c.augment.flip, "augmentation: random horizontal flips");
  p.integer("--eval-batch", c.eval_batch, 1, kMaxBatch, "images per evaluation batch", FlagRole::Setting);
  add_run_flags(p, c);
  p.check([&c] {
    NL_CHECK(c.model.image == 28 && c.model.channels == 1 && c.model.classes == kFashionMnistClasses,
             "vit run: Fashion-MNIST needs image 28, channels 1, classes 10");
    NL_CHECK(c.steps > 0 || c.epochs > 0, "--steps or --epochs must be positive");
    c.model.validate();
    check_memory_estimate(vit_run_memory(c));
  });
}

std::string check_vit_run(const ViTRunConfig& config) { return check_config("train_vit", config, add_vit_run_flags); }

}  // namespace nl
