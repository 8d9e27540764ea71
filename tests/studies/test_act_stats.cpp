// Tests of the activation statistics (studies/instruments/act_stats.h): the rows of a probed forward
// against statistics the test computes itself from the model's intermediate tensors (an
// rms GPT; a bhyt GPT with its approximated and exact site-2 variances and its pre-tanh
// saturation, by hand), the saturation of a DyT model whose inputs are built so that a
// known fraction saturates, the CSV round trip, Pearson's r, and run_gpt's act_stats.csv
// (steps 0, K, 2K, ..., the end; a resumed run's file and losses equal a straight run's,
// bhyt's c_attn cache included).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "tensor/threads.h"
#include "tests/needs.h"
#include "tests/nn/capture.h"
#include "tests/nn/model_fixtures.h"
#include "tests/nn/vit_fixtures.h"
#include "tests/nn/naive_layers.h"
#include "tests/test_files.h"
#include "tests/test_util.h"
#include "studies/instruments/act_stats.h"
#include "studies/instruments/act_stats_observer.h"
#include "train/gpt/gpt_run.h"

using namespace nl;
using nl::test::ThreadCountGuard;
using nl::test::to_d;
using nl::test::read_bytes;
using nl::test::TempDir;
namespace fs = std::filesystem;

namespace {

struct Expected {
  double mean = 0, var = 0, rms = 0, max_abs = 0;
};

// mean, biased variance, RMS and max |v| over all values, in double
Expected stats_by_hand(const std::vector<double>& v) {
  Expected e;
  for (double x : v) e.mean += x, e.rms += x * x, e.max_abs = std::max(e.max_abs, std::fabs(x));
  e.mean /= (double)v.size();
  e.rms = std::sqrt(e.rms / (double)v.size());
  for (double x : v) e.var += (x - e.mean) * (x - e.mean);
  e.var /= (double)v.size();
  return e;
}

std::array<double, 3> saturation_by_hand(const std::vector<double>& u) {
  std::array<double, 3> f{0, 0, 0};
  for (double x : u)
    for (int k = 0; k < 3; ++k) f[k] += std::fabs(x) > (double)(k + 1);
  for (double& x : f) x /= (double)u.size();
  return f;
}

void check_row(const std::vector<ActStat>& rows, int64_t layer, const std::string& site, const Expected& e) {
  INFO("layer " << layer << ", site " << site);
  const ActStat* r = find_stat(rows, layer, site);
  REQUIRE(r);
  CHECK(r->mean == Approx(e.mean).epsilon(1e-4).margin(1e-7));
  CHECK(r->var == Approx(e.var).epsilon(1e-4).margin(1e-9));
  CHECK(r->rms == Approx(e.rms).epsilon(1e-4));
  CHECK(r->max_abs == Approx(e.max_abs).epsilon(1e-5));
}

GPTConfig tiny(const std::string& norm, int64_t layers) { return nl::test::gpt_config(16, layers, 8, 2, 6, norm); }

void scramble(GPT& model, Generator& gen) {
  for (auto& [name, p] : model.named_parameters()) {
    const bool gain = name.find("ln") != std::string::npos && name.find("bias") == std::string::npos;
    const float sd = name.rfind("wte", 0) == 0 || name.rfind("wpe", 0) == 0 ? 0.8f : 0.3f;
    p.value().copy_from(add_scalar(gen.normal(p.shape(), 0.0f, sd), gain ? 1.0f : 0.0f));
  }
}

// x = wte[ids] + wpe[t] by loops, (B, T, C)
Tensor embed_by_hand(const GPT& model, const std::vector<int32_t>& ids, int64_t B, int64_t T) {
  const int64_t C = model.config.dim;
  auto wte = model.wte->weight.value().to_vector(), wpe = model.wpe->weight.value().to_vector();
  std::vector<float> x(B * T * C);
  for (int64_t r = 0; r < B * T; ++r)
    for (int64_t e = 0; e < C; ++e) x[r * C + e] = wte[ids[r] * C + e] + wpe[(r % T) * C + e];
  return Tensor::from_vector(x, {B, T, C});
}

}  // namespace

TEST_CASE("act_stats: tensor statistics of a hand example", "[act_stats]") {
  // (1, -2, 3, -4): mean -0.5; deviations 1.5, -1.5, 3.5, -3.5 -> var 29/4; ms 30/4
  ActStat s = tensor_stats(Tensor::from_vector({1, -2, 3, -4}, {2, 2}));
  CHECK(s.mean == Approx(-0.5));
  CHECK(s.var == Approx(7.25));
  CHECK(s.rms == Approx(std::sqrt(7.5)));
  CHECK(s.max_abs == 4.0);
  // a large common offset does not swamp the variance
  ActStat o = tensor_stats(Tensor::from_vector({1000.5f, 999.5f, 1000.5f, 999.5f}, {4}));
  CHECK(o.var == Approx(0.25).epsilon(1e-6));
}

TEST_CASE("act_stats: an rms GPT's rows equal statistics of its intermediate tensors", "[act_stats]") {
  Generator init91(91);
  GPT model(tiny("rms", 2), init91);
  Generator gen(92);
  scramble(model, gen);
  const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  Tensor ids_t = Tensor::from_ints(ids, {2, 6});
  std::vector<ActStat> rows = activation_stats(model, ids_t);
  CHECK(model.training());  // the mode is restored

  NoGradGuard ng;
  Var x(embed_by_hand(model, ids, 2, 6));
  size_t expected_rows = 0;
  for (int64_t l = 0; l < 2; ++l) {
    const Block& b = *model.blocks[l];
    check_row(rows, l, "resid", stats_by_hand(to_d(x.value())));
    Var n1 = b.ln1->forward(x);
    check_row(rows, l, "ln1", stats_by_hand(to_d(n1.value())));
    Var h = ag::add(x, b.attn->forward(n1));
    check_row(rows, l, "ln2", stats_by_hand(to_d(b.ln2->forward(h).value())));
    x = b.forward(x);
    expected_rows += 3;
  }
  check_row(rows, 2, "resid", stats_by_hand(to_d(x.value())));
  check_row(rows, 2, "ln_f", stats_by_hand(to_d(model.ln_f->forward(x).value())));
  expected_rows += 2;
  CHECK(rows.size() == expected_rows);  // no saturation rows, no site-2 rows for rms
  for (const ActStat& r : rows) CHECK_FALSE(r.has_saturation);

  // the probe is detached afterwards: a plain forward reports nothing
  for (const auto& b : model.blocks) CHECK(b->probe == nullptr);
}

// The ViT goes through the same probe: its blocks' sites, the stream leaving the last
// block, and ln_f on the class token, the only token its head reads; with a final norm of
// another kind (--final-norm) the saturation is that kind's.
TEST_CASE("act_stats: a ViT's rows, ln_f on the class token, with a final norm of another kind", "[act_stats]") {
  ViTConfig c = nl::test::tiny_config("dyt");
  c.layers = 2;
  c.final_norm = "rms";
  Generator init(93), gen(94);
  ViT model(c, init);
  nl::test::scramble(model, gen);
  const Tensor images = gen.normal({3, 1, 8, 8});
  const std::vector<ActStat> rows = activation_stats(model, images);
  CHECK(model.training());
  for (int64_t l = 0; l < c.layers; ++l)
    for (const char* site : {"resid", "ln1", "ln2"}) {
      INFO("layer " << l << " " << site);
      const ActStat* s = find_stat(rows, l, site);
      REQUIRE(s);
      CHECK(s->has_saturation == (std::string(site) != "resid"));  // dyt's tanh at ln1, ln2
    }
  NoGradGuard ng;
  nl::test::Capture cap;
  model.set_probe(&cap);
  model.forward(Var(images));
  model.set_probe(nullptr);
  const Tensor stream = cap.seen.at({c.layers, "resid"});
  const Var token = ag::reshape(ag::slice(Var(stream), 1, 0, 1), {3, c.dim});
  const ActStat* f = find_stat(rows, c.layers, "ln_f");
  REQUIRE(f);
  CHECK_FALSE(f->has_saturation);  // an RMSNorm
  check_row(rows, c.layers, "ln_f", stats_by_hand(to_d(model.ln_f->forward(token).value())));
  REQUIRE(find_stat(rows, -1, "bounded_all"));
}

TEST_CASE("act_stats: bhyt site-2 variances (approximated, exact) and pre-tanh saturation by hand",
          "[act_stats]") {
  const double kappa = 10.0, eps = 1e-5;
  Generator init93(93);
  GPTConfig c = tiny("bhyt", 2);
  c.final_norm = "bhyt";  // a BHyT before the head too, so that ln_f's saturation is measured
  GPT model(c, init93);
  Generator gen(94);
  scramble(model, gen);
  // large lambdas, so that a good share of the pre-tanh arguments exceeds 1, 2 and 3
  for (auto& [name, p] : model.named_parameters())
    if (name.find("lambda") != std::string::npos)
      p.value().fill_(name.find("ln1") != std::string::npos ? 25.0f : 18.0f);
  const std::vector<int32_t> ids = {0, 7, 7, 2, 9, 12, 4, 4, 1, 15, 3, 3};
  std::vector<ActStat> rows = activation_stats(model, Tensor::from_ints(ids, {2, 6}));

  NoGradGuard ng;
  const int64_t C = 8, N = 12, T = 6;
  Var x(embed_by_hand(model, ids, 2, 6));
  std::vector<std::array<double, 3>> tanh_sites;
  for (int64_t l = 0; l < 2; ++l) {
    INFO("layer " << l);
    const Block& b = *model.blocks[l];
    const auto& s1 = static_cast<const BHyT&>(*b.ln1);
    const auto& s2 = static_cast<const BHyT&>(*b.ln2);
    auto xd = to_d(x.value());
    Var h = ag::add(x, b.attn->forward(b.ln1->forward(x)));
    auto hd = to_d(h.value());
    // c_attn = ||W_V W_O||_F^2 / (T d), by loops over the Linear weights (out, in)
    const double fro2 = nl::test::frobenius2_by_hand(*b.attn);
    const double lambda1 = s1.lambda.value().item(), lambda2 = s2.lambda.value().item();
    const double added = fro2 / (double)(T * C) * lambda1 * lambda1 / (kappa * kappa);
    std::vector<double> approx(N), exact(N), u1(N * C), u2(N * C);
    for (int64_t r = 0; r < N; ++r) {
      double mx = 0, vx = 0, mh = 0, vh = 0;
      for (int64_t e = 0; e < C; ++e) mx += xd[r * C + e], mh += hd[r * C + e];
      mx /= C;
      mh /= C;
      for (int64_t e = 0; e < C; ++e) {
        vx += (xd[r * C + e] - mx) * (xd[r * C + e] - mx);
        vh += (hd[r * C + e] - mh) * (hd[r * C + e] - mh);
      }
      vx /= C;
      vh /= C;
      approx[r] = vx + added;
      exact[r] = vh;
      const double d1 = kappa * std::sqrt(vx + eps) + std::fabs(mx);
      const double d2 = kappa * std::sqrt(vx + added + eps) + std::fabs(mx);
      for (int64_t e = 0; e < C; ++e) {
        u1[r * C + e] = lambda1 * xd[r * C + e] / d1;
        u2[r * C + e] = lambda2 * hd[r * C + e] / d2;
      }
    }
    check_row(rows, l, "site2_var_approx", stats_by_hand(approx));
    check_row(rows, l, "site2_var_exact", stats_by_hand(exact));
    for (auto [site, u] : {std::make_pair("ln1", u1), std::make_pair("ln2", u2)}) {
      INFO(site);
      const ActStat* r = find_stat(rows, l, site);
      REQUIRE(r);
      REQUIRE(r->has_saturation);
      auto want = saturation_by_hand(u);
      for (int k = 0; k < 3; ++k) CHECK(r->saturation[k] == Approx(want[k]).margin(1e-9));
      tanh_sites.push_back(want);
    }
    x = b.forward(x);
  }
  const auto& f = static_cast<const BHyT&>(*model.ln_f);
  tanh_sites.push_back(saturation_by_hand(to_d(f.bounded_arg_value(x.value()))));
  // the saturation is not trivially 0 or 1 at these lambdas
  CHECK(tanh_sites[0][0] > 0.05);
  CHECK(tanh_sites[0][2] < 0.95);
  const ActStat* avg = find_stat(rows, -1, "bounded_all");
  REQUIRE(avg);
  for (int k = 0; k < 3; ++k) {
    double m = 0;
    for (const auto& s : tanh_sites) m += s[k] / (double)tanh_sites.size();
    CHECK(avg->saturation[k] == Approx(m).margin(1e-9));
  }
}

TEST_CASE("act_stats: DyT saturation with alpha set so that a known fraction saturates", "[act_stats]") {
  // Every token's embedding is the same row (wpe = 0): x = (-1.5, -1, -0.6, -0.2, 0.2, 0.5,
  // 0.9, 1.3); with alpha = 2.5, |alpha x| = 3.75, 2.5, 1.5, 0.5, 0.5, 1.25, 2.25, 3.25:
  // 6, 4 and 2 of 8 exceed 1, 2 and 3.
  Generator init95(95);
  GPT model(tiny("dyt", 1), init95);
  const std::vector<float> row = {-1.5f, -1.0f, -0.6f, -0.2f, 0.2f, 0.5f, 0.9f, 1.3f};
  std::vector<float> table;
  for (int v = 0; v < 16; ++v) table.insert(table.end(), row.begin(), row.end());
  model.wte->weight.value().copy_from(Tensor::from_vector(table, {16, 8}));
  model.wpe->weight.value().fill_(0.0f);
  static_cast<DyT&>(*model.blocks[0]->ln1).alpha.value().fill_(2.5f);
  std::vector<ActStat> rows = activation_stats(model, Tensor::from_ints({1, 2, 3, 4, 5, 6}, {1, 6}));
  const ActStat* r = find_stat(rows, 0, "ln1");
  REQUIRE(r);
  REQUIRE(r->has_saturation);
  CHECK(r->saturation[0] == 0.75);
  CHECK(r->saturation[1] == 0.5);
  CHECK(r->saturation[2] == 0.25);

  // statistically: x ~ N(0, 1) and alpha 1 give P(|x| > 2) = 0.0455 (NORMS.md), and
  // P(|x| > 1) = 0.3173, P(|x| > 3) = 0.0027, within 5 standard errors over 256 x 64 values
  GPTConfig c = tiny("dyt", 1);
  c.vocab = 256;
  c.dim = 64;
  c.context = 64;
  Generator init96(96);
  GPT big(c, init96);
  Generator gen(97);
  big.wte->weight.value().copy_from(gen.normal({256, 64}));
  big.wpe->weight.value().fill_(0.0f);
  static_cast<DyT&>(*big.blocks[0]->ln1).alpha.value().fill_(1.0f);
  std::vector<int32_t> all(256);
  for (int i = 0; i < 256; ++i) all[i] = i;  // every row of the table once
  std::vector<ActStat> big_rows = activation_stats(big, Tensor::from_ints(all, {4, 64}));
  const ActStat* b = find_stat(big_rows, 0, "ln1");
  REQUIRE(b);
  const double n = 256.0 * 64.0;
  const double p[3] = {0.3173, 0.0455, 0.0027};
  for (int k = 0; k < 3; ++k) {
    INFO("|x| > " << k + 1 << ": " << b->saturation[k] << " vs " << p[k]);
    CHECK(std::fabs(b->saturation[k] - p[k]) <= 5 * std::sqrt(p[k] * (1 - p[k]) / n));
  }
}

TEST_CASE("act_stats: the CSV round trip keeps every value", "[act_stats]") {
  std::vector<ActStat> rows(3);
  rows[0].layer = 0;
  rows[0].site = "resid";
  rows[0].mean = -1.25e-3;
  rows[0].var = 2.5;
  rows[0].rms = 1.6;
  rows[0].max_abs = 7.0;
  rows[1].layer = 3;
  rows[1].site = "ln2";
  rows[1].mean = 0.1;
  rows[1].var = 0.2;
  rows[1].rms = 0.3;
  rows[1].max_abs = 0.4;
  rows[1].has_saturation = true;
  rows[1].saturation = {0.5, 0.25, 0.125};
  rows[2].layer = -1;
  rows[2].site = "bounded_all";
  rows[2].mean = rows[2].var = rows[2].rms = rows[2].max_abs = NAN;
  rows[2].has_saturation = true;
  rows[2].saturation = {0.1, 0.01, 0.001};
  TempDir tmp;
  const std::string path = tmp.sub("a.csv");
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fprintf(f, "%s\n", act_stats_header().c_str());
  write_act_stats(f, 40, rows);
  std::fclose(f);
  auto back = read_act_stats(path);
  REQUIRE(back.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    INFO("row " << i);
    CHECK(back[i].first == 40);
    CHECK(back[i].second.layer == rows[i].layer);
    CHECK(back[i].second.site == rows[i].site);
    CHECK(back[i].second.has_saturation == rows[i].has_saturation);
    if (i < 2) {
      CHECK(back[i].second.mean == Approx(rows[i].mean));
      CHECK(back[i].second.max_abs == Approx(rows[i].max_abs));
    } else {
      CHECK(std::isnan(back[i].second.mean));
    }
    for (int k = 0; k < 3; ++k) CHECK(back[i].second.saturation[k] == Approx(rows[i].saturation[k]));
  }
}

TEST_CASE("act_stats: Pearson's r of hand examples", "[act_stats]") {
  CHECK(pearson({1, 2, 3}, {2, 4, 6}) == Approx(1.0));
  CHECK(pearson({1, 2, 3}, {3, 2, 1}) == Approx(-1.0));
  // (1,2,3,4) vs (1,3,2,4): deviations (-1.5,-.5,.5,1.5), (-1.5,.5,-.5,1.5): 4 / sqrt(5 * 5)
  CHECK(pearson({1, 2, 3, 4}, {1, 3, 2, 4}) == Approx(0.8));
  CHECK(std::isnan(pearson({1, 1, 1}, {1, 2, 3})));
  CHECK_THROWS_AS(pearson({1, 2}, {1}), Error);
}

TEST_CASE("run_gpt: act_stats.csv at steps 0, K, 2K and the end; a resume continues it exactly, bhyt's "
          "c_attn cache included",
          "[act_stats][train][needs-fortunes]") {
  REQUIRE_RESOURCE(nl::test::missing_fortunes());
  ThreadCountGuard keep;
  TempDir tmp;
  auto config = [&](const std::string& dir) {
    GPTRunConfig c;
    c.model = nl::test::gpt_config(256, 2, 16, 2, 8, "bhyt");
    c.model.norm.set("bhyt-refresh", 4);  // the cache is stale at the stop: resuming must restore it
    c.batch = 4;
    c.steps = 11;
    c.warmup = 2;
    c.lr = 3e-3f;
    c.eval_every = 3;  // evaluations at the stop too: a stopped run evaluates at its last step
    c.eval_batches = 1;
    c.eval_batch_size = 4;
    c.sample_bytes = 10;
    c.out_dir = dir;
    c.quiet = true;
    c.threads = 1;
    return c;
  };
  const ActStatsSettings every3{3, 4};
  ActStatsRecord record;
  GPTRunResult ra = run_gpt(config(tmp.sub("A")), act_stats_observer(every3, &record));
  auto stats = read_act_stats(tmp.sub("A") + "/act_stats.csv");
  std::vector<int64_t> steps;
  for (const auto& [step, row] : stats)
    if (steps.empty() || steps.back() != step) steps.push_back(step);
  CHECK(steps == std::vector<int64_t>{0, 3, 6, 9, 11});
  // per step: resid for 3 layers' inputs + output, ln1 and ln2, 2 site-2 rows per block,
  // ln_f, and the saturation average
  size_t per_step = 0;
  for (const auto& [step, row] : stats) per_step += step == 0;
  CHECK(per_step == 3 + 2 * 2 + 2 * 2 + 1 + 1);
  CHECK(record.last.size() == per_step);
  CHECK(record.step == 11);
  CHECK(record.seconds > 0);
  CHECK(record.seconds < ra.wall_s);

  GPTRunConfig first = config(tmp.sub("B"));
  first.stop_after = 6;  // 6 % 4 != 0: the cached ||W_V W_O||^2 dates from step 4
  run_gpt(first, act_stats_observer(every3));
  GPTRunConfig second = config(tmp.sub("B"));
  second.resume = true;
  GPTRunResult rb = run_gpt(second, act_stats_observer(every3));
  CHECK(rb.final_train_loss == ra.final_train_loss);
  CHECK(read_bytes(tmp.sub("B") + "/act_stats.csv") == read_bytes(tmp.sub("A") + "/act_stats.csv"));
  // log.csv equal but for the tok/s column
  auto without_speed = [&](const std::string& path) {
    std::ifstream in(path);
    std::string line, out;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      std::string item;
      while (std::getline(ss, item, ',')) f.push_back(item);
      for (size_t k = 0; k < f.size(); ++k)
        if (k != 5) out += f[k] + ",";
      out += "\n";
    }
    return out;
  };
  CHECK(without_speed(tmp.sub("B") + "/log.csv") == without_speed(tmp.sub("A") + "/log.csv"));
}
