// depth_study: the BHyT depth study (studies/depth/depth_study.h).
//   build/release/depth_study                        # the whole study (docs/results/depth.md)
//   build/release/depth_study --speed                # only the timing, printed
//   build/release/depth_study --reuse                # the report again, from OUT/results.json
#include "studies/depth/depth_study.h"
#include "tensor/threads.h"
#include "train/flags/program.h"
#include "train/safety/stop_signals.h"

using namespace nl;

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  return run_program("depth_study", [&] {
    install_stop_signals();
    return depth_study_main(std::vector<std::string>(argv + 1, argv + argc));
  });
}
