// The settings of one ViT training run on Fashion-MNIST: the loop's
// (train/loop/train_config.h), the model's (nn/vit.h) and the image data's. The
// defaults are train_vit's, the recipe `make demo-vit` trains.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/vit.h"
#include "train/data/fashion_mnist.h"
#include "train/loop/train_config.h"
#include "train/safety/limits.h"

namespace nl {

struct ViTRunConfig : TrainConfig {
  ViTConfig model;
  // the schedule's length: `steps` when > 0, else ceil(epochs * training images / batch)
  double epochs = 12;
  uint64_t split_seed = 1;    // which training images form the validation split
  int64_t val_size = 5000;
  int64_t train_images = -1;  // train on only the first N of the training split (-1: all)
  AugmentConfig augment;
  int64_t eval_batch = 500;   // images per evaluation batch
  std::string data_dir = kFashionMnistDir;
  ViTRunConfig() {
    batch = 128, steps = 0, warmup = 100, lr = 3e-3f, min_lr = 1e-5f, eval_every = 500;
    out_dir = "runs/vit";
  }
};

// What a run with these settings holds in memory (train/safety/limits.h): the model's
// state, --batch (what the backward keeps), the evaluation's forward, Fashion-MNIST read
// whole, and the files --resume and --init-from read whole.
std::vector<MemoryTerm> vit_run_memory(const ViTRunConfig& c);

}  // namespace nl
