// Hand-made results of make demo's comparison (the results.json compare_norms writes), for
// the tests of its rows and reports: test_compare_norms.cpp, and test_tuning.cpp (make
// demo's report beside a tuned comparison, which records the same recipe).
#pragma once
#include <string>

#include "tests/studies/results_doc.h"

namespace nl::test {

// The recipe a hand-made document records: the tiny grid's.
inline json tiny_recipe() {
  return {{"layers", 2}, {"dim", 16}, {"heads", 2}, {"seq", 8}, {"batch", 2}, {"steps", 10}, {"lr", 0.001},
          {"warmup", 1}, {"min_lr", 0.0001}, {"wd", 0.1}, {"clip", 1.0}, {"seed", 1}, {"eval_batches", 1}};
}

// One run of the demo: `val` its validation loss at its one logged step (its training loss
// 0.1 above), the root-mean-square of its residual stream 2 after the embedding, 6 at the end.
inline json demo_run(const std::string& label, const std::string& block, const std::string& norm,
                     const std::string& recipe, double val, int exit_code = 0, bool diverged = false) {
  json result = {{"final_train_loss", val + 0.1}, {"val_loss", val}, {"tok_per_s", 1000.0}, {"rms_0", 2.0},
                 {"rms_2", 6.0}, {"diverged", diverged}, {"steps", 10}, {"seconds", 1.0}};
  return {{"label", label},
          {"flags", "--norm " + norm},
          {"config", {{"block", block}, {"norm", norm}, {"recipe", recipe}, {"layers", 2}}},
          {"exit_code", exit_code},
          {"result", exit_code == 0 ? result : json()},
          {"curve", json::array({json::array({10, std::to_string(val)})})},
          {"train_curve", json::array({json::array({10, std::to_string(val + 0.1)})})}};
}

// The demo's document around `runs`: the unigram loss 3.3, the tiny recipe.
inline json demo_doc(const json& runs) {
  return {{"date", "2026-12-02"}, {"jobs", 2},          {"threads", 1},           {"cores", 2}, {"load", 0.5},
          {"seconds", 90.0},      {"unigram_loss", 3.3}, {"recipe", tiny_recipe()}, {"runs", runs}};
}

}  // namespace nl::test
