#include "studies/instruments/act_stats.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "studies/instruments/metrics.h"
#include "train/io/files.h"

namespace nl {

namespace {

const std::string kBoundedArg = ".bounded_arg";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ActStat tensor_stats(const Tensor& t) {
  NL_CHECK(t.dtype() == DType::F32 && t.numel() > 0, "act_stats: needs a non-empty float32 tensor, got ", describe(t));
  const std::vector<float> v = t.to_vector();
  double sum = 0, sq = 0, mx = 0;
  for (float x : v) {
    sum += x;
    sq += (double)x * x;
    mx = std::max(mx, (double)std::fabs(x));
  }
  const double n = (double)v.size(), mean = sum / n;
  double dev = 0;  // two passes: the variance of a stream with a large mean stays accurate
  for (float x : v) dev += ((double)x - mean) * ((double)x - mean);
  ActStat s;
  s.mean = mean;
  s.var = dev / n;
  s.rms = std::sqrt(sq / n);
  s.max_abs = mx;
  return s;
}

void ActStatsProbe::record(int64_t layer, const std::string& site, const Tensor& value) {
  if (ends_with(site, kBoundedArg)) {
    const auto key = std::make_pair(layer, site.substr(0, site.size() - kBoundedArg.size()));
    const std::array<double, 3> sat = saturation_fractions(value);
    auto it = index_.find(key);
    if (it == index_.end()) {
      pending_saturation_[key] = sat;
    } else {
      rows[it->second].has_saturation = true;
      rows[it->second].saturation = sat;
    }
    return;
  }
  ActStat s = tensor_stats(value);
  s.layer = layer;
  s.site = site;
  const auto key = std::make_pair(layer, site);
  auto pending = pending_saturation_.find(key);
  if (pending != pending_saturation_.end()) {
    s.has_saturation = true;
    s.saturation = pending->second;
    pending_saturation_.erase(pending);
  }
  index_[key] = rows.size();
  rows.push_back(s);
}

namespace {

// One probed forward of a GPT or a ViT, and the bounded_all row
template <class Model, class Input>
std::vector<ActStat> probed_stats(Model& model, const Input& input) {
  ActStatsProbe probe;
  const bool was_training = model.training();
  model.eval();
  ActivationProbe* previous = model.set_probe(&probe);
  try {
    NoGradGuard no_grad;
    model.forward(input);
  } catch (...) {
    model.set_probe(previous);
    model.train(was_training);
    throw;
  }
  model.set_probe(previous);
  model.train(was_training);

  std::vector<ActStat> rows = probe.rows;
  ActStat avg;
  avg.layer = -1;
  avg.site = "bounded_all";
  int64_t sites = 0;
  for (const ActStat& r : rows)
    if (r.has_saturation) {
      for (int k = 0; k < 3; ++k) avg.saturation[k] += r.saturation[k];
      ++sites;
    }
  if (sites > 0) {
    for (double& f : avg.saturation) f /= (double)sites;
    avg.has_saturation = true;
    avg.mean = avg.var = avg.rms = avg.max_abs = NAN;
    rows.push_back(avg);
  }
  return rows;
}

}  // namespace

std::vector<ActStat> activation_stats(GPT& model, const Tensor& ids) { return probed_stats(model, ids); }

std::vector<ActStat> activation_stats(ViT& model, const Tensor& images) { return probed_stats(model, Var(images)); }

std::string act_stats_header() { return "step,layer,site,mean,var,rms,max_abs,sat_gt1,sat_gt2,sat_gt3"; }

void write_act_stats(std::FILE* out, int64_t step, const std::vector<ActStat>& rows) {
  for (const ActStat& r : rows) {
    std::fprintf(out, "%lld,%lld,%s,", (long long)step, (long long)r.layer, r.site.c_str());
    if (std::isnan(r.mean))
      std::fprintf(out, ",,,");
    else
      std::fprintf(out, "%.9g,%.9g,%.9g,%.9g", r.mean, r.var, r.rms, r.max_abs);
    if (r.has_saturation)
      std::fprintf(out, ",%.9g,%.9g,%.9g\n", r.saturation[0], r.saturation[1], r.saturation[2]);
    else
      std::fprintf(out, ",,,\n");
  }
}

std::vector<std::pair<int64_t, ActStat>> read_act_stats(const std::string& path) {
  std::istringstream in(read_text_file(path, "act_stats", int64_t(1) << 30));
  std::string line;
  std::getline(in, line);
  NL_CHECK(line == act_stats_header(), "act_stats: ", path, " does not start with the header '", act_stats_header(),
           "'");
  std::vector<std::pair<int64_t, ActStat>> out;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string item;
    while (std::getline(ss, item, ',')) f.push_back(item);
    while (f.size() < 10) f.push_back("");  // getline drops trailing empty fields
    auto num = [&](size_t i) { return f[i].empty() ? NAN : std::strtod(f[i].c_str(), nullptr); };
    ActStat s;
    s.layer = std::atoll(f[1].c_str());
    s.site = f[2];
    s.mean = num(3);
    s.var = num(4);
    s.rms = num(5);
    s.max_abs = num(6);
    s.has_saturation = !f[7].empty();
    if (s.has_saturation) s.saturation = {num(7), num(8), num(9)};
    out.emplace_back(std::atoll(f[0].c_str()), s);
  }
  return out;
}

const ActStat* find_stat(const std::vector<ActStat>& rows, int64_t layer, const std::string& site) {
  for (const ActStat& r : rows)
    if (r.layer == layer && r.site == site) return &r;
  return nullptr;
}

std::string format_act_stats(const std::vector<ActStat>& rows) {
  int64_t layers = 0;
  for (const ActStat& r : rows) layers = std::max(layers, r.layer);
  // the columns present in these rows: (site, what, header)
  struct Col {
    std::string site;
    char what;  // 'v' var, 'r' rms, 'm' max |x|, 's' saturation above 2, 'e' mean
    std::string head;
  };
  std::vector<Col> cols = {{"resid", 'v', "resid var"}, {"resid", 'r', "resid rms"}, {"resid", 'm', "resid max"}};
  for (const char* n : {"ln1", "ln1_out", "ln2", "ln2_out"}) {
    bool present = false, sat = false;
    for (const ActStat& r : rows)
      if (r.site == n) present = true, sat |= r.has_saturation;
    if (present) cols.push_back({n, 'r', std::string(n) + " rms"});
    if (sat) cols.push_back({n, 's', std::string(n) + " |u|>2"});
  }
  if (find_stat(rows, 0, "site2_var_approx")) {
    cols.push_back({"site2_var_approx", 'e', "s2^2 approx"});
    cols.push_back({"site2_var_exact", 'e', "s2^2 exact"});
  }
  std::ostringstream os;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%5s", "layer");
  os << buf;
  for (const Col& c : cols) {
    std::snprintf(buf, sizeof buf, " %12s", c.head.c_str());
    os << buf;
  }
  os << "\n";
  for (int64_t l = 0; l <= layers; ++l) {
    std::snprintf(buf, sizeof buf, "%5lld", (long long)l);
    os << buf;
    for (const Col& c : cols) {
      const ActStat* s = find_stat(rows, l, c.site);
      if (!s || (c.what == 's' && !s->has_saturation)) {
        std::snprintf(buf, sizeof buf, " %12s", "-");
      } else {
        const double v = c.what == 'v' ? s->var : c.what == 'r' ? s->rms : c.what == 'm' ? s->max_abs
                       : c.what == 's' ? s->saturation[1] : s->mean;
        std::snprintf(buf, sizeof buf, " %12.4g", v);
      }
      os << buf;
    }
    os << "\n";
  }
  if (const ActStat* avg = find_stat(rows, -1, "bounded_all")) {
    std::snprintf(buf, sizeof buf, "%.4f, %.4f, %.4f", avg->saturation[0], avg->saturation[1], avg->saturation[2]);
    os << "saturation over all sites of the bounded nonlinearity, |u| > 1, 2, 3: " << buf << "\n";
  }
  return os.str();
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  NL_CHECK(a.size() == b.size() && a.size() >= 2, "pearson: needs two series of equal length >= 2, got ", a.size(),
           " and ", b.size());
  const double n = (double)a.size();
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= n;
  mb /= n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa == 0 || sbb == 0) return NAN;
  return sab / std::sqrt(saa * sbb);
}

}  // namespace nl
