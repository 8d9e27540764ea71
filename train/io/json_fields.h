// Typed records read from JSON: the helpers a record's from_json uses, so that a field
// a file lacks, or holds with another type, is an error naming the field's whole path
// ("runs[3].val_end is missing", "runs[0].size is a string, not an integer") instead of
// a null that a report turns into NaN and then a "-". A record's to_json and from_json
// (nlohmann's ADL pair) are the one place its keys are spelled; the writer and every
// reader go through them.
//
//   void from_json(const nlohmann::json& j, MyRecord& r) {
//     read_field(j, "val_end", r.val_end);          // must be there
//     read_optional_field(j, "llama", r.llama);     // may be absent: r.llama keeps its default
//   }
//   MyRecord r = read_record<MyRecord>(doc, "--reuse", "docs/results/x.json");
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor/error.h"

namespace nl {

// A field missing or of another type: `path` is where (built up from the inside out as
// the error passes through each enclosing record), `problem` what ("is missing").
struct FieldError : Error {
  FieldError(std::string path, std::string problem);
  std::string path, problem;
  // the same problem one level further out: key "runs" and path "[3].val_end" give
  // "runs[3].val_end"
  FieldError within(const std::string& key) const;
};

// The name of a JSON value's kind as the messages say it ("a string", "an integer",
// "true or false", "null").
std::string json_kind_name(const nlohmann::json& v);

namespace fields {

[[noreturn]] void wrong_kind(const nlohmann::json& v, const char* wanted);

// each kind's reader (declared first: the containers' readers call one another)
template <class T>
void read(const nlohmann::json& v, std::optional<T>& out);
template <class T>
void read(const nlohmann::json& v, std::vector<T>& out);
template <class T>
void read(const nlohmann::json& v, std::map<std::string, T>& out);
template <class A, class B>
void read(const nlohmann::json& v, std::pair<A, B>& out);
template <class T, class = decltype(from_json(std::declval<const nlohmann::json&>(), std::declval<T&>()))>
void read(const nlohmann::json& v, T& out);

inline void read(const nlohmann::json& v, std::string& out) {
  if (!v.is_string()) wrong_kind(v, "a string");
  out = v.get<std::string>();
}
inline void read(const nlohmann::json& v, int64_t& out) {
  if (!v.is_number_integer()) wrong_kind(v, "an integer");
  out = v.get<int64_t>();
}
inline void read(const nlohmann::json& v, int& out) {
  int64_t wide = 0;
  read(v, wide);
  out = (int)wide;
}
inline void read(const nlohmann::json& v, bool& out) {
  if (!v.is_boolean()) wrong_kind(v, "true or false");
  out = v.get<bool>();
}
// A figure: a number, or null for one that was not finite (nlohmann writes NaN as null).
inline void read(const nlohmann::json& v, double& out) {
  if (v.is_null()) out = NAN;
  else if (v.is_number()) out = v.get<double>();
  else wrong_kind(v, "a number or null");
}
inline void read(const nlohmann::json& v, nlohmann::json& out) { out = v; }
template <class T>
void read(const nlohmann::json& v, std::optional<T>& out) {
  T value{};
  read(v, value);
  out = value;
}
template <class T>
void read(const nlohmann::json& v, std::vector<T>& out) {
  if (!v.is_array()) wrong_kind(v, "an array");
  out.assign(v.size(), T{});
  for (size_t i = 0; i < v.size(); ++i) try {
      read(v[i], out[i]);
    } catch (const FieldError& e) {
      throw e.within("[" + std::to_string(i) + "]");
    }
}
template <class T>
void read(const nlohmann::json& v, std::map<std::string, T>& out) {
  if (!v.is_object()) wrong_kind(v, "an object");
  out.clear();
  for (const auto& [key, value] : v.items()) try {
      read(value, out[key]);
    } catch (const FieldError& e) {
      throw e.within(key);
    }
}
// A pair as nlohmann writes one: [first, second] ("curve[3][1] is missing").
template <class A, class B>
void read(const nlohmann::json& v, std::pair<A, B>& out) {
  if (!v.is_array()) wrong_kind(v, "a [first, second] pair");
  if (v.size() < 2) throw FieldError("[" + std::to_string(v.size()) + "]", "is missing");
  try {
    read(v[0], out.first);
  } catch (const FieldError& e) {
    throw e.within("[0]");
  }
  try {
    read(v[1], out.second);
  } catch (const FieldError& e) {
    throw e.within("[1]");
  }
}
// A record of its own (a from_json found by ADL), which checks the kind it expects.
template <class T, class>
void read(const nlohmann::json& v, T& out) {
  from_json(v, out);
}

}  // namespace fields

// A figure as a record writes it: the number, or null for NaN and inf (what dump()
// writes for them anyway, so that a record compares equal to the file it came from).
inline nlohmann::json figure_json(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

// j[key] into out; throws FieldError when j lacks it or holds another kind.
template <class T>
void read_field(const nlohmann::json& j, const char* key, T& out) {
  if (!j.contains(key)) throw FieldError(key, "is missing");
  try {
    fields::read(j[key], out);
  } catch (const FieldError& e) {
    throw e.within(key);
  }
}

// j[key], which must be an object (a results file's recipe, a run's config), into out.
inline void read_object_field(const nlohmann::json& j, const char* key, nlohmann::json& out) {
  read_field(j, key, out);
  if (!out.is_object()) throw FieldError(key, "is " + json_kind_name(out) + ", not an object");
}

// j[key] into out when j has it (out keeps its default otherwise); another kind throws.
template <class T>
void read_optional_field(const nlohmann::json& j, const char* key, T& out) {
  if (j.contains(key)) read_field(j, key, out);
}

// A whole file's record: doc read by T's from_json; a field missing or of another kind
// is one nl::Error "FLAG: FILE: FIELD is missing".
template <class T>
T read_record(const nlohmann::json& doc, const std::string& flag, const std::string& file) {
  const std::string where = (flag.empty() ? "" : flag + ": ") + file + ": ";
  NL_CHECK(doc.is_object(), where, "the file holds ", json_kind_name(doc), ", not an object of results");
  T record{};
  try {
    from_json(doc, record);
  } catch (const FieldError& e) {
    fail(where, e.what());
  }
  return record;
}

}  // namespace nl
