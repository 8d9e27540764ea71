#include "train/gpt/sampling.h"

#include <algorithm>
#include <cmath>

#include "tensor/error.h"

namespace nl {

std::vector<std::pair<int, double>> next_byte_candidates(const float* logits, int64_t V, const SampleSettings& s) {
  const int64_t k = std::clamp<int64_t>(s.top_k, 1, V);
  std::vector<int> order(V);
  for (int i = 0; i < V; ++i) order[i] = i;
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  // p_i proportional to exp((l_i - l_max) / temperature) over the k best
  std::vector<std::pair<int, double>> out(k);
  double total = 0;
  for (int64_t i = 0; i < k; ++i) {
    out[i] = {order[i], std::exp((logits[order[i]] - logits[order[0]]) / s.temperature)};
    total += out[i].second;
  }
  if (s.top_p < 1.0f) {
    // the smallest prefix whose probability reaches top_p (the most likely byte at least)
    double kept = 0;
    size_t n = 0;
    while (n < out.size() && kept < (double)s.top_p * total) kept += out[n++].second;
    out.resize(std::max<size_t>(n, 1));
  }
  return out;
}

int draw_byte(const std::vector<std::pair<int, double>>& candidates, Generator& gen) {
  double total = 0;
  for (const auto& c : candidates) total += c.second;
  // invert the CDF at u
  double u = gen.uniform() * total;
  size_t pick = 0;
  while (pick + 1 < candidates.size() && (u -= candidates[pick].second) > 0) ++pick;
  return candidates[pick].first;
}

void generate(GPT& model, const std::string& prompt, const SampleSettings& s, const std::function<void(char)>& emit,
              bool use_cache) {
  const int64_t V = model.config.vocab;
  const int64_t context = model.config.context;
  NL_CHECK((int64_t)prompt.size() <= context, "the prompt is ", prompt.size(),
           " bytes, longer than the model's context of ", context, " bytes");
  NoGradGuard no_grad;
  const bool was_training = model.training();
  model.eval();
  Generator gen(s.seed);
  std::vector<int32_t> ids;
  for (char ch : prompt) ids.push_back((int32_t)(unsigned char)ch);
  if (ids.empty()) ids.push_back('\n');
  KVCache cache;
  if (use_cache && model.supports_cache()) cache = model.make_cache(1);
  for (int64_t n = 0; n < s.length; ++n) {
    // the model may live on the GPU: ids go to it, the logits come back for sampling
    const Device device = model.wte->weight.value().device();
    Tensor logits;
    if (!cache.layers.empty() && (int64_t)ids.size() <= context) {
      // only the bytes the cache has not seen (the first time, the whole prompt)
      const std::vector<int32_t> fresh(ids.begin() + cache.length, ids.end());
      logits = model.forward_cached(Tensor::from_ints(fresh, {1, (int64_t)fresh.size()}).to(device), cache)
                   .to(Device::CPU);
    } else {
      const int64_t start = std::max<int64_t>(0, (int64_t)ids.size() - context);
      const std::vector<int32_t> window(ids.begin() + start, ids.end());
      const Tensor ids_in = Tensor::from_ints(window, {1, (int64_t)window.size()}).to(device);
      logits = model.forward(ids_in).value().contiguous().to(Device::CPU);
    }
    const int next = draw_byte(next_byte_candidates(logits.data() + (logits.numel() - V), V, s), gen);
    ids.push_back(next);
    emit((char)next);
  }
  model.train(was_training);
}

std::string sample_text(GPT& model, int64_t length, float temperature, int64_t top_k, uint64_t seed, bool use_cache) {
  SampleSettings s;
  s.length = length;
  s.temperature = temperature;
  s.top_k = top_k;
  s.seed = seed;
  std::string out;
  generate(model, "", s, [&out](char ch) { out.push_back(ch); }, use_cache);
  return out;
}

}  // namespace nl
