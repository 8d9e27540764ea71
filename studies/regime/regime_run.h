// The regime study's stages that start processes or write files: run the grid (each
// cell an ordinary train_gpt / train_vit run, studies/grid/grid.h) into RegimeResults,
// read them back for --reuse, and write the report (the plots' CSVs, the plots, the page
// and the results beside it).
#pragma once
#include <optional>

#include "studies/regime/regime_flags.h"
#include "studies/regime/regime_plan.h"
#include "studies/regime/regime_records.h"

namespace nl {

// Trains g's cells that are not kept (none with --kept-only), summarizes each into a
// RegimeRun, writes OUT/results.json and returns it as --reuse will read it; none on an
// MPI rank other than the lead.
std::optional<RegimeResults> run_regime(const RegimeFlags& f, const RegimeGrid& g);

// OUT/results.json alone (--reuse).
RegimeResults reuse_regime(const RegimeFlags& f);

// The plots' CSVs in OUT, the plots and the page at f.doc, the results beside the page
// (DOC's stem + .json: what a later --cells-from continues from).
void report_regime(const RegimeFlags& f, const RegimeResults& results);

}  // namespace nl
