// Tests of text generation (train/gpt/sampling.h): on hand-made logits the candidates
// are the top_k best, sharpened by the temperature, and top_p keeps the smallest set of
// them whose probability reaches p; draws follow the kept set's renormalised
// probabilities; greedy generation (top_k 1) from a prompt picks, byte after byte, the
// argmax of a full forward computed here; a seed gives the same text twice; a prompt
// longer than the context is refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "tests/nn/model_fixtures.h"
#include "train/gpt/sampling.h"

using namespace nl;
using Catch::Contains;

namespace {

std::set<int> kept(const std::vector<float>& logits, const SampleSettings& s) {
  std::set<int> out;
  for (const auto& [byte, weight] : next_byte_candidates(logits.data(), (int64_t)logits.size(), s)) out.insert(byte);
  return out;
}

// probabilities 0.15, 0.5, 0.05, 0.3 for bytes 0..3: sorted, 1 (0.5), 3 (0.3), 0 (0.15), 2 (0.05)
const std::vector<float> kLogits = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};

SampleSettings settings(int64_t top_k, float top_p, float temperature = 1.0f) {
  SampleSettings s;
  s.top_k = top_k;
  s.top_p = top_p;
  s.temperature = temperature;
  return s;
}

// The index of the largest logit of the last position (the lowest index on a tie).
int argmax_last(const Tensor& logits, int64_t V) {
  const float* last = logits.data() + (logits.numel() - V);
  int best = 0;
  for (int i = 1; i < V; ++i)
    if (last[i] > last[best]) best = i;
  return best;
}

std::unique_ptr<GPT> small_model(uint64_t seed) {
  Generator gen(seed);
  auto model = std::make_unique<GPT>(nl::test::gpt_config(256, 1, 16, 2, 8, "ln"), gen);
  nl::test::scramble_parameters(*model, gen, [](const std::string& n) { return n.rfind("wte", 0) == 0; }, 0.3f);
  return model;
}

}  // namespace

TEST_CASE("sampling: top-p keeps the smallest set of the most likely bytes whose probability reaches p",
          "[sampling]") {
  CHECK(kept(kLogits, settings(4, 1.0f)) == std::set<int>{0, 1, 2, 3});
  CHECK(kept(kLogits, settings(4, 0.4f)) == std::set<int>{1});        // 0.5 >= 0.4
  CHECK(kept(kLogits, settings(4, 0.7f)) == std::set<int>{1, 3});     // 0.5 < 0.7 <= 0.8
  CHECK(kept(kLogits, settings(4, 0.9f)) == std::set<int>{0, 1, 3});  // 0.8 < 0.9 <= 0.95
  CHECK(kept(kLogits, settings(4, 0.99f)) == std::set<int>{0, 1, 2, 3});
  // top-k first: of the 2 best, p is taken of their own total (0.5 / 0.8 = 0.625 >= 0.6)
  CHECK(kept(kLogits, settings(2, 0.6f)) == std::set<int>{1});
  CHECK(kept(kLogits, settings(2, 0.7f)) == std::set<int>{1, 3});
  // the weights are exp((l - l_max) / T): at T = 0.5 the probabilities are squared, then renormalised
  const auto c = next_byte_candidates(kLogits.data(), 4, settings(4, 1.0f, 0.5f));
  REQUIRE(c.size() == 4);
  CHECK(c[0].first == 1);
  CHECK(c[1].first == 3);
  CHECK(c[1].second / c[0].second == Approx(0.36).epsilon(1e-5));  // (0.3 / 0.5)^2
}

TEST_CASE("sampling: draws follow the kept bytes' renormalised probabilities", "[sampling]") {
  const auto candidates = next_byte_candidates(kLogits.data(), 4, settings(4, 0.7f));
  Generator gen(5);
  int ones = 0, threes = 0;
  const int draws = 20000;
  for (int i = 0; i < draws; ++i) {
    const int b = draw_byte(candidates, gen);
    ones += b == 1;
    threes += b == 3;
  }
  CHECK(ones + threes == draws);  // nothing outside the kept set
  CHECK((double)ones / draws == Approx(0.5 / 0.8).margin(0.015));
}

TEST_CASE("sampling: top-k 1 is the greedy argmax of a full forward, byte after byte, past the context",
          "[sampling]") {
  auto owned = small_model(11);
  GPT& model = *owned;
  const std::string prompt = "ab";
  SampleSettings s = settings(1, 1.0f);
  s.length = 20;  // 22 bytes in all: the window slides past the context of 8
  for (bool use_cache : {false, true}) {
    INFO("use_cache " << use_cache);
    std::string generated;
    generate(model, prompt, s, [&](char ch) { generated.push_back(ch); }, use_cache);
    REQUIRE(generated.size() == 20);
    // the greedy continuation, one full forward of the last 8 bytes per byte
    std::vector<int32_t> ids(prompt.begin(), prompt.end());
    NoGradGuard no_grad;
    model.eval();
    for (size_t n = 0; n < generated.size(); ++n) {
      const size_t start = ids.size() > 8 ? ids.size() - 8 : 0;
      const std::vector<int32_t> window(ids.begin() + (long)start, ids.end());
      const Tensor logits = model.forward(Tensor::from_ints(window, {1, (int64_t)window.size()})).value().contiguous();
      const int best = argmax_last(logits, 256);
      const float* last = logits.data() + (logits.numel() - 256);
      // the cached forward may round differently: the byte it chose is the argmax up to that
      const int chosen = (unsigned char)generated[n];
      INFO("byte " << n);
      if (use_cache) CHECK(last[chosen] >= last[best] - 1e-5f);
      else CHECK(chosen == best);
      ids.push_back(chosen);
    }
  }
}

TEST_CASE("sampling: a seed gives the same text twice, another seed other text", "[sampling]") {
  auto owned = small_model(12);
  GPT& model = *owned;
  SampleSettings s = settings(256, 0.95f, 1.0f);
  s.length = 60;
  auto text = [&](uint64_t seed) {
    s.seed = seed;
    std::string out;
    generate(model, "Q: ", s, [&](char ch) { out.push_back(ch); });
    return out;
  };
  const std::string a = text(3);
  CHECK(a.size() == 60);
  CHECK(text(3) == a);
  CHECK(text(4) != a);
}

TEST_CASE("sampling: a prompt longer than the context is refused", "[sampling]") {
  auto owned = small_model(13);
  GPT& model = *owned;
  SampleSettings s;
  s.length = 1;
  std::string out;
  generate(model, std::string(8, 'x'), s, [&](char ch) { out.push_back(ch); });  // the whole context: fine
  CHECK(out.size() == 1);
  CHECK_THROWS_WITH(generate(model, std::string(9, 'x'), s, [](char) {}),
                    Contains("9 bytes") && Contains("context of 8"));
}
