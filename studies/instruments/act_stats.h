// Per-layer activation statistics of a GPT or a ViT, from one probed forward pass (the
// sites of nn/probe.h), as train_gpt and train_vit write them to DIR/act_stats.csv:
//   step,layer,site,mean,var,rms,max_abs,sat_gt1,sat_gt2,sat_gt3
// One row per layer and site. mean, var (biased), rms and max_abs are over every element
// of the site's tensor: for resid and the norm outputs the (B, T, C) activations, for
// site2_var_approx / site2_var_exact the per-token variances (B, T), so their `mean` is
// the average approximated or exact site-2 variance of that layer. The sat_* columns hold,
// for norms that end in a bounded nonlinearity (NormKind::bounded: the tanh of dyt and
// bhyt, a clip, ...), the fractions of its arguments with |u| > 1, 2, 3
// (studies/instruments/metrics.h), and are empty elsewhere. A last row per step, layer
// -1, site bounded_all, holds the saturation averaged over every such site.
#pragma once
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "nn/vit.h"

namespace nl {

struct ActStat {
  int64_t layer = 0;
  std::string site;
  double mean = 0, var = 0, rms = 0, max_abs = 0;
  bool has_saturation = false;
  std::array<double, 3> saturation{};  // fractions of the bounded argument |u| > 1, 2, 3
};

// The probe: turns each reported tensor into a row at once (it keeps no tensors).
// A "<site>.bounded_arg" report fills the saturation of the row of <site>.
class ActStatsProbe : public ActivationProbe {
 public:
  void record(int64_t layer, const std::string& site, const Tensor& value) override;
  std::vector<ActStat> rows;  // in report order

 private:
  std::map<std::pair<int64_t, std::string>, size_t> index_;
  std::map<std::pair<int64_t, std::string>, std::array<double, 3>> pending_saturation_;
};

// One probed forward of `model` on ids (B, T): eval mode, no graph; restores the mode.
// Returns the rows plus the bounded_all average row when there are bounded sites.
std::vector<ActStat> activation_stats(GPT& model, const Tensor& ids);
// The same for a ViT on images (B, channels, image, image); its ln_f row is the class
// token's alone (the only token the head reads).
std::vector<ActStat> activation_stats(ViT& model, const Tensor& images);

// Statistics of one tensor (double accumulation): what a row holds.
ActStat tensor_stats(const Tensor& t);

// CSV: the header line, and one step's rows.
std::string act_stats_header();
void write_act_stats(std::FILE* out, int64_t step, const std::vector<ActStat>& rows);

// Reads a DIR/act_stats.csv back: (step, row) pairs in file order.
std::vector<std::pair<int64_t, ActStat>> read_act_stats(const std::string& path);

// The row of (layer, site) in rows, or null.
const ActStat* find_stat(const std::vector<ActStat>& rows, int64_t layer, const std::string& site);

// A per-layer table of one step's rows for a terminal (train_gpt prints it at the end).
std::string format_act_stats(const std::vector<ActStat>& rows);

// Pearson correlation of two equally long series (NaN when either is constant).
double pearson(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace nl
