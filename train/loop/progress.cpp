#include "train/loop/progress.h"

#include <unistd.h>

#include <cmath>

namespace nl {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

double eta_seconds(double elapsed, double done, double total) {
  if (done <= 0) return NAN;
  return elapsed / done * (total - done);
}

ProgressLine::ProgressLine(bool quiet, std::FILE* out)
    : quiet_(quiet), tty_(!quiet && isatty(fileno(out))), out_(out) {}

void ProgressLine::show(const std::string& line, bool keep, int64_t call_number, int64_t every) {
  if (quiet_) return;
  if (tty_) {
    std::fprintf(out_, "\r%s\033[K", line.c_str());
    open_ = !keep;
    if (keep) std::fprintf(out_, "\n");
  } else if (keep || (every > 0 && call_number % every == 0)) {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressLine::finish() {
  if (tty_ && open_) std::fprintf(out_, "\n");
  open_ = false;
  std::fflush(out_);
}

}  // namespace nl
