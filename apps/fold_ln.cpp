// fold_ln: folds a trained ln checkpoint into its cbwc form (studies/fold/fold_checkpoint.h).
//   build/release/fold_ln --in runs/ln --out runs/ln_folded
#include "studies/fold/fold_checkpoint.h"
#include "tensor/threads.h"
#include "train/flags/program.h"
#include "train/safety/stop_signals.h"

using namespace nl;

int main(int argc, char** argv) {
  install_stop_signals("fold_ln");
  configure_runtime(argv);
  return run_program("fold_ln", [&] { return fold_ln_main(std::vector<std::string>(argv + 1, argv + argc)); });
}
