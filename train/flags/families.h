// The families of flags, each setting's flag declared here once, with its range and
// help text; the programs compose the families they need (train/flags/gpt_flags.h,
// vit_flags.h, and the studies' own), so a flag has the same name, check and message in
// every program. A family binds its flags to the fields of a config; the config's
// values are the defaults --help shows. Families that need several flags' values
// (min-lr <= lr, heads dividing dim) add a check that runs after parsing.
#pragma once
#include <string>

#include "nn/norms/norm.h"
#include "train/flags/flag_parser.h"
#include "train/loop/train_config.h"

namespace nl {

// --layers --dim --heads: the transformer trunk, GPT and ViT alike.
void add_trunk_flags(FlagParser& p, int64_t& layers, int64_t& dim, int64_t& heads);

// --norm and each kind's options (nn/norms/*.cpp declare them): --dyt-alpha0
// --dyt-alpha0-attn --dyt-alpha0-mlp --dyt-alpha0-final --dyt-beta --bhyt-lambda
// --bhyt-lambda-attn --bhyt-lambda-mlp --bhyt-p --bhyt-refresh --bhyt-form.
// --help lists each kind with its one-line summary under --norm.
void add_norm_flags(FlagParser& p, NormConfig& norm);
// --final-norm: the kind of the norm before the head (empty: the --norm kind's default).
void add_final_norm_flag(FlagParser& p, std::string& final_norm);

// The optimizer and its schedule: --batch --steps --warmup --lr --min-lr --wd --wd-all
// --beta1 --beta2 --clip --seed. min_steps: the smallest --steps (0 where --epochs can
// set the length).
void add_schedule_flags(FlagParser& p, TrainConfig& c, int64_t min_steps = 1);

// How the run runs and is kept safe: --eval-every --threads --device --out --resume
// --overwrite --init-from --extend-to --stop-after --quiet --checkpoint-every
// --keep-checkpoints --on-nonfinite.
void add_run_flags(FlagParser& p, TrainConfig& c);

// --threads alone, for the programs that train nothing themselves (fold_ln, the studies'
// runners pass it on).
void add_threads_flag(FlagParser& p, int& threads);

// --device cpu|cuda, for the programs that run a model without training it too
// (sample_gpt); cuda is refused at the flag where this build or machine has none.
void add_device_flag(FlagParser& p, std::string& device, const std::string& what);

// --seed alone, for programs that set one seed for many runs.
void add_seed_flag(FlagParser& p, uint64_t& seed);

// --norms A,B,...: the norms a program runs, one run each (compare_vit, the
// benchmarks), each checked against the registry.
void add_norms_list_flag(FlagParser& p, std::vector<std::string>& norms);

// --data: the folder a model's data comes from.
void add_data_flag(FlagParser& p, std::string& dir, const std::string& what);

}  // namespace nl
