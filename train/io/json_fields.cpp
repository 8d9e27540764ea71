#include "train/io/json_fields.h"

namespace nl {

FieldError::FieldError(std::string where, std::string what)
    : Error(where + " " + what), path(std::move(where)), problem(std::move(what)) {}

FieldError FieldError::within(const std::string& key) const {
  if (path.empty()) return FieldError(key, problem);
  return FieldError(key + (path[0] == '[' || key.empty() ? "" : ".") + path, problem);
}

std::string json_kind_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "true or false";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

namespace fields {

void wrong_kind(const nlohmann::json& v, const char* wanted) {
  throw FieldError("", "is " + json_kind_name(v) + ", not " + wanted);
}

void out_of_range(const nlohmann::json& v, const char* range) {
  throw FieldError("", "is " + v.dump() + ", outside " + range);
}

}  // namespace fields

}  // namespace nl
