// regime_study: the DyT regime study (studies/regime/regime_study.h).
//   build/release/regime_study --dry-run               # the default grid's cells and estimated time
//   build/release/regime_study                         # the default grid (docs/results/regime.md)
//   build/release/regime_study --grid full --dry-run   # the whole grid of issue 17
//   build/release/regime_study --reuse                 # the report again, from OUT/results.json
//   mpirun -np 4 build/release-mpi/regime_study        # the grid dealt out over 4 ranks (make MPI=1)
#include "studies/regime/regime_study.h"
#include "tensor/threads.h"
#include "train/flags/program.h"
#include "train/safety/distributed.h"
#include "train/safety/stop_signals.h"

using namespace nl;

int main(int argc, char** argv) {
  bound_thread_spinning(argv);
  dist::init(&argc, &argv);  // under mpirun the ranks share the grid (studies/grid/grid.h)
  const int code = run_program("regime_study", [&] {
    install_stop_signals("regime_study");
    return regime_study_main(std::vector<std::string>(argv + 1, argv + argc));
  });
  dist::finalize();
  return code;
}
