// Every numeric op on tensors, forward and backward kernels alike. Each function checks
// shapes, dtypes and devices once and then runs its kernel (tensor/cpu/*.cpp; a CUDA
// tensor reaches tensor/cuda/ in a CUDA build and throws "<op> has no CUDA build"
// otherwise). Results are new contiguous tensors unless a name ends in `_` (in place).
// Nothing here knows about gradients: autograd/ pairs these into differentiable ops.
#pragma once
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace nl {

// ---- elementwise, NumPy broadcasting (tensor/cpu/elementwise.cpp)
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add_scalar(const Tensor& a, float s);
Tensor mul_scalar(const Tensor& a, float s);
Tensor pow_scalar(const Tensor& a, float p);
void add_(Tensor& dst, const Tensor& src);               // dst += src (src broadcast to dst)
void axpy_(Tensor& dst, float alpha, const Tensor& src); // dst += alpha * src, same shape

Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);   // -1, 0 or 1
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor erf(const Tensor& x);    // the error function, 2/sqrt(pi) * integral of exp(-t^2) from 0 to x
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);   // tanh approximation, as GPT-2
Tensor silu(const Tensor& x);
Tensor gelu_backward(const Tensor& x, const Tensor& dy);
Tensor silu_backward(const Tensor& x, const Tensor& dy);
Tensor relu_backward(const Tensor& x, const Tensor& dy);
Tensor tanh_backward(const Tensor& y, const Tensor& dy);  // from the output y = tanh(x)
Tensor equal_mask(const Tensor& a, const Tensor& b);      // 1 where a == b (broadcast), else 0

// ---- reductions over any set of axes (tensor/cpu/reduce.cpp); empty axes = all axes
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor max(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
// correction 1 is the unbiased estimate (PyTorch's default), 0 the biased one the norms use
Tensor var(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false, int correction = 1);
// Sums a broadcast result back down to `shape` (the backward of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- softmax over the last axis (tensor/cpu/softmax.cpp)
Tensor softmax(const Tensor& x);
Tensor log_softmax(const Tensor& x);
Tensor softmax_backward(const Tensor& y, const Tensor& dy);      // y = softmax(x)
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy);  // y = log_softmax(x)

// ---- fused attention, flash-attention style (tensor/cpu/attention.cpp)
// Per (batch, head): out = softmax(scale * q k^T, future keys masked when causal) v, without
// ever holding the (T, S) probabilities: the forward keeps the output and each query row's
// log-sum-exp, the backward recomputes the probabilities tile by tile from them. Inputs
// may be strided views whose last (head) dim is contiguous, such as the head views of a
// qkv projection, which are read in place; any other layout is copied first.
// causal: query i sits at position i + S - T and sees keys 0 .. i + S - T, the mask of
// causal_mask_fill (S = T in training; S > T for new rows against a key/value cache); it
// needs S >= T. Every query sees at least one key, so S >= 1 whenever T >= 1.
struct AttentionForward {
  Tensor out;  // (B, H, T, hd)
  Tensor lse;  // (B, H, T): log sum_j exp(scale q_i . k_j) over the keys j that query i sees
};
struct AttentionGrads {
  Tensor dq;  // (B, H, T, hd)
  Tensor dk;  // (B, H, S, hd)
  Tensor dv;  // (B, H, S, hd)
};
// q (B, H, T, hd), k (B, H, S, hd), v (B, H, S, hd). `out_into`, when given, is where the
// output is written (and it is returned as out): a tensor of out's shape whose head dim is
// contiguous and whose rows and heads do not overlap, such as the head views of a (B, T,
// H hd) tensor, which then needs no copy to merge the heads (ag::attention_qkv).
AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal,
                                   const Tensor& out_into = Tensor());
// dout (B, H, T, hd), q, k, v as in the forward, out (B, H, T, hd) and lse (B, H, T) from it;
// the gradients go into `into`'s tensors where they are given, as out_into above.
AttentionGrads attention_backward(const Tensor& dout, const Tensor& q, const Tensor& k, const Tensor& v,
                                  const Tensor& out, const Tensor& lse, float scale, bool causal,
                                  const AttentionGrads& into = {});

// ---- matrix products through cblas_sgemm (tensor/cpu/matmul.cpp)
// a (..., M, K) @ b (..., K, N) -> (..., M, N), batch dims broadcast; trans_a / trans_b
// use the transpose of the last two dims. Transposed views need no copy: sgemm reads them.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

// ---- a linear layer's product with its bias and activation (tensor/cpu/linear.cpp)
// pre = x w^T + b, out = gelu(pre) (Activation::Gelu) or pre itself; x (M, K), w (N, K),
// b (N) or undefined for none. With a `residual` r (M, N) (no activation then), out =
// r + pre: a transformer block's residual add after its output projection. The bias,
// the GELU and the residual are applied to each tile of the output right after the
// sgemm that wrote it (tensor/cpu/gemm.h), not in passes of their own, with the float
// operations of matmul, add, gelu and add, so the bits are theirs.
// On CUDA it runs those ops.
enum class Activation { None, Gelu };
struct LinearForward {
  Tensor pre;  // x w^T + b: what GELU's derivative reads (undefined with a residual)
  Tensor out;  // gelu(pre), r + pre, or pre
};
LinearForward linear_forward(const Tensor& x, const Tensor& w, const Tensor& b, Activation act,
                             const Tensor& residual = Tensor());
// From dout (M, N): dpre = dout * gelu'(pre) (dout itself without the GELU) and, with
// want_db, db = the sum of dpre over the rows, in one pass; the sum is taken in the order
// and precision of sum_to (the backward of add's broadcast). pre is read only with the GELU.
struct LinearEpilogueGrads {
  Tensor dpre;  // (M, N)
  Tensor db;    // (N), or undefined
};
LinearEpilogueGrads linear_epilogue_backward(const Tensor& pre, const Tensor& dout, Activation act, bool want_db);

// ---- embedding (tensor/cpu/embedding.cpp)
// table (V, C), ids int32 (...) -> (..., C); ids must lie in [0, V).
Tensor embedding_forward(const Tensor& table, const Tensor& ids);
// dout (..., C), ids int32 (...) -> dtable (V, C): rows scatter-added.
Tensor embedding_backward(const Tensor& dout, const Tensor& ids, int64_t vocab);

// ---- cross-entropy with integer targets, fused with log-softmax (tensor/cpu/cross_entropy.cpp)
// logits (N, V), targets int32 (N); targets equal to ignore_index are skipped. Returns the
// mean loss over the kept rows (a scalar) and writes each row's log-sum-exp to lse (N).
Tensor cross_entropy_forward(const Tensor& logits, const Tensor& targets, int ignore_index, Tensor& lse);
// dlogits (N, V) = (softmax(logits) - onehot(target)) * dloss / kept_rows; 0 on ignored rows.
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, float dloss,
                              int ignore_index);

// ---- joining and masking (tensor/cpu/shape_ops.cpp)
Tensor concat(const std::vector<Tensor>& parts, int64_t axis);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis);  // views
// x (..., T, S): entries with column j > i + (S - T) (the future) set to `value`.
Tensor causal_mask_fill(const Tensor& x, float value);
// A dropout mask of `shape`: 0 with probability p, else 1/(1-p), drawn from gen.
Tensor dropout_mask(const Shape& shape, float p, Generator& gen);

// ---- rotary position embeddings (tensor/cpu/rope.cpp)
// x (B, T, W) contiguous: channels [0, rotated) are heads of head_dim (even) channels;
// in each head the pair (2i, 2i+1) of the token at position p = first_position + t is
// rotated by the angle p * base^(-2i / head_dim) (Llama's pairs, base 10000 in the
// models); channels [rotated, W) are copied. rope_backward rotates by the opposite angle.
Tensor rope_forward(const Tensor& x, int64_t head_dim, int64_t rotated, int64_t first_position, float base);
Tensor rope_backward(const Tensor& dy, int64_t head_dim, int64_t rotated, int64_t first_position, float base);

}  // namespace nl
