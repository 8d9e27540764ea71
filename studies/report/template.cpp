#include "studies/report/template.h"

#include <algorithm>
#include <vector>

#include "tensor/decimal.h"
#include "tensor/error.h"

namespace nl {
namespace {

using json = nlohmann::json;

struct Renderer {
  const std::string& text;
  const std::string& name;

  int line_of(size_t pos) const { return 1 + (int)std::count(text.begin(), text.begin() + (long)pos, '\n'); }

  const json* lookup(const std::vector<const json*>& scopes, const std::string& key) const {
    if (key == ".") return scopes.back();  // the current element of a section
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      const json* at = *it;
      size_t start = 0;
      bool found = true;
      while (true) {
        const size_t dot = key.find('.', start);
        const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!at->is_object() || !at->contains(part)) {
          found = false;
          break;
        }
        at = &(*at)[part];
        if (dot == std::string::npos) break;
        start = dot + 1;
      }
      if (found) return at;
    }
    return nullptr;
  }

  static bool truthy(const json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0.0;
    if (v.is_string()) return !v.get<std::string>().empty();
    return !v.empty();  // arrays, objects
  }

  static std::string show(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    if (v.is_number()) return shortest_decimal(v.get<double>());
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    return v.dump();
  }

  // Renders text[begin, end) and returns it; `scopes` innermost last.
  std::string render(size_t begin, size_t end, std::vector<const json*>& scopes) const {
    std::string out;
    size_t pos = begin;
    while (pos < end) {
      const size_t open = text.find("{{", pos);
      if (open == std::string::npos || open >= end) {
        out += text.substr(pos, end - pos);
        break;
      }
      out += text.substr(pos, open - pos);
      const size_t close = text.find("}}", open);
      NL_CHECK(close != std::string::npos && close < end, "template ", name, ": '{{' without '}}' at line ",
               line_of(open));
      const std::string tag = text.substr(open + 2, close - open - 2);
      pos = close + 2;
      NL_CHECK(!tag.empty(), "template ", name, ": empty tag at line ", line_of(open));
      const char kind = tag[0];
      if (kind == '!') continue;
      if (kind == '/') fail("template ", name, ": '{{", tag, "}}' closes no section at line ", line_of(open));
      if (kind != '#' && kind != '^') {
        const json* v = lookup(scopes, tag);
        NL_CHECK(v, "template ", name, ": no value for '{{", tag, "}}' (line ", line_of(open), ")");
        out += show(*v);
        continue;
      }
      const std::string key = tag.substr(1);
      const size_t inner_end = section_end(key, pos, end, open);
      const size_t after = text.find("}}", inner_end) + 2;
      const json* v = lookup(scopes, key);
      NL_CHECK(v, "template ", name, ": no value for section '", key, "' (line ", line_of(open), ")");
      if (kind == '^') {
        if (!truthy(*v)) out += render(pos, inner_end, scopes);
      } else if (v->is_array()) {
        for (const json& item : *v) {
          scopes.push_back(&item);
          out += render(pos, inner_end, scopes);
          scopes.pop_back();
        }
      } else if (truthy(*v)) {
        scopes.push_back(v);
        out += render(pos, inner_end, scopes);
        scopes.pop_back();
      }
      pos = after;
    }
    return out;
  }

  // The start of the {{/key}} that closes the section opened before `from`, nested
  // sections of the same name skipped.
  size_t section_end(const std::string& key, size_t from, size_t end, size_t opened_at) const {
    int depth = 1;
    size_t pos = from;
    while (true) {
      const size_t open = text.find("{{", pos);
      NL_CHECK(open != std::string::npos && open < end, "template ", name, ": section '", key, "' opened at line ",
               line_of(opened_at), " is never closed");
      const size_t close = text.find("}}", open);
      NL_CHECK(close != std::string::npos, "template ", name, ": '{{' without '}}' at line ", line_of(open));
      const std::string tag = text.substr(open + 2, close - open - 2);
      if (tag == "#" + key || tag == "^" + key) ++depth;
      if (tag == "/" + key && --depth == 0) return open;
      pos = close + 2;
    }
  }
};

// A line that holds nothing but one section or comment tag leaves no line behind: its
// newline goes, so `{{#rows}}` on a line of its own does not print a blank line.
std::string drop_standalone_newlines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    const std::string line = text.substr(start, end - start);
    const size_t b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t");
    const bool standalone = b != std::string::npos && line.compare(b, 2, "{{") == 0 && e >= 1 &&
                            line.compare(e - 1, 2, "}}") == 0 && line.find("{{", b + 2) == std::string::npos &&
                            std::string("#^/!").find(line[b + 2]) != std::string::npos;
    out += standalone ? line.substr(b, e - b + 1) : line + (last ? "" : "\n");
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string render_template(const std::string& raw, const nlohmann::json& values, const std::string& name) {
  const std::string text = drop_standalone_newlines(raw);
  Renderer r{text, name};
  std::vector<const json*> scopes{&values};
  return r.render(0, text.size(), scopes);
}

}  // namespace nl
