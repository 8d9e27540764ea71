// Singular values and the effective rank of activation matrices (the DyT regime study,
// issue 17). The singular values come from LAPACK's divide-and-conquer SVD
// (LAPACKE_dgesdd, Debian's liblapacke-dev; the routine itself resolves to OpenBLAS's
// LAPACK, the library the program already links) in double precision: the squared
// singular values of a weight matrix (studies/instruments/power_law.h) span many
// decades, and float32's relative rounding of 6e-8 times the largest singular value
// would swamp the small ones long before the 1e-5 cut-off there. At the study's sizes
// (2048 x 128 activations, 512 x 128 weights) one decomposition takes 3-10 ms on one
// thread, so single precision would buy little. It always runs on one thread (the
// caller's thread count is restored after it): see singular_values in spectra.cpp.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace nl {

// Singular values of the row-major matrix a (rows x cols, in double), largest first;
// min(rows, cols) of them. Throws on a non-finite entry or when LAPACK does not converge.
std::vector<double> singular_values(std::vector<double> a, int64_t rows, int64_t cols);

// The same for a float32 matrix X (n, d).
std::vector<double> singular_values(const Tensor& x);

// Effective rank (Roy and Vetterli, 2007) of a matrix with singular values s: exp of the
// Shannon entropy of p = s / sum(s). k equal non-zero singular values give exactly k;
// it lies in [1, min(n, d)]. Throws when every singular value is zero.
double effective_rank(const std::vector<double>& s);

// Effective rank of X (n, d) as it is.
double effective_rank(const Tensor& x);

// Effective rank of X (n, d) after subtracting each column's mean over the n rows:
// for activations laid out as (tokens, channels), the rank of the spread of the tokens
// around their mean token. A common offset (a constant vector added to every token) is
// removed, so it does not count as a direction; the uncentred rank counts it as one.
double centred_effective_rank(const Tensor& x);

}  // namespace nl
