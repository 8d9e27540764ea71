#include "train/safety/limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "tensor/error.h"
#include "train/safety/distributed.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

std::mutex g_note_mutex;
std::vector<MemoryTerm> g_last_terms;

double total(const std::vector<MemoryTerm>& terms) {
  double t = 0;
  for (const MemoryTerm& m : terms) t += m.bytes;
  return t;
}

std::vector<MemoryTerm> largest_first(std::vector<MemoryTerm> terms) {
  std::stable_sort(terms.begin(), terms.end(),
                   [](const MemoryTerm& a, const MemoryTerm& b) { return a.bytes > b.bytes; });
  return terms;
}

// A number read from a control-group file; "max" and anything unreadable give none.
double cgroup_limit(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return INFINITY;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return *end == '\0' && v > 0 ? v : INFINITY;
}

}  // namespace

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

double gpt_parameters(const GPTConfig& m) {
  const double d = (double)m.dim, L = (double)m.layers;
  // per block: attention 4 d^2, the MLP 8 d^2 (gelu's 4d hidden; swiglu's three round(8d/3)
  // matrices), biases and norms about 13 d; the embeddings (vocab + context) d, and an
  // untied head another vocab d
  return L * (12.0 * d * d + 13.0 * d) + ((double)m.vocab * (m.tied_head ? 1.0 : 2.0) + (double)m.context) * d;
}

double gpt_forward_bytes(const GPTConfig& m, int64_t rows, bool training) {
  const double d = (double)m.dim, L = (double)m.layers, T = (double)m.context, B = (double)rows;
  const double h = (double)m.heads, V = (double)m.vocab;
  // training keeps, per layer, about 48 (B, T, d) activations and one (B, heads, T, T)
  // attention map for the backward pass, and the logits three times (fitted to the peaks
  // of tests/train/test_memory_estimate.cpp: 28 to 55 floats per token, layer and unit of
  // width; the 20 and 3 maps before left a batch of 20000 at 1.69x its estimate); a
  // forward without a graph holds one layer's: the MLP's hidden (4 d) beside qkv and
  // the stream, two attention maps, the logits and their softmax
  const double floats = training ? L * (48.0 * B * T * d + 1.0 * B * h * T * T) + 3.0 * B * T * V
                                 : 8.0 * B * T * d + 2.0 * B * h * T * T + 2.0 * B * T * V;
  return 4.0 * floats;
}

double vit_parameters(const ViTConfig& m) {
  const double d = (double)m.dim, L = (double)m.layers, N = (double)m.patches() + 1;
  return L * (12.0 * d * d + 13.0 * d) + ((double)(m.channels * m.patch * m.patch) + 1.0) * d + N * d +
         (double)m.classes * (d + 1.0);
}

double vit_forward_bytes(const ViTConfig& m, int64_t rows, bool training) {
  const double d = (double)m.dim, L = (double)m.layers, N = (double)m.patches() + 1, B = (double)rows;
  const double h = (double)m.heads, pixels = (double)(m.channels * m.image * m.image);
  const double floats = training ? L * (48.0 * B * N * d + 1.0 * B * h * N * N) + 2.0 * B * pixels
                                 : 8.0 * B * N * d + 2.0 * B * h * N * N + 2.0 * B * pixels;
  return 4.0 * floats;
}

double file_bytes(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !fs::is_regular_file(path, ec)) return 0;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : (double)size;
}

double folder_bytes(const std::string& dir) {
  double sum = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) sum += file_bytes(e.path().string());
  return sum;
}

std::string model_memory_what(int64_t layers, int64_t dim, int64_t heads, const std::string& last) {
  return "the model's parameters, gradients and AdamW moments (--layers " + std::to_string(layers) + " --dim " +
         std::to_string(dim) + " --heads " + std::to_string(heads) + last + ")";
}

int64_t shard_rows(int64_t batch) { return std::max<int64_t>(1, batch / std::max(1, dist::world_size())); }

void add_start_files(std::vector<MemoryTerm>& terms, bool resume, const std::string& out_dir,
                     const std::string& init_from) {
  if (resume) {
    const std::string ckpt = out_dir + "/checkpoint.safetensors";
    terms.push_back({"--resume " + ckpt + " (read whole)", file_bytes(ckpt)});
  }
  if (!init_from.empty()) terms.push_back({"--init-from " + init_from + " (read whole)", file_bytes(init_from)});
}

MemoryBound memory_bound() {
  MemoryBound b;
  const double physical = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  b = physical > 0 ? MemoryBound{physical, "the " + gib(physical) + " of this machine's memory"}
                   : MemoryBound{INFINITY, "no known limit"};
  // what the kernel can give now without swapping: a run that needs more than that makes
  // the machine swap until the kernel kills something (its other jobs included)
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:" && kib * 1024.0 < b.bytes) {
      b = {kib * 1024.0, "the " + gib(kib * 1024.0) + " this machine has available now (of " + gib(physical) + ")"};
      break;
    }
    meminfo.ignore(256, '\n');
  }
  const double cgroup = std::min(cgroup_limit("/sys/fs/cgroup/memory.max"),
                                 cgroup_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
  if (cgroup < b.bytes) b = {cgroup, "the " + gib(cgroup) + " of its control group's memory limit"};
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    double mapped = 0;
    std::ifstream statm("/proc/self/statm");
    statm >> mapped;
    mapped *= (double)sysconf(_SC_PAGESIZE);
    const double left = std::max(0.0, (double)as.rlim_cur - mapped);
    if (left < b.bytes)
      b = {left, "the " + gib(left) + " that the address-space limit (ulimit -v, " + gib((double)as.rlim_cur) +
                     ") leaves beside the " + gib(mapped) + " mapped now"};
  }
  return b;
}

void check_memory_estimate(const std::vector<MemoryTerm>& terms) {
  {
    std::lock_guard<std::mutex> lock(g_note_mutex);
    g_last_terms = terms;
  }
  const double need = total(terms);
  const MemoryBound bound = memory_bound();
  if (need <= bound.bytes) return;
  std::string parts;
  int listed = 0;
  for (const MemoryTerm& t : largest_first(terms)) {
    if (listed == 4 || (listed > 0 && t.bytes < 0.01 * need)) break;
    parts += (listed++ ? ", " : "") + t.what + " " + gib(t.bytes);
  }
  fail("the run needs about ", gib(need), ", more than ", bound.what, ": ", parts);
}

std::string memory_estimate_note() {
  std::lock_guard<std::mutex> lock(g_note_mutex);
  if (g_last_terms.empty()) return "";
  const MemoryTerm top = largest_first(g_last_terms).front();
  return "the run was estimated at about " + gib(total(g_last_terms)) + ", the most for " + top.what + " (" +
         gib(top.bytes) + ")";
}

}  // namespace nl
