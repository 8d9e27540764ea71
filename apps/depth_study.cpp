// depth_study: the BHyT depth study (studies/depth/depth_study.h).
//   build/release/depth_study                        # the whole study (docs/results/depth.md)
//   build/release/depth_study --speed                # only the timing, printed
//   build/release/depth_study --reuse                # the report again, from OUT/results.json
//   mpirun -np 4 build/release-mpi/depth_study       # the grid dealt out over 4 ranks (make MPI=1)
#include "studies/depth/depth_study.h"
#include "studies/report/study.h"

int main(int argc, char** argv) { return nl::run_study_program("depth_study", argc, argv, nl::depth_study_main); }
