#include "train/gpt/sampling.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace nl {

std::string sample_text(GPT& model, int64_t length, float temperature, int64_t top_k, uint64_t seed,
                        bool use_cache) {
  NoGradGuard no_grad;
  const bool was_training = model.training();
  model.eval();
  Generator gen(seed);
  std::vector<int32_t> ids = {'\n'};
  std::string out;
  const int64_t V = model.config.vocab;
  const int64_t k = std::clamp<int64_t>(top_k, 1, V);
  const int64_t context = model.config.context;
  KVCache cache;
  if (use_cache && model.supports_cache()) cache = model.make_cache(1);
  for (int64_t n = 0; n < length; ++n) {
    // the model may live on the GPU: ids go to it, the logits come back for sampling
    const Device device = model.wte->weight.value().device();
    Tensor logits;
    if (!cache.layers.empty() && (int64_t)ids.size() <= context) {
      // only the bytes the cache has not seen (the first time, the starting newline)
      const std::vector<int32_t> fresh(ids.begin() + cache.length, ids.end());
      logits = model.forward_cached(Tensor::from_ints(fresh, {1, (int64_t)fresh.size()}).to(device), cache)
                   .to(Device::CPU);
    } else {
      const int64_t start = std::max<int64_t>(0, (int64_t)ids.size() - context);
      const std::vector<int32_t> window(ids.begin() + start, ids.end());
      const Tensor ids_in = Tensor::from_ints(window, {1, (int64_t)window.size()}).to(device);
      logits = model.forward(ids_in).value().contiguous().to(Device::CPU);
    }
    const float* last = logits.data() + (logits.numel() - V);
    std::vector<int> order(V);
    for (int i = 0; i < V; ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) { return last[a] > last[b]; });
    // p_i proportional to exp((l_i - l_max) / temperature) over the k best; invert the CDF at u
    std::vector<double> p(k);
    double total = 0;
    for (int64_t i = 0; i < k; ++i) total += p[i] = std::exp((last[order[i]] - last[order[0]]) / temperature);
    double u = gen.uniform() * total;
    int64_t pick = 0;
    while (pick + 1 < k && (u -= p[pick]) > 0) ++pick;
    ids.push_back(order[pick]);
    out.push_back((char)order[pick]);
  }
  model.train(was_training);
  return out;
}

}  // namespace nl
