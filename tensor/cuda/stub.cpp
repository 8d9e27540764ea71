// Built when CUDA=1 is not set: every CUDA entry point throws, so the CPU build needs
// no CUDA headers and a CUDA tensor asked for by mistake fails with a clear message.
// (No CUDA tensor can exist in this build: the allocator refuses first. The kernel
// stubs are there for the linker and as a second line of defence.)
#include "tensor/allocator.h"
#include "tensor/cuda/kernels.h"
#include "tensor/error.h"

namespace nl {

bool cuda_available() { return false; }
bool cuda_built() { return false; }
void* cuda_system_alloc(size_t) { fail("allocator: this build has no CUDA (rebuild with make CUDA=1)"); }
void cuda_system_free(void*) {}

namespace cuda {

#define NL_NO_CUDA(op) fail(op, " has no CUDA build (rebuild with make CUDA=1)")

std::string device_description() { return "none (built without CUDA)"; }
void synchronize() {}
void set_tf32(bool) { NL_NO_CUDA("set_tf32"); }
bool tf32() { return false; }

void copy(Tensor&, const Tensor&) { NL_NO_CUDA("copy"); }
void fill_(Tensor&, float) { NL_NO_CUDA("fill_"); }

Tensor add(const Tensor&, const Tensor&) { NL_NO_CUDA("add"); }
Tensor sub(const Tensor&, const Tensor&) { NL_NO_CUDA("sub"); }
Tensor mul(const Tensor&, const Tensor&) { NL_NO_CUDA("mul"); }
Tensor div(const Tensor&, const Tensor&) { NL_NO_CUDA("div"); }
Tensor equal_mask(const Tensor&, const Tensor&) { NL_NO_CUDA("equal_mask"); }
Tensor add_scalar(const Tensor&, float) { NL_NO_CUDA("add_scalar"); }
Tensor mul_scalar(const Tensor&, float) { NL_NO_CUDA("mul_scalar"); }
Tensor pow_scalar(const Tensor&, float) { NL_NO_CUDA("pow_scalar"); }
void add_(Tensor&, const Tensor&) { NL_NO_CUDA("add_"); }
void axpy_(Tensor&, float, const Tensor&) { NL_NO_CUDA("axpy_"); }
Tensor neg(const Tensor&) { NL_NO_CUDA("neg"); }
Tensor abs(const Tensor&) { NL_NO_CUDA("abs"); }
Tensor sign(const Tensor&) { NL_NO_CUDA("sign"); }
Tensor exp(const Tensor&) { NL_NO_CUDA("exp"); }
Tensor log(const Tensor&) { NL_NO_CUDA("log"); }
Tensor sqrt(const Tensor&) { NL_NO_CUDA("sqrt"); }
Tensor rsqrt(const Tensor&) { NL_NO_CUDA("rsqrt"); }
Tensor tanh(const Tensor&) { NL_NO_CUDA("tanh"); }
Tensor erf(const Tensor&) { NL_NO_CUDA("erf"); }
Tensor relu(const Tensor&) { NL_NO_CUDA("relu"); }
Tensor gelu(const Tensor&) { NL_NO_CUDA("gelu"); }
Tensor silu(const Tensor&) { NL_NO_CUDA("silu"); }
Tensor gelu_backward(const Tensor&, const Tensor&) { NL_NO_CUDA("gelu_backward"); }
Tensor silu_backward(const Tensor&, const Tensor&) { NL_NO_CUDA("silu_backward"); }
Tensor relu_backward(const Tensor&, const Tensor&) { NL_NO_CUDA("relu_backward"); }
Tensor tanh_backward(const Tensor&, const Tensor&) { NL_NO_CUDA("tanh_backward"); }

Tensor sum(const Tensor&, const std::vector<int64_t>&, bool) { NL_NO_CUDA("sum"); }
Tensor mean(const Tensor&, const std::vector<int64_t>&, bool) { NL_NO_CUDA("mean"); }
Tensor max(const Tensor&, const std::vector<int64_t>&, bool) { NL_NO_CUDA("max"); }
Tensor var(const Tensor&, const std::vector<int64_t>&, bool, int) { NL_NO_CUDA("var"); }

Tensor softmax(const Tensor&) { NL_NO_CUDA("softmax"); }
Tensor log_softmax(const Tensor&) { NL_NO_CUDA("log_softmax"); }
Tensor softmax_backward(const Tensor&, const Tensor&) { NL_NO_CUDA("softmax_backward"); }
Tensor log_softmax_backward(const Tensor&, const Tensor&) { NL_NO_CUDA("log_softmax_backward"); }
Tensor cross_entropy_forward(const Tensor&, const Tensor&, int, Tensor&) { NL_NO_CUDA("cross_entropy"); }
Tensor cross_entropy_backward(const Tensor&, const Tensor&, const Tensor&, float, int) {
  NL_NO_CUDA("cross_entropy_backward");
}

AttentionForward attention_forward(const Tensor&, const Tensor&, const Tensor&, float, bool) {
  NL_NO_CUDA("attention_forward");
}
AttentionGrads attention_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, float, bool) {
  NL_NO_CUDA("attention_backward");
}

Tensor matmul(const Tensor&, const Tensor&, bool, bool) { NL_NO_CUDA("matmul"); }
void sgemm_direct(const float*, const float*, float*, int64_t, int64_t, int64_t) { NL_NO_CUDA("sgemm_direct"); }

Tensor embedding_forward(const Tensor&, const Tensor&) { NL_NO_CUDA("embedding"); }
Tensor embedding_backward(const Tensor&, const Tensor&, int64_t) { NL_NO_CUDA("embedding_backward"); }
Tensor causal_mask_fill(const Tensor&, float) { NL_NO_CUDA("causal_mask"); }

LayerNormForward layernorm_forward(const Tensor&, const Tensor&, const Tensor&, float) {
  NL_NO_CUDA("layernorm_forward");
}
LayerNormGrads layernorm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  NL_NO_CUDA("layernorm_backward");
}
RMSNormForward rmsnorm_forward(const Tensor&, const Tensor&, const Tensor&, float) { NL_NO_CUDA("rmsnorm_forward"); }
RMSNormGrads rmsnorm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool) {
  NL_NO_CUDA("rmsnorm_backward");
}
Tensor rope_forward(const Tensor&, int64_t, int64_t, int64_t, float) { NL_NO_CUDA("rope_forward"); }
Tensor rope_backward(const Tensor&, int64_t, int64_t, int64_t, float) { NL_NO_CUDA("rope_backward"); }
Tensor dyt_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { NL_NO_CUDA("dyt_forward"); }
DyTGrads dyt_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { NL_NO_CUDA("dyt_backward"); }
BHyTForward bhyt_forward(const Tensor&, const Tensor&, const Tensor&, float, float, bool) {
  NL_NO_CUDA("bhyt_forward");
}
BHyTGrads bhyt_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        float, bool) {
  NL_NO_CUDA("bhyt_backward");
}
Tensor bhyt_denom_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  NL_NO_CUDA("bhyt_denom_forward");
}
BHyTDenomGrads bhyt_denom_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  NL_NO_CUDA("bhyt_denom_backward");
}

void adamw_step(Tensor&, const Tensor&, Tensor&, Tensor&, const ParamSegments&, const AdamWScalars&) {
  NL_NO_CUDA("adamw");
}
void sgd_step(Tensor&, const Tensor&, Tensor&, const ParamSegments&, float, float, float, bool) { NL_NO_CUDA("sgd"); }
double sum_squares(const Tensor&) { NL_NO_CUDA("clip_grad_norm"); }
void scale_(Tensor&, float) { NL_NO_CUDA("clip_grad_norm"); }

}  // namespace cuda
}  // namespace nl
