#include "studies/report/json_fields.h"

namespace nl {

FieldError::FieldError(std::string where, std::string what)
    : Error(where + " " + what), path(std::move(where)), problem(std::move(what)) {}

FieldError FieldError::within(const std::string& key) const {
  if (path.empty()) return FieldError(key, problem);
  return FieldError(key + (path[0] == '[' || key.empty() ? "" : ".") + path, problem);
}

namespace fields {

void wrong_kind(const nlohmann::json& v, const char* wanted) {
  throw FieldError("", "is " + json_kind_name(v) + ", not " + wanted);
}

}  // namespace fields

}  // namespace nl
