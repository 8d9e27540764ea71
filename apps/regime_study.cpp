// regime_study: the DyT regime study (studies/regime/regime_study.h).
//   build/release/regime_study --dry-run               # the default grid's cells and estimated time
//   build/release/regime_study                         # the default grid (docs/results/regime.md)
//   build/release/regime_study --grid full --dry-run   # the whole grid of issue 17
//   build/release/regime_study --reuse                 # the report again, from OUT/results.json
//   mpirun -np 4 build/release-mpi/regime_study        # the grid dealt out over 4 ranks (make MPI=1)
#include "studies/regime/regime_study.h"
#include "studies/report/study.h"

int main(int argc, char** argv) { return nl::run_study_program("regime_study", argc, argv, nl::regime_study_main); }
