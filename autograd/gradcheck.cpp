#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "tensor/random.h"

namespace nl {
namespace {

// L = sum_i out_i * r_i in double.
double contract(const Tensor& out, const std::vector<float>& r) {
  std::vector<float> v = out.to_vector();
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += (double)v[i] * (double)r[i];
  return s;
}

// Row-major index of element k of a tensor of this shape.
std::vector<int64_t> unravel(int64_t k, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int i = (int)shape.size() - 1; i >= 0; --i) {
    idx[i] = k % shape[i];
    k /= shape[i];
  }
  return idx;
}

}  // namespace

GradcheckResult gradcheck(const std::function<Var(const std::vector<Var>&)>& fn, const std::vector<Tensor>& inputs,
                          GradcheckOptions opt) {
  GradcheckResult res;
  std::ostringstream report;
  auto run = [&](bool track) {
    std::vector<Var> vars;
    for (const Tensor& t : inputs) vars.emplace_back(t, track);
    return std::make_pair(fn(vars), vars);
  };

  // analytic gradients
  auto [out, vars] = run(true);
  Generator gen(opt.seed);
  Tensor r = gen.normal(out.shape());
  std::vector<float> rv = r.to_vector();
  out.backward(r);

  int shown = 0;
  for (size_t n = 0; n < inputs.size(); ++n) {
    Tensor x = inputs[n];  // a handle on the caller's tensor: perturbed in place, restored
    std::vector<float> analytic =
        vars[n].grad().defined() ? vars[n].grad().to_vector() : std::vector<float>(x.numel(), 0.0f);
    for (int64_t k = 0; k < x.numel(); ++k) {
      auto idx = unravel(k, x.shape());
      const float orig = x.at(idx);
      double fp, fm;
      {
        NoGradGuard no_grad;
        x.set(idx, orig + opt.eps);
        fp = contract(run(false).first.value(), rv);
        x.set(idx, orig - opt.eps);
        fm = contract(run(false).first.value(), rv);
        x.set(idx, orig);
      }
      // the step actually taken, after rounding orig +- eps to float
      const double h = ((double)(orig + opt.eps) - (double)(orig - opt.eps));
      const double numeric = (fp - fm) / h;
      const double a = analytic[k];
      const double err = std::fabs(a - numeric);
      res.max_abs_err = std::max(res.max_abs_err, err);
      if (numeric != 0) res.max_rel_err = std::max(res.max_rel_err, err / std::fabs(numeric));
      if (!(err <= opt.atol + opt.rtol * std::fabs(numeric))) {
        res.ok = false;
        if (shown++ < 8)
          report << "  input " << n << " element " << k << ": analytic " << a << ", numeric " << numeric << "\n";
      }
    }
  }
  res.report = report.str();
  return res;
}

}  // namespace nl
