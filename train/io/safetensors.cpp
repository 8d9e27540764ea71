// safetensors reader and writer, with the small strict JSON parser the header needs.
// The parser accepts only what a safetensors header uses (objects, arrays, strings,
// integers) so that anything else in a checkpoint is reported, never guessed at.
#include "train/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <vector>

namespace nl {

// The format is little-endian and the data is copied byte for byte.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O assumes a little-endian host");

namespace {

template <typename... Parts>
[[noreturn]] void bad_file(const std::string& path, const Parts&... parts) {
  fail("load_safetensors: '", path, "': ", parts...);
}

// serde_json, which Python's safetensors uses, rejects invalid UTF-8, so both sides check it.
bool valid_utf8(const std::string& s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    int extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) { extra = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { extra = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { extra = 3; cp = c & 0x07; }
    else return false;  // a stray continuation byte or an invalid lead byte
    if (i + extra >= n) return false;
    for (int k = 1; k <= extra; ++k) {
      unsigned char cc = (unsigned char)s[i + k];
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static const uint32_t min_for_length[4] = {0, 0x80, 0x800, 0x10000};  // shorter forms are overlong
    if (cp < min_for_length[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

// ---------------------------------------------------------------- JSON

struct Json {
  enum class Kind { Object, Array, String, Integer } kind = Kind::Integer;
  std::vector<std::string> keys;  // Object: keys[i] names values[i], in file order
  std::vector<Json> values;       // Object members or Array items
  std::string str;
  int64_t num = 0;
};

const char* kind_name(Json::Kind k) {
  switch (k) {
    case Json::Kind::Object: return "an object";
    case Json::Kind::Array: return "an array";
    case Json::Kind::String: return "a string";
    default: return "an integer";
  }
}

class JsonParser {
 public:
  JsonParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  Json parse_document() {
    Json v = value(0);
    skip_ws();
    if (pos_ != s_.size()) error("unexpected text after the header object");
    return v;
  }

 private:
  // The header nests three deep (top object, tensor entry, shape); the limit keeps a
  // hostile file from exhausting the stack through recursion.
  static constexpr int kMaxDepth = 8;

  template <typename... Parts>
  [[noreturn]] void error(const Parts&... parts) {
    bad_file(path_, "invalid JSON header at byte ", pos_, ": ", parts...);
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  char peek() {
    if (pos_ >= s_.size()) error("unexpected end of header");
    return s_[pos_];
  }

  void expect(char c) {
    if (peek() != c) error("expected '", c, "', found '", s_[pos_], "'");
    ++pos_;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) error("nested deeper than ", kMaxDepth, " levels");
    skip_ws();
    char c = peek();
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      Json v;
      v.kind = Json::Kind::String;
      v.str = string();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return integer();
    error("unexpected '", c, "' (only objects, arrays, strings and integers are allowed)");
  }

  Json object(int depth) {
    Json v;
    v.kind = Json::Kind::Object;
    std::set<std::string> seen;
    expect('{');
    skip_ws();
    if (peek() == '}') { ++pos_; return v; }
    while (true) {
      skip_ws();
      if (peek() != '"') error("expected a string key");
      std::string key = string();
      if (!seen.insert(key).second) error("duplicate name \"", key, "\"");
      skip_ws();
      expect(':');
      v.keys.push_back(key);
      v.values.push_back(value(depth + 1));
      skip_ws();
      if (peek() == '}') { ++pos_; return v; }
      expect(',');
    }
  }

  Json array(int depth) {
    Json v;
    v.kind = Json::Kind::Array;
    expect('[');
    skip_ws();
    if (peek() == ']') { ++pos_; return v; }
    while (true) {
      v.values.push_back(value(depth + 1));
      skip_ws();
      if (peek() == ']') { ++pos_; return v; }
      expect(',');
    }
  }

  int hex4() {
    int v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = peek();
      ++pos_;
      int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
      if (d < 0) error("bad hex digit '", c, "' in \\u escape");
      v = v * 16 + d;
    }
    return v;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += (char)cp;
    } else if (cp < 0x800) {
      out += (char)(0xC0 | (cp >> 6));
      out += (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += (char)(0xE0 | (cp >> 12));
      out += (char)(0x80 | ((cp >> 6) & 0x3F));
      out += (char)(0x80 | (cp & 0x3F));
    } else {
      out += (char)(0xF0 | (cp >> 18));
      out += (char)(0x80 | ((cp >> 12) & 0x3F));
      out += (char)(0x80 | ((cp >> 6) & 0x3F));
      out += (char)(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    size_t start = pos_;
    expect('"');
    std::string out;
    while (true) {
      char c = peek();
      ++pos_;
      if (c == '"') break;
      if ((unsigned char)c < 0x20) error("unescaped control character in a string");
      if (c != '\\') { out += c; continue; }
      char e = peek();
      ++pos_;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = (uint32_t)hex4();
          // Characters beyond the BMP come as a UTF-16 surrogate pair: \uD8xx\uDCxx.
          if (cp >= 0xDC00 && cp <= 0xDFFF) error("lone low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (pos_ + 1 >= s_.size() || s_[pos_] != '\\' || s_[pos_ + 1] != 'u')
              error("high surrogate without its low half in \\u escape");
            pos_ += 2;
            uint32_t lo = (uint32_t)hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) error("high surrogate without its low half in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: error("unknown escape '\\", e, "'");
      }
    }
    if (!valid_utf8(out)) {
      pos_ = start;
      error("string is not valid UTF-8");
    }
    return out;
  }

  Json integer() {
    Json v;
    v.kind = Json::Kind::Integer;
    bool negative = false;
    if (peek() == '-') { negative = true; ++pos_; }
    char c = peek();
    if (c < '0' || c > '9') error("expected a digit after '-'");
    if (c == '0' && pos_ + 1 < s_.size() && s_[pos_ + 1] >= '0' && s_[pos_ + 1] <= '9')
      error("leading zero in a number");
    uint64_t mag = 0;
    const uint64_t limit = negative ? (uint64_t)std::numeric_limits<int64_t>::max() + 1
                                    : (uint64_t)std::numeric_limits<int64_t>::max();
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      uint64_t d = (uint64_t)(s_[pos_] - '0');
      if (mag > (limit - d) / 10) error("integer does not fit in 64 bits");
      mag = mag * 10 + d;
      ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      error("only integers are allowed, not fractions or exponents");
    v.num = negative ? (int64_t)(0 - mag) : (int64_t)mag;
    return v;
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------- header entries

enum class FileDType { F32, I32, I64 };

struct Entry {
  std::string name;
  FileDType dtype;
  Shape shape;
  int64_t begin, end;
};

int64_t itemsize(FileDType d) { return d == FileDType::I64 ? 8 : 4; }
const char* file_dtype_name(FileDType d) {
  return d == FileDType::F32 ? "F32" : d == FileDType::I32 ? "I32" : "I64";
}

// Checks every field of one tensor's header entry against the data size.
Entry parse_entry(const std::string& path, const std::string& name, const Json& v, int64_t data_size) {
  if (v.kind != Json::Kind::Object) bad_file(path, "entry of tensor '", name, "' is ", kind_name(v.kind), ", not an object");
  const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (size_t i = 0; i < v.keys.size(); ++i) {
    if (v.keys[i] == "dtype") dtype = &v.values[i];
    else if (v.keys[i] == "shape") shape = &v.values[i];
    else if (v.keys[i] == "data_offsets") offsets = &v.values[i];
    else bad_file(path, "unknown field \"", v.keys[i], "\" in the entry of tensor '", name, "'");
  }
  if (!dtype || !shape || !offsets)
    bad_file(path, "tensor '", name, "' lacks \"", !dtype ? "dtype" : !shape ? "shape" : "data_offsets", "\"");

  Entry e;
  e.name = name;
  if (dtype->kind != Json::Kind::String) bad_file(path, "dtype of tensor '", name, "' is not a string");
  if (dtype->str == "F32") e.dtype = FileDType::F32;
  else if (dtype->str == "I32") e.dtype = FileDType::I32;
  else if (dtype->str == "I64") e.dtype = FileDType::I64;
  else bad_file(path, "unsupported dtype \"", dtype->str, "\" of tensor '", name, "' (normlab reads F32, I32 and I64)");

  if (shape->kind != Json::Kind::Array) bad_file(path, "shape of tensor '", name, "' is not an array");
  for (const Json& d : shape->values) {
    if (d.kind != Json::Kind::Integer || d.num < 0)
      bad_file(path, "shape of tensor '", name, "' holds something other than a non-negative integer");
    e.shape.push_back(d.num);
  }

  if (offsets->kind != Json::Kind::Array || offsets->values.size() != 2 ||
      offsets->values[0].kind != Json::Kind::Integer || offsets->values[1].kind != Json::Kind::Integer)
    bad_file(path, "data_offsets of tensor '", name, "' is not a pair of integers");
  e.begin = offsets->values[0].num;
  e.end = offsets->values[1].num;
  if (e.begin < 0 || e.end < e.begin)
    bad_file(path, "data_offsets [", e.begin, ", ", e.end, "] of tensor '", name, "' are not an ascending pair >= 0");
  if (e.end > data_size)
    bad_file(path, "data_offsets [", e.begin, ", ", e.end, "] of tensor '", name, "' run past the end of the data (",
             data_size, " bytes)");

  // A hostile shape must not overflow into a product that happens to match the
  // offsets; -1 marks a byte count beyond int64.
  int64_t bytes = itemsize(e.dtype);
  if (std::count(e.shape.begin(), e.shape.end(), 0) > 0) bytes = 0;
  for (int64_t d : e.shape) {
    if (bytes == 0) break;
    if (bytes > std::numeric_limits<int64_t>::max() / d) { bytes = -1; break; }
    bytes *= d;
  }
  if (bytes != e.end - e.begin)
    bad_file(path, "shape ", to_string(e.shape), " and dtype ", file_dtype_name(e.dtype), " of tensor '", name,
             "' need ", bytes < 0 ? std::string("over 2^63") : std::to_string(bytes),
             " bytes but data_offsets [", e.begin, ", ", e.end, "] hold ", e.end - e.begin);
  return e;
}

// The data must be exactly tiled by the tensors: no overlaps (one byte read as two
// tensors) and no holes (bytes a writer meant for something that is missing).
void check_tiling(const std::string& path, std::vector<Entry>& entries, int64_t data_size) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  int64_t covered = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.begin < covered)
      bad_file(path, "data_offsets of tensors '", entries[i - 1].name, "' and '", e.name, "' overlap");
    if (e.begin > covered)
      bad_file(path, "data bytes [", covered, ", ", e.begin, ") belong to no tensor (offsets do not cover the data)");
    covered = e.end;
  }
  if (covered != data_size)
    bad_file(path, "data bytes [", covered, ", ", data_size, ") belong to no tensor (offsets do not cover the data)");
}

// Closes the file on every path out of load_safetensors.
struct FileCloser {
  FILE* f;
  ~FileCloser() { if (f) std::fclose(f); }
};

void read_exact(FILE* f, void* dst, size_t n, const std::string& path, const char* what) {
  if (n > 0 && std::fread(dst, 1, n, f) != n) bad_file(path, "could not read ", what, " (", n, " bytes)");
}

// ---------------------------------------------------------------- writing helpers

void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if ((unsigned char)c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", (unsigned)(unsigned char)c);
      out += buf;
    } else out += c;
  }
  out += '"';
}

void write_exact(FILE* f, const void* src, size_t n, const std::string& tmp) {
  if (n > 0 && std::fwrite(src, 1, n, f) != n)
    fail("save_safetensors: writing '", tmp, "' failed: ", std::strerror(errno));
}

}  // namespace

// ---------------------------------------------------------------- load

SafetensorsFile load_safetensors(const std::string& path) {
  FileCloser file{std::fopen(path.c_str(), "rb")};
  if (!file.f) {
    int err = errno;
    if (err == ENOENT) bad_file(path, "file does not exist");
    bad_file(path, "cannot open: ", std::strerror(err));
  }
  struct stat st;
  if (fstat(fileno(file.f), &st) != 0 || !S_ISREG(st.st_mode)) bad_file(path, "not a regular file");
  const int64_t file_size = (int64_t)st.st_size;
  if (file_size < 8) bad_file(path, "file is ", file_size, " bytes, shorter than the 8-byte header length");

  unsigned char len_bytes[8];
  read_exact(file.f, len_bytes, 8, path, "the header length");
  uint64_t header_len = 0;
  for (int k = 7; k >= 0; --k) header_len = (header_len << 8) | len_bytes[k];
  if (header_len > (uint64_t)(file_size - 8))
    bad_file(path, "header length ", header_len, " is larger than the file (", file_size - 8,
             " bytes after the length field)");

  std::string header(header_len, '\0');
  read_exact(file.f, header.data(), header.size(), path, "the header");
  const int64_t data_size = file_size - 8 - (int64_t)header_len;

  Json doc = JsonParser(header, path).parse_document();
  if (doc.kind != Json::Kind::Object) bad_file(path, "header is ", kind_name(doc.kind), ", not a JSON object");

  SafetensorsFile out;
  std::vector<Entry> entries;
  for (size_t i = 0; i < doc.keys.size(); ++i) {
    const Json& v = doc.values[i];
    if (doc.keys[i] != "__metadata__") {
      entries.push_back(parse_entry(path, doc.keys[i], v, data_size));
      continue;
    }
    if (v.kind != Json::Kind::Object) bad_file(path, "__metadata__ is ", kind_name(v.kind), ", not an object");
    for (size_t j = 0; j < v.keys.size(); ++j) {
      if (v.values[j].kind != Json::Kind::String)
        bad_file(path, "__metadata__ value of \"", v.keys[j], "\" is ", kind_name(v.values[j].kind), ", not a string");
      out.metadata[v.keys[j]] = v.values[j].str;
    }
  }
  check_tiling(path, entries, data_size);

  // Tiled and sorted, so the data reads front to back straight into each tensor.
  for (const Entry& e : entries) {
    const int64_t n = numel_of(e.shape);
    const std::string what = "the data of tensor '" + e.name + "'";
    if (e.dtype == FileDType::F32) {
      Tensor t = Tensor::empty(e.shape, DType::F32);
      read_exact(file.f, t.data(), (size_t)n * 4, path, what.c_str());
      out.tensors[e.name] = t;
    } else if (e.dtype == FileDType::I32) {
      Tensor t = Tensor::empty(e.shape, DType::I32);
      read_exact(file.f, t.idata(), (size_t)n * 4, path, what.c_str());
      out.tensors[e.name] = t;
    } else {
      std::vector<int64_t> wide((size_t)n);
      read_exact(file.f, wide.data(), (size_t)n * 8, path, what.c_str());
      Tensor t = Tensor::empty(e.shape, DType::I32);
      int32_t* p = t.idata();
      for (int64_t k = 0; k < n; ++k) {
        if (wide[k] < std::numeric_limits<int32_t>::min() || wide[k] > std::numeric_limits<int32_t>::max())
          bad_file(path, "I64 value ", wide[k], " of tensor '", e.name, "' does not fit in int32");
        p[k] = (int32_t)wide[k];
      }
      out.tensors[e.name] = t;
    }
  }
  return out;
}

// ---------------------------------------------------------------- save

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  // Everything that can be wrong with the arguments is checked before the temp file exists.
  std::vector<Tensor> cpu;
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      NL_CHECK(valid_utf8(k) && valid_utf8(v), "save_safetensors: '", path, "': metadata \"", k,
               "\" is not valid UTF-8");
      if (!first) header += ',';
      first = false;
      append_json_string(header, k);
      header += ':';
      append_json_string(header, v);
    }
    header += "}";
  }
  int64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    NL_CHECK(name != "__metadata__", "save_safetensors: '", path, "': \"__metadata__\" cannot name a tensor");
    NL_CHECK(valid_utf8(name), "save_safetensors: '", path, "': tensor name \"", name, "\" is not valid UTF-8");
    NL_CHECK(t.defined(), "save_safetensors: '", path, "': tensor '", name, "' is undefined");
    cpu.push_back(t.contiguous().to(Device::CPU));
    const int64_t bytes = t.numel() * 4;
    if (header.size() > 1) header += ',';
    append_json_string(header, name);
    header += t.dtype() == DType::F32 ? ":{\"dtype\":\"F32\",\"shape\":[" : ":{\"dtype\":\"I32\",\"shape\":[";
    for (int i = 0; i < t.dim(); ++i) header += (i ? "," : "") + std::to_string(t.size(i));
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  // Padding keeps the data 8-byte aligned for readers that map the file into memory.
  header.append((8 - header.size() % 8) % 8, ' ');

  unsigned char len_bytes[8];
  for (int k = 0; k < 8; ++k) len_bytes[k] = (unsigned char)((uint64_t)header.size() >> (8 * k));

  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("save_safetensors: cannot create '", tmp, "': ", std::strerror(errno));
  try {
    write_exact(f, len_bytes, 8, tmp);
    write_exact(f, header.data(), header.size(), tmp);
    for (const Tensor& t : cpu) {
      const void* p = t.dtype() == DType::F32 ? (const void*)t.data() : (const void*)t.idata();
      write_exact(f, p, (size_t)t.numel() * 4, tmp);
    }
    // fsync before rename: otherwise a crash can leave the new name on a file whose
    // blocks never reached the disk.
    if (std::fflush(f) != 0 || fsync(fileno(f)) != 0)
      fail("save_safetensors: flushing '", tmp, "' to disk failed: ", std::strerror(errno));
    FILE* closing = f;
    f = nullptr;
    if (std::fclose(closing) != 0) fail("save_safetensors: closing '", tmp, "' failed: ", std::strerror(errno));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      fail("save_safetensors: renaming '", tmp, "' to '", path, "' failed: ", std::strerror(errno));
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }

  // The rename itself is durable only once the directory is synced. The new file is
  // already complete and in place, so a filesystem that cannot sync directories is
  // not an error.
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dfd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

}  // namespace nl
