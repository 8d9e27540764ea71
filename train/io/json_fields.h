// Typed records read from JSON: the helpers a record's from_json uses, so that a field
// a file lacks, or holds with another type, is an error naming the field's whole path
// ("runs[3].val_end is missing", "runs[0].size is a string, not an integer") instead of
// a null that a report turns into NaN and then a "-".
//
// A record names its fields once, in a visit_fields that both directions walk: the writer
// (FieldWriter) builds the JSON object from it and the reader (FieldReader) reads each
// field back through read_field / read_optional_field, so a key is spelled in one place.
// NL_JSON_RECORD defines the record's to_json / from_json (nlohmann's ADL pair) from it.
//
//   template <class Io>
//   void visit_fields(Io& io, FieldsOf<Io, MyRecord> r) {  // MyRecord&; const for the writer
//     io("val_end", r.val_end);         // must be there; a double NaN is written null, read back NaN
//     io.optional("llama", r.llama);    // may be absent (r.llama keeps its default); a
//                                       // std::optional is written only when it holds a value
//     io.nullable("result", r.result);  // must be there; null for an empty std::optional
//     io.object("recipe", r.recipe);    // a JSON object, kept as it is
//     io.number("seconds", r.seconds);  // a double that must be a number (null refused)
//     io.flat(r.header);                // a record whose own fields stand in this same object
//     io("size", r.size)("width", r.width).optional("seed", r.seed);  // related fields on a line
//   }
//   NL_JSON_RECORD(MyRecord)
//   MyRecord r = read_record<MyRecord>(doc, "--reuse", "docs/results/x.json");
//
// Nested records, vectors, maps and pairs go through their own to_json / from_json
// (fields::write, fields::read). The file's keys come out sorted (nlohmann::json), whatever
// visit_fields' order; the reader goes in that order, so it says which field it meets
// first. A record that is not a plain list (a check across fields, a key written but never
// read) writes its to_json / from_json by hand around write_fields / read_fields.
#pragma once
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
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

// A figure as a record writes it: the number, or null for NaN and inf (what dump()
// writes for them anyway, so that a record compares equal to the file it came from).
inline nlohmann::json figure_json(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

namespace fields {

[[noreturn]] void wrong_kind(const nlohmann::json& v, const char* wanted);
// An integer the field's type cannot hold: refused, never wrapped or cut (a seed of -1
// would otherwise read as 18446744073709551615).
[[noreturn]] void out_of_range(const nlohmann::json& v, const char* range);

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
  if (v.is_number_unsigned() && v.get<uint64_t>() > (uint64_t)INT64_MAX)
    out_of_range(v, "-9223372036854775808 to 9223372036854775807");
  out = v.get<int64_t>();
}
inline void read(const nlohmann::json& v, int& out) {
  int64_t wide = 0;
  read(v, wide);
  if (wide < INT_MIN || wide > INT_MAX) out_of_range(v, "-2147483648 to 2147483647");
  out = (int)wide;
}
// nlohmann keeps a non-negative integer read from text as unsigned, one made in code may be signed
inline void read(const nlohmann::json& v, uint64_t& out) {
  if (!v.is_number_integer()) wrong_kind(v, "an integer");
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) out_of_range(v, "0 to 18446744073709551615");
  out = v.is_number_unsigned() ? v.get<uint64_t>() : (uint64_t)v.get<int64_t>();
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

// each kind's writer, the readers' mirror: a double as a figure (null for NaN), containers
// element by element, anything else (a string, an integer, a record) by its own to_json
template <class T>
nlohmann::json write(const std::optional<T>& v);  // null when empty
template <class T>
nlohmann::json write(const std::vector<T>& v);
template <class T>
nlohmann::json write(const std::map<std::string, T>& v);
template <class A, class B>
nlohmann::json write(const std::pair<A, B>& v);
template <class T>
nlohmann::json write(const T& v) {
  return nlohmann::json(v);
}
inline nlohmann::json write(double v) { return figure_json(v); }
template <class T>
nlohmann::json write(const std::optional<T>& v) {
  return v ? write(*v) : nlohmann::json();
}
template <class T>
nlohmann::json write(const std::vector<T>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const T& x : v) out.push_back(write(x));
  return out;
}
template <class T>
nlohmann::json write(const std::map<std::string, T>& v) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, x] : v) out[key] = write(x);
  return out;
}
template <class A, class B>
nlohmann::json write(const std::pair<A, B>& v) {
  return nlohmann::json::array({write(v.first), write(v.second)});
}

}  // namespace fields

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

// ---- a record's fields named once ----

// visit_fields' record parameter: writable for the reader, const for the writer.
template <class Io, class Record>
using FieldsOf = std::conditional_t<Io::reads, Record&, const Record&>;

// `r` as its base class Base, const where r is (a derived record's visit_fields passing
// its base's fields to io.flat).
template <class Base, class R>
std::conditional_t<std::is_const_v<R>, const Base&, Base&> base_of(R& r) {
  return r;
}

// Builds a record's JSON object from its visit_fields. Each call returns the writer, so
// that related fields can share a line: io("size", r.size)("width", r.width).
class FieldWriter {
 public:
  static constexpr bool reads = false;
  explicit FieldWriter(nlohmann::json& j) : j_(j) { j_ = nlohmann::json::object(); }
  template <class T>
  FieldWriter& operator()(const char* key, const T& v) {
    j_[key] = fields::write(v);
    return *this;
  }
  // `required` is the reader's business: the writer writes what the record holds
  template <class T>
  FieldWriter& optional(const char* key, const T& v, bool required = false) {
    return (*this)(key, v);
  }
  template <class T>
  FieldWriter& optional(const char* key, const std::optional<T>& v, bool required = false) {
    return v ? (*this)(key, *v) : *this;
  }
  template <class T>
  FieldWriter& nullable(const char* key, const std::optional<T>& v) {
    return (*this)(key, v);  // fields::write: null when empty
  }
  FieldWriter& object(const char* key, const nlohmann::json& v) { return (*this)(key, v); }
  FieldWriter& number(const char* key, double v) { return (*this)(key, v); }
  template <class R>
  FieldWriter& flat(const R& r) {
    j_.update(nlohmann::json(r));
    return *this;
  }

 private:
  nlohmann::json& j_;
};

// Reads a record's fields from its JSON object, in visit_fields' order; a field missing or
// of another kind throws FieldError naming it.
class FieldReader {
 public:
  static constexpr bool reads = true;
  // `kind`: what the record is called when j is not an object ("is an array, not a speed row")
  explicit FieldReader(const nlohmann::json& j, const char* kind = "an object") : j_(j) {
    if (!j.is_object()) fields::wrong_kind(j, kind);
  }
  template <class T>
  FieldReader& operator()(const char* key, T& out) {
    read_field(j_, key, out);
    return *this;
  }
  // `required`: this record must have it after all (it depends on a field read before it)
  template <class T>
  FieldReader& optional(const char* key, T& out, bool required = false) {
    if (required) read_field(j_, key, out);
    else read_optional_field(j_, key, out);
    return *this;
  }
  template <class T>
  FieldReader& nullable(const char* key, std::optional<T>& out) {
    if (!j_.contains(key)) throw FieldError(key, "is missing");
    if (j_[key].is_null()) out.reset();
    else read_field(j_, key, out);
    return *this;
  }
  FieldReader& object(const char* key, nlohmann::json& out) {
    read_object_field(j_, key, out);
    return *this;
  }
  // a figure that is always finite (a unigram loss, a wall time): null is refused, not NaN
  FieldReader& number(const char* key, double& out) {
    nlohmann::json v;
    read_field(j_, key, v);
    if (!v.is_number()) throw FieldError(key, "is " + json_kind_name(v) + ", not a number");
    out = v.get<double>();
    return *this;
  }
  template <class R>
  FieldReader& flat(R& r) {
    from_json(j_, r);
    return *this;
  }

 private:
  const nlohmann::json& j_;
};

// The record's fields into j (an object), and back.
template <class R>
void write_fields(nlohmann::json& j, const R& r) {
  FieldWriter io(j);
  visit_fields(io, r);
}
template <class R>
void read_fields(const nlohmann::json& j, R& r, const char* kind = "an object") {
  FieldReader io(j, kind);
  visit_fields(io, r);
}

}  // namespace nl

// A record's to_json and from_json, both from its visit_fields (defined above it, in the
// record's namespace).
#define NL_JSON_RECORD(Record)                                                          \
  void to_json(nlohmann::json& j, const Record& r) { ::nl::write_fields(j, r); }         \
  void from_json(const nlohmann::json& j, Record& r) { ::nl::read_fields(j, r); }
