// One value of a results file read by name, for a study's typed records (the depth
// study's: studies/depth/depth_records.h). A field that is missing, or holds another
// kind of value, throws one line naming where the file came from and the field:
//   "--reuse: runs/depth/results.json: runs[3].var_end is missing"
// so that a renamed key stops the reader instead of turning into a NaN and a "-" in a
// published report.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/report/results_schema.h"  // JsonKind

namespace nl {

class RecordReader {
 public:
  // `where`: the flag and file ("--reuse: runs/depth/results.json"); `path`: the field's
  // place in it ("" for the whole file).
  RecordReader(const nlohmann::json& value, std::string where, std::string path = "");

  bool has(const std::string& key) const;               // an object holding `key`
  RecordReader operator[](const std::string& key) const;  // a field of an object (throws when missing)
  RecordReader operator[](size_t i) const;                // an element of an array (throws past its end)
  std::vector<RecordReader> elements() const;             // the elements of an array

  int64_t integer() const;
  double number() const;  // a number, or null read as NaN (a non-finite number is written as null)
  bool boolean() const;
  std::string text() const;
  std::vector<double> numbers() const;  // an array of numbers or nulls
  std::vector<int64_t> integers() const;
  const nlohmann::json& object() const;  // an object, whole

  // The value itself when its kind is one of `kinds`; throws naming it otherwise.
  const nlohmann::json& as(unsigned kinds) const;

  // Throws "WHERE: FIELD <why>": a value of the right kind that the record cannot hold.
  [[noreturn]] void fail_because(const std::string& why) const;

 private:
  const nlohmann::json* value_;
  std::string where_, path_;
};

}  // namespace nl
