/* running_max.c -- a running maximum per row, an `if` whose condition reads what it assigns:
 * the reverse sweep needs the maximum as it was before each step (a tape). */

void running_max(int n, int m, double x[n][m], double r[n])
{
  for (int i = 0; i < n; i++) {
    r[i] = 0.0;
    for (int j = 0; j < m; j++)
      if (x[i][j] > r[i])
        r[i] = x[i][j];
  }
}
