// The DyT regime study's report, rendered from its results.json alone (regime_study
// writes that file, --reuse reads it back): the phase table per model size with seed
// ranges, LayerNorm's over-fitting, the paper's numbers beside the measured ones, the
// screen judged, the instruments, the ViT, DiffAttn and Llama arms, and the lists of
// what reproduced; each verdict computed by studies/report/verdicts.h.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "studies/regime/regime_records.h"

namespace nl {

// The report (studies/regime/regime.md.in filled in). plotted: the plots exist beside it.
// plot_stem: the report's file name without .md; its plots are STEM_loss.png and
// STEM_screen.png beside it, so that two reports in one folder keep their own plots.
std::string render_regime_report(const RegimeResults& results, bool plotted, const std::string& plot_stem = "regime");

// The paper's claims as this grid judges them, one row each (claim, paper, here, status,
// detail): the same verdicts the report lists, as data for the "what reproduces" table
// (studies/reproduces/reproduces.h). status: reproduced, not reproduced, artefact (the
// paper's sign only at the end of a run whose LN baseline over-fits), untestable here.
nlohmann::json regime_claims(const RegimeResults& results);

// The words of the report's Setup paragraph for a grid's recipe (results.json's "recipe"):
// recipe_text, bias_text, head_text, schedule_flat.
nlohmann::json setup_view(const nlohmann::json& recipe);

// OUT/regime_loss.csv (the end validation loss, mean over seeds, per size and arm at the
// base width) and OUT/regime_screen.csv (each DyT cell's screen saturation against its
// change from LayerNorm): what scripts/plot_regime.sh draws.
void write_plot_csvs(const std::string& out, const RegimeResults& results);

}  // namespace nl
