// Tests of the named recipes and the run options they need (train/flags/recipes.h,
// train/flags/gpt_flags.h): --recipe expands into its flags before the command line, so
// flags given override it wherever they stand; --block llama implies its MLP, biases and
// head; config.json records the recipe and the expanded flags; --list-recipes names every
// recipe; an unknown recipe is one error line and exit 2. Then the optimizer's --wd-all,
// and runs of the recipes' models that stop and resume exactly as straight runs do.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "nn/linear.h"
#include "nn/norms/registry.h"
#include "tensor/threads.h"
#include "tests/test_files.h"
#include "tests/test_util.h"
#include "train/flags/gpt_flags.h"
#include "train/flags/recipes.h"
#include "train/gpt/gpt_run.h"
#include "train/io/safetensors.h"
#include "train/optim/optim.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// train_gpt's run flags parsed from args, and what config.json would record
struct Parsed {
  GPTRunConfig c;
  nlohmann::ordered_json values;
};
Parsed parse(const std::vector<std::string>& args) {
  Parsed r;
  FlagParser p("train_gpt", "");
  add_gpt_run_flags(p, r.c);
  REQUIRE(p.parse(args));
  r.values = p.values();
  return r;
}

const char* kFortunes = "/usr/share/games/fortunes";

}  // namespace

TEST_CASE("recipes: --recipe dyt-llm sets DyT's LLaMA recipe, --block llama its MLP, biases and head", "[recipes]") {
  const GPTRunConfig c = parse({"--recipe", "dyt-llm"}).c;
  CHECK(c.recipe == "dyt-llm");
  CHECK(c.model.norm.name == "dyt");
  CHECK(c.model.block == "llama");
  CHECK(c.model.mlp == "swiglu");  // implied by --block llama
  CHECK_FALSE(c.model.bias);
  CHECK_FALSE(c.model.tied_head);
  CHECK(c.model.norm.option("dyt-alpha0-attn") == Approx(4.53));
  CHECK(c.model.norm.option("dyt-alpha0-mlp") == Approx(1.13));
  CHECK(c.model.norm.option("dyt-alpha0-final") == Approx(1.13));
  CHECK(c.model.norm.choice("dyt-beta") == "off");
  CHECK(c.model.emb_scale0 == Approx(std::sqrt(128.0f)));
  CHECK(c.lr == Approx(3e-4f));
  CHECK(c.min_lr == Approx(3e-5f));
  CHECK(c.beta1 == Approx(0.9f));
  CHECK(c.beta2 == Approx(0.95f));
  CHECK(c.wd_all);
  // --emb-scale sqrt follows --dim, given after the recipe or not
  CHECK(parse({"--recipe", "dyt-llm", "--dim", "64"}).c.model.emb_scale0 == Approx(8.0f));
}

TEST_CASE("recipes: flags given override the recipe's wherever they stand, and the block's implied ones",
          "[recipes]") {
  CHECK(parse({"--lr", "0.002", "--recipe", "dyt-llm"}).c.lr == Approx(0.002f));
  CHECK(parse({"--recipe", "dyt-llm", "--lr", "0.002"}).c.lr == Approx(0.002f));
  CHECK(parse({"--recipe", "dyt-llm", "--block", "pre"}).c.model.block == "pre");
  // bhyt-released keeps the head tied against --block llama's implication; a given --mlp wins over both
  const GPTRunConfig b = parse({"--mlp", "gelu", "--recipe", "bhyt-released"}).c;
  CHECK(b.model.block == "llama");
  CHECK(b.model.tied_head);
  CHECK_FALSE(b.model.bias);
  CHECK(b.model.mlp == "gelu");
  CHECK(b.model.norm.choice("bhyt-form") == "code");
  CHECK(b.model.norm.option("bhyt-lambda-attn") == 2);
  CHECK(b.model.norm.option("bhyt-lambda-mlp") == 1);
  CHECK(b.model.final_norm_name() == "rms");  // bhyt's default; with --norm ln the recipe ends in a LayerNorm
  CHECK(parse({"--recipe", "bhyt-released", "--norm", "ln"}).c.model.final_norm_name() == "ln");
  CHECK(b.model.norm.option("bhyt-refresh") == 0);  // auto, resolved by the run
  CHECK(b.beta2 == Approx(0.95f));
  // --block llama alone, then with its implications overridden
  const GPTRunConfig l = parse({"--block", "llama"}).c;
  CHECK((l.model.mlp == "swiglu" && !l.model.bias && !l.model.tied_head));
  const GPTRunConfig o = parse({"--tied-head", "on", "--block=llama", "--bias", "on"}).c;
  CHECK((o.model.mlp == "swiglu" && o.model.bias && o.model.tied_head));
  // dyt-verma: alpha0 2 at every site, the final one included
  const GPTRunConfig v = parse({"--recipe", "dyt-verma"}).c;
  for (const char* site : {"dyt-alpha0-attn", "dyt-alpha0-mlp", "dyt-alpha0-final"})
    CHECK(v.model.norm.option(site) == 2);
  CHECK((!v.model.bias && v.model.tied_head && v.model.block == "pre"));
  // plain is the defaults
  const Parsed plain = parse({"--recipe", "plain"}), none = parse({});
  for (const auto& [key, value] : none.values.items())
    if (key != "recipe") CHECK(plain.values[key] == value);
}

// ../shared/NORMS.md, "Verma's released schedule": the values below are read from there,
// not from the recipe table.
TEST_CASE("recipes: --recipe verma is Verma's released schedule and bias-free GPT-2", "[recipes]") {
  const Parsed v = parse({"--recipe", "verma", "--norm", "dyt"});
  const GPTRunConfig& c = v.c;
  CHECK(c.recipe == "verma");
  CHECK(c.lr == Approx(3e-4f));
  CHECK(c.steps == 5000);
  CHECK(c.warmup == 2000);
  CHECK(c.schedule == "flat");
  CHECK(c.beta1 == Approx(0.9f));
  CHECK(c.beta2 == Approx(0.95f));
  CHECK(c.wd == Approx(0.1f));
  CHECK(c.clip == Approx(1.0f));
  CHECK_FALSE(c.wd_all);
  CHECK((c.model.block == "pre" && c.model.mlp == "gelu" && c.model.tied_head));
  CHECK_FALSE(c.model.bias);
  CHECK_FALSE(c.model.norm.bias);
  CHECK(c.model.dropout == 0.0f);
  CHECK(c.model.emb_scale0 == 0.0f);
  for (const char* site : {"dyt-alpha0-attn", "dyt-alpha0-mlp", "dyt-alpha0-final"})
    CHECK(c.model.norm.option(site) == 2);
  CHECK(v.values["schedule"] == "flat");
  CHECK(v.values["norm_bias"] == "off");
  // the norm is the caller's: the regime study's arms set it; an arm's flags override the recipe's
  CHECK(parse({"--recipe", "verma"}).c.model.norm.name == "ln");
  CHECK(parse({"--recipe", "verma", "--norm", "dyt", "--dyt-alpha0", "0.5"}).c.model.norm.option("dyt-alpha0-final") ==
        0.5);
  CHECK(recipes_listing().find("verma: ") != std::string::npos);
  CHECK(recipes_listing().find("lucky-verma/dyt-composition-study") != std::string::npos);
  // the defaults keep the cosine and the norms' shift
  CHECK(parse({}).c.schedule == "cosine");
  CHECK(parse({}).c.model.norm.bias);
}

TEST_CASE("recipes: config.json records the recipe and every expanded flag, and replays to the same run",
          "[recipes]") {
  const Parsed r = parse({"--recipe", "dyt-llm", "--seed", "7"});
  const auto& j = r.values;
  CHECK(j["recipe"] == "dyt-llm");
  CHECK(j["block"] == "llama");
  CHECK(j["mlp"] == "swiglu");
  CHECK(j["bias"] == "off");
  CHECK(j["tied_head"] == "off");
  CHECK(j["dyt_alpha0_attn"] == 4.53);
  CHECK(j["dyt_beta"] == "off");
  CHECK(j["emb_scale"] == "sqrt");
  CHECK(j["lr"] == Approx(3e-4));
  CHECK(j["beta2"] == Approx(0.95));
  CHECK(j["wd_all"] == true);
  CHECK(j["seed"] == 7);
  CHECK(j["bhyt_form"] == "paper");
  CHECK(j["bhyt_refresh"] == "auto");
  TempDir tmp;
  write_bytes(tmp.sub("config.json"), j.dump(2));
  CHECK(parse({"--config", tmp.sub("config.json")}).values == j);
  // a config made in code records the same way (check_gpt_run)
  const auto coded = nlohmann::ordered_json::parse(check_gpt_run(r.c));
  CHECK(coded["dyt_alpha0_mlp"] == 1.13);
  CHECK(coded["wd_all"] == true);
}

TEST_CASE("recipes: a --config value of another type than its flag's, or a key given twice, is refused naming it",
          "[recipes]") {
  TempDir tmp;
  const std::string path = tmp.sub("config.json");
  auto refused = [&](const std::string& text, const std::vector<std::string>& needles) {
    write_bytes(path, text);
    GPTRunConfig c;
    FlagParser p("train_gpt", "");
    add_gpt_run_flags(p, c);
    INFO(text);
    try {
      p.parse(std::vector<std::string>{"--config", path});
      FAIL_CHECK("accepted");
    } catch (const std::exception& e) {
      for (const std::string& n : needles) CHECK_THAT(std::string(e.what()), Contains(n));
    }
  };
  // before: false was dropped (500 steps trained), true left "unexpected argument '50'"
  refused(R"({"steps": false})", {"--config: " + path, "\"steps\" is false, not a number", "--steps"});
  refused(R"({"steps": true})", {"\"steps\" is true, not a number", "--steps"});
  refused(R"({"lr": "fast"})", {"\"lr\" is \"fast\", not a number", "--lr"});
  refused(R"({"wd_all": 1})", {"\"wd_all\" is 1, not true or false", "--wd-all"});
  refused(R"({"norm": 3})", {"\"norm\" is 3, not a string", "--norm"});
  // before: the last value was taken silently
  refused(R"({"steps": 5, "seed": 1, "steps": 6})", {"--config: " + path, "gives \"steps\" twice"});
  write_bytes(path, R"({"steps": 7, "wd_all": true, "lr": 1})");
  const Parsed ok = parse({"--config", path});
  CHECK(ok.values["steps"] == 7);
  CHECK(ok.values["wd_all"] == true);
}

TEST_CASE("recipes: an unknown recipe names the known ones; a program that omits a recipe's flag keeps its own",
          "[recipes]") {
  GPTRunConfig c;
  FlagParser p("train_gpt", "");
  add_gpt_run_flags(p, c);
  CHECK_THROWS_WITH(p.parse(std::vector<std::string>{"--recipe", "nope"}),
                    Contains("--recipe: unknown recipe 'nope'") && Contains("bhyt-released, dyt-llm, dyt-verma"));
  // compare_norms sets --norm itself: the recipe's --norm is left out, the rest applies
  GPTRunConfig d;
  FlagParser q("compare_norms", "");
  q.omit({"--norm"});
  add_gpt_run_flags(q, d);
  REQUIRE(q.parse(std::vector<std::string>{"--recipe", "bhyt-released"}));
  CHECK(d.model.norm.name == "ln");
  CHECK(d.model.block == "llama");
  CHECK(d.model.norm.choice("bhyt-form") == "code");
  for (const char* bad_flag : {"--bias maybe", "--tied-head 1", "--dyt-beta no", "--bhyt-form torch",
                               "--bhyt-refresh 0", "--beta2 1", "--block gpt3"}) {
    const std::string bad = bad_flag;
    INFO(bad);
    GPTRunConfig e;
    FlagParser r("train_gpt", "");
    add_gpt_run_flags(r, e);
    const auto space = bad.find(' ');
    CHECK_THROWS_WITH(r.parse(std::vector<std::string>{bad.substr(0, space), bad.substr(space + 1)}),
                      Contains(bad.substr(0, space)));
  }
  GPTRunConfig f;
  FlagParser s("train_gpt", "");
  add_gpt_run_flags(s, f);
  CHECK_THROWS_WITH(s.parse(std::vector<std::string>{"--bhyt-refresh", "0"}),
                    Contains("--bhyt-refresh must be auto or an integer in [1, 1000000000], got '0'"));
}

TEST_CASE("recipes: the listing names every recipe with its flags and source, and every norm", "[recipes]") {
  const std::string list = recipes_listing();
  for (const Recipe& r : recipes()) {
    INFO(r.name);
    CHECK_THAT(list, Contains(r.name + ": " + r.summary));
    CHECK_FALSE(r.source.empty());
    std::string flags;
    for (const auto& f : r.flags) flags += " " + f;
    CHECK_THAT(list, Contains("flags:" + flags));
  }
  for (const char* name : {"plain", "bhyt-released", "dyt-llm", "dyt-verma"}) CHECK(recipe(name).name == name);
  for (const NormKind& k : norm_kinds()) CHECK_THAT(list, Contains("  " + k.name + ": "));
}

TEST_CASE("recipes: train_gpt --list-recipes exits 0; --recipe nope is one error line and exit 2", "[recipes][cli]") {
  const std::string program = ::nl::test::build_dir() + "/train_gpt";
  if (!fs::exists(program)) {
    FAIL_CHECK(program << " is not built");
    return;
  }
  TempDir tmp;
  RunResult list = run_program(program, "--list-recipes", tmp);
  CHECK(list.code == 0);
  for (const Recipe& r : recipes()) CHECK_THAT(list.out, Contains(r.name + ": "));
  RunResult bad = run_program(program, "--recipe nope --out " + tmp.sub("x"), tmp);
  CHECK(bad.code == 2);
  CHECK(count_lines(bad.err) == 1);
  CHECK_THAT(bad.err, Contains("train_gpt: error: --recipe: unknown recipe 'nope'"));
  CHECK_FALSE(fs::exists(tmp.sub("x")));
}

TEST_CASE("adamw --wd-all: weight decay on every parameter, not only the 2-D weights", "[optim]") {
  for (bool all : {false, true}) {
    INFO("decay_all " << all);
    Generator gen(3);
    Linear lin(4, 3, true, gen);
    lin.bias.value().fill_(0.5f);
    FlatParameters flat = flatten_parameters(lin);
    const std::vector<float> w0 = lin.weight.value().to_vector();
    AdamW opt(flat, AdamWConfig{0.9f, 0.95f, 1e-8f, 0.1f, all});
    flat.grads.fill_(0.0f);
    opt.step(0.01f);  // zero gradients: only the decay moves a parameter, p <- p (1 - lr wd)
    for (float b : lin.bias.value().to_vector()) CHECK(b == Approx(all ? 0.5f * (1 - 0.001f) : 0.5f).epsilon(1e-6));
    const std::vector<float> w1 = lin.weight.value().to_vector();
    for (size_t i = 0; i < w0.size(); ++i) CHECK(w1[i] == Approx(w0[i] * (1 - 0.001f)).epsilon(1e-6));
  }
}

namespace {

// A small run of the recipes' models: 1 layer, dim 32, 2 heads, seq 16, batch 4.
GPTRunConfig recipe_run(const std::string& recipe, const std::string& out_dir, int64_t steps) {
  Parsed p = parse({"--recipe", recipe, "--layers", "1", "--dim", "32", "--heads", "2", "--seq", "16", "--batch",
                    "4", "--steps", std::to_string(steps), "--warmup", "5", "--eval-every", "20", "--eval-batches",
                    "2", "--threads", "1", "--quiet", "--out", out_dir});
  GPTRunConfig c = p.c;
  c.eval_batch_size = 8;
  c.sample_bytes = 40;
  c.data_dir = kFortunes;
  c.config_json = p.values.dump(2) + "\n";
  return c;
}

}  // namespace

TEST_CASE("recipes: runs of bhyt-released, dyt-llm and verma stopped at 40 and resumed end as straight runs",
          "[train][recipes]") {
  if (!fs::is_directory(kFortunes)) {
    WARN("skipped: " << kFortunes << " is missing (apt-get install fortunes)");
    return;
  }
  ThreadCountGuard keep;
  for (const std::string recipe : {"bhyt-released", "dyt-llm", "verma"}) {
    INFO(recipe);
    TempDir tmp;
    const std::string A = tmp.sub("A"), B = tmp.sub("B");
    GPTRunResult straight = run_gpt(recipe_run(recipe, A, 60));
    CHECK(straight.steps_done == 60);
    GPTRunConfig first = recipe_run(recipe, B, 60);
    first.stop_after = 40;  // a validation step: stopping validates too
    CHECK(run_gpt(first).steps_done == 40);
    GPTRunConfig second = recipe_run(recipe, B, 60);
    second.resume = true;
    CHECK(run_gpt(second).steps_done == 60);
    CHECK(read_bytes(B + "/config.json") == read_bytes(A + "/config.json"));
    // the logs agree bit for bit but for the speed column
    auto rows = [](const std::string& dir) {
      std::vector<std::string> out;
      std::stringstream ss(read_bytes(dir + "/log.csv"));
      std::string line;
      while (std::getline(ss, line)) {
        std::vector<std::string> cols;
        std::stringstream ls(line);
        std::string col;
        while (std::getline(ls, col, ',')) cols.push_back(col);
        if (cols.size() > 5) cols[5] = "";  // tok_per_s
        std::string joined;
        for (const auto& c : cols) joined += c + ",";
        out.push_back(joined);
      }
      return out;
    };
    const auto ra = rows(A), rb = rows(B);
    if (recipe == "verma") {  // --schedule flat: the log's lr (column 3) is 3e-4 from the warmup's end on
      int flat_rows = 0;
      for (size_t i = 1; i < ra.size(); ++i) {
        std::stringstream ls(ra[i]);
        std::string step, train, val, lr;
        std::getline(ls, step, ',');
        std::getline(ls, train, ',');
        std::getline(ls, val, ',');
        std::getline(ls, lr, ',');
        if (std::stoll(step) < 5) continue;
        CHECK(std::stod(lr) == Approx(3e-4).epsilon(1e-6));
        ++flat_rows;
      }
      CHECK(flat_rows >= 50);
    }
    CHECK(rb.size() == ra.size());
    for (size_t i = 0; i < std::min(ra.size(), rb.size()); ++i)
      if (rb[i] != ra[i]) {
        FAIL_CHECK("log row " << i << " differs: straight " << ra[i] << ", resumed " << rb[i]);
        break;
      }
    const auto ta = load_safetensors(A + "/checkpoint.safetensors"),
               tb = load_safetensors(B + "/checkpoint.safetensors");
    for (const auto& [name, t] : ta.tensors) {
      INFO(name);
      REQUIRE(tb.tensors.count(name) == 1);
      CHECK(tb.tensors.at(name).to_vector() == t.to_vector());
    }
    // the checkpoint's names: learned positions only on GPT-2's block (verma), the recipe's head, no biases in
    // the linears, and no norm's beta (verma: --norm-bias off; the others' norms have none)
    CHECK(ta.tensors.count("wpe.weight") == (recipe == "verma" ? 1u : 0u));
    CHECK(ta.tensors.count("blocks.0.attn.qkv.bias") == 0);
    CHECK(ta.tensors.count("lm_head.weight") == (recipe == "dyt-llm" ? 1u : 0u));
    CHECK(ta.tensors.count("ln_f.bias") == 0);
    CHECK(ta.tensors.count("blocks.0.ln1.bias") == 0);
    // --bhyt-refresh auto is resolved for the run's 60 steps: every max(1, min(1000, 60 / 50)) = 1
    if (recipe == "bhyt-released") CHECK_THAT(ta.metadata.at("model"), Contains("\"bhyt_refresh\":1"));
  }
}
