// The CBWC paper's claims ("Enjoy your layer normalization with the computational
// efficiency of RMSNorm"; ../shared/NORMS.md) as rows of the "what reproduces" table
// (studies/report/claims.h), each computed from a committed results file:
//   - cbwc + RMSNorm trains like LayerNorm: a comparison's results (compare_norms'
//     results.json, e.g. docs/results/demo.json) holding an ln run and a cbwc run whose
//     configurations differ only in the norm;
//   - folding a trained LayerNorm model changes no prediction: fold_ln's fold_check.json
//     (docs/results/folding.json);
//   - the speed claims, which a study cannot measure (its runs share the cores): a row
//     that says where the benchmark is.
#pragma once
#include <nlohmann/json.hpp>

#include "studies/compare/comparison_records.h"

namespace nl {

// Two runs "train alike" when every validation loss they logged differs by at most this
// (nats): float rounding moves a 500-step run's loss by far less, a different model by far more.
constexpr double kSameTrajectoryNats = 1e-4;

// A fold "changes no prediction" when no logit moves by more than this.
constexpr double kSameLogits = 1e-4;

// One row per (cbwc run, its ln twin) of a comparison's results; none when it has no such pair.
nlohmann::json cbwc_training_claims(const ComparisonResults& comparison);

// The fold's rows from fold_ln's fold_check.json: the predictions, and the speed claim
// (untestable here: benchmarks measure it).
nlohmann::json fold_claims(const nlohmann::json& check);

}  // namespace nl
