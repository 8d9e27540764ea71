// Reader for the reference-value files under tests/reference/ (format: its README.md).
// Header-only, because every tests/*/*.cpp is compiled into the one test binary.
//
//   for (const auto& c : nl::test::load_reference("elementwise.txt")) {
//     c.name; c.attr("op"); c.tensor("x"); c.has("grad_x"); c.attr_ints("axes"); ...
//   }
//
// A malformed file throws nl::Error naming the file and the line ("f.txt:12: ...").
#pragma once
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/error.h"
#include "tensor/tensor.h"

namespace nl::test {

constexpr int kReferenceVersion = 1;

struct RefCase {
  std::string name;
  std::string file;  // where it came from, for messages
  int line = 0;      // the line of its `case`
  std::map<std::string, Tensor> tensors;     // role -> tensor
  std::map<std::string, std::string> attrs;  // key -> value as written

  bool has(const std::string& role) const { return tensors.count(role) > 0; }
  bool has_attr(const std::string& key) const { return attrs.count(key) > 0; }

  const Tensor& tensor(const std::string& role) const {
    auto it = tensors.find(role);
    if (it == tensors.end()) fail(where(), ": case ", name, " has no tensor '", role, "'");
    return it->second;
  }
  const std::string& attr(const std::string& key) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) fail(where(), ": case ", name, " has no attr '", key, "'");
    return it->second;
  }
  int64_t attr_int(const std::string& key) const { return parse_int(key, attr(key)); }
  bool attr_bool(const std::string& key) const { return attr_int(key) != 0; }
  float attr_float(const std::string& key) const {
    const std::string& v = attr(key);
    char* end = nullptr;
    errno = 0;
    float f = std::strtof(v.c_str(), &end);
    if (v.empty() || *end != '\0' || errno == ERANGE)
      fail(where(), ": case ", name, ": attr ", key, " = '", v, "' is not a float");
    return f;
  }
  // "[0,2]" -> {0, 2}; "[]" -> {}.
  std::vector<int64_t> attr_ints(const std::string& key) const {
    const std::string& v = attr(key);
    if (v.size() < 2 || v.front() != '[' || v.back() != ']')
      fail(where(), ": case ", name, ": attr ", key, " = '", v, "' is not a list like [0,2]");
    std::vector<int64_t> out;
    std::string body = v.substr(1, v.size() - 2), item;
    if (body.empty()) return out;
    std::istringstream is(body);
    while (std::getline(is, item, ',')) out.push_back(parse_int(key, item));
    return out;
  }
  std::string where() const { return file + ":" + std::to_string(line); }

 private:
  int64_t parse_int(const std::string& key, const std::string& v) const {
    char* end = nullptr;
    errno = 0;
    long long i = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno == ERANGE)
      fail(where(), ": case ", name, ": attr ", key, ": '", v, "' is not an integer");
    return (int64_t)i;
  }
};

namespace detail {

inline std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream is(line);
  std::string w;
  while (is >> w) words.push_back(w);
  return words;
}

inline bool is_blank_or_comment(const std::string& line) {
  size_t i = line.find_first_not_of(" \t\r");
  return i == std::string::npos || line[i] == '#';
}

}  // namespace detail

// Parses a reference file from a stream; `file` names it in error messages.
inline std::vector<RefCase> parse_reference(std::istream& in, const std::string& file) {
  std::vector<RefCase> cases;
  std::string line;
  int lineno = 0;
  auto bad = [&](const auto&... parts) { fail(file, ":", lineno, ": ", parts...); };

  if (!std::getline(in, line)) {
    lineno = 1;
    bad("empty file, expected the header 'normlab-reference ", kReferenceVersion, "'");
  }
  lineno = 1;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  {
    auto w = detail::split_ws(line);
    if (w.size() != 2 || w[0] != "normlab-reference")
      bad("expected the header 'normlab-reference ", kReferenceVersion, "', got '", line, "'");
    if (w[1] != std::to_string(kReferenceVersion))
      bad("format version ", w[1], " is not supported (this reader reads version ", kReferenceVersion,
          "; regenerate with scripts/make_reference.py or update tests/reference.h)");
  }

  RefCase* cur = nullptr;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (detail::is_blank_or_comment(line)) continue;
    auto w = detail::split_ws(line);
    const std::string& kw = w[0];
    if (kw == "case") {
      if (cur) bad("'case' inside case ", cur->name, " (missing 'end')");
      if (w.size() != 2) bad("expected 'case NAME', got '", line, "'");
      for (const auto& c : cases)
        if (c.name == w[1]) bad("duplicate case name ", w[1]);
      cases.emplace_back();
      cur = &cases.back();
      cur->name = w[1];
      cur->file = file;
      cur->line = lineno;
    } else if (kw == "end") {
      if (!cur) bad("'end' outside a case");
      if (w.size() != 1) bad("expected 'end' alone, got '", line, "'");
      if (!cur->has_attr("op")) bad("case ", cur->name, " has no 'attr op'");
      cur = nullptr;
    } else if (kw == "attr") {
      if (!cur) bad("'attr' outside a case");
      if (w.size() != 3) bad("expected 'attr KEY VALUE', got '", line, "'");
      if (cur->attrs.count(w[1])) bad("duplicate attr ", w[1], " in case ", cur->name);
      cur->attrs[w[1]] = w[2];
    } else if (kw == "tensor") {
      if (!cur) bad("'tensor' outside a case");
      if (w.size() < 4) bad("expected 'tensor ROLE DTYPE NDIM DIMS...', got '", line, "'");
      const std::string role = w[1], dtype = w[2];
      if (dtype != "float32" && dtype != "int32") bad("unknown dtype '", dtype, "' (float32 or int32)");
      if (cur->tensors.count(role)) bad("duplicate tensor ", role, " in case ", cur->name);
      char* end = nullptr;
      long ndim = std::strtol(w[3].c_str(), &end, 10);
      if (*end != '\0' || ndim < 0 || ndim > 8) bad("bad NDIM '", w[3], "'");
      if ((long)w.size() != 4 + ndim) bad("NDIM is ", ndim, " but ", w.size() - 4, " dims follow");
      Shape shape;
      for (long d = 0; d < ndim; ++d) {
        long long n = std::strtoll(w[4 + d].c_str(), &end, 10);
        if (*end != '\0' || n < 0 || n > (1LL << 30)) bad("bad dim '", w[4 + d], "'");
        shape.push_back(n);
      }
      const int64_t numel = numel_of(shape);
      // The values line: exactly numel values.
      if (!std::getline(in, line)) {
        ++lineno;
        bad("end of file where the ", numel, " values of tensor ", role, " should be");
      }
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      auto vals = detail::split_ws(line);
      if ((int64_t)vals.size() != numel)
        bad("tensor ", role, " of shape ", to_string(shape), " needs ", numel, " values, the line has ",
            vals.size());
      if (dtype == "float32") {
        std::vector<float> v(numel);
        for (int64_t i = 0; i < numel; ++i) {
          errno = 0;
          v[i] = std::strtof(vals[i].c_str(), &end);
          // ERANGE on underflow is fine (a denormal or zero is what was written).
          if (*end != '\0' || (errno == ERANGE && std::fabs(v[i]) > 1.0f))
            bad("value ", i, " of tensor ", role, ": '", vals[i], "' is not a float32");
        }
        cur->tensors[role] = Tensor::from_vector(v, shape);
      } else {
        std::vector<int32_t> v(numel);
        for (int64_t i = 0; i < numel; ++i) {
          errno = 0;
          long long n = std::strtoll(vals[i].c_str(), &end, 10);
          if (*end != '\0' || errno == ERANGE || n < INT32_MIN || n > INT32_MAX)
            bad("value ", i, " of tensor ", role, ": '", vals[i], "' is not an int32");
          v[i] = (int32_t)n;
        }
        cur->tensors[role] = Tensor::from_ints(v, shape);
      }
    } else {
      bad("unknown line '", line, "' (expected case, attr, tensor or end)");
    }
  }
  if (cur) {
    lineno = cur->line;
    bad("case ", cur->name, " is not closed by 'end' before the end of the file");
  }
  return cases;
}

// The path of tests/reference/<name> (or any other path given with a '/'), looked up from
// the working directory and up to four directories above it: the tests run from the
// repository root, but a binary started from build/release still finds its files.
inline std::string reference_path(const std::string& name) {
  const std::string rel = name.find('/') == std::string::npos ? "tests/reference/" + name : name;
  const int levels = rel.front() == '/' ? 0 : 4;
  std::string prefix;
  for (int up = 0; up <= levels; ++up, prefix += "../")
    if (std::ifstream(prefix + rel)) return prefix + rel;
  fail("reference file ", rel,
       " not found (looked in the working directory and 4 levels above; run the tests from the "
       "repository root, and generate the files with scripts/make_reference.py)");
}

// Loads a reference file (reference_path finds it).
inline std::vector<RefCase> load_reference(const std::string& name) {
  const std::string path = reference_path(name);
  std::ifstream in(path);
  return parse_reference(in, path);
}

}  // namespace nl::test
