/* 3mm.c -- three matrix products: E = A*B; F = C*D; G = E*F.
 * Fixed-size array parameters, DATA_TYPE macro. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NI
#define NI 24
#endif
#ifndef NJ
#define NJ 28
#endif
#ifndef NK
#define NK 32
#endif
#ifndef NL
#define NL 36
#endif
#ifndef NM
#define NM 40
#endif

#define DATA_TYPE double

static void init_array(int ni, int nj, int nk, int nl, int nm,
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

int main(void)
{
  DATA_TYPE (*E)[NJ] = malloc(sizeof(DATA_TYPE[NI][NJ]));
  DATA_TYPE (*A)[NK] = malloc(sizeof(DATA_TYPE[NI][NK]));
  DATA_TYPE (*B)[NJ] = malloc(sizeof(DATA_TYPE[NK][NJ]));
  DATA_TYPE (*F)[NL] = malloc(sizeof(DATA_TYPE[NJ][NL]));
  DATA_TYPE (*C)[NM] = malloc(sizeof(DATA_TYPE[NJ][NM]));
  DATA_TYPE (*D)[NL] = malloc(sizeof(DATA_TYPE[NM][NL]));
  DATA_TYPE (*G)[NL] = malloc(sizeof(DATA_TYPE[NI][NL]));

  init_array(NI, NJ, NK, NL, NM, A, B, C, D);
  kernel_3mm(NI, NJ, NK, NL, NM, E, A, B, F, C, D, G);

  double checksum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int l = 0; l < NL; l++)
      checksum += G[i][l];
  printf("3mm checksum: %.6f\n", checksum);

  free(E);
  free(A);
  free(B);
  free(F);
  free(C);
  free(D);
  free(G);
  return 0;
}
