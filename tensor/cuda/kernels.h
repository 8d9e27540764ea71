// The CUDA backend: one function per public op of tensor/ops.h and tensor/norms.h,
// same name, same arguments, same results, called by that op's dispatch line
// (tensor/dispatch.h) once it has seen that the inputs live on the GPU. The public op
// has already checked that all inputs share the device; these functions check shapes
// and dtypes themselves, with the public op's name in the messages.
//
// Built from tensor/cuda/*.cu with `make CUDA=1`; without it tensor/cuda/stub.cpp
// defines every function to throw "<op> has no CUDA build (rebuild with make CUDA=1)".
// All kernels run on one stream, in order, so memory the caching allocator hands out
// again is never still in use by an earlier kernel.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/norms.h"
#include "tensor/ops.h"
#include "tensor/optim.h"

namespace nl::cuda {

// ---- runtime (tensor/cuda/runtime.cu)
std::string device_description();    // "NVIDIA H200 (sm_90, 139 GiB)"
void synchronize();                  // waits for every queued kernel (timing, tests)
// TF32 tensor-core math in cuBLAS matmuls: off by default (plain fp32, as PyTorch's
// default); benchmarks may turn it on and must say so.
void set_tf32(bool on);
bool tf32();

// ---- tensor primitives (tensor/cuda/copy.cu)
void copy(Tensor& dst, const Tensor& src);  // same shape and dtype, any strides, any devices
void fill_(Tensor& t, float value);

// ---- elementwise (tensor/cuda/elementwise.cu)
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor equal_mask(const Tensor& a, const Tensor& b);
Tensor add_scalar(const Tensor& a, float s);
Tensor mul_scalar(const Tensor& a, float s);
Tensor pow_scalar(const Tensor& a, float p);
void add_(Tensor& dst, const Tensor& src);
void axpy_(Tensor& dst, float alpha, const Tensor& src);
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);
Tensor silu(const Tensor& x);
Tensor gelu_backward(const Tensor& x, const Tensor& dy);
Tensor silu_backward(const Tensor& x, const Tensor& dy);
Tensor relu_backward(const Tensor& x, const Tensor& dy);
Tensor tanh_backward(const Tensor& y, const Tensor& dy);

// ---- reductions (tensor/cuda/reduce.cu)
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim);
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim);
Tensor max(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim);
Tensor var(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim, int correction);

// ---- softmax and cross-entropy (tensor/cuda/softmax.cu)
Tensor softmax(const Tensor& x);
Tensor log_softmax(const Tensor& x);
Tensor softmax_backward(const Tensor& y, const Tensor& dy);
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy);
Tensor cross_entropy_forward(const Tensor& logits, const Tensor& targets, int ignore_index, Tensor& lse);
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, float dloss,
                              int ignore_index);

// ---- fused attention (tensor/cuda/attention.cu), head dims up to 128
AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal);
AttentionGrads attention_backward(const Tensor& dout, const Tensor& q, const Tensor& k, const Tensor& v,
                                  const Tensor& out, const Tensor& lse, float scale, bool causal);

// ---- matmul through cuBLAS (tensor/cuda/matmul.cu)
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b);
// C (M, N) = A (M, K) @ B (K, N), row-major contiguous device pointers: one direct
// cublasSgemm call, for the benchmark that compares the wrapper against it.
void sgemm_direct(const float* a, const float* b, float* c, int64_t M, int64_t N, int64_t K);

// ---- embedding and the causal mask (tensor/cuda/gather.cu)
Tensor embedding_forward(const Tensor& table, const Tensor& ids);
Tensor embedding_backward(const Tensor& dout, const Tensor& ids, int64_t vocab);
Tensor causal_mask_fill(const Tensor& x, float value);

// ---- rotary position embeddings (tensor/cuda/rope.cu)
Tensor rope_forward(const Tensor& x, int64_t head_dim, int64_t rotated, int64_t first_position, float base);
Tensor rope_backward(const Tensor& dy, int64_t head_dim, int64_t rotated, int64_t first_position, float base);

// ---- norms (tensor/cuda/norms.cu)
LayerNormForward layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps);
LayerNormGrads layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                  const Tensor& rstd);
RMSNormForward rmsnorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps);
RMSNormGrads rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd,
                              bool with_dbeta);
Tensor dyt_forward(const Tensor& x, const Tensor& alpha, const Tensor& gamma, const Tensor& beta);
DyTGrads dyt_backward(const Tensor& dy, const Tensor& x, const Tensor& alpha, const Tensor& gamma);
BHyTForward bhyt_forward(const Tensor& x, const Tensor& gamma, const Tensor& lambda, float kappa, float eps,
                         bool centred);
BHyTGrads bhyt_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& lambda,
                        const Tensor& mean, const Tensor& sigma, float kappa, bool centred);
Tensor bhyt_denom_forward(const Tensor& x, const Tensor& denom, const Tensor& gamma, const Tensor& lambda);
BHyTDenomGrads bhyt_denom_backward(const Tensor& dy, const Tensor& x, const Tensor& denom, const Tensor& gamma,
                                   const Tensor& lambda);

// ---- optimizer kernels over a flat parameter buffer (tensor/optim.h; tensor/cuda/optim.cu)
void adamw_step(Tensor& values, const Tensor& grads, Tensor& m, Tensor& v, const ParamSegments& segments,
                const AdamWScalars& s);
void sgd_step(Tensor& values, const Tensor& grads, Tensor& buf, const ParamSegments& segments, float lr,
              float momentum, float weight_decay, bool started);
double sum_squares(const Tensor& x);
void scale_(Tensor& x, float s);

}  // namespace nl::cuda
