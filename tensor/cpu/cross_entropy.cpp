// Cross-entropy with integer targets, fused with the log-softmax so that the
// probabilities are never stored: the forward keeps one log-sum-exp per row and the
// backward rebuilds softmax(logits) from it.
#include <cmath>
#include <limits>
#include <vector>

#include "tensor/cpu/check.h"
#include "tensor/cpu/fast_math.h"
#include "tensor/cross_entropy_targets.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/threads.h"

namespace nl {
namespace {

// The row's maximum and sum of exp(x - max) in eight lanes (element j in lane j % 8),
// the lanes combined in a fixed order: independent lanes vectorise, and the result does
// not depend on the thread count. With a double std::exp per logit in one chain of adds
// the loss was 3 % of a tiny training step. fast::exp is within a few ulps (fast_math.h);
// the sum stays in double.
float row_max(const float* row, int64_t V) {
  float lane[8];
  for (int k = 0; k < 8; ++k) lane[k] = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
  for (; j + 8 <= V; j += 8)
    for (int k = 0; k < 8; ++k) lane[k] = row[j + k] > lane[k] ? row[j + k] : lane[k];
  for (int k = 0; j < V; ++j, ++k) lane[k] = row[j] > lane[k] ? row[j] : lane[k];
  float m = lane[0];
  for (int k = 1; k < 8; ++k) m = lane[k] > m ? lane[k] : m;
  return m;
}

double row_sum_exp(const float* row, int64_t V, float m) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= V; j += 8) {
    float e[8];  // the exps in float first: a loop that also widens to double stayed scalar
    for (int k = 0; k < 8; ++k) e[k] = fast::exp(row[j + k] - m);
    for (int k = 0; k < 8; ++k) lane[k] += (double)e[k];
  }
  for (int k = 0; j < V; ++j, ++k) lane[k] += (double)fast::exp(row[j] - m);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace

// loss = mean over kept rows r of (lse_r - logits[r, target_r]),  lse_r = log sum_j exp(logits[r, j])
Tensor cross_entropy_forward(const Tensor& logits, const Tensor& targets, int ignore_index, Tensor& lse) {
  if (on_cuda("cross_entropy", {&logits, &targets}))
    return cuda::cross_entropy_forward(logits, targets, ignore_index, lse);
  check_cpu_f32("cross_entropy", logits);
  const int64_t kept = check_targets("cross_entropy", logits, targets, ignore_index);
  const int64_t N = logits.size(0), V = logits.size(1);
  Tensor x = logits.contiguous();
  Tensor t = targets.contiguous();
  lse = Tensor::empty({N});
  // each row's loss first, summed in row order afterwards: an OpenMP reduction would add
  // the threads' partial sums in the order they finish, so the last bit could change
  // from run to run (docs/reliability.md, determinism)
  std::vector<double> row_loss((size_t)N, 0.0);
#pragma omp parallel for if (logits.numel() > kParallelGrain)
  for (int64_t r = 0; r < N; ++r) {
    const float* row = x.data() + r * V;
    const float m = row_max(row, V);
    const double s = row_sum_exp(row, V, m);
    float l = m + (float)std::log(s);
    lse.data()[r] = l;
    int32_t target = t.idata()[r];
    if (target != ignore_index) row_loss[r] = (double)l - (double)row[target];
  }
  double total = 0;
  for (double v : row_loss) total += v;
  // With every row ignored the mean is 0/0: NaN, as PyTorch reports it.
  float loss = kept ? (float)(total / (double)kept) : std::numeric_limits<float>::quiet_NaN();
  return Tensor::scalar(loss);
}

// d loss / d logits[r, j] = (softmax_rj - [j == target_r]) / kept, zero on ignored rows
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, float dloss,
                              int ignore_index) {
  if (on_cuda("cross_entropy_backward", {&logits, &targets, &lse}))
    return cuda::cross_entropy_backward(logits, targets, lse, dloss, ignore_index);
  check_cpu_f32("cross_entropy_backward", logits);
  const int64_t kept = check_targets("cross_entropy_backward", logits, targets, ignore_index);
  const int64_t N = logits.size(0), V = logits.size(1);
  NL_CHECK(lse.numel() == N, "cross_entropy_backward: lse ", describe(lse), " does not match ", describe(logits));
  Tensor x = logits.contiguous();
  Tensor t = targets.contiguous();
  Tensor dx = Tensor::empty({N, V});
  const float scale = kept ? dloss / (float)kept : 0.0f;
#pragma omp parallel for if (logits.numel() > kParallelGrain)
  for (int64_t r = 0; r < N; ++r) {
    const float* row = x.data() + r * V;
    float* d = dx.data() + r * V;
    int32_t target = t.idata()[r];
    if (target == ignore_index) {
      for (int64_t j = 0; j < V; ++j) d[j] = 0.0f;
      continue;
    }
    const float l = lse.data()[r];
    for (int64_t j = 0; j < V; ++j) d[j] = fast::exp(row[j] - l) * scale;
    d[target] -= scale;
  }
  return dx;
}

}  // namespace nl
