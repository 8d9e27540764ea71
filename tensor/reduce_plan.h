// How a reduction over a set of axes is laid out, shared by the CPU and CUDA kernels:
// the kept axes become rows, the reduced axes one run of `inner` elements per row.
#pragma once
#include <vector>

#include "tensor/tensor.h"

namespace nl {

struct ReducePlan {
  Shape out_shape;          // with or without the kept 1s
  std::vector<bool> reduced;
  int64_t rows = 1, inner = 1;
  bool leading_only = true; // the reduced axes are exactly 0..k-1
};

inline ReducePlan plan_reduce(const char* op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  ReducePlan p;
  const int nd = x.dim();
  p.reduced.assign(nd, axes.empty());
  for (int64_t a : axes) {
    int k = normalize_axis(a, nd, op);
    NL_CHECK(!p.reduced[k], op, ": axis ", a, " given twice for ", describe(x));
    p.reduced[k] = true;
  }
  bool seen_kept = false;
  for (int i = 0; i < nd; ++i) {
    if (p.reduced[i]) {
      p.inner *= x.shape()[i];
      if (seen_kept) p.leading_only = false;
      if (keepdim) p.out_shape.push_back(1);
    } else {
      seen_kept = true;
      p.rows *= x.shape()[i];
      p.out_shape.push_back(x.shape()[i]);
    }
  }
  return p;
}

// x laid out as (rows, inner) with the reduced axes last, contiguous.
inline Tensor rows_layout(const Tensor& x, const ReducePlan& p) {
  std::vector<int64_t> order;
  for (int i = 0; i < x.dim(); ++i) if (!p.reduced[i]) order.push_back(i);
  for (int i = 0; i < x.dim(); ++i) if (p.reduced[i]) order.push_back(i);
  return x.permute(order).contiguous();
}

}  // namespace nl
