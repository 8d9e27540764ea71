// The one-line progress display of a long job (a training run, a study's grid): on a
// terminal the line is rewritten in place; elsewhere (a log file, a pipe) whole lines
// are printed, and only now and then, so that logs stay short.
#pragma once
#include <cstdio>
#include <string>

namespace nl {

// "m:ss" (or "h:mm:ss" from an hour on) of a duration in seconds; "?" when not finite.
std::string format_duration(double seconds);

// Seconds left for `done` of `total` units after `elapsed` seconds, at the pace so far.
double eta_seconds(double elapsed, double done, double total);

class ProgressLine {
 public:
  explicit ProgressLine(bool quiet, std::FILE* out = stdout);
  // Shows `line`. `keep`: the line stays on screen (a validation result; on a terminal
  // it gets its own row), else a terminal shows it in place until the next one. Off a
  // terminal only kept lines, and every `every`-th call, are printed.
  void show(const std::string& line, bool keep, int64_t call_number, int64_t every = 50);
  // Ends an in-place line on a terminal.
  void finish();

 private:
  bool quiet_, tty_;
  std::FILE* out_;
  bool open_ = false;
};

}  // namespace nl
