// result.json: a run's figures at the end of its schedule, as train() writes them and as
// everything after reads them back (a resumed run with no step left, a study's grid).
// Its visit_fields (result_record.cpp) is the one place its keys are spelled, for its
// to_json and its from_json, so a file lacking one, or holding it with another type, is
// an error naming the key and the file rather than a NaN further on. The task names the
// rest (LogColumns): its evaluation columns (val_loss; val_loss, val_acc), its speeds
// (tok_per_s, tok_per_cpu_s), its measurement columns (rms_0, ...), and its own end's
// fields (train_vit: test_loss, test_accuracy, confusion); they are kept by those names
// in `named`.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "train/loop/log_row.h"

namespace nl {

struct ResultRecord {
  int64_t steps = 0;              // steps done (the schedule's length: result.json exists only then)
  double final_train_loss = NAN;  // the last step's (null in the file when not finite)
  double seconds = 0;             // the training loop's wall time, evaluations included
  double cpu_seconds = NAN;       // its CPU time; optional (absent before 2026-11-29: NaN)
  bool diverged = false;
  int64_t skipped_steps = 0;  // steps the non-finite guard skipped; optional (absent before 2026-12-01: 0)
  nlohmann::json named = nlohmann::json::object();  // the task's figures and fields, by their names
  std::string file;  // where it was read from, for figure()'s messages (not written; "" for one made here)

  // The number called `name` in `named` (NaN for null, a figure that was not finite);
  // throws naming it (and the file) when the result has no such field or holds something
  // else there.
  double figure(const std::string& name) const;
};

void to_json(nlohmann::json& j, const ResultRecord& r);
void from_json(const nlohmann::json& j, ResultRecord& r);

// result.json read back: missing, not JSON, or lacking a field is one nl::Error naming the
// file (and the field).
ResultRecord read_result_record(const std::string& path);
// The same for a result already parsed (`where`: the file it came from, for the messages).
ResultRecord result_record_of(const nlohmann::json& doc, const std::string& where);

}  // namespace nl
