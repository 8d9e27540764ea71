#include "studies/report/results_schema.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "tensor/error.h"

namespace nl {
namespace {

using json = nlohmann::json;

unsigned kind_of(const json& v) {
  if (v.is_null()) return kNull;
  if (v.is_boolean()) return kBool;
  if (v.is_number_integer()) return kInteger;
  if (v.is_number()) return kFloat;
  if (v.is_string()) return kString;
  if (v.is_array()) return kArray;
  return kObject;
}

std::string kinds_text(unsigned kinds) {
  const std::pair<unsigned, const char*> names[] = {
      {kNumber, "a number"}, {kInteger, "an integer"}, {kFloat, "a number"}, {kString, "a string"},
      {kBool, "true or false"}, {kArray, "an array"}, {kObject, "an object"}, {kNull, "null"}};
  std::string text;
  for (const auto& [bits, name] : names) {
    if ((kinds & bits) != bits) continue;
    kinds &= ~bits;
    text += (text.empty() ? "" : " or ") + std::string(name);
  }
  return text;
}

// "runs[].curve[][0]" -> {"runs", "[]", "curve", "[]", "[0]"}
std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  std::string key;
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '.' || c == '[') {
      if (!key.empty()) out.push_back(key);
      key.clear();
      if (c == '[') {
        const size_t close = path.find(']', i);
        out.push_back(path.substr(i, close - i + 1));
        i = close;
      }
    } else {
      key += c;
    }
  }
  if (!key.empty()) out.push_back(key);
  return out;
}

struct Place {
  const json* value;
  std::string path;  // with the indices filled in: runs[3].val_end
};

}  // namespace

void check_results_schema(const json& doc, const ResultSchema& schema, const std::string& flag,
                          const std::string& file) {
  const std::string where = flag + ": " + file + ": ";
  NL_CHECK(doc.is_object(), where, "the file holds ", json_kind_name(doc), ", not an object of results");
  std::vector<std::vector<std::string>> optional;  // a field under one of these is looked for only where it stands
  for (const ResultField& field : schema)
    if (field.optional) optional.push_back(segments(field.path));
  for (const ResultField& field : schema) {
    const std::vector<std::string> segs = segments(field.path);
    const size_t eq = field.only_where.find('=');
    const std::string when_key = field.only_where.substr(0, eq);
    const json when_text = eq == std::string::npos ? json() : json(field.only_where.substr(eq + 1));
    std::vector<Place> places = {{&doc, ""}};
    for (size_t s = 0; s < segs.size(); ++s) {
      const std::string& seg = segs[s];
      std::vector<Place> next;
      for (const Place& p : places) {
        const json& v = *p.value;
        if (v.is_null()) continue;  // a null holds no fields: its own entry says whether null may stand there
        if (seg[0] != '[') {
          const std::string path = p.path.empty() ? seg : p.path + "." + seg;
          NL_CHECK(v.is_object(), where, p.path, " is ", json_kind_name(v), ", not an object");
          if (s + 1 == segs.size() && !when_text.is_null()) {
            const auto it = v.find(when_key);
            if (it == v.end() || *it != when_text) continue;
          }
          const auto it = v.find(seg);
          if (it == v.end()) {
            const std::vector<std::string> prefix(segs.begin(), segs.begin() + (std::ptrdiff_t)s + 1);
            const bool may_lack = std::find(optional.begin(), optional.end(), prefix) != optional.end();
            NL_CHECK(may_lack, where, path, " is missing");
            continue;
          }
          next.push_back({&*it, path});
        } else {
          NL_CHECK(v.is_array(), where, p.path, " is ", json_kind_name(v), ", not an array");
          if (seg == "[]") {
            for (size_t i = 0; i < v.size(); ++i) next.push_back({&v[i], p.path + "[" + std::to_string(i) + "]"});
          } else {
            const size_t i = std::stoul(seg.substr(1));
            NL_CHECK(i < v.size() || field.optional, where, p.path + seg, " is missing");
            if (i < v.size()) next.push_back({&v[i], p.path + seg});
          }
        }
      }
      places = std::move(next);
    }
    for (const Place& p : places)
      NL_CHECK(kind_of(*p.value) & field.kinds, where, p.path, " is ", json_kind_name(*p.value), ", not ",
               kinds_text(field.kinds));
  }
}

}  // namespace nl
