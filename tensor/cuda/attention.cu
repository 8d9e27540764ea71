// Fused attention on the GPU: the algorithm of tensor/cpu/attention.cpp (formulas there,
// above attention_backward), for head dims up to kMaxHeadDim.
//
// Forward: one thread block per (batch, head, tile of kQueryRows queries). Each warp
// owns kRowsPerWarp queries; each lane holds hd / 32 of a query's dims, of its output,
// and the running maximum m and sum l of that query, all in registers. The block walks
// the keys a tile at a time: the tile's keys and values are staged in shared memory,
// then every warp takes them one key at a time, s = q . k (a warp sum), and updates its
// queries online (when s raises m, l and the output are rescaled by exp(m_old - s)).
// Key tiles after the query tile's last visible key are never loaded; within a tile a
// masked key is skipped by the whole warp at once. The output is written divided by l,
// and lse = m + log l.
// Backward: D = dout . out per query (one warp per query), then two kernels that
// recompute the probabilities, P = exp(scale q . k - lse), from the saved lse:
//   dq: blocks as in the forward (queries in registers, key and value tiles in shared
//       memory): dq += scale * P (dout . v - D) k, key by key;
//   dk, dv: one block per (batch, head, tile of kQueryRows keys), keys in registers,
//       tiles of queries, their dout, lse and D in shared memory:
//       dv += P dout,  dk += scale * P (dout . v - D) q, query by query.
// Every output element is summed by one lane in a fixed order: no atomics, the same
// bits on every run. The price is computing the scores twice in the backward.
#include <cmath>

#include "tensor/attention_shapes.h"
#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"

namespace nl::cuda {
namespace {

constexpr int kWarps = 4;                              // warps per block
constexpr int kRowsPerWarp = 4;                        // queries (forward, dq) or keys (dk, dv) per warp
constexpr int kQueryRows = kWarps * kRowsPerWarp;      // rows a block owns
constexpr int kStagedRows = 32;                        // keys (or queries) staged in shared memory at once
constexpr int kMaxHeadDim = 128;
constexpr int kPerLane = kMaxHeadDim / 32;             // head dims a lane holds

// A (B, H, rows, hd) operand with a contiguous head dim: element (b, h, r, d) at
// p[b * sb + h * sh + r * sr + d].
struct Heads {
  const float* p;
  int64_t sb, sh, sr;
  __device__ const float* row(int64_t b, int64_t h, int64_t r) const { return p + b * sb + h * sh + r * sr; }
};

__host__ __device__ inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

struct Sizes {
  int64_t H, T, S, hd;
  float scale;
  bool causal;
  // query i sits at position i + S - T; causal, it sees keys 0 .. i + S - T
  __device__ int64_t last_key(int64_t i) const { return causal ? i + S - T : S - 1; }
};

// One query's (or key's) hd values, spread over the lanes of a warp: lane l holds
// dims l, l + 32, l + 64, l + 96 (0 past hd).
__device__ inline void load_lanes(const float* row, int64_t hd, float (&dst)[kPerLane]) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t d = lane + 32 * t;
    dst[t] = d < hd ? row[d] : 0.0f;
  }
}

__device__ inline void store_lanes(float* row, int64_t hd, const float (&src)[kPerLane], float factor) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t d = lane + 32 * t;
    if (d < hd) row[d] = src[t] * factor;
  }
}

// sum over the head dims of a (in lanes) times row (in shared memory), in every lane
__device__ inline float dot_lanes(const float (&a)[kPerLane], const float* row, int64_t hd) {
  const int lane = threadIdx.x & 31;
  float s = 0.0f;
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t d = lane + 32 * t;
    if (d < hd) s += a[t] * row[d];
  }
  return warp_sum(s);
}

// acc += w * row (row in shared memory)
__device__ inline void add_lanes(float (&acc)[kPerLane], float w, const float* row, int64_t hd) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t d = lane + 32 * t;
    if (d < hd) acc[t] += w * row[d];
  }
}

// Rows r0 .. r0 + rows - 1 of one head of x into shared memory (rows x hd), by the whole block.
__device__ inline void stage(const Heads& x, int64_t b, int64_t h, int64_t r0, int64_t rows, int64_t hd,
                             float* dst) {
  for (int64_t i = threadIdx.x; i < rows * hd; i += blockDim.x) {
    const int64_t r = i / hd, d = i - r * hd;
    dst[i] = x.row(b, h, r0 + r)[d];
  }
}

// out (B, H, T, hd) and lse (B, H, T), contiguous. Grid: (B * H, query tiles).
__global__ void attention_forward_kernel(Heads q, Heads k, Heads v, Sizes z, float* out, float* lse) {
  extern __shared__ float shared[];
  float* ks = shared;                        // (kStagedRows, hd)
  float* vs = shared + kStagedRows * z.hd;  // (kStagedRows, hd)
  const int64_t head = blockIdx.x, b = head / z.H, h = head % z.H;
  const int64_t i0 = (int64_t)blockIdx.y * kQueryRows + (threadIdx.x >> 5) * kRowsPerWarp;
  float qr[kRowsPerWarp][kPerLane], o[kRowsPerWarp][kPerLane], m[kRowsPerWarp], l[kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    if (i0 + r < z.T) load_lanes(q.row(b, h, i0 + r), z.hd, qr[r]);
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) o[r][t] = 0.0f;
    m[r] = -INFINITY;
    l[r] = 0.0f;
  }
  const int64_t block_i0 = (int64_t)blockIdx.y * kQueryRows;
  const int64_t last = z.last_key(smaller(z.T, block_i0 + kQueryRows) - 1);
  for (int64_t j0 = 0; j0 <= last; j0 += kStagedRows) {
    const int64_t keys = smaller(kStagedRows, z.S - j0);
    __syncthreads();  // every warp is done with the previous tile
    stage(k, b, h, j0, keys, z.hd, ks);
    stage(v, b, h, j0, keys, z.hd, vs);
    __syncthreads();
    for (int64_t c = 0; c < keys; ++c) {
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t i = i0 + r;
        if (i >= z.T || j0 + c > z.last_key(i)) continue;  // the same for every lane of the warp
        const float s = z.scale * dot_lanes(qr[r], ks + c * z.hd, z.hd);
        if (s > m[r]) {
          const float rescale = expf(m[r] - s);  // 0 for the first key (m = -inf)
          l[r] *= rescale;
#pragma unroll
          for (int t = 0; t < kPerLane; ++t) o[r][t] *= rescale;
          m[r] = s;
        }
        const float p = expf(s - m[r]);
        l[r] += p;
        add_lanes(o[r], p, vs + c * z.hd, z.hd);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t i = i0 + r;
    if (i >= z.T) continue;
    store_lanes(out + (head * z.T + i) * z.hd, z.hd, o[r], 1.0f / l[r]);
    if ((threadIdx.x & 31) == 0) lse[head * z.T + i] = m[r] + logf(l[r]);
  }
}

// delta (B * H * T) = dout . out per query, one warp per query. Grid: ceil(B H T / kWarps).
__global__ void attention_delta_kernel(Heads dout, const float* out, Sizes z, int64_t queries, float* delta) {
  const int64_t n = (int64_t)blockIdx.x * kWarps + (threadIdx.x >> 5);
  if (n >= queries) return;  // the whole warp leaves together
  const int64_t head = n / z.T, i = n - head * z.T;
  float g[kPerLane];
  load_lanes(dout.row(head / z.H, head % z.H, i), z.hd, g);
  const float d = dot_lanes(g, out + n * z.hd, z.hd);
  if ((threadIdx.x & 31) == 0) delta[n] = d;
}

// dq (B, H, T, hd), contiguous. Grid: (B * H, query tiles).
__global__ void attention_dq_kernel(Heads q, Heads k, Heads v, Heads dout, const float* lse, const float* delta,
                                    Sizes z, float* dq) {
  extern __shared__ float shared[];
  float* ks = shared;
  float* vs = shared + kStagedRows * z.hd;
  const int64_t head = blockIdx.x, b = head / z.H, h = head % z.H;
  const int64_t i0 = (int64_t)blockIdx.y * kQueryRows + (threadIdx.x >> 5) * kRowsPerWarp;
  float qr[kRowsPerWarp][kPerLane], gr[kRowsPerWarp][kPerLane], acc[kRowsPerWarp][kPerLane];
  float lse_r[kRowsPerWarp], delta_r[kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t i = i0 + r;
    if (i < z.T) {
      load_lanes(q.row(b, h, i), z.hd, qr[r]);
      load_lanes(dout.row(b, h, i), z.hd, gr[r]);
      lse_r[r] = lse[head * z.T + i];
      delta_r[r] = delta[head * z.T + i];
    }
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) acc[r][t] = 0.0f;
  }
  const int64_t block_i0 = (int64_t)blockIdx.y * kQueryRows;
  const int64_t last = z.last_key(smaller(z.T, block_i0 + kQueryRows) - 1);
  for (int64_t j0 = 0; j0 <= last; j0 += kStagedRows) {
    const int64_t keys = smaller(kStagedRows, z.S - j0);
    __syncthreads();
    stage(k, b, h, j0, keys, z.hd, ks);
    stage(v, b, h, j0, keys, z.hd, vs);
    __syncthreads();
    for (int64_t c = 0; c < keys; ++c) {
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t i = i0 + r;
        if (i >= z.T || j0 + c > z.last_key(i)) continue;
        const float p = expf(z.scale * dot_lanes(qr[r], ks + c * z.hd, z.hd) - lse_r[r]);
        const float ds = p * (dot_lanes(gr[r], vs + c * z.hd, z.hd) - delta_r[r]);
        add_lanes(acc[r], z.scale * ds, ks + c * z.hd, z.hd);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r)
    if (i0 + r < z.T) store_lanes(dq + (head * z.T + i0 + r) * z.hd, z.hd, acc[r], 1.0f);
}

// dk, dv (B, H, S, hd), contiguous. Grid: (B * H, tiles of kQueryRows keys).
__global__ void attention_dkdv_kernel(Heads q, Heads k, Heads v, Heads dout, const float* lse, const float* delta,
                                      Sizes z, float* dk, float* dv) {
  extern __shared__ float shared[];
  float* qs = shared;                          // (kStagedRows, hd)
  float* gs = shared + kStagedRows * z.hd;     // (kStagedRows, hd): dout
  float* lse_s = gs + kStagedRows * z.hd;      // (kStagedRows)
  float* delta_s = lse_s + kStagedRows;        // (kStagedRows)
  const int64_t head = blockIdx.x, b = head / z.H, h = head % z.H;
  const int64_t block_j0 = (int64_t)blockIdx.y * kQueryRows;
  const int64_t j0 = block_j0 + (threadIdx.x >> 5) * kRowsPerWarp;
  float kr[kRowsPerWarp][kPerLane], vr[kRowsPerWarp][kPerLane], dk_acc[kRowsPerWarp][kPerLane],
      dv_acc[kRowsPerWarp][kPerLane];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    if (j0 + r < z.S) {
      load_lanes(k.row(b, h, j0 + r), z.hd, kr[r]);
      load_lanes(v.row(b, h, j0 + r), z.hd, vr[r]);
    }
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) dk_acc[r][t] = dv_acc[r][t] = 0.0f;
  }
  // the first query that sees the block's first key (every later one sees it too)
  const int64_t first_query = z.causal && block_j0 > z.S - z.T ? block_j0 - (z.S - z.T) : 0;
  for (int64_t q0 = first_query; q0 < z.T; q0 += kStagedRows) {
    const int64_t queries = smaller(kStagedRows, z.T - q0);
    __syncthreads();
    stage(q, b, h, q0, queries, z.hd, qs);
    stage(dout, b, h, q0, queries, z.hd, gs);
    for (int64_t i = threadIdx.x; i < queries; i += blockDim.x) {
      lse_s[i] = lse[head * z.T + q0 + i];
      delta_s[i] = delta[head * z.T + q0 + i];
    }
    __syncthreads();
    for (int64_t c = 0; c < queries; ++c) {
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t j = j0 + r;
        if (j >= z.S || j > z.last_key(q0 + c)) continue;
        const float p = expf(z.scale * dot_lanes(kr[r], qs + c * z.hd, z.hd) - lse_s[c]);
        const float ds = p * (dot_lanes(vr[r], gs + c * z.hd, z.hd) - delta_s[c]);
        add_lanes(dv_acc[r], p, gs + c * z.hd, z.hd);
        add_lanes(dk_acc[r], z.scale * ds, qs + c * z.hd, z.hd);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t j = j0 + r;
    if (j >= z.S) continue;
    store_lanes(dk + (head * z.S + j) * z.hd, z.hd, dk_acc[r], 1.0f);
    store_lanes(dv + (head * z.S + j) * z.hd, z.hd, dv_acc[r], 1.0f);
  }
}

// The operand as the kernels read it; a strided head dim is copied first (into keep).
Heads heads_of(const Tensor& t, Tensor& keep) {
  keep = t.size(3) == 1 || t.strides()[3] == 1 ? t : t.contiguous();
  return {keep.data(), keep.strides()[0], keep.strides()[1], keep.strides()[2]};
}

AttentionShape check_inputs(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  check_f32(op, q);
  check_f32(op, k);
  check_f32(op, v);
  const AttentionShape s = check_attention_shapes(op, q, k, v, causal);
  NL_CHECK(s.hd <= kMaxHeadDim, op, ": head dims up to ", kMaxHeadDim, " on cuda, got ", describe(q));
  return s;
}

Tensor empty(const Shape& s) { return Tensor::empty(s, DType::F32, Device::CUDA); }

size_t staged_bytes(int64_t hd) { return (2 * kStagedRows * hd + 2 * kStagedRows) * sizeof(float); }

// x: the (batch, head) pairs; y: the tiles of kQueryRows rows (at most 65535 of them)
dim3 grid_over(const char* op, int64_t rows, int64_t heads) {
  const int64_t tiles = (rows + kQueryRows - 1) / kQueryRows;
  NL_CHECK(tiles <= 65535, op, ": ", rows, " rows are more than one launch covers on cuda");
  return dim3((unsigned)heads, (unsigned)tiles);
}

}  // namespace

AttentionForward attention_forward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, float scale,
                                   bool causal) {
  const char* op = "attention_forward";
  const AttentionShape s = check_inputs(op, q_in, k_in, v_in, causal);
  AttentionForward f{empty({s.B, s.H, s.T, s.hd}), empty({s.B, s.H, s.T})};
  if (s.T == 0 || s.B * s.H == 0) return f;
  Tensor qk, kk, vk;
  const Heads q = heads_of(q_in, qk), k = heads_of(k_in, kk), v = heads_of(v_in, vk);
  const Sizes z{s.H, s.T, s.S, s.hd, scale, causal};
  attention_forward_kernel<<<grid_over(op, s.T, s.B * s.H), kWarps * 32, staged_bytes(s.hd)>>>(q, k, v, z, f.out.data(),
                                                                                           f.lse.data());
  check_launch(op);
  return f;
}

AttentionGrads attention_backward(const Tensor& dout_in, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                  const Tensor& out_in, const Tensor& lse_in, float scale, bool causal) {
  const char* op = "attention_backward";
  const AttentionShape s = check_inputs(op, q_in, k_in, v_in, causal);
  check_f32(op, dout_in);
  check_f32(op, out_in);
  check_f32(op, lse_in);
  check_attention_grad_shapes(op, s, q_in, dout_in, out_in, lse_in);
  AttentionGrads d{empty(q_in.shape()), empty(k_in.shape()), empty(v_in.shape())};
  if (s.B * s.H == 0) return d;
  if (s.T == 0) {
    d.dk.fill_(0.0f);
    d.dv.fill_(0.0f);
    return d;
  }
  Tensor qk, kk, vk, gk;
  const Heads q = heads_of(q_in, qk), k = heads_of(k_in, kk), v = heads_of(v_in, vk), dout = heads_of(dout_in, gk);
  const Tensor out = out_in.contiguous(), lse = lse_in.contiguous();
  const Sizes z{s.H, s.T, s.S, s.hd, scale, causal};
  const int64_t queries = s.B * s.H * s.T;
  Tensor delta = empty({s.B, s.H, s.T});
  attention_delta_kernel<<<(unsigned)((queries + kWarps - 1) / kWarps), kWarps * 32>>>(dout, out.data(), z, queries,
                                                                                      delta.data());
  check_launch(op);
  attention_dq_kernel<<<grid_over(op, s.T, s.B * s.H), kWarps * 32, staged_bytes(s.hd)>>>(
      q, k, v, dout, lse.data(), delta.data(), z, d.dq.data());
  check_launch(op);
  attention_dkdv_kernel<<<grid_over(op, s.S, s.B * s.H), kWarps * 32, staged_bytes(s.hd)>>>(
      q, k, v, dout, lse.data(), delta.data(), z, d.dk.data(), d.dv.data());
  check_launch(op);
  return d;
}

}  // namespace nl::cuda
