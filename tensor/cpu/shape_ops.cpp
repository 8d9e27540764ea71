// Joining, splitting and masking: concat copies parts into slices of one output,
// split returns views, the causal mask and dropout build new tensors.
#include "tensor/cpu/check.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace nl {

Tensor concat(const std::vector<Tensor>& parts, int64_t axis) {
  NL_CHECK(!parts.empty(), "concat: no tensors given");
  for (const Tensor& p : parts) {  // on either device: the copies below run where the parts are
    common_device("concat", {&parts[0], &p});
    NL_CHECK(p.defined() && p.dtype() == DType::F32, "concat: expected float32, got ", describe(p));
  }
  const int nd = parts[0].dim();
  int a = normalize_axis(axis, nd, "concat");
  Shape shape = parts[0].shape();
  shape[a] = 0;
  for (const Tensor& p : parts) {
    bool ok = p.dim() == nd;
    for (int i = 0; ok && i < nd; ++i) ok = i == a || p.shape()[i] == parts[0].shape()[i];
    NL_CHECK(ok, "concat: ", describe(p), " does not match ", describe(parts[0]), " outside axis ", a);
    shape[a] += p.shape()[a];
  }
  Tensor out = Tensor::empty(shape, DType::F32, parts[0].device());
  int64_t start = 0;
  for (const Tensor& p : parts) {
    Tensor dst = out.slice(a, start, start + p.shape()[a]);
    dst.copy_from(p);
    start += p.shape()[a];
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis) {
  int a = normalize_axis(axis, x.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    NL_CHECK(s >= 0, "split: negative size ", s);
    total += s;
  }
  NL_CHECK(total == x.shape()[a], "split: sizes add up to ", total, " but axis ", a, " of ", describe(x), " is ",
           x.shape()[a]);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(x.slice(a, start, start + s));
    start += s;
  }
  return out;
}

Tensor causal_mask_fill(const Tensor& x, float value) {
  if (on_cuda("causal_mask", {&x})) return cuda::causal_mask_fill(x, value);
  check_cpu_f32("causal_mask", x);
  NL_CHECK(x.dim() >= 2, "causal_mask: needs (..., T, S), got ", describe(x));
  const int64_t T = x.size(-2), S = x.size(-1);
  NL_CHECK(S >= T, "causal_mask: more queries than keys in ", describe(x));
  Tensor out = x.clone();
  const int64_t mats = T * S > 0 ? out.numel() / (T * S) : 0;
  float* o = out.data();
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = i + (S - T) + 1; j < S; ++j) o[(m * T + i) * S + j] = value;
  return out;
}

Tensor dropout_mask(const Shape& shape, float p, Generator& gen) {
  NL_CHECK(p >= 0.0f && p < 1.0f, "dropout: p must be in [0, 1), got ", p);
  Tensor mask = Tensor::empty(shape);
  const float keep = 1.0f / (1.0f - p);
  float* m = mask.data();
  for (int64_t i = 0; i < mask.numel(); ++i) m[i] = gen.uniform() < p ? 0.0f : keep;
  return mask;
}

}  // namespace nl
