// Data-parallel training across processes (MPI) and GPUs (NCCL): the few collective
// operations the training loop needs, behind one small interface.
//   make MPI=1           MPI_Allreduce / MPI_Bcast over Debian's OpenMPI
//   make CUDA=1 MPI=1    device buffers are all-reduced with NCCL instead (one rank per
//                        GPU, the NCCL communicator set up through MPI)
//   plain make           single-process stubs: rank 0 of a world of 1, every call a no-op
// A rank that stops answering (killed, hung) must not leave the others waiting forever:
// mpirun aborts the job when a rank dies, and a watchdog thread ends a rank that has
// waited in one collective longer than the timeout (set_collective_timeout).
#pragma once
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace nl::dist {

// Initialises MPI (and, in a CUDA build, binds this rank to GPU local_rank % GPUs).
// Call once, first thing in main; finalize() at the end. Both are no-ops without MPI.
void init(int* argc, char*** argv);
void finalize();

int rank();        // 0 .. world_size() - 1
int world_size();  // 1 without MPI or without mpirun
bool is_lead();    // rank 0: the one that logs, evaluates, samples and writes files
// "mpi", "mpi+nccl" or "none": what this build links
const char* backend();

// In place: every rank's buffer becomes the element-wise mean over the ranks. CPU
// tensors go through MPI_Allreduce, CUDA tensors through NCCL (CUDA + MPI build).
// The tensor must be contiguous float32. Time spent here adds to allreduce_seconds().
// With one rank it returns at once, unless NL_DIST_ALWAYS=1 (an MPI build): then the
// collective runs anyway, to check the MPI or NCCL path on one machine or one GPU.
void allreduce_mean(Tensor& buffer);
double allreduce_mean(double value);
// The largest of the ranks' values (a stop signal seen by any rank stops all of them).
// Time spent here adds to allreduce_seconds().
int allreduce_max(int value);
// In place: every rank's buffer becomes root's.
void broadcast(Tensor& buffer, int root = 0);
void barrier();

// Every rank's `text`, in rank order, on the lead rank (an empty list on the others):
// how a study's ranks hand their cells' results to rank 0. No watchdog: ranks finish
// their share of a study at different times.
std::vector<std::string> gather_strings(const std::string& text);

// Wall time spent so far in allreduce_mean(Tensor&) and allreduce_max: moving the
// gradients, and waiting for the slower ranks (mostly in the step's stop vote).
double allreduce_seconds();

// A rank that waits longer than this in one collective prints why and exits (code 3),
// and mpirun then ends the others. 0: no watchdog. Default 300 s.
void set_collective_timeout(double seconds);

// Ends the whole job after an error on this rank: MPI_Abort with code when there are
// several ranks (the others may be waiting for this one), else returns code.
int abort_job(int code);

}  // namespace nl::dist
