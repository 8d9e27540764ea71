// What the kernel tests that hold a float32 kernel against a double-precision reference
// share (tests/tensor/test_norm_kernels.cpp, test_recipe_kernels.cpp): the comparison,
// and the central differences of the reference that stand for its gradient.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tensor/tensor.h"
#include "tests/test_util.h"

namespace nl::test {

using Vec = std::vector<double>;

inline Vec to_double(const Tensor& t) {
  auto v = t.to_vector();
  return Vec(v.begin(), v.end());
}

// actual (float32) against expected (double): |a - e| <= tol * |e| + tol * max|e|.
inline void check_near(const std::string& what, const Tensor& actual, const Vec& expected, double tol) {
  double scale = 0.0;
  for (double e : expected) scale = std::max(scale, std::fabs(e));
  std::vector<float> ef(expected.begin(), expected.end());
  INFO(what);
  CHECK_CLOSE(actual, Tensor::from_vector(ef, actual.shape()), tol, tol * scale);
}

// Central differences of L(v) = sum(f(v) * r) with respect to every element of v.
inline Vec fd_grad(const std::function<Vec(const Vec&)>& f, Vec v, const Vec& r, double h = 1e-6) {
  auto loss = [&](const Vec& p) {
    Vec y = f(p);
    double s = 0.0;
    for (size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
    return s;
  };
  Vec g(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double keep = v[i];
    v[i] = keep + h;
    const double lp = loss(v);
    v[i] = keep - h;
    const double lm = loss(v);
    v[i] = keep;
    g[i] = (lp - lm) / (2 * h);
  }
  return g;
}

}  // namespace nl::test
