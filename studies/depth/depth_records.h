// The depth study's records, each with its fields named once (its visit_fields in
// depth_records.cpp, walked by its writer and its reader): a cell's summary (what the grid
// keeps of one finished run, the same JSON whether the cell trained now or was kept from
// an earlier invocation) and OUT/results.json (the header every study has, the grid's
// axes, every cell's summary, the speed section). Reading a field that is missing or of
// another kind throws one line naming the file and the field (train/io/json_fields.h),
// so a renamed key is an error, not a "-".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/depth/depth_analysis.h"
#include "studies/depth/depth_speed.h"
#include "studies/report/study.h"
#include "train/io/json_fields.h"

namespace nl {

// One cell's summary: its run as the analysis reads it, the block and norm its
// config.json records (which say what the run is to the claims), and whether it was
// kept from an earlier invocation.
struct DepthCellSummary {
  DepthRun run;
  std::string block, norm;
  bool kept = false;

  nlohmann::json to_json() const;
};
void to_json(nlohmann::json& j, const DepthCellSummary& s);
void from_json(const nlohmann::json& j, DepthCellSummary& s);

// One arm of the grid as results.json lists it: its label and its flags as one line.
struct DepthArm {
  std::string label, flags;
};

// OUT/results.json. A non-finite number is written as null and read back as NaN.
struct DepthResults : StudyHeader {  // date, command, out, jobs, threads, cores, loads, recipe
  // the grid
  int64_t cells_run = 0, cells_kept = 0;
  double seconds = NAN;  // the grid's wall time
  std::vector<int64_t> depths, seeds;
  std::vector<DepthArm> arms;  // "variants" in the file
  std::vector<DepthCellSummary> runs;
  std::string plot_script;
  // the speed section: none when it timed nothing
  std::optional<std::vector<SpeedRow>> speed;
  int64_t speed_reps = 0;
  double speed_seconds = NAN;  // written beside a speed section; files before it lack it

  nlohmann::json to_json() const;
};
void to_json(nlohmann::json& j, const DepthArm& a);
void from_json(const nlohmann::json& j, DepthArm& a);
void to_json(nlohmann::json& j, const SpeedRow& r);
void from_json(const nlohmann::json& j, SpeedRow& r);
void from_json(const nlohmann::json& j, DepthResults& d);

// The speed section's rows as results.json's "speed" holds them (and --speed prints them).
nlohmann::json speed_json(const std::vector<SpeedRow>& rows);

// OUT/results.json for --reuse: missing, not JSON, or lacking a field is one line naming
// --reuse, the file and the field.
DepthResults read_depth_results(const std::string& out);

}  // namespace nl
