// Differentiable ops on Vars. Each is defined in the file of its family
// (autograd/elementwise.cpp, reduce.cpp, matmul.cpp, linear.cpp, shape.cpp, softmax.cpp, attention.cpp,
// loss.cpp, embedding.cpp, norms.cpp) with its forward and, beside it, its backward and the
// derivative written in a comment. The numeric work is done by the kernels of tensor/ops.h.
#pragma once
#include <cmath>
#include <vector>

#include "autograd/var.h"
#include "tensor/ops.h"

namespace nl::ag {

// ---- elementwise (broadcasting)
Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var div(const Var& a, const Var& b);
Var add_scalar(const Var& a, float s);
Var mul_scalar(const Var& a, float s);
Var pow_scalar(const Var& a, float p);
Var neg(const Var& x);
Var abs(const Var& x);
Var exp(const Var& x);
Var log(const Var& x);
Var sqrt(const Var& x);
Var rsqrt(const Var& x);
Var tanh(const Var& x);
Var erf(const Var& x);
Var relu(const Var& x);
Var gelu(const Var& x);
Var silu(const Var& x);

// ---- reductions
Var sum(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Var mean(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Var max(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Var var(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false, int correction = 1);

// ---- softmax over the last axis
Var softmax(const Var& x);
Var log_softmax(const Var& x);
// softmax(scale * scores) with the future masked when causal, saving only the output: the
// middle of the composite attention, which the tests and bench_ops hold the fused one against
Var attention_softmax(const Var& scores, float scale, bool causal);

// ---- fused attention: q (B, H, T, hd), k and v (B, H, S, hd) -> (B, H, T, hd), one recorded
// op that saves no (T, S) tensor (tensor/ops.h, attention_forward, says which views it reads
// in place and what causal means when S > T)
Var attention(const Var& q, const Var& k, const Var& v, float scale, bool causal);
// The same on one fused projection qkv (B, T, 3C) = [q | k | v], each (B, T, H, hd) with
// C = H hd, -> (B, T, C), the heads merged: the forward reads the head views in place,
// and the backward writes dq, dk and dv straight into one (B, T, 3C) gradient (three
// slices of qkv would each return a zeroed (B, T, 3C) tensor to be summed).
Var attention_qkv(const Var& qkv, int64_t heads, float scale, bool causal);

// ---- matrix product (batched, broadcast, optional transposes)
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);

// ---- a linear layer, one op: act(x W^T + b), x (M, K), W (N, K), b (N) or undefined for
// none; or, given a `residual` r (M, N) and no activation, r + x W^T + b (a residual
// stream's add after a projection). The bias, the GELU and the residual are fused into
// the product (tensor/ops.h, linear_forward). With none of them it is matmul(x, W, false, true).
Var linear(const Var& x, const Var& w, const Var& b, Activation act = Activation::None, const Var& residual = Var());

// ---- views and joins
Var reshape(const Var& x, const Shape& shape);
Var transpose(const Var& x, int64_t a, int64_t b);
Var permute(const Var& x, const std::vector<int64_t>& order);
Var slice(const Var& x, int64_t axis, int64_t start, int64_t end, int64_t step = 1);
Var squeeze(const Var& x, int64_t axis);
Var unsqueeze(const Var& x, int64_t axis);
Var expand(const Var& x, const Shape& shape);
Var contiguous(const Var& x);
Var concat(const std::vector<Var>& parts, int64_t axis);
std::vector<Var> split(const Var& x, const std::vector<int64_t>& sizes, int64_t axis);

// ---- rotary position embeddings (autograd/rope.cpp): x (B, T, W), the pairs (2i, 2i+1)
// of each head of head_dim channels in [0, rotated) rotated by (first_position + t) base^(-2i/head_dim)
Var rope(const Var& x, int64_t head_dim, int64_t rotated, int64_t first_position, float base = 10000.0f);

// ---- masking, dropout, embedding, loss
Var causal_mask(const Var& scores, float fill = -INFINITY);   // (..., T, S)
Var dropout(const Var& x, float p, bool training, Generator& gen);
Var embedding(const Var& table, const Tensor& ids);           // table (V, C), ids int32 (...)
Var cross_entropy(const Var& logits, const Tensor& targets, int ignore_index = -100);  // (N, V), (N)

}  // namespace nl::ag

namespace nl {
inline Var operator+(const Var& a, const Var& b) { return ag::add(a, b); }
inline Var operator-(const Var& a, const Var& b) { return ag::sub(a, b); }
inline Var operator*(const Var& a, const Var& b) { return ag::mul(a, b); }
inline Var operator/(const Var& a, const Var& b) { return ag::div(a, b); }
inline Var operator-(const Var& x) { return ag::neg(x); }
}  // namespace nl
