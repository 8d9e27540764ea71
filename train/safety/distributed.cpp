#include "train/safety/distributed.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "tensor/error.h"

#ifdef NL_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only: OpenMPI's C++ bindings warn under -Wextra
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif
#ifdef NL_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace nl::dist {
namespace {

int g_rank = 0, g_size = 1;
// NL_DIST_ALWAYS=1: a 1-rank run still goes through the collectives (MPI, NCCL), so that
// one machine with one GPU can check the NCCL path (docs/distributed.md)
bool g_always = false;
double g_allreduce_s = 0;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- the watchdog: MPI itself never times out a collective, so a peer that hangs
// (stopped, deadlocked, a host that vanished without closing its sockets) would keep
// every other rank waiting. A thread checks twice a second how long this rank has sat
// in its current collective.
std::atomic<double> g_timeout_s{300.0};
std::atomic<double> g_entered_at{-1.0};          // when the current collective began; -1: none
std::atomic<const char*> g_collective{""};
std::atomic<bool> g_watchdog_started{false};

[[maybe_unused]] void watchdog_loop() {  // started by init() in MPI builds
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double entered = g_entered_at.load(), timeout = g_timeout_s.load();
    if (entered < 0 || timeout <= 0 || now_s() - entered < timeout) continue;
    std::fprintf(stderr,
                 "normlab: error: rank %d waited %.0f s in %s for the other ranks (one died or hangs); "
                 "ending this rank\n",
                 g_rank, timeout, g_collective.load());
    std::fflush(stderr);
    std::_Exit(3);  // not MPI_Abort: MPI may not be called from this thread; mpirun ends the rest
  }
}

// Marks the span of one collective for the watchdog.
struct InCollective {
  explicit InCollective(const char* what) {
    g_collective = what;
    g_entered_at = now_s();
  }
  ~InCollective() { g_entered_at = -1.0; }
};

#ifdef NL_MPI
// MPI counts are int: long buffers go in pieces.
constexpr int64_t kMaxCount = INT_MAX / 2;
#endif

#ifdef NL_NCCL
ncclComm_t g_nccl = nullptr;

void check_cuda(cudaError_t e, const char* what) {
  NL_CHECK(e == cudaSuccess, what, ": ", cudaGetErrorString(e));
}
void check_nccl(ncclResult_t r, const char* what) {
  NL_CHECK(r == ncclSuccess, what, ": ", ncclGetErrorString(r));
}

// Made on the first device all-reduce, so a CPU run of a CUDA build needs no GPU: rank
// 0 makes the unique id, MPI carries it to the others.
ncclComm_t nccl_comm() {
  if (g_nccl) return g_nccl;
  ncclUniqueId id;
  if (g_rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  check_nccl(ncclCommInitRank(&g_nccl, g_size, id, g_rank), "ncclCommInitRank");
  return g_nccl;
}
#endif

}  // namespace

void init(int* argc, char*** argv) {
#ifdef NL_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (g_size > 1 && !g_watchdog_started.exchange(true)) std::thread(watchdog_loop).detach();
  const char* always = std::getenv("NL_DIST_ALWAYS");
  g_always = always && std::string(always) == "1";
#endif
#ifdef NL_NCCL
  // one rank per GPU: the ranks on one host take its GPUs in turn
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) == cudaSuccess && gpus > 0) {
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    check_cuda(cudaSetDevice((local ? std::atoi(local) : g_rank) % gpus), "cudaSetDevice");
  }
#endif
}

void finalize() {
#ifdef NL_NCCL
  if (g_nccl) ncclCommDestroy(g_nccl), g_nccl = nullptr;
#endif
#ifdef NL_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
#endif
}

int rank() { return g_rank; }
int world_size() { return g_size; }
bool is_lead() { return g_rank == 0; }

const char* backend() {
#if defined(NL_NCCL)
  return "mpi+nccl";
#elif defined(NL_MPI)
  return "mpi";
#else
  return "none";
#endif
}

void allreduce_mean(Tensor& buffer) {
  NL_CHECK(buffer.dtype() == DType::F32 && buffer.is_contiguous(), "allreduce_mean: needs a contiguous float32 ",
           "tensor, got ", describe(buffer));
  if (g_size == 1 && !g_always) return;
  const double t0 = now_s();
  InCollective scope("the gradient all-reduce");
#ifdef NL_NCCL
  if (buffer.device() == Device::CUDA) {
    // ncclAvg: the sum and the division by the rank count in one pass (NCCL >= 2.10)
    check_nccl(ncclAllReduce(buffer.data(), buffer.data(), (size_t)buffer.numel(), ncclFloat, ncclAvg, nccl_comm(), 0),
               "ncclAllReduce");
    check_cuda(cudaStreamSynchronize(0), "the NCCL all-reduce");
    g_allreduce_s += now_s() - t0;
    return;
  }
#endif
  NL_CHECK(buffer.device() == Device::CPU, "allreduce_mean: a GPU buffer needs the CUDA + MPI build (NCCL)");
#ifdef NL_MPI
  float* data = buffer.data();
  for (int64_t start = 0; start < buffer.numel(); start += kMaxCount) {
    const int count = (int)std::min(kMaxCount, buffer.numel() - start);
    MPI_Allreduce(MPI_IN_PLACE, data + start, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  const float inv = 1.0f / (float)g_size;
  for (int64_t i = 0; i < buffer.numel(); ++i) data[i] *= inv;
#endif
  g_allreduce_s += now_s() - t0;
}

double allreduce_mean(double value) {
  if (g_size == 1) return value;
#ifdef NL_MPI
  InCollective scope("a loss all-reduce");
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#endif
  return value / g_size;
}

int allreduce_max(int value) {
  if (g_size == 1) return value;
  // timed with the gradients' all-reduce: the training step's stop vote comes just before
  // it, so that is where a rank now waits for the slower ones
  const double t0 = now_s();
#ifdef NL_MPI
  InCollective scope("the stop-signal all-reduce");
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
  g_allreduce_s += now_s() - t0;
  return value;
}

void broadcast(Tensor& buffer, int root) {
  NL_CHECK(buffer.dtype() == DType::F32 && buffer.is_contiguous(), "broadcast: needs a contiguous float32 ",
           "tensor, got ", describe(buffer));
  if (g_size == 1) return;
#ifdef NL_MPI
  InCollective scope("the parameter broadcast");
  // a GPU buffer goes through a host copy: this runs once, at the start
  Tensor host = buffer.device() == Device::CPU ? buffer : buffer.to(Device::CPU);
  float* data = host.data();
  for (int64_t start = 0; start < host.numel(); start += kMaxCount) {
    const int count = (int)std::min(kMaxCount, host.numel() - start);
    MPI_Bcast(data + start, count, MPI_FLOAT, root, MPI_COMM_WORLD);
  }
  if (buffer.device() != Device::CPU) buffer.copy_from(host);
#endif
}

void barrier() {
  if (g_size == 1) return;
#ifdef NL_MPI
  InCollective scope("a barrier");
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

std::vector<std::string> gather_strings(const std::string& text) {
  if (g_size == 1) return {text};
  std::vector<std::string> out;
#ifdef NL_MPI
  const int length = (int)text.size();
  std::vector<int> lengths(g_rank == 0 ? g_size : 0), offsets;
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (g_rank == 0) {
    int total = 0;
    for (int l : lengths) offsets.push_back(total), total += l;
    all.resize((size_t)total);
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  for (int r = 0; r < (int)lengths.size(); ++r) out.push_back(all.substr((size_t)offsets[r], (size_t)lengths[r]));
#endif
  return out;
}

double allreduce_seconds() { return g_allreduce_s; }

void set_collective_timeout(double seconds) { g_timeout_s = seconds; }

int abort_job(int code) {
#ifdef NL_MPI
  if (g_size > 1) {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
#endif
  return code;
}

}  // namespace nl::dist
