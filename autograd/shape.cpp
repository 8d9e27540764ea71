// Views, joins and masks. A view's backward undoes the view on the gradient:
// reshape back, transpose back, scatter a slice into zeros, sum an expansion.
#include "autograd/ops.h"

namespace nl::ag {

Var reshape(const Var& x, const Shape& shape) {
  Shape s = x.shape();
  return record("reshape", x.value().reshape(shape), {x}, [s](const Tensor& g) {
    return std::vector<Tensor>{g.reshape(s)};
  });
}

Var transpose(const Var& x, int64_t a, int64_t b) {
  return record("transpose", x.value().transpose(a, b), {x}, [a, b](const Tensor& g) {
    return std::vector<Tensor>{g.transpose(a, b)};
  });
}

// The inverse permutation sends each axis back: inverse[order[i]] = i.
Var permute(const Var& x, const std::vector<int64_t>& order) {
  Tensor y = x.value().permute(order);
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    inverse[normalize_axis(order[i], (int)order.size(), "permute")] = (int64_t)i;
  return record("permute", y, {x}, [inverse](const Tensor& g) { return std::vector<Tensor>{g.permute(inverse)}; });
}

// The gradient of a slice is the output gradient written into zeros of x's shape.
Var slice(const Var& x, int64_t axis, int64_t start, int64_t end, int64_t step) {
  Shape s = x.shape();
  return record("slice", x.value().slice(axis, start, end, step), {x}, [s, axis, start, end, step](const Tensor& g) {
    Tensor dx = Tensor::zeros(s, DType::F32, g.device());
    Tensor window = dx.slice(axis, start, end, step);
    window.copy_from(g);
    return std::vector<Tensor>{dx};
  });
}

Var squeeze(const Var& x, int64_t axis) {
  Shape s = x.shape();
  return record("squeeze", x.value().squeeze(axis), {x},
                [s](const Tensor& g) { return std::vector<Tensor>{g.reshape(s)}; });
}

Var unsqueeze(const Var& x, int64_t axis) {
  Shape s = x.shape();
  return record("unsqueeze", x.value().unsqueeze(axis), {x}, [s](const Tensor& g) {
    return std::vector<Tensor>{g.reshape(s)};
  });
}

// Every copy of a broadcast element sends its gradient back to the one element.
Var expand(const Var& x, const Shape& shape) {
  Shape s = x.shape();
  return record("expand", x.value().expand(shape), {x},
                [s](const Tensor& g) { return std::vector<Tensor>{sum_to(g, s)}; });
}

Var contiguous(const Var& x) {
  return record("contiguous", x.value().contiguous(), {x}, [](const Tensor& g) { return std::vector<Tensor>{g}; });
}

// The gradient of a concat splits along the same axis.
Var concat(const std::vector<Var>& parts, int64_t axis) {
  std::vector<Tensor> values;
  std::vector<int64_t> sizes;
  for (const Var& p : parts) values.push_back(p.value());
  Tensor y = nl::concat(values, axis);
  int a = normalize_axis(axis, y.dim(), "concat");
  for (const Var& p : parts) sizes.push_back(p.shape()[a]);
  return record("concat", y, parts, [sizes, a](const Tensor& g) { return nl::split(g, sizes, a); });
}

// Each piece is a slice; their gradients add up in x's gradient like any reuse.
std::vector<Var> split(const Var& x, const std::vector<int64_t>& sizes, int64_t axis) {
  nl::split(x.value(), sizes, axis);  // validates the sizes once, naming split
  std::vector<Var> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, axis, start, start + s));
    start += s;
  }
  return out;
}

// Masked entries are constants: their gradient is 0.
Var causal_mask(const Var& scores, float fill) {
  return record("causal_mask", causal_mask_fill(scores.value(), fill), {scores}, [](const Tensor& g) {
    return std::vector<Tensor>{causal_mask_fill(g, 0.0f)};
  });
}

// y = x * m with m in {0, 1/(1-p)} drawn once:  dx = dy * m.  In eval mode (or p = 0)
// dropout is the identity and records a node that says so, for graph walks.
Var dropout(const Var& x, float p, bool training, Generator& gen) {
  Var out;
  if (!training || p == 0.0f) {
    out = record("dropout", x.value(), {x}, [](const Tensor& g) { return std::vector<Tensor>{g}; });
  } else {
    // drawn on the CPU with the project's generator (same masks on every device), then moved
    Tensor mask = dropout_mask(x.shape(), p, gen).to(x.value().device());
    out = record("dropout", nl::mul(x.value(), mask), {x}, [mask](const Tensor& g) {
      return std::vector<Tensor>{nl::mul(g, mask)};
    });
  }
  if (out.node()) {
    out.node()->attrs = {p};
    out.node()->training = training;
  }
  return out;
}

// out[t] = table[ids[t]]:  dtable[v] = sum of the gradient rows at positions with id v
Var embedding(const Var& table, const Tensor& ids) {
  Tensor y = embedding_forward(table.value(), ids);  // checks table is (V, C) first
  const int64_t vocab = table.shape()[0];
  return record("embedding", y, {table}, [ids, vocab](const Tensor& g) {
    return std::vector<Tensor>{embedding_backward(g, ids, vocab)};
  });
}

}  // namespace nl::ag
