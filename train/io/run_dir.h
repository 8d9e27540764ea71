// A run's folder (--out): which files make it one, when a program may write into it,
// and whether a run there has the recipe of another. A run is never lost by starting
// another in its folder:
//   fresh (neither flag)  the folder must hold no run's files (missing or empty is fine)
//   --resume              continues the run there: its recipe must be this one's
//   --overwrite           replaces it: once every check has passed, every file of the old
//                         run is deleted before the first new one is written
// Files that no run writes (a user's notes) are never touched, and do not make a folder
// a run's.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace nl {

// Whether a file name is one that some program writes into a run's folder:
// config.json, log.csv, act_stats.csv, measurements.json, result.json, sample.txt,
// confusion.csv, fold_report.txt, checkpoint.safetensors, checkpoint-stepN.safetensors, and any of
// them with ".tmp" added (a write that was killed).
bool is_run_file(const std::string& name);

// The run files in dir, sorted (none when it does not exist).
std::vector<std::string> run_files(const std::string& dir);

// Throws, naming `flag`, the folder and up to three of its run files, when a program
// that starts a run (resume and overwrite both false) would write into a folder that
// holds another run's files; or when `dir` exists but is not a folder, or cannot be
// written.
void check_fresh_folder(const std::string& dir, const std::string& flag, bool resume, bool overwrite);

// Throws, naming `flag`, for a folder name no run may have: empty, holding a control
// character (a newline broke every file that lists it), the filesystem's root or the
// home folder (where --overwrite would delete files of those names).
void check_run_folder_name(const std::string& dir, const std::string& flag);

// Deletes every run file in dir (--overwrite); throws naming the one it cannot delete.
void remove_run_files(const std::string& dir);

// The first of `keys` whose value differs between two recorded configs (a run's
// config.json): "--batch 8 in the checkpoint, 4 in this run" with `there` / `here`
// naming the two; "" when they agree on every key. A key `there` does not record counts
// as its value in `defaults` (a flag that came with a later version, such as a newly
// registered norm's option); a key missing otherwise differs ("unset").
std::string first_recipe_difference(const nlohmann::ordered_json& there, const nlohmann::ordered_json& here,
                                    const std::vector<std::string>& keys, const nlohmann::ordered_json& defaults,
                                    const std::string& there_name, const std::string& here_name);

}  // namespace nl
