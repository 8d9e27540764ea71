#include "train/safety/nonfinite.h"

#include <cmath>
#include <sstream>

#include "tensor/error.h"
#include "tensor/optim.h"

namespace nl {

namespace {

bool all_finite(const float* x, int64_t n) {
  // a sum of x * 0 is NaN exactly when some x is NaN or infinite; one vectorisable pass
  float probe = 0.0f;
#pragma omp simd reduction(+ : probe)
  for (int64_t i = 0; i < n; ++i) probe += x[i] * 0.0f;
  return probe == 0.0f;
}

}  // namespace

std::string describe_nonfinite(int64_t step, float loss, const FlatParameters& flat) {
  return describe_nonfinite(step, loss, flat, sum_squares(flat.grads));
}

std::string describe_nonfinite(int64_t step, float loss, const FlatParameters& flat, double grad_sum_squares) {
  const float* g = flat.grads.data();
  const int64_t total = flat.grads.numel();
  const bool loss_ok = std::isfinite(loss) && std::fabs(loss) <= kMaxLoss;
  if (loss_ok && std::isfinite(grad_sum_squares)) return "";
  std::ostringstream os;
  if (std::isfinite(loss) && !loss_ok) {
    os << "runaway loss (" << loss << ", beyond the bound " << kMaxLoss << ") ";
  } else {
    os << "non-finite ";
    if (!loss_ok) os << "loss (" << loss << ") ";
  }
  os << "at step " << step;
  for (size_t k = 0; k < flat.params.size(); ++k) {
    const int64_t begin = flat.offsets[k];
    const int64_t end = k + 1 < flat.offsets.size() ? flat.offsets[k + 1] : total;
    if (all_finite(g + begin, end - begin)) continue;
    int64_t bad = 0;
    for (int64_t i = begin; i < end; ++i) bad += !std::isfinite(g[i]);
    os << ": first non-finite gradient in parameter '" << flat.params[k].first << "' (" << bad << " of "
       << end - begin << " values NaN or inf)";
    return os.str();
  }
  os << " (every gradient is finite)";
  return os.str();
}

NonFiniteAction parse_nonfinite_action(const std::string& text) {
  if (text == "stop") return NonFiniteAction::Stop;
  if (text == "skip") return NonFiniteAction::Skip;
  fail("--on-nonfinite must be 'stop' or 'skip', got '", text, "'");
}

const char* to_string(NonFiniteAction action) { return action == NonFiniteAction::Stop ? "stop" : "skip"; }

}  // namespace nl
