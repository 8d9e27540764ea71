#include "train/loop/result_record.h"

#include "tensor/error.h"
#include "train/io/files.h"
#include "train/io/json_fields.h"

namespace nl {

using json = nlohmann::json;

namespace {

// the fields of result.json that every run has, whatever its task
const char* const kFixed[] = {"steps", "final_train_loss", "seconds", "cpu_seconds", "diverged", "skipped_steps"};

}  // namespace

double ResultRecord::figure(const std::string& name) const {
  double v = NAN;
  try {
    read_field(named, name.c_str(), v);
  } catch (const FieldError& e) {
    if (file.empty()) throw;
    fail(file, ": ", e.what());
  }
  return v;
}

void to_json(json& j, const ResultRecord& r) {
  j = r.named;
  j.update({{"steps", r.steps},
            {"final_train_loss", figure_json(r.final_train_loss)},
            {"seconds", r.seconds},
            {"cpu_seconds", figure_json(r.cpu_seconds)},
            {"diverged", r.diverged},
            {"skipped_steps", r.skipped_steps}});
}

void from_json(const json& j, ResultRecord& r) {
  if (!j.is_object()) fields::wrong_kind(j, "an object");
  read_field(j, "steps", r.steps);
  read_field(j, "final_train_loss", r.final_train_loss);
  read_field(j, "seconds", r.seconds);
  read_optional_field(j, "cpu_seconds", r.cpu_seconds);
  read_field(j, "diverged", r.diverged);
  read_optional_field(j, "skipped_steps", r.skipped_steps);
  r.named = j;
  for (const char* key : kFixed) r.named.erase(key);
}

ResultRecord result_record_of(const json& doc, const std::string& where) {
  ResultRecord r = read_record<ResultRecord>(doc, "", where);
  r.file = where;
  return r;
}

ResultRecord read_result_record(const std::string& path) {
  json doc;
  try {
    doc = json::parse(read_text_file(path, "result", 16 << 20));
  } catch (const json::exception& e) {
    fail(path, " is not valid JSON (", e.what(), ")");
  }
  return result_record_of(doc, path);
}

}  // namespace nl
