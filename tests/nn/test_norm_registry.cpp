// The checks every registered norm kind gets (nn/norms/registry.h). Each check is one
// test case per kind, registered when the test binary starts and named
// "norm <kind>: <check>", so that a kind added to nn/norms/kinds.def is checked with no
// line of test written for it, and `make test FILTER=<kind>` runs all of its checks:
//   its forward (a fused kernel pair, when it has one) equals its composite, values and
//   gradients; the composite's gradients match finite differences; shapes, and finite
//   outputs and gradients on tiny, zero, large and constant inputs; its wiring in the
//   pre, peri and lns blocks; a GPT's and a ViT's
//   parameter names, a checkpoint round trip and the model description (which names no
//   option of another kind); a run stopped
//   and resumed equals a straight one; the key/value cache; causality; the activation
//   statistics of its bounded nonlinearity (when it declares one); the fold pass's view
//   of it against the numbers; --norm and its option flags in train_gpt.
// The registry's own declarations are checked by the plain test cases at the end.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/fold.h"
#include "nn/gpt.h"
#include "nn/model_json.h"
#include "nn/norms/registry.h"
#include "nn/vit.h"
#include "studies/instruments/act_stats.h"
#include "studies/instruments/metrics.h"
#include "tensor/decimal.h"
#include "tensor/ops.h"
#include "tensor/threads.h"
#include "tests/nn/block_config.h"
#include "tests/nn/capture.h"
#include "tests/nn/model_fixtures.h"
#include "tests/nn/vit_fixtures.h"
#include "tests/param_gradcheck.h"
#include "tests/test_files.h"
#include "tests/test_util.h"
#include "train/gpt/gpt_run.h"
#include "train/io/checkpoint.h"

using namespace nl;
using namespace nl::test;
namespace fs = std::filesystem;

namespace {

NormConfig config_of(const NormKind& kind) {
  NormConfig c;
  c.name = kind.name;
  return c;
}

// Moves every parameter off its initialisation (unit gains, zero biases and shifts),
// where a dropped or swapped term shows: v (1 + u) + n, u ~ U(-0.3, 0.3), n ~ N(0, 0.1).
void perturb_scale_and_shift(const Module& m, Generator& gen) {
  for (auto& [name, p] : m.named_parameters()) {
    Tensor& v = p.value();
    v.copy_from(add(mul(v, add_scalar(gen.uniform(v.shape(), -0.3f, 0.3f), 1.0f)), gen.normal(v.shape(), 0.0f, 0.1f)));
  }
}

// The kind's default settings, then one setting per other choice of each of its text
// options (bhyt-form code, dyt-beta off): each choice builds another layer, and each
// gets the layer checks.
std::vector<std::pair<std::string, NormConfig>> settings_of(const NormKind& kind) {
  std::vector<std::pair<std::string, NormConfig>> out = {{"defaults", config_of(kind)}};
  for (const NormOption& o : kind.options)
    for (size_t i = 0; i < o.choices.size(); ++i) {
      NormConfig c = config_of(kind);
      if ((double)i == c.option(o.name)) continue;
      c.set_choice(o.name, o.choices[i]);
      out.push_back({"--" + o.name + " " + o.choices[i], c});
    }
  return out;
}

std::shared_ptr<Norm> perturbed_norm(const NormConfig& config, int64_t dim, Generator& gen) {
  auto norm = make_norm(config, dim);
  perturb_scale_and_shift(*norm, gen);
  return norm;
}

// The final norm's settings: the blocks' settings with the kind it builds at ln_f.
NormConfig final_config_of(const NormConfig& blocks) {
  NormConfig c = blocks;
  c.name = final_norm_kind(blocks.name, "");
  return c;
}

bool all_finite(const Tensor& t) {
  for (float v : t.to_vector())
    if (!std::isfinite(v)) return false;
  return true;
}

// Redraws the elements of x whose bounded argument lies within `margin` of a kink of
// the kind's nonlinearity (a clip's +-1): a finite difference across a kink measures
// neither one-sided derivative. Returns false when 100 rounds do not clear them.
bool away_from_kinks(const NormKind& kind, const Norm& norm, Tensor& x, Generator& gen, double margin) {
  if (kind.bounded.kinks.empty()) return true;
  for (int round = 0; round < 100; ++round) {
    const std::vector<float> u = norm.bounded_arg_value(x).to_vector();
    const std::vector<float> fresh = gen.normal(x.shape(), 0.0f, 1.5f).to_vector();
    float* data = x.data();
    bool clear = true;
    for (size_t i = 0; i < u.size(); ++i)
      for (double kink : kind.bounded.kinks)
        if (std::fabs(u[i] - kink) < margin) {
          data[i] = fresh[i];
          clear = false;
        }
    if (clear) return true;
  }
  return false;
}

// Output, input gradient and parameter gradients of one pass with upstream gradient `up`.
struct Pass {
  Tensor y, dx;
  std::vector<Tensor> dparams;
  std::string root_op;
};

Pass run_pass(Norm& norm, const Tensor& x, const Tensor& up, bool fused) {
  norm.zero_grad();
  Var xv(x.clone(), true);
  Var y = fused ? norm.forward(xv) : norm.composite(xv);
  Pass p;
  p.root_op = y.node() ? y.node()->op : "";
  y.backward(up);
  p.y = y.value();
  p.dx = xv.grad();
  for (auto& [name, param] : norm.named_parameters()) p.dparams.push_back(param.grad().clone());
  return p;
}

struct GPTFixture {
  GPTConfig config;
  Generator gen{77};
  std::unique_ptr<GPT> model;
  explicit GPTFixture(const NormKind& kind, int64_t layers = 2, const std::string& block = "pre") {
    config = gpt_config(32, layers, 16, 2, 8, kind.name, block);
    if (block == "llama") {  // what --block llama implies (train/flags/gpt_flags.cpp)
      config.mlp = "swiglu";
      config.bias = false;
      config.tied_head = false;
    }
    config.norm = config_of(kind);
    model = std::make_unique<GPT>(config, gen);
    perturb_scale_and_shift(*model, gen);
  }
};

// ---------------------------------------------------------------------------- checks

void forward_equals_composite(const NormKind& kind) {
  for (const auto& [setting, config] : settings_of(kind)) {
    INFO("settings: " << setting);
    Generator gen(11);
    const int64_t C = 16;
    auto norm = perturbed_norm(config, C, gen);
    Tensor x = add_scalar(gen.normal({2, 5, C}, 0.0f, 1.5f), 0.3f);  // off-centre tokens
    Tensor up = gen.normal({2, 5, C});
    const Pass fused = run_pass(*norm, x, up, true), composite = run_pass(*norm, x, up, false);
    if (kind.fused_ops.empty()) {
      INFO("a kind without fused_ops runs its composite: forward must record the composite's ops");
      CHECK(fused.root_op == composite.root_op);
    } else {
      INFO("forward records '" << fused.root_op << "', which the kind's fused_ops must list");
      CHECK(std::count(kind.fused_ops.begin(), kind.fused_ops.end(), fused.root_op) == 1);
    }
    CHECK_CLOSE(fused.y, composite.y, 1e-4, 1e-5);
    CHECK_CLOSE(fused.dx, composite.dx, 1e-4, 1e-5);
    const auto params = norm->named_parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      INFO("gradient of " << params[i].first);
      CHECK_CLOSE(fused.dparams[i], composite.dparams[i], 1e-4, 1e-5);
    }
  }
}

void composite_gradcheck(const NormKind& kind) {
  for (const auto& [setting, config] : settings_of(kind)) {
    INFO("settings: " << setting);
    Generator gen(12);
    const int64_t C = 8;
    auto norm = perturbed_norm(config, C, gen);
    Tensor x = add_scalar(gen.normal({2, 3, C}, 0.0f, 1.5f), 0.3f);
    REQUIRE(away_from_kinks(kind, *norm, x, gen, 0.1));
    CHECK_GRADCHECK(gradcheck([&](const std::vector<Var>& v) { return norm->composite(v[0]); }, {x}));

    const Tensor r = gen.normal(x.shape());
    auto loss = [&] {
      NoGradGuard no_graph;
      const std::vector<float> y = norm->composite(Var(x)).value().to_vector(), w = r.to_vector();
      double s = 0;
      for (size_t i = 0; i < y.size(); ++i) s += (double)y[i] * w[i];
      return s;
    };
    if (norm->named_parameters().empty()) {
      WARN("norm " << kind.name << " (" << setting << ") has no parameters: no parameter gradient to check");
      continue;
    }
    norm->zero_grad();
    norm->composite(Var(x)).backward(r);
    CHECK(check_parameter_gradients(*norm, loss, gen, 4, kind.name) > 0);
  }
}

void shapes_and_hard_inputs_with(const NormKind& kind, const NormConfig& config) {
  Generator gen(13);
  const int64_t C = 16;
  auto norm = perturbed_norm(config, C, gen);
  struct Input {
    const char* what;
    Tensor x;
  };
  const std::vector<Input> inputs = {
      {"tokens (5, C)", gen.normal({5, C})},
      {"tiny, 1e-6", gen.normal({2, 3, C}, 0.0f, 1e-6f)},
      {"zero", Tensor::zeros({2, 3, C})},
      {"large, 1e4", gen.normal({2, 3, C}, 0.0f, 1e4f)},
      {"constant tokens of 1e3", Tensor::full({2, 3, C}, 1e3f)},
      {"large offset 1e4, spread 1", add_scalar(gen.normal({2, 3, C}), 1e4f)},
  };
  for (const Input& in : inputs)
    for (bool fused : {true, false}) {
      INFO(in.what << (fused ? ", forward" : ", composite"));
      const Pass p = run_pass(*norm, in.x, gen.normal(in.x.shape()), fused);
      CHECK(p.y.shape() == in.x.shape());
      CHECK(all_finite(p.y));
      CHECK(all_finite(p.dx));
      for (const Tensor& g : p.dparams) CHECK(all_finite(g));
      if (kind.ends_bounded()) {
        const Tensor u = norm->bounded_arg_value(in.x);
        REQUIRE(u.defined());
        CHECK(u.shape() == in.x.shape());
      }
    }
  if (!kind.ends_bounded()) CHECK_FALSE(norm->bounded_arg_value(inputs[0].x).defined());
}

void shapes_and_hard_inputs(const NormKind& kind) {
  for (const auto& [setting, config] : settings_of(kind)) {
    INFO("settings: " << setting);
    shapes_and_hard_inputs_with(kind, config);
  }
}

// Every block variant (nn/block.h) wires the layer as defined, at each of its sites:
//   pre   h = x + Attn(N1(x)),          out = h + MLP(N2(h))
//   peri  h = x + N1o(Attn(N1(x))),     out = h + N2o(MLP(N2(h)))
//   lns   pre with each norm output of layer l times 1/sqrt(l)
// except a second site its kind replaces by a block-level approximation (bhyt's).
void block_variants(const NormKind& kind) {
  for (const std::string& variant : block_names()) {
    INFO("variant " << variant);
    Generator g(16), gen(17);
    Block b(block_config(8, 2, true, config_of(kind), 4, variant, 3), g);
    perturb_scale_and_shift(b, gen);
    if (b.approximates_site2()) {
      CHECK((kind.approximates_site2 && variant != "peri"));
      continue;
    }
    const Var x(add_scalar(gen.normal({2, 3, 8}), 0.2f));
    const float s = variant == "lns" ? 1.0f / std::sqrt(3.0f) : 1.0f;
    Var a = b.attn->forward(ag::mul_scalar(b.ln1->forward(x), s));
    if (variant == "peri") a = b.ln1_out->forward(a);
    const Var h = ag::add(x, a);
    Var m = b.mlp->forward(ag::mul_scalar(b.ln2->forward(h), s));
    if (variant == "peri") m = b.ln2_out->forward(m);
    CHECK_CLOSE(b.forward(x).value(), ag::add(h, m).value(), 1e-6, 1e-6);
  }
}

// The parameter names of a GPT's norm sites, and the rest (the same for every kind).
void gpt_names_and_checkpoint(const NormKind& kind) {
  GPTFixture f(kind);
  GPTConfig ln_config = f.config;
  ln_config.norm.name = "ln";
  Generator ln_gen(1);
  GPT ln_model(ln_config, ln_gen);
  auto outside_norms = [](const GPT& m) {
    std::vector<std::string> names;
    for (const auto& [name, p] : m.named_parameters())
      if (name.find(".ln") == std::string::npos && name.rfind("ln_f.", 0) != 0) names.push_back(name);
    return names;
  };
  CHECK(outside_norms(*f.model) == outside_norms(ln_model));
  // each site holds exactly the parameters of the kind's layer made for that place
  auto site_params = [&](const std::string& site, NormPlace place) {
    std::vector<std::pair<std::string, Shape>> want, got;
    for (const auto& [name, p] : make_norm(f.config.norm, f.config.dim, place)->named_parameters())
      want.push_back({site + "." + name, p.shape()});
    for (const auto& [name, p] : f.model->named_parameters())
      if (name.rfind(site + ".", 0) == 0) got.push_back({name, p.shape()});
    INFO("site " << site);
    CHECK(got == want);
    // a layer without parameters leaves its site with none, which got == want checked
    if (want.empty()) WARN("norm " << kind.name << " has no parameters at " << site << ": the site holds none");
  };
  for (int64_t l = 0; l < f.config.layers; ++l) {
    site_params("blocks." + std::to_string(l) + ".ln1", NormPlace::Attention);
    site_params("blocks." + std::to_string(l) + ".ln2", NormPlace::Mlp);
  }
  // ln_f: the kind's default final norm (an RMSNorm for bhyt), with the same settings
  {
    std::vector<std::pair<std::string, Shape>> want, got;
    for (const auto& [name, p] :
         make_norm(final_config_of(f.config.norm), f.config.dim, NormPlace::Final)->named_parameters())
      want.push_back({"ln_f." + name, p.shape()});
    for (const auto& [name, p] : f.model->named_parameters())
      if (name.rfind("ln_f.", 0) == 0) got.push_back({name, p.shape()});
    CHECK(got == want);
  }

  // the description names the kind and its options, and reads back to the same model
  const std::string description = describe_gpt(f.config);
  const GPTConfig back = gpt_config_from_json(description);
  CHECK(back.norm.name == kind.name);
  for (const NormOption& o : kind.options)
    if (f.config.norm.has(o.name)) CHECK(back.norm.option(o.name) == Approx(f.config.norm.option(o.name)));
  CHECK(describe_gpt(back) == description);
  // and no option only other kinds declare: registering a kind changes no other's
  // descriptions, which resumed checkpoints must match
  const nlohmann::json described = nlohmann::json::parse(description);
  for (const NormOption& o : norm_options()) {
    const bool own = std::any_of(kind.options.begin(), kind.options.end(),
                                 [&](const NormOption& k) { return k.name == o.name; });
    std::string key = o.name;
    std::replace(key.begin(), key.end(), '-', '_');
    INFO("option " << o.name);
    if (!own) CHECK_FALSE(described.contains(key));
  }

  // a checkpoint restores every parameter into a model of another seed: the same logits
  TempDir tmp;
  const std::string path = tmp.sub("checkpoint.safetensors");
  FlatParameters flat = flatten_parameters(*f.model);
  AdamW optim(flat, AdamWConfig{});
  save_checkpoint(path, flat, optim, 3, f.gen, {{"model", description}});
  Generator other(5), batch_gen(0);
  GPT restored(back, other);
  FlatParameters flat2 = flatten_parameters(restored);
  AdamW optim2(flat2, AdamWConfig{});
  CHECK(load_checkpoint(path, flat2, optim2, batch_gen, description).step == 3);
  NoGradGuard no_graph;
  const Tensor ids = random_ids(f.gen, 2, 8, 32);
  CHECK(restored.forward(ids).value().to_vector() == f.model->forward(ids).value().to_vector());
}

void vit_forward_and_backward(const NormKind& kind) {
  const ViTConfig c = tiny_config(kind.name);
  Generator gen(14);
  ViT model(c, gen);
  perturb_scale_and_shift(model, gen);
  Var logits = model.forward(Var(gen.normal({2, 1, 8, 8})));
  CHECK(logits.shape() == Shape{2, 3});
  CHECK(all_finite(logits.value()));
  logits.backward(gen.normal({2, 3}));
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    REQUIRE(p.grad().defined());
    CHECK(all_finite(p.grad()));
  }
}

void resume_equals_straight_run(const NormKind& kind) {
  const char* fortunes = "/usr/share/games/fortunes";
  if (!fs::is_directory(fortunes)) {
    WARN("skipped: " << fortunes << " is missing (apt-get install fortunes)");
    return;
  }
  ThreadCountGuard keep;
  TempDir tmp;
  auto run = [&](const std::string& dir, int64_t stop_after, bool resume) {
    GPTRunConfig c;
    c.model = gpt_config(256, 1, 16, 2, 8, kind.name);
    c.model.norm = config_of(kind);
    c.batch = 2, c.steps = 6, c.warmup = 2, c.lr = 3e-3f;
    c.eval_every = 3, c.eval_batches = 1, c.eval_batch_size = 2, c.sample_bytes = 8;
    c.data_dir = fortunes, c.out_dir = dir, c.quiet = true, c.threads = 1;
    c.stop_after = stop_after, c.resume = resume;
    return run_gpt(c);
  };
  const GPTRunResult straight = run(tmp.sub("A"), -1, false);
  CHECK(straight.steps_done == 6);
  CHECK(run(tmp.sub("B"), 3, false).steps_done == 3);
  const GPTRunResult resumed = run(tmp.sub("B"), -1, true);
  CHECK(resumed.steps_done == 6);
  const auto a = read_csv_rows(tmp.sub("A") + "/log.csv"), b = read_csv_rows(tmp.sub("B") + "/log.csv");
  REQUIRE(a.size() == 7);
  REQUIRE(b.size() == a.size());
  for (size_t i = 1; i < a.size(); ++i) {
    INFO("log row " << i);
    CHECK(b[i][1] == a[i][1]);  // train_loss as written: bit-identical
  }
  CHECK(resumed.final_val_loss == straight.final_val_loss);
}

// on the GPT-2 block and on the Llama block, whose queries and keys are rotated by
// their positions: the cache must rotate the new ones at theirs
void kv_cache(const NormKind& kind) {
  for (const char* block : {"pre", "llama"}) {
    INFO("block " << block);
    GPTFixture f(kind, 2, block);
    f.model->eval();
    if (kind.approximates_site2) {
      CHECK_FALSE(f.model->supports_cache());
      KVCache cache = f.model->make_cache(2);
      CHECK_THROWS_AS(f.model->forward_cached(random_ids(f.gen, 2, 3, 32), cache), Error);
      continue;
    }
    REQUIRE(f.model->supports_cache());
    const Tensor ids = random_ids(f.gen, 2, 8, 32);
    Tensor whole;
    {
      NoGradGuard no_graph;
      whole = f.model->forward(ids).value();
    }
    KVCache cache = f.model->make_cache(2);
    int64_t at = 0;
    for (int64_t piece : {3, 1, 4}) {
      const Tensor logits = f.model->forward_cached(ids.slice(1, at, at + piece).contiguous(), cache);
      INFO("tokens " << at << " to " << at + piece);
      CHECK_CLOSE(logits, whole.slice(1, at, at + piece), 1e-5, 1e-5);
      at += piece;
    }
  }
}

void causal(const NormKind& kind) {
  for (const char* block : {"pre", "llama"}) {
    INFO("block " << block);
    GPTFixture f(kind, 2, block);
    NoGradGuard no_graph;
    const Tensor ids = random_ids(f.gen, 2, 8, 32);
    const Tensor logits = f.model->forward(ids).value();
    for (int64_t t : {0, 4, 7}) {
      Tensor changed = ids.clone();
      changed.idata()[8 + t] = (ids.idata()[8 + t] + 5) % 32;
      const Tensor l2 = f.model->forward(changed).value();
      INFO("changed token " << t << " of sequence 1");
      CHECK_CLOSE(l2.slice(1, 0, t), logits.slice(1, 0, t), 0, 1e-6);
      CHECK_CLOSE(l2.slice(0, 0, 1), logits.slice(0, 0, 1), 0, 1e-6);
    }
  }
}

void activation_statistics(const NormKind& kind) {
  GPTFixture f(kind);
  const int64_t L = f.config.layers;
  const Tensor ids = random_ids(f.gen, 2, 8, 32);
  const std::vector<ActStat> rows = activation_stats(*f.model, ids);
  std::vector<const ActStat*> sites;
  for (int64_t l = 0; l < L; ++l)
    for (const char* s : {"ln1", "ln2"}) sites.push_back(find_stat(rows, l, s));
  sites.push_back(find_stat(rows, L, "ln_f"));
  // ln_f is of the kind's default final norm (an RMSNorm for bhyt, with no saturation)
  const NormKind& final_kind = norm_kind(final_norm_kind(kind.name, ""));
  for (const ActStat* s : sites) {
    REQUIRE(s);
    INFO("layer " << s->layer << " " << s->site);
    CHECK(s->has_saturation == (s == sites.back() ? final_kind : kind).ends_bounded());
    CHECK(std::isfinite(s->rms));
  }
  const ActStat* all = find_stat(rows, -1, "bounded_all");
  CHECK((all != nullptr) == kind.ends_bounded());
  if (!kind.ends_bounded()) return;
  double mean1 = 0;
  int bounded_sites = 0;
  for (const ActStat* s : sites) bounded_sites += s->has_saturation;
  for (const ActStat* s : sites)
    if (s->has_saturation) mean1 += s->saturation[0] / bounded_sites;
  CHECK(all->saturation[0] == Approx(mean1).margin(1e-12));
  if (!final_kind.ends_bounded()) return;

  // the final norm's row: the saturation of bounded_arg of the stream it reads
  Capture cap;
  f.model->eval();
  f.model->set_probe(&cap);
  {
    NoGradGuard no_graph;
    f.model->forward(ids);
  }
  f.model->set_probe(nullptr);
  const Tensor u = f.model->ln_f->bounded_arg_value(cap.seen.at({L, "resid"}));
  CHECK_CLOSE(cap.seen.at({L, "ln_f.bounded_arg"}), u, 1e-6, 1e-6);
  const std::array<double, 3> want = saturation_fractions(u);
  for (int k = 0; k < 3; ++k) CHECK(sites.back()->saturation[k] == Approx(want[k]).margin(1e-12));
}

// A graph for the fold pass: t = x W; y = norm(t); out = LN(t) + LN'(y), where LN is
// `site` and LN' (`after`) reads the norm's output.
struct FoldGraph : Module {
  Var proj;
  std::shared_ptr<Norm> norm, site, after;
  FoldGraph(const NormKind& kind, int64_t C, Generator& gen) {
    proj = register_parameter("proj", gen.normal({C, C}, 0.0f, 0.5f));
    norm = register_module("norm", make_norm(config_of(kind), C));
    NormConfig ln;
    site = register_module("site", make_norm(ln, C));
    after = register_module("after", make_norm(ln, C));
  }
};

void fold_pass(const NormKind& kind) {
  Generator gen(15);
  const int64_t C = 8;
  FoldGraph g(kind, C, gen);
  perturb_scale_and_shift(*g.norm, gen);
  const Tensor x = add_scalar(gen.normal({3, C}), 0.5f);
  Var t = ag::matmul(Var(x), g.proj);
  Var y = g.norm->forward(t);
  Var out = ag::add(g.site->forward(t), g.after->forward(y));
  const FoldReport report = detect_foldable(out, &g);
  INFO(report.to_string());
  const NormSite* site = nullptr;
  const NormSite* after = nullptr;
  for (const NormSite& s : report.norms) {
    if (s.name == "site") site = &s;
    if (s.name == "after") after = &s;
    CHECK(s.verdict.why.find("not known") == std::string::npos);  // every op the norm records is known
  }
  REQUIRE(site);
  REQUIRE(after);

  // the norm's output: zero-mean in the pass's view only if it is in the numbers
  double largest_mean = 0;
  const std::vector<float> yv = y.value().to_vector();
  for (int64_t r = 0; r < 3; ++r) {
    double m = 0;
    for (int64_t c = 0; c < C; ++c) m += yv[r * C + c] / (double)C;
    largest_mean = std::max(largest_mean, std::fabs(m));
  }
  if (largest_mean > 1e-3) CHECK(after->verdict.status == ZeroMean::No);
  if (!kind.fused_ops.empty() && after->verdict.status == ZeroMean::No)
    CHECK(std::count(kind.fused_ops.begin(), kind.fused_ops.end(), after->verdict.breaker_op) == 1);

  // Centring W shifts every token of t by a constant. The site folds exactly when the
  // norm ignores that shift, as its kind declares and as the numbers show.
  NoGradGuard no_graph;
  const Tensor shift = gen.normal({3, 1}, 0.0f, 2.0f);
  const Tensor y0 = g.norm->composite(Var(t.value())).value();
  const Tensor y1 = g.norm->composite(Var(add(t.value(), shift))).value();
  const bool ignores = compare(y1, y0, 1e-4, 1e-5).ok;
  CHECK(ignores == kind.ignores_shift);
  CHECK((site->verdict.status == ZeroMean::IfCentred) == ignores);
}

// train_gpt takes --norm <kind> and the kind's option flags, trains with them; its
// --help and train_vit's list the kind with its summary, and its options.
void train_gpt_flags(const NormKind& kind) {
  const std::string program = ::nl::test::build_dir() + "/train_gpt";
  REQUIRE(fs::exists(program));
  TempDir tmp;
  for (const std::string& lister : {program, ::nl::test::build_dir() + "/train_vit"}) {
    INFO(lister << " --help");
    const RunResult help = run_program(lister, "--help", tmp);
    CHECK(help.code == 0);
    // --help wraps its lines at 100 columns: compared with every run of white space as one space
    auto words = [](const std::string& text) { return std::regex_replace(text, std::regex("\\s+"), " "); };
    CHECK(words(help.out).find(" " + words(kind.name + ": " + kind.summary) + " ") != std::string::npos);
    for (const NormOption& o : kind.options) {
      INFO("option --" << o.name);
      CHECK(help.out.find("--" + o.name) != std::string::npos);
    }
  }
  if (!fs::is_directory("/usr/share/games/fortunes")) {
    WARN("skipped the training run: /usr/share/games/fortunes is missing (apt-get install fortunes)");
    return;
  }
  std::string args = "--norm " + kind.name;
  for (const NormOption& o : kind.options) {
    if (std::isnan(o.initial)) continue;
    const std::string value = !o.choices.empty()                 ? o.choices.at((size_t)o.initial)
                              : o.auto_value && o.initial == 0.0 ? std::string("auto")
                                                                 : shortest_decimal(o.initial);
    args += " --" + o.name + " " + value;
  }
  const RunResult r = run_program(program,
                                  args + " --layers 1 --dim 16 --heads 2 --seq 8 --batch 2 --steps 2 --eval-every 1 "
                                         "--eval-batches 1 --threads 1 --quiet --out " + tmp.sub("run"),
                                  tmp);
  INFO("train_gpt " << args << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  CHECK(fs::exists(tmp.sub("run") + "/act_stats.csv"));
}

// ---------------------------------------------------------------------------- registration

using Check = void (*)(const NormKind&);

const std::vector<std::pair<std::string, Check>>& checks() {
  static const std::vector<std::pair<std::string, Check>> all = {
      {"forward equals its composite, values and gradients", forward_equals_composite},
      {"gradients of the composite match finite differences", composite_gradcheck},
      {"shapes, and finite outputs and gradients on tiny, zero, large and constant inputs", shapes_and_hard_inputs},
      {"block variants pre, peri and lns wire it at every site", block_variants},
      {"GPT parameter names, checkpoint round trip and model description", gpt_names_and_checkpoint},
      {"a ViT trains with it: finite logits and gradients", vit_forward_and_backward},
      {"a run stopped and resumed logs exactly the straight run", resume_equals_straight_run},
      {"the key/value cache gives the whole sequence's logits", kv_cache},
      {"a GPT with it is causal", causal},
      {"activation statistics: a saturation per site exactly when it declares a bounded nonlinearity",
       activation_statistics},
      {"fold pass: its output and a per-token shift of its input, as the numbers say", fold_pass},
      {"train_gpt takes --norm and its option flags; --help lists its summary", train_gpt_flags},
  };
  return all;
}

std::string check_name(const NormKind& kind, const std::string& check) { return "norm " + kind.name + ": " + check; }

class NormCheck : public Catch::ITestInvoker {
 public:
  NormCheck(Check check, std::string kind) : check_(check), kind_(std::move(kind)) {}
  void invoke() const override { check_(norm_kind(kind_)); }

 private:
  Check check_;
  std::string kind_;
};

const bool registered = [] {
  for (const NormKind& kind : norm_kinds())
    for (const auto& [what, check] : checks())
      Catch::AutoReg(new NormCheck(check, kind.name), CATCH_INTERNAL_LINEINFO, Catch::StringRef(),
                     Catch::NameAndTags(check_name(kind, what), "[norm-kinds]"));
  return true;
}();

}  // namespace

TEST_CASE("norm registry: every registered kind has each generic check as a test case", "[norm-kinds]") {
  REQUIRE(registered);
  std::set<std::string> names;
  for (const Catch::TestCase& t : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) names.insert(t.name);
  for (const NormKind& kind : norm_kinds())
    for (const auto& [what, check] : checks()) {
      INFO(check_name(kind, what));
      CHECK(names.count(check_name(kind, what)) == 1);
    }
}

TEST_CASE("norm registry: each kind declares a name, summary, maker and consistent traits", "[norm-kinds]") {
  std::set<std::string> names;
  for (const NormKind& kind : norm_kinds()) {
    INFO("kind " << kind.name);
    CHECK(names.insert(kind.name).second);
    CHECK(!kind.name.empty());
    CHECK(kind.name.find_first_of(" ,|") == std::string::npos);
    CHECK(!kind.summary.empty());
    REQUIRE(kind.make);
    CHECK(std::is_sorted(kind.bounded.kinks.begin(), kind.bounded.kinks.end()));
    CHECK((kind.bounded.kinks.empty() || kind.ends_bounded()));
    if (!kind.folds_into.empty()) CHECK(norm_kind(kind.folds_into).name == kind.folds_into);
    for (const NormOption& o : kind.options) {
      INFO("option " << o.name);
      CHECK(o.lo < o.hi);
      CHECK(!o.help.empty());
      // a default lies in the range, or is `auto` (0) for an option that takes it, or a
      // choice's index (checked below)
      const bool auto_default = o.auto_value && o.initial == 0.0;
      if (!std::isnan(o.initial) && !auto_default && o.choices.empty()) CHECK((o.initial >= o.lo && o.initial <= o.hi));
      // an option two kinds share is declared alike
      const NormOption& first = norm_option(o.name);
      CHECK((first.initial == o.initial || (std::isnan(first.initial) && std::isnan(o.initial))));
      CHECK(first.lo == o.lo);
      CHECK(first.hi == o.hi);
      CHECK(first.integer == o.integer);
      CHECK(first.choices == o.choices);
      CHECK(first.follows == o.follows);
      CHECK(first.auto_value == o.auto_value);
      // a text option's default is one of its choices; a followed option is the same kind's
      if (!o.choices.empty()) CHECK((o.initial >= 0 && o.initial < (double)o.choices.size()));
      if (!o.follows.empty())
        CHECK(std::any_of(kind.options.begin(), kind.options.end(),
                          [&](const NormOption& k) { return k.name == o.follows; }));
      CHECK(config_of(kind).has(o.name) == (!std::isnan(o.initial) || !o.follows.empty()));
    }
    if (!kind.default_final_norm.empty()) CHECK(norm_kind(kind.default_final_norm).name == kind.default_final_norm);
    for (NormPlace place : {NormPlace::Attention, NormPlace::Mlp, NormPlace::Final, NormPlace::Embedding})
      CHECK(make_norm(config_of(kind), 4, place) != nullptr);
  }
  CHECK(norm_choices(", ").find(norm_kinds().back().name) != std::string::npos);
}

// A class defined in a kind's file with external linkage shares its name with every
// other class of that name in nl: two such classes link without a warning, and the
// program calls one's virtual functions on the other's objects (issue 35's crash).
// So each file's classes sit in its anonymous namespace, unless nn/norms/norms.h
// declares them for other files (which registry.h shows every kind's file, so a second
// class of such a name does not compile).
TEST_CASE("norm registry: a kind's file defines its classes in an anonymous namespace", "[norm-kinds]") {
  const std::regex definition(R"(^\s*(struct|class)\s+(\w+)\b[^;]*$)");
  std::set<std::string> declared;
  {
    std::istringstream in(read_bytes("nn/norms/norms.h"));
    std::smatch m;
    for (std::string line; std::getline(in, line);)
      if (std::regex_search(line, m, definition)) declared.insert(m[2]);
  }
  REQUIRE(declared.count("RMSNorm") == 1);
  int files = 0;
  for (const auto& entry : fs::directory_iterator("nn/norms")) {
    if (entry.path().extension() != ".cpp") continue;
    ++files;
    std::istringstream in(read_bytes(entry.path().string()));
    int anonymous = 0, number = 0;
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (line.rfind("namespace {", 0) == 0) ++anonymous;
      if (line.rfind("}  // namespace", 0) == 0 && line.find("namespace ", line.find("//")) == std::string::npos)
        anonymous = std::max(0, anonymous - 1);
      if (!std::regex_search(line, m, definition) || anonymous > 0 || declared.count(m[2])) continue;
      FAIL_CHECK(entry.path().string() << ":" << number << " defines " << m[2]
                                       << " outside an anonymous namespace (docs/your-own-norm.md, section 1)");
    }
  }
  CHECK(files >= 2);
}
