// dyt_trains: which DyT settings leave the unigram plateau on the demo GPT, seed after
// seed (studies/compare/dyt_trains.h).
//   build/release/dyt_trains --doc docs/results/dyt_trains.md   # make dyt-trains: 13 settings x 3 seeds
//   build/release/dyt_trains --seeds 1337 --steps 300 --out runs/dt1   # one seed, shorter
//   build/release/dyt_trains --reuse --out runs/dyt_trains        # the report again, from results.json
#include "studies/compare/dyt_trains.h"
#include "train/flags/program.h"
#include "train/safety/stop_signals.h"

int main(int argc, char** argv) {
  nl::install_stop_signals("dyt_trains");
  return nl::run_program("dyt_trains",
                         [&] { return nl::dyt_trains_main(std::vector<std::string>(argv + 1, argv + argc)); });
}
