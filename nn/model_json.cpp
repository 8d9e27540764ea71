#include "nn/model_json.h"

#include <cctype>
#include <cstdlib>

#include "tensor/error.h"

namespace nl {

std::map<std::string, std::string> parse_flat_json(const std::string& s) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && std::isspace((unsigned char)s[i])) ++i;
  };
  auto expect = [&](char c) {
    ws();
    NL_CHECK(i < s.size() && s[i] == c, "model description: expected '", c, "' at offset ", i, " of ", s);
    ++i;
  };
  auto string = [&] {
    expect('"');
    std::string v;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      v += s[i++];
    }
    NL_CHECK(i < s.size(), "model description: unterminated string in ", s);
    ++i;
    return v;
  };
  expect('{');
  ws();
  if (i < s.size() && s[i] == '}') return out;
  while (true) {
    std::string key = string();
    expect(':');
    ws();
    std::string value;
    if (i < s.size() && s[i] == '"') {
      value = string();
    } else {
      while (i < s.size() && s[i] != ',' && s[i] != '}' && !std::isspace((unsigned char)s[i])) value += s[i++];
      NL_CHECK(!value.empty(), "model description: no value for '", key, "' in ", s);
    }
    out[key] = value;
    ws();
    NL_CHECK(i < s.size() && (s[i] == ',' || s[i] == '}'), "model description: expected ',' or '}' after '", key,
             "' in ", s);
    if (s[i++] == '}') break;
  }
  return out;
}


const std::string& ModelDescription::str(const std::string& key) const {
  auto it = fields_.find(key);
  NL_CHECK(it != fields_.end(), "model description: no '", key, "' in ", text_);
  return it->second;
}

int64_t ModelDescription::integer(const std::string& key) const {
  char* end = nullptr;
  const long long v = std::strtoll(str(key).c_str(), &end, 10);
  NL_CHECK(*end == '\0' && !str(key).empty(), "model description: '", key, "' is not an integer: ", str(key));
  return (int64_t)v;
}

float ModelDescription::real(const std::string& key, float fallback) const {
  if (!has(key)) return fallback;
  char* end = nullptr;
  const float v = std::strtof(str(key).c_str(), &end);
  NL_CHECK(*end == '\0' && !str(key).empty(), "model description: '", key, "' is not a number: ", str(key));
  return v;
}

}  // namespace nl
