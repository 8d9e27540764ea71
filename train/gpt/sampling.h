// Text generation from a GPT: one byte at a time from the model's distribution at the
// last position, restricted to the top_k most likely bytes and sharpened by the
// temperature. Deterministic for a seed, so two models that compute the same logits
// write the same text (the folding test relies on it).
#pragma once
#include <cstdint>
#include <string>

#include "nn/gpt.h"

namespace nl {

// Starts from a newline; the window fed to the model is the last `context` bytes.
// Runs in eval mode without recording, and restores the model's mode. With use_cache
// (and a model that supports it) each new byte goes through GPT::forward_cached while
// the text fits the context; once the window slides, every position moves and each
// byte takes a full forward of the window, as without the cache.
std::string sample_text(GPT& model, int64_t length, float temperature, int64_t top_k, uint64_t seed,
                        bool use_cache = true);

}  // namespace nl
