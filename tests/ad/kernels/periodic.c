/* periodic.c -- a periodic stencil (issue 26): `x[(i + 1) % nmodes]` wraps around at the end,
 * in the primal and in its adjoint (`d_x[(i + 1) % nmodes] += ...`), on the CPU and on OpenCL
 * (the size's name holds `mod`, which the text-edited affine terms once garbled). */

void periodic(int nmodes, int m, double x[nmodes][m], double y[nmodes][m])
{
  for (int i = 0; i < nmodes; i++)
    for (int j = 0; j < m; j++)
      y[i][j] = x[i][j] * x[(i + 1) % nmodes][j] - 0.5 * x[(i + nmodes - 1) % nmodes][(j + 1) % m];
}
