// depth_study: the BHyT depth study (studies/depth/depth_study.h).
//   build/release/depth_study                        # the whole study (docs/results/depth.md)
//   build/release/depth_study --speed                # only the timing, printed
//   build/release/depth_study --reuse                # the report again, from OUT/results.json
//   mpirun -np 4 build/release-mpi/depth_study       # the grid dealt out over 4 ranks (make MPI=1)
#include "studies/depth/depth_study.h"
#include "tensor/threads.h"
#include "train/flags/program.h"
#include "train/safety/distributed.h"
#include "train/safety/stop_signals.h"

using namespace nl;

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  dist::init(&argc, &argv);  // under mpirun the ranks share the grid (studies/grid/grid.h)
  const int code = run_program("depth_study", [&] {
    install_stop_signals();
    return depth_study_main(std::vector<std::string>(argv + 1, argv + argc));
  });
  dist::finalize();
  return code;
}
