// compare_vit: the runner behind `make demo-vit` (studies/compare/compare_vit.h).
//   build/release/compare_vit                             # the five norms, the demo recipe
//   build/release/compare_vit --epochs 3 --norms ln,dyt --out runs/cmp-vit
//   build/release/compare_vit --reuse --out runs/demo-vit # the report again, from results.json
#include "studies/compare/compare_vit.h"
#include "tensor/threads.h"
#include "train/flags/program.h"
#include "train/safety/stop_signals.h"

using namespace nl;

int main(int argc, char** argv) {
  install_stop_signals("compare_vit");
  return run_program("compare_vit", [&] {
    return compare_vit_main(std::vector<std::string>(argv + 1, argv + argc));
  });
}
