/* One element read on both sides of an affine ?: : two increments, each under its side. */
void both_sides(int n, double x[n + 1], double y[n + 1])
{
  for (int i = 0; i < n; i++)
    y[i] = i > 0 ? x[i] * x[i - 1] : 2.0 * x[i];
}
