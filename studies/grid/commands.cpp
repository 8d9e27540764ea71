#include "studies/grid/commands.h"

#include "tensor/error.h"
#include "train/flags/gpt_flags.h"
#include "train/flags/vit_flags.h"

namespace nl {

void add_train_gpt_flags(FlagParser& p, TrainGptCommand& c) {
  add_gpt_run_flags(p, c.run);
  add_act_stats_flags(p, c.stats);
  add_measure_flags(p, c.measure);
  p.toggle("--screen-dyt", c.screen,
           "stop at step --screen-steps with the verdict of DyT's screening rule (saturation > 0.43 predicts that "
           "DyT helps; see screen_dyt --help)",
           FlagRole::Control);
  add_screen_flags(p, c.screening);
  p.real("--dist-timeout", c.dist_timeout, 0, 1e6,
         "with several MPI ranks: seconds one rank may wait for the others in one collective before it gives up "
         "(0: forever)",
         FlagRole::Setting);
}

void add_train_vit_flags(FlagParser& p, TrainVitCommand& c) { add_vit_run_flags(p, c.run); }

nlohmann::ordered_json check_command(const std::string& program, const std::vector<std::string>& args) {
  FlagParser p(program, "");
  TrainGptCommand gpt;
  TrainVitCommand vit;
  if (program == "train_gpt") add_train_gpt_flags(p, gpt);
  else if (program == "train_vit") add_train_vit_flags(p, vit);
  else fail("grid: no flags known for the program '", program, "'");
  p.parse(args);
  return p.values();
}

}  // namespace nl
