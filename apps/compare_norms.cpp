// compare_norms: the runner behind `make demo` (studies/compare/compare_norms.h).
//   build/release/compare_norms                          # the thirteen runs of make demo
//   build/release/compare_norms --arms ln,cbwc,bhyt-released --steps 200 --out runs/cmp
//   build/release/compare_norms --reuse --out runs/demo  # the report again, from results.json
//   build/release/compare_norms --arms ln,dyt --out runs/tuned --tune 'lr=3e-4,1e-3;warmup=50,500'
//       --tune-dyt 'lr=3e-4,1e-3;alpha0=0.1,1'      # each run at its best of 4 settings (make demo-tuned)
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
