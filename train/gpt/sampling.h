// Text generation from a GPT: one byte at a time from the model's distribution at the
// last position, sharpened by the temperature, restricted to the top_k most likely bytes
// and then to the smallest set of them whose probability reaches top_p (nucleus
// sampling). Deterministic for a seed, so two models that compute the same logits write
// the same text (the folding test relies on it).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nn/gpt.h"
#include "tensor/random.h"

namespace nl {

struct SampleSettings {
  int64_t length = 300;      // bytes to generate
  float temperature = 0.8f;  // > 0; below 1 sharpens, above 1 flattens
  int64_t top_k = 40;        // the k most likely bytes (clamped to [1, vocab])
  float top_p = 1.0f;        // in (0, 1]; 1 keeps all k
  uint64_t seed = 1337;
};

// The bytes the next one is drawn from, most likely first, each with its weight
// exp((l_i - l_max) / temperature) (unnormalised): the top_k best of the V logits, cut to
// the shortest prefix whose weights reach top_p of the k's total (ties in the logits
// keep the lower byte first).
std::vector<std::pair<int, double>> next_byte_candidates(const float* logits, int64_t V, const SampleSettings& s);

// One draw from the candidates' weights with the generator's next uniform number.
int draw_byte(const std::vector<std::pair<int, double>>& candidates, Generator& gen);

// Generates s.length bytes after `prompt` (at most the model's context; empty: a single
// newline, which is not part of the output) and hands each to `emit` as it comes. The
// window fed to the model is the last `context` bytes. Runs in eval mode without
// recording, and restores the model's mode. With use_cache (and a model that supports
// it) each new byte goes through GPT::forward_cached while the text fits the context;
// once the window slides, every position moves and each byte takes a full forward of
// the window, as without the cache.
void generate(GPT& model, const std::string& prompt, const SampleSettings& s, const std::function<void(char)>& emit,
              bool use_cache = true);

// generate() from a newline, collected: the run's sample.txt.
std::string sample_text(GPT& model, int64_t length, float temperature, int64_t top_k, uint64_t seed,
                        bool use_cache = true);

}  // namespace nl
