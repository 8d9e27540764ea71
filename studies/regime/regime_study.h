// regime_study: the DyT regime study (Verma 2026, "DyT composition study"; issue 17) at a
// scale two CPU cores can train. A fixed step budget at every training-subset size, so
// that the smallest subset is seen 150+ times and LayerNorm over-fits there while the
// full text is seen about twice (the paper's 1M- and 118M-token regimes); arms LN,
// all-DyT at the paper's alpha0 sweep, the project's hybrid (DyT blocks, LN final norm),
// HardTanh, LN + dropout, optionally Differential Attention and the Llama block; a width
// axis; the ViT arm on Fashion-MNIST. Every run is an ordinary train_gpt / train_vit run
// of the grid (studies/grid/grid.h, --jobs, MPI), measured at step 500 and at the end
// (train_gpt --measure-at); then
//   OUT/results.json           every number (--reuse renders the report from it alone)
//   OUT/regime_*.csv           what the plots draw
//   DOC (docs/results/regime.md)  studies/regime/regime.md.in filled in, plots beside it
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/grid/run_spec.h"

namespace nl {

// What the grid trains: the GPT arms at every size and the base width, the width axis
// (width_arms at each other width, on the smallest and largest size), and the ViT arms
// at each image count; each once per seed. A size or image count of -1 is "all".
struct RegimePlan {
  std::vector<RunSpec> arms;
  std::vector<int64_t> sizes, seeds;
  int64_t steps = 5000, width = 128;
  std::vector<int64_t> widths;          // the width axis (the base width is always there)
  std::vector<std::string> width_arms;  // labels of arms the width axis trains
  std::vector<RunSpec> vit_arms;
  std::vector<int64_t> vit_images;
  int64_t vit_steps = 3000;
  // the Llama + DyT collapse arms (issue 17, item 6), on the smallest and largest size
  // at the base width, with their own (more) seeds
  std::vector<RunSpec> llama_arms;
  std::vector<int64_t> llama_seeds;
};

// One run of the grid.
struct RegimeCell {
  std::string model;  // "gpt" or "vit"
  RunSpec arm;
  int64_t size = -1;  // training bytes (gpt) or images (vit); -1: all
  int64_t width = 0;  // gpt only
  int64_t seed = 0;
  bool llama = false;  // one of the collapse arms
  std::string folder() const;  // relative to the study's folder: gpt/w128/30K/ln/s1337
};
std::vector<RegimeCell> regime_cells(const RegimePlan& plan);

// The GPT arms' labels of --grid full (its arms and the Llama arms), in the grid's order:
// the report names those a grid lacks.
std::vector<std::string> full_grid_gpt_labels();

// "30K", "2.3M", "all"; images "1000", "all".
std::string size_label(int64_t size);
// a cell without its seed, as --dry-run and the report's not-run list name it: "gpt w128 30K ln", "vit ln 1K images"
std::string cell_kind(const RegimeCell& cell);

// A Differential Attention cell's cost over a plain one of the same width (measured:
// 609 s against 397-413 s, the default grid of 2026-12-02).
constexpr double kDiffAttentionCost = 1.5;

// The share of a width-128 step spent in work that grows as the matrix products'
// arithmetic (about d^2); the rest (norms, activations, softmax, optimizer, per-op
// overhead) grows about as d. Fitted to steps measured on 2026-12-02, two widths at a time
// (`train_gpt --dim D --steps 200 --warmup 10 --eval-every 1000 --eval-batches 1
// --threads 1 --threads-adapt off --act-stats-every 0 --batch 16 --seq 64` under
// /usr/bin/time, D = 128 beside 256, then 64 beside 128): 5.9 s (width 64) against 14.5 s
// (128), and 43.2 s (256) against 15.8 s (128): ratios 0.41 and 2.74, which this share
// gives as 0.42 and 2.72; the width-64 grid's cells took 171-173 s against 397-417 s.
// Arithmetic alone (a share of 1) priced width 64 at 0.29 and width 256 at 3.92.
constexpr double kMatmulShare = 0.38;

// Estimated seconds of one cell on one thread: `step_ms` per step of the 4-layer width-128
// GPT at batch 16 x 64 (or the ViT's), scaled for other widths by kMatmulShare and by
// kDiffAttentionCost for `--attn diff`, plus its evaluations and measurements.
double cell_seconds(const RegimeCell& cell, int64_t steps, double gpt_step_ms, double vit_step_ms);

int regime_study_main(const std::vector<std::string>& args);

}  // namespace nl
