// The fields a study reads back from a results file (--reuse, --cells-from), checked
// before anything reads them: a file another version wrote, or one edited by hand, is
// refused with one line naming the flag, the file and the field, instead of reaching a
// lookup that throws a message naming none of them (or, on a `const json`, an assertion
// that aborts).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/io/json_fields.h"  // json_kind_name

namespace nl {

// The JSON types a field may have, or-ed together.
enum JsonKind : unsigned {
  kNull = 1, kBool = 2, kInteger = 4, kFloat = 8, kNumber = kInteger | kFloat, kString = 16, kArray = 32, kObject = 64,
  kAny = 127,
};

// One field: a path of keys from the top, "[]" for every element of an array and "[N]"
// for element N ("runs[].curve[][0]"), its kinds, and whether it may be absent.
// A field under an absent optional one, or under a null, is not looked for; one with
// `only_where` "KEY=TEXT" only in the objects whose KEY is the string TEXT (the GPT
// fields of a run whose "model" is "gpt").
struct ResultField {
  ResultField(std::string path, unsigned kinds, bool optional = false, std::string only_where = "")
      : path(std::move(path)), kinds(kinds), optional(optional), only_where(std::move(only_where)) {}
  std::string path;
  unsigned kinds;
  bool optional;
  std::string only_where;
};
using ResultSchema = std::vector<ResultField>;

// Throws ("FLAG: FILE: FIELD is missing" / "FLAG: FILE: FIELD is a string, not a number")
// at the first field of `schema` that `doc` lacks or holds with another type.
void check_results_schema(const nlohmann::json& doc, const ResultSchema& schema, const std::string& flag,
                          const std::string& file);

}  // namespace nl
