// The regime study's grid as values, before anything trains: which cells it has, which
// an earlier invocation already finished (--cells-from), what the rest would cost
// (--dry-run), and each cell's train_gpt / train_vit command. Every function here reads
// files (the --cells-from results) but starts no process, so each is tested on made-up
// flags (tests/studies/test_regime_stages.cpp).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "studies/grid/grid.h"
#include "studies/regime/regime_flags.h"
#include "studies/regime/regime_records.h"

namespace nl {

struct RegimeGrid {
  std::vector<RegimeCell> cells;               // regime_cells(flags.plan), in the grid's order
  std::vector<std::optional<RegimeRun>> kept;  // per cell: from the first --cells-from file that finished it
  std::vector<NotRunCell> not_run;             // --kept-only: the cells no file has (the report lists them)
  size_t kept_count() const;
};

// The cells of f.plan and those the --cells-from files finished with this recipe (a
// file of another recipe is refused naming the first difference).
RegimeGrid plan_regime(const RegimeFlags& f);

// --dry-run's text: each kind of cell left to train with its seeds and minutes, then the
// total at f.jobs runs at a time.
std::string estimate_regime(const RegimeFlags& f, const RegimeGrid& g);

// The grid runner's cells for the cells g trains (none with --kept-only): each one's
// program, folder, command line (the recipe, less what the study and the arm set, then the
// arm's flags and the cell's own) and estimated seconds; plan_of[i] is cell i's index in g.cells.
std::vector<GridCell> regime_grid_cells(const RegimeFlags& f, const RegimeGrid& g, std::vector<size_t>& plan_of);

}  // namespace nl
