#include "studies/report/record_reader.h"

#include <cmath>
#include <utility>

#include "tensor/error.h"

namespace nl {

namespace {

bool of_kind(const nlohmann::json& v, unsigned kinds) {
  if (v.is_null()) return kinds & kNull;
  if (v.is_boolean()) return kinds & kBool;
  if (v.is_number_integer()) return kinds & kInteger;
  if (v.is_number()) return kinds & kFloat;
  if (v.is_string()) return kinds & kString;
  if (v.is_array()) return kinds & kArray;
  return kinds & kObject;
}

// What a field was meant to hold, as the messages say it.
std::string wanted(unsigned kinds) {
  switch (kinds) {
    case kInteger: return "an integer";
    case kNumber: return "a number";
    case kArray | kNull: return "an array or null";
    case kNumber | kNull: return "a number or null";
    case kBool: return "true or false";
    case kString: return "a string";
    case kArray: return "an array";
    default: return "an object";
  }
}

}  // namespace

RecordReader::RecordReader(const nlohmann::json& value, std::string where, std::string path)
    : value_(&value), where_(std::move(where)), path_(std::move(path)) {}

const nlohmann::json& RecordReader::as(unsigned kinds) const {
  if (!of_kind(*value_, kinds))
    fail(where_, ": ", path_.empty() ? std::string("the file") : path_, " is ", json_kind_name(*value_), ", not ",
         wanted(kinds));
  return *value_;
}

bool RecordReader::has(const std::string& key) const { return value_->is_object() && value_->contains(key); }

RecordReader RecordReader::operator[](const std::string& key) const {
  const nlohmann::json& o = as(kObject);
  const std::string path = path_.empty() ? key : path_ + "." + key;
  const auto it = o.find(key);
  if (it == o.end()) fail(where_, ": ", path, " is missing");
  return RecordReader(*it, where_, path);
}

RecordReader RecordReader::operator[](size_t i) const {
  const nlohmann::json& a = as(kArray);
  const std::string path = path_ + "[" + std::to_string(i) + "]";
  if (i >= a.size()) fail(where_, ": ", path, " is missing");
  return RecordReader(a[i], where_, path);
}

std::vector<RecordReader> RecordReader::elements() const {
  std::vector<RecordReader> out;
  for (size_t i = 0; i < as(kArray).size(); ++i) out.push_back((*this)[i]);
  return out;
}

int64_t RecordReader::integer() const { return as(kInteger).get<int64_t>(); }

double RecordReader::number() const {
  const nlohmann::json& v = as(kNumber | kNull);
  return v.is_null() ? NAN : v.get<double>();
}

bool RecordReader::boolean() const { return as(kBool).get<bool>(); }

std::string RecordReader::text() const { return as(kString).get<std::string>(); }

std::vector<double> RecordReader::numbers() const {
  std::vector<double> out;
  for (const RecordReader& e : elements()) out.push_back(e.number());
  return out;
}

std::vector<int64_t> RecordReader::integers() const {
  std::vector<int64_t> out;
  for (const RecordReader& e : elements()) out.push_back(e.integer());
  return out;
}

const nlohmann::json& RecordReader::object() const { return as(kObject); }

void RecordReader::fail_because(const std::string& why) const {
  fail(where_, ": ", path_.empty() ? std::string("the file") : path_, " ", why);
}

}  // namespace nl
