// gradcheck: compares every analytic gradient with central finite differences.
// The output is contracted with a fixed random upstream gradient r, L = sum(out * r),
// because a plain sum hides bugs in ops whose outputs sum to a constant (a normalised
// row sums to zero, a softmax row to one). L is accumulated in double so that rounding
// of the float32 outputs stays well below the differences being measured.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autograd/var.h"

namespace nl {

struct GradcheckResult {
  bool ok = true;
  double max_abs_err = 0, max_rel_err = 0;
  std::string report;  // the first mismatches: input, element, analytic, numeric
};

struct GradcheckOptions {
  float eps = 1e-3f;    // finite-difference step
  float atol = 2e-3f;   // pass when |analytic - numeric| <= atol + rtol * |numeric|
  float rtol = 2e-2f;
  uint64_t seed = 1234; // for the upstream gradient
};

// fn builds the output from Vars wrapping `inputs` (each requires a gradient). Inputs
// may be non-contiguous views; they are perturbed in place, one element at a time.
GradcheckResult gradcheck(const std::function<Var(const std::vector<Var>&)>& fn,
                          const std::vector<Tensor>& inputs, GradcheckOptions options = {});

}  // namespace nl
