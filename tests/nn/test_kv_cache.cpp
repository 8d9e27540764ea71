// Tests of generation with a key/value cache (GPT::forward_cached, nn/attention.h):
// feeding a sequence in pieces through the cache gives the logits of one forward over
// the whole sequence, for every norm and block variant that has a cached form (the
// Llama block's RoPE included); the block-level BHyT approximation refuses; text
// sampled with and without the cache is the same, also past the context where the
// window slides.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "nn/gpt.h"
#include "tensor/ops.h"
#include "tests/nn/model_fixtures.h"
#include "tests/test_util.h"
#include "train/gpt/sampling.h"

using namespace nl;
using nl::test::random_ids;
using Catch::Contains;

namespace {

GPTConfig config_for(const std::string& norm, const std::string& block) {
  GPTConfig c = nl::test::gpt_config(40, 2, 24, 3, 16, norm, block);
  if (block == "llama") c.mlp = "swiglu", c.bias = false, c.tied_head = false;  // as --block llama implies
  return c;
}

// Moves every parameter off its initialisation (zero biases, unit gains), where a
// wrong position, a missing cached key or a dropped bias shows.
void perturb_by_noise(GPT& model, Generator& gen) {
  for (auto& [name, p] : model.named_parameters())
    p.value().copy_from(nl::add(p.value(), gen.normal(p.shape(), 0.0f, 0.1f)));
}

}  // namespace

TEST_CASE("kv cache: pieces fed through the cache give the whole sequence's logits", "[kv_cache]") {
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"ln", "pre"}, {"rms", "pre"}, {"cbwc", "pre"}, {"dyt", "pre"}, {"bhyt-exact", "pre"}, {"rms", "peri"},
      {"ln", "lns"}, {"rms", "llama"}, {"dyt", "llama"}, {"bhyt-exact", "llama"}};
  for (const auto& [norm, block] : variants) {
    INFO(norm << " " << block);
    Generator gen(40);
    GPT model(config_for(norm, block), gen);
    perturb_by_noise(model, gen);
    model.eval();
    REQUIRE(model.supports_cache());
    const Tensor ids = random_ids(gen, 2, 16, 40);
    Tensor whole;
    {
      NoGradGuard no_grad;
      whole = model.forward(ids).value();  // (2, 16, 40)
    }
    KVCache cache = model.make_cache(2);
    int64_t at = 0;
    for (int64_t piece : {5, 1, 1, 3, 6}) {  // a prompt, single tokens, then blocks, to the full context
      const Tensor logits = model.forward_cached(ids.slice(1, at, at + piece).contiguous(), cache);
      CHECK(cache.length == at + piece);
      CHECK_CLOSE(logits, whole.slice(1, at, at + piece), 1e-5, 1e-5);
      at += piece;
    }
    CHECK_THROWS_WITH(model.forward_cached(ids.slice(1, 0, 1).contiguous(), cache), Contains("overflow the context"));
  }
}

TEST_CASE("kv cache: refused for the BHyT approximation, in training mode, and for a cache of another batch",
          "[kv_cache]") {
  Generator gen(41);
  GPT bhyt(config_for("bhyt", "pre"), gen);
  bhyt.eval();
  CHECK(!bhyt.supports_cache());
  KVCache c1 = bhyt.make_cache(1);
  CHECK_THROWS_WITH(bhyt.forward_cached(random_ids(gen, 1, 2, 40), c1), Contains("no key/value-cached form"));

  GPT ln(config_for("ln", "pre"), gen);
  KVCache c2 = ln.make_cache(1);
  CHECK_THROWS_WITH(ln.forward_cached(random_ids(gen, 1, 2, 40), c2), Contains("call eval() first"));
  ln.eval();
  CHECK_THROWS_WITH(ln.forward_cached(random_ids(gen, 2, 2, 40), c2), Contains("cannot hold"));
}

TEST_CASE("kv cache: sampled text is the same with and without the cache, past the context too", "[kv_cache]") {
  // bhyt: no cached form, the plain path; llama: the keys in the cache are rotated by
  // their positions, the new queries by theirs
  for (const auto& [norm, block] : std::vector<std::pair<std::string, std::string>>{
           {"ln", "pre"}, {"cbwc", "pre"}, {"bhyt", "pre"}, {"rms", "llama"}, {"bhyt-exact", "llama"}}) {
    INFO(norm << " " << block);
    Generator gen(42);
    GPTConfig c = config_for(norm, block);
    c.vocab = 256;
    GPT model(c, gen);
    perturb_by_noise(model, gen);
    const std::string cached = sample_text(model, 40, 0.8f, 40, 7, true);  // 40 bytes > context 16
    CHECK(cached.size() == 40);
    CHECK(sample_text(model, 40, 0.8f, 40, 7, false) == cached);
    CHECK(sample_text(model, 40, 0.8f, 40, 8, true) != cached);  // the seed matters
  }
}
