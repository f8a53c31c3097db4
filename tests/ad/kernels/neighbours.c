/* neighbours.c -- two reads of one array a row apart (issue 26): each adjoint update alone
 * touches every element once, but together iterations `i` and `i + 2` of the parallel loop `i`
 * add into the same `d_U[i + 1][j]`. */

void neighbours(int n, int m, double U[n][m], double V[n][m])
{
  for (int i = 1; i < n - 1; i++)
    for (int j = 0; j < m; j++)
      V[i][j] = U[i - 1][j] * U[i + 1][j];
}
