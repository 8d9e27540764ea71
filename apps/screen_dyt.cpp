// screen_dyt: the 500-step screening probe of "When does removing LayerNorm help?"
// (Verma 2026; ../shared/NORMS.md, DyT). Give it the full run's recipe and budget (the
// flags of train_gpt: --steps is the full run's length, which sets the schedule); it
// trains the DyT model for the first --screen-steps steps of that run, measures the tanh
// saturation |alpha x| > 2 averaged over the DyT sites on held-out batches, and prints
// the rule's verdict: DyT is predicted to end with a lower validation loss than
// LayerNorm iff the saturation exceeds 0.43. The rule is weak evidence.
//   build/release/screen_dyt --steps 2000 --train-bytes 100000 --emb-scale sqrt --dyt-alpha0 2
// The same is `train_gpt --norm dyt --screen-dyt ...`. The run's files, with a
// checkpoint at the screening step, go to --out: `train_gpt --resume` continues the run.
#include <cstdio>

#include "studies/instruments/screening.h"
#include "tensor/threads.h"
#include "train/flags/gpt_flags.h"
#include "train/flags/program.h"
#include "train/safety/stop_signals.h"

using namespace nl;

int main(int argc, char** argv) {
  install_stop_signals("screen_dyt", "before training started (no file was written)");
  configure_runtime(argv);
  return run_program("screen_dyt", [&] {
    FlagParser p("screen_dyt",
                 "Train the DyT model for the first 500 steps of a run and predict from its tanh saturation whether "
                 "DyT will beat LayerNorm (the paper's rule: saturation |alpha x| > 2 above 0.43). --norm defaults "
                 "to dyt; every other flag is train_gpt's.");
    GPTRunConfig c;
    c.model.norm.name = "dyt";
    c.out_dir = "runs/screen_dyt";
    add_gpt_run_flags(p, c);
    ScreenSettings screen;
    add_screen_flags(p, screen);
    if (!p.parse(argc, argv)) return 0;
    std::printf("%s", screen_message(screen_dyt(c, screen.steps, screen.batches)).c_str());
    return 0;
  });
}
