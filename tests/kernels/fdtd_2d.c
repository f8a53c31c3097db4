/* fdtd_2d.c -- 2-D finite-difference time-domain (Yee) update of the
 * electric fields ex, ey and the magnetic field hz, with a source term
 * injected along the first row.  C99 VLA array parameters; the source row
 * is guarded by an affine condition so nx == 0 never writes out of bounds. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NX
#define NX 40
#endif
#ifndef NY
#define NY 48
#endif
#ifndef TMAX
#define TMAX 12
#endif

static void init_array(int tmax, int nx, int ny, double ex[nx][ny], double ey[nx][ny],
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

int main(void)
{
  double (*ex)[NY] = (double (*)[NY])malloc(sizeof(double[NX][NY]));
  double (*ey)[NY] = (double (*)[NY])malloc(sizeof(double[NX][NY]));
  double (*hz)[NY] = (double (*)[NY])malloc(sizeof(double[NX][NY]));
  double *fict = malloc(sizeof(double[TMAX]));

  init_array(TMAX, NX, NY, ex, ey, hz, fict);
  kernel_fdtd_2d(TMAX, NX, NY, ex, ey, hz, fict);

  double checksum = 0.0;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      checksum += ex[i][j] + ey[i][j] + hz[i][j];
  printf("fdtd_2d checksum: %.6f\n", checksum);

  free(ex);
  free(ey);
  free(hz);
  free(fict);
  return 0;
}
