// A study's grid of training runs. Each cell is an ordinary run of a program beside
// the study's own (train_gpt, train_vit), in its own folder, so any cell can be rerun by
// hand from its config.json. Before any cell starts, every cell's command line is
// checked in-process by that program's own flags (train/flags/train_commands.h), so a bad
// value stops the study before it touches a file. Then the cells run `jobs` at a time,
// `threads` threads each (one thread per run shares two cores best: docs/performance.md),
// with one progress line for the grid: cells done, running cells' steps, an ETA.
//
// A cell whose folder already holds its finished run (result.json, and a config.json
// with the same recipe) is kept as it is; one that holds an unfinished run of the same
// recipe is resumed (--resume) from its checkpoint, or started again (--overwrite) when
// it stopped before its first one; one that holds a run of another recipe stops the
// study before anything runs, naming the cell and the first flag that differs. A cell
// with an empty or missing folder runs with neither flag, so a run that appears there in
// the meantime is refused by the program rather than replaced. SIGINT/SIGTERM reach
// the running cells (each writes its checkpoint), and the study ends; the same command
// later continues where it stopped.
//
// Under mpirun (a build with make MPI=1) the cells are dealt out by rank, cell i to rank
// i mod N, each rank running its share `jobs` at a time on its own machine; each rank
// then summarises its cells (GridOptions::summarize, where the cells' files are) and the
// lead rank receives every summary, so a cluster without a shared folder works too:
//   mpirun -np 8 --hostfile hosts.txt build/release-mpi/regime_study ...
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/grid/run_spec.h"

namespace nl {

struct GridCell {
  std::string label;              // for the progress line ("L8 pre+bhyt s1")
  std::string program;            // "train_gpt" or "train_vit"
  std::vector<std::string> args;  // its flags, without --out, --quiet, --threads, --resume
  std::string out_dir;
  double cost = 1.0;              // relative cost of one step, for the ETA (e.g. parameters x tokens)
};

struct CellOutcome;

struct GridOptions {
  int jobs = 0;           // cells at a time (0: one per core)
  int threads = 1;        // threads per cell
  bool quiet = false;     // no progress lines
  // What the study keeps of a finished cell, computed where its files are (null: only
  // the outcome); the lead rank gets every cell's in CellOutcome::summary.
  std::function<nlohmann::json(size_t cell, const CellOutcome& outcome)> summarize;
};

struct CellOutcome {
  int exit_code = -1;     // the run's exit code (0: done; 1: a numerical fault; 128 + signal)
  bool kept = false;      // its finished run was already there
  double seconds = 0;     // wall time of this invocation's run of it
  std::string errors;     // the end of its stderr
  nlohmann::json result;  // its result.json (null when there is none)
  nlohmann::json summary; // GridOptions::summarize's (null without one)
};

// The checked config.json of each cell, in order (throws naming the cell and the flag).
std::vector<nlohmann::ordered_json> check_grid(const std::vector<GridCell>& cells);

// Runs the grid (check_grid first); returns one outcome per cell, in order (on ranks
// other than the lead under mpirun: only that rank's cells are filled in, and the study
// should write nothing there). Throws when a program is not built, a cell's folder
// holds another recipe, or a stop signal came.
std::vector<CellOutcome> run_grid(const std::vector<GridCell>& cells, const GridOptions& options);

// How many runs go at a time: `jobs`, or one per core (at least 1) when jobs is 0.
int effective_jobs(int jobs);

// A study's grid from its program: every cell's flags checked first (check_grid), one
// line "STUDY: N runs, J at a time, T thread(s) each NOTE", then run_grid with
// `summarize` given each cell's checked config.json beside its outcome.
using CellSummary =
    std::function<nlohmann::json(size_t cell, const CellOutcome& outcome, const nlohmann::ordered_json& config)>;
std::vector<CellOutcome> run_study_grid(const std::string& study, const std::vector<GridCell>& cells, int jobs,
                                        int threads, const CellSummary& summarize, const std::string& note = "");

// What a study's results.json keeps of its grid: "runs" (each cell's summary, in order),
// "cells_run" (trained by this invocation) and "cells_kept" (finished before it).
void put_grid_outcomes(nlohmann::json& results, const std::vector<CellOutcome>& outcomes);

// [{"label", "flags"}] of run specs, as a study's results.json lists its arms or variants.
nlohmann::json run_specs_json(const std::vector<RunSpec>& specs);

// The file beside this running program: the grid's programs live in the same build folder.
std::string sibling_program(const std::string& name);

// A finished cell's result.json as the run wrote it (null when absent; throws naming it
// when it is not a regular file, not JSON, or not a ResultRecord: train/loop/result_record.h).
nlohmann::json read_result(const std::string& out_dir);

// The steps a cell's run will train, from its config (the flags as train_gpt or
// train_vit record them): --steps, or for train_vit's --epochs ceil(epochs x training
// images / batch), as ViTTask::steps() resolves it; 1 when neither is known. The
// progress line's step counts and ETA use it.
int64_t planned_steps(const nlohmann::ordered_json& config);

// What a study's grid would cost (--dry-run), every cell's flags checked first as the grid
// checks them (a bad one stops here too): its runs, those finished already (kept), and
// the minutes the others take, their steps at `step_ms` a step (one thread, one run per
// core) times each cell's cost (GridCell::cost, 1 for the demo GPT's size), over
// min(jobs, cores) cells at once.
struct GridEstimate {
  size_t runs = 0, kept = 0;
  double minutes = 0, step_ms = 0;
  int at_once = 1;  // --jobs, or the cores
};
GridEstimate estimate_grid(const std::vector<GridCell>& cells, int jobs, double step_ms);
// "STUDY: N runs<detail>, K finished already (kept); about M minutes at J at a time (S ms a step, --step-ms)"
std::string grid_plan_line(const std::string& study, const GridEstimate& e, const std::string& detail = "");
// Prints estimate_grid's line.
void print_grid_plan(const std::string& study, const std::vector<GridCell>& cells, int jobs, double step_ms,
                     const std::string& detail = "");

}  // namespace nl
