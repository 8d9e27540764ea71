#include "train/loop/result_record.h"

#include "tensor/error.h"
#include "train/io/files.h"
#include "train/io/json_fields.h"

namespace nl {

using json = nlohmann::json;

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

// the fields of result.json that every run has, whatever its task
template <class Io>
void visit_fields(Io& io, FieldsOf<Io, ResultRecord> r) {
  io("steps", r.steps)("final_train_loss", r.final_train_loss)("seconds", r.seconds);
  io.optional("cpu_seconds", r.cpu_seconds)("diverged", r.diverged).optional("skipped_steps", r.skipped_steps);
}

// Not a plain list: the task's figures stand beside the fixed fields in the same object,
// so `named` is the object less the fixed fields' keys (those the writer writes).
void to_json(json& j, const ResultRecord& r) {
  json fixed;
  write_fields(fixed, r);
  j = r.named;
  j.update(fixed);
}

void from_json(const json& j, ResultRecord& r) {
  read_fields(j, r);
  json fixed;
  write_fields(fixed, r);
  r.named = j;
  for (const auto& field : fixed.items()) r.named.erase(field.key());
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
