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
// Runs in eval mode without recording, and restores the model's mode.
std::string sample_text(GPT& model, int64_t length, float temperature, int64_t top_k, uint64_t seed);

}  // namespace nl
