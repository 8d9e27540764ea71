// The flags of one ViT training run, composed from the families of
// train/flags/families.h plus the ViT's own (the patch size, the image data and its
// augmentation, the schedule in epochs). train_vit and compare_vit take exactly these;
// a config made in code is checked by the same declarations (check_vit_run).
#pragma once
#include "train/flags/flag_parser.h"
#include "train/vit/vit_run_config.h"

namespace nl {

// --patch, the trunk and the norm flags.
void add_vit_model_flags(FlagParser& p, ViTConfig& model);

// The whole run: model, schedule (--steps 0 means: from --epochs), --epochs, run, and
// the data: --data --split-seed --val-size --crop-pad --flip --eval-batch. Its checks
// include the memory the run would need.
void add_vit_run_flags(FlagParser& p, ViTRunConfig& c);

// Runs every check of add_vit_run_flags over c (throws nl::Error naming the flag), and
// returns config.json's text for it: what train_vit would record for this run.
std::string check_vit_run(const ViTRunConfig& c);

}  // namespace nl
