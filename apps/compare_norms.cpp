// compare_norms: the runner behind `make demo` (studies/compare/compare_norms.h).
//   build/release/compare_norms                          # the ten runs of make demo
//   build/release/compare_norms --runs ln,cbwc,bhyt-released --steps 200 --out runs/cmp
//   build/release/compare_norms --reuse --out runs/demo  # the report again, from results.json
#include "studies/compare/compare_norms.h"
#include "tensor/threads.h"
#include "train/flags/program.h"
#include "train/safety/stop_signals.h"

using namespace nl;

int main(int argc, char** argv) {
  install_stop_signals("compare_norms");
  return run_program("compare_norms", [&] {
    return compare_norms_main(std::vector<std::string>(argv + 1, argv + argc));
  });
}
