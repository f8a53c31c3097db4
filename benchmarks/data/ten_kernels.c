/* ten_kernels.c: ten PolyBench-style kernels (with their initialisation functions) taken
 * from tests/kernels/, for benchmarks/bench_lsp.py. One file, shared size macros. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define DATA_TYPE double
#define NI 32
#define NJ 36
#define NK 40
#define NL 44
#define N 64
#define M 48
#define NM 40
#define TSTEPS 16
#define TMAX 8
#define NX 48
#define NY 56

/* ------------------------------------------------------------------------------------------ gemm */
/* gemm.c -- general matrix multiply: C = alpha*A*B + beta*C.
 * Fixed-size (macro) array parameters, DATA_TYPE macro. */
static void init_gemm(int ni, int nj, int nk, DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++)
      C[i][j] = (DATA_TYPE)((i * j + 1) % ni) / ni;
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      A[i][k] = (DATA_TYPE)(i * (k + 1) % nk) / nk;
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++)
      B[k][j] = (DATA_TYPE)(k * (j + 2) % nj) / nj;
}

void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                 DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ])
{
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

/* ------------------------------------------------------------------------------------------ 2mm */
/* 2mm.c -- two chained matrix products: D = alpha*A*B*C + beta*D.
 * C99 VLA array parameters. */
static void init_2mm(int ni, int nj, int nk, int nl, double *alpha, double *beta,
                       double A[ni][nk], double B[nk][nj], double C[nj][nl], double D[ni][nl])
{
  *alpha = 1.25;
  *beta = 0.75;
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      A[i][k] = (double)((i * k + 1) % ni) / ni;
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++)
      B[k][j] = (double)(k * (j + 1) % nj) / nj;
  for (int j = 0; j < nj; j++)
    for (int l = 0; l < nl; l++)
      C[j][l] = (double)((j * (l + 3) + 1) % nl) / nl;
  for (int i = 0; i < ni; i++)
    for (int l = 0; l < nl; l++)
      D[i][l] = (double)(i * (l + 2) % nl) / nl;
}

void kernel_2mm(int ni, int nj, int nk, int nl, double alpha, double beta,
                double tmp[ni][nj], double A[ni][nk], double B[nk][nj],
                double C[nj][nl], double D[ni][nl])
{
  /* tmp = alpha * A * B */
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      tmp[i][j] = 0.0;
      for (int k = 0; k < nk; k++)
        tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  /* D = beta * D + tmp * C */
  for (int i = 0; i < ni; i++)
    for (int l = 0; l < nl; l++) {
      D[i][l] *= beta;
      for (int j = 0; j < nj; j++)
        D[i][l] += tmp[i][j] * C[j][l];
    }
}

/* ------------------------------------------------------------------------------------------ 3mm */
/* 3mm.c -- three matrix products: E = A*B; F = C*D; G = E*F.
 * Fixed-size array parameters, DATA_TYPE macro. */
static void init_3mm(int ni, int nj, int nk, int nl, int nm,
                       DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                       DATA_TYPE C[NJ][NM], DATA_TYPE D[NM][NL])
{
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      A[i][k] = (DATA_TYPE)((i * k + 1) % ni) / (5 * ni);
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++)
      B[k][j] = (DATA_TYPE)((k * (j + 1) + 2) % nj) / (5 * nj);
  for (int j = 0; j < nj; j++)
    for (int m = 0; m < nm; m++)
      C[j][m] = (DATA_TYPE)(j * (m + 3) % nm) / (5 * nm);
  for (int m = 0; m < nm; m++)
    for (int l = 0; l < nl; l++)
      D[m][l] = (DATA_TYPE)((m * (l + 2) + 2) % nl) / (5 * nl);
}

void kernel_3mm(int ni, int nj, int nk, int nl, int nm,
                DATA_TYPE E[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                DATA_TYPE F[NJ][NL], DATA_TYPE C[NJ][NM], DATA_TYPE D[NM][NL],
                DATA_TYPE G[NI][NL])
{
  /* E := A * B */
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      E[i][j] = 0.0;
      for (int k = 0; k < nk; k++)
        E[i][j] += A[i][k] * B[k][j];
    }
  /* F := C * D */
  for (int j = 0; j < nj; j++)
    for (int l = 0; l < nl; l++) {
      F[j][l] = 0.0;
      for (int m = 0; m < nm; m++)
        F[j][l] += C[j][m] * D[m][l];
    }
  /* G := E * F */
  for (int i = 0; i < ni; i++)
    for (int l = 0; l < nl; l++) {
      G[i][l] = 0.0;
      for (int j = 0; j < nj; j++)
        G[i][l] += E[i][j] * F[j][l];
    }
}

/* ------------------------------------------------------------------------------------------ atax */
/* atax.c -- y = A' * (A * x).  The intermediate (A*x)[i] is kept in a local
 * scalar that feeds the second inner loop.  C99 VLA array parameters. */
static void init_atax(int m, int n, double A[m][n], double x[n])
{
  double fn = (double)n;
  for (int j = 0; j < n; j++)
    x[j] = 1.0 + j / fn;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = (double)((i + j) % n) / (5 * m);
}

void kernel_atax(int m, int n, double A[m][n], double x[n], double y[n])
{
  for (int j = 0; j < n; j++)
    y[j] = 0.0;
  for (int i = 0; i < m; i++) {
    double t = 0.0;
    for (int j = 0; j < n; j++)
      t += A[i][j] * x[j];
    for (int j = 0; j < n; j++)
      y[j] += A[i][j] * t;
  }
}

/* ------------------------------------------------------------------------------------------ bicg */
/* bicg.c -- the two matrix-vector products of a BiCG step:
 *   s = A' * r   and   q = A * p,   A is n x m.
 * Fixed-size array parameters, inclusive (<=) loop bounds. */
static void init_bicg(int m, int n, double A[N][M], double r[N], double p[M])
{
  for (int j = 0; j <= m - 1; j++)
    p[j] = (double)(j % m) / m;
  for (int i = 0; i <= n - 1; i++) {
    r[i] = (double)(i % n) / n;
    for (int j = 0; j <= m - 1; j++)
      A[i][j] = (double)(i * (j + 1) % n) / n;
  }
}

void kernel_bicg(int m, int n, double A[N][M], double s[M], double q[N],
                 double p[M], double r[N])
{
  for (int j = 0; j <= m - 1; j++)
    s[j] = 0.0;
  for (int i = 0; i <= n - 1; i++) {
    q[i] = 0.0;
    for (int j = 0; j <= m - 1; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
}

/* ------------------------------------------------------------------------------------------ gesummv */
/* gesummv.c -- summed matrix-vector products: y = alpha*A*x + beta*B*x.
 * Fixed-size array parameters; the two row sums live in local scalars. */
static void init_gesummv(int n, double *alpha, double *beta,
                       double A[N][N], double B[N][N], double x[N])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++) {
    x[i] = (double)(i % n) / n;
    for (int j = 0; j < n; j++) {
      A[i][j] = (double)((i * j + 1) % n) / n;
      B[i][j] = (double)((i * j + 2) % n) / n;
    }
  }
}

void kernel_gesummv(int n, double alpha, double beta,
                    double A[N][N], double B[N][N], double x[N], double y[N])
{
  for (int i = 0; i < n; i++) {
    double ta = 0.0;
    double tb = 0.0;
    for (int j = 0; j < n; j++) {
      ta += A[i][j] * x[j];
      tb += B[i][j] * x[j];
    }
    y[i] = alpha * ta + beta * tb;
  }
}

/* ------------------------------------------------------------------------------------------ jacobi_2d */
/* jacobi_2d.c -- 5-point Jacobi relaxation in 2-D with two arrays; the two
 * spatial loops are parallel within each half time step.
 * C99 VLA array parameters. */
static void init_jacobi_2d(int n, double A[n][n], double B[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = ((double)i * (j + 2) + 2) / n;
      B[i][j] = ((double)i * (j + 3) + 3) / n;
    }
}

void kernel_jacobi_2d(int tsteps, int n, double A[n][n], double B[n][n])
{
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
}

/* ------------------------------------------------------------------------------------------ fdtd_2d */
/* fdtd_2d.c -- 2-D finite-difference time-domain (Yee) update of the
 * electric fields ex, ey and the magnetic field hz, with a source term
 * injected along the first row.  C99 VLA array parameters; the source row
 * is guarded by an affine condition so nx == 0 never writes out of bounds. */
static void init_fdtd_2d(int tmax, int nx, int ny, double ex[nx][ny], double ey[nx][ny],
                       double hz[nx][ny], double fict[tmax])
{
  for (int t = 0; t < tmax; t++)
    fict[t] = (double)t;
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      ex[i][j] = ((double)i * (j + 1)) / nx;
      ey[i][j] = ((double)i * (j + 2)) / ny;
      hz[i][j] = ((double)i * (j + 3)) / nx;
    }
}

void kernel_fdtd_2d(int tmax, int nx, int ny, double ex[nx][ny], double ey[nx][ny],
                    double hz[nx][ny], double fict[tmax])
{
  for (int t = 0; t < tmax; t++) {
    if (nx >= 1)
      for (int j = 0; j < ny; j++)
        ey[0][j] = fict[t];
    for (int i = 1; i < nx; i++)
      for (int j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (int i = 0; i < nx; i++)
      for (int j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (int i = 0; i < nx - 1; i++)
      for (int j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
}

/* ------------------------------------------------------------------------------------------ covariance */
/* covariance.c -- sample covariance matrix of m variables observed n times
 * (data is n x m), using the unbiased 1/(n-1) normalisation (1/1 when
 * n <= 1).  Each entry is accumulated in a local scalar.
 * C99 VLA array parameters. */
static void init_covariance(int m, int n, double data[n][m])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      data[i][j] = ((double)i * j) / m;
}

void kernel_covariance(int m, int n, double data[n][m], double cov[m][m], double mean[m])
{
  double float_n = n > 0 ? (double)n : 1.0;
  double denom = n > 1 ? (double)(n - 1) : 1.0;

  for (int j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (int i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      data[i][j] -= mean[j];

  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++)
        s += data[k][i] * data[k][j];
      s /= denom;
      cov[i][j] = s;
      cov[j][i] = s;
    }
}

/* ------------------------------------------------------------------------------------------ correlation */
/* correlation.c -- Pearson correlation matrix of m variables observed n
 * times (data is n x m).  Standard deviations close to zero are replaced by
 * 1.0 so constant columns (or n == 1) never divide by zero.
 * Fixed-size array parameters, DATA_TYPE macro, sqrt, ternaries. */
static void init_correlation(int m, int n, DATA_TYPE data[N][M])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      data[i][j] = (DATA_TYPE)(i * j) / m + i;
}

void kernel_correlation(int m, int n, DATA_TYPE data[N][M], DATA_TYPE corr[M][M],
                        DATA_TYPE mean[M], DATA_TYPE stddev[M])
{
  DATA_TYPE eps = 0.1;
  DATA_TYPE float_n = n > 0 ? (DATA_TYPE)n : 1.0;

  for (int j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (int i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  for (int j = 0; j < m; j++) {
    stddev[j] = 0.0;
    for (int i = 0; i < n; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = sqrt(stddev[j]);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }

  /* Centre and reduce the columns. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrt(float_n) * stddev[j];
    }

  for (int i = 0; i < m; i++)
    corr[i][i] = 1.0;
  for (int i = 0; i < m; i++)
    for (int j = i + 1; j < m; j++) {
      corr[i][j] = 0.0;
      for (int k = 0; k < n; k++)
        corr[i][j] += data[k][i] * data[k][j];
      corr[j][i] = corr[i][j];
    }
}
