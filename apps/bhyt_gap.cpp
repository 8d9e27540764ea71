// bhyt_gap: BHyT's gap to LayerNorm explained by controls and a long run
// (studies/compare/bhyt_gap.h).
//   build/release/bhyt_gap --doc docs/results/bhyt_gap.md    # make bhyt-gap: 30 controls, 9 long runs
//   build/release/bhyt_gap --seeds 1337 --long-steps 1000 --out runs/gap1   # one seed, shorter
//   build/release/bhyt_gap --reuse --out runs/bhyt_gap       # the report again, from results.json
#include "studies/compare/bhyt_gap.h"
#include "train/flags/program.h"
#include "train/safety/stop_signals.h"

int main(int argc, char** argv) {
  nl::install_stop_signals("bhyt_gap");
  return nl::run_program("bhyt_gap",
                         [&] { return nl::bhyt_gap_main(std::vector<std::string>(argv + 1, argv + argc)); });
}
