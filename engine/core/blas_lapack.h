// Direct calls into the system BLAS/LAPACK (the OpenBLAS LibTorch itself links), for small dense
// float64 solves where LibTorch's per-operator overhead and its general (non-symmetric) products
// cost more than the arithmetic: the proximal solve of a 128 × 257 problem is a handful of
// microsecond-sized kernels. Column-major, Fortran conventions; looked up at run time (dlsym) so
// nothing extra is linked.
#pragma once

namespace liftlab {

struct BlasLapack {
    // C = α op(A) op(B) + β C, float32 (LibTorch's float32 products run on it).
    void (*sgemm)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                  const float* alpha, const float* a, const int* lda, const float* b,
                  const int* ldb, const float* beta, float* c, const int* ldc,
                  unsigned long transa_len, unsigned long transb_len);
    // C = α op(A) op(A)ᵀ + β C (lower or upper triangle of C only).
    void (*dsyrk)(const char* uplo, const char* trans, const int* n, const int* k,
                  const double* alpha, const double* a, const int* lda, const double* beta,
                  double* c, const int* ldc, unsigned long uplo_len, unsigned long trans_len);
    // C = α op(A) op(B) + β C.
    void (*dgemm)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                  const double* alpha, const double* a, const int* lda, const double* b,
                  const int* ldb, const double* beta, double* c, const int* ldc,
                  unsigned long transa_len, unsigned long transb_len);
    // Cholesky factor of a symmetric positive-definite matrix, in place; info > 0: not SPD.
    void (*dpotrf)(const char* uplo, const int* n, double* a, const int* lda, int* info,
                   unsigned long uplo_len);
    // Solves A X = B with the factor from dpotrf; B is overwritten by X.
    void (*dpotrs)(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
                   double* b, const int* ldb, int* info, unsigned long uplo_len);
};

// The loaded library's routines, or nullptr when one of them is missing (callers fall back to
// LibTorch).
const BlasLapack* blas_lapack();

}  // namespace liftlab
