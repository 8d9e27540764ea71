#include "train/safety/flag_checks.h"

#include <unistd.h>

#include <cmath>

#include "tensor/error.h"

namespace nl {

void check_int_flag(const char* flag, int64_t value, int64_t lo, int64_t hi) {
  NL_CHECK(value >= lo && value <= hi, flag, " must lie in [", lo, ", ", hi, "], got ", value);
}

void check_real_flag(const char* flag, double value, double lo, double hi, bool lo_open) {
  NL_CHECK(std::isfinite(value) && (lo_open ? value > lo : value >= lo) && value <= hi, flag, " must lie in ",
           lo_open ? "(" : "[", lo, ", ", hi, "], got ", value);
}

void check_shared_run_flags(const SharedRunFlags& f) {
  check_int_flag("--layers", f.layers, 1, kMaxLayers);
  check_int_flag("--dim", f.dim, 1, kMaxDim);
  check_int_flag("--heads", f.heads, 1, f.dim);
  check_int_flag("--batch", f.batch, 1, kMaxBatch);
  check_int_flag("--warmup", f.warmup, 0, kMaxSteps);
  check_int_flag("--eval-every", f.eval_every, 1, kMaxSteps);
  check_int_flag("--threads", f.threads, 1, kMaxThreads);
  check_int_flag("--stop-after", f.stop_after, -1, kMaxSteps);
  check_real_flag("--lr", f.lr, 0, 1e35, true);
  check_real_flag("--min-lr", f.min_lr, 0, f.lr);
  check_real_flag("--wd", f.wd, 0, 1e6);
  check_real_flag("--clip", f.clip, 0, 1e30);
  check_real_flag("--dyt-alpha0", f.dyt_alpha0, -1e6, 1e6);
  check_real_flag("--bhyt-lambda", f.bhyt_lambda0, -1e6, 1e6);
}

void check_memory_estimate(double bytes, const std::string& what) {
  const double physical = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  NL_CHECK(physical <= 0 || bytes <= physical, what, " needs about ", std::round(bytes / gib * 10) / 10,
           " GiB, more than this machine's ", std::round(physical / gib * 10) / 10, " GiB of memory");
}

}  // namespace nl
