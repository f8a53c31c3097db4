/* dot.c -- inner product into r[0]: a reduction over one loop. */
void dot(int n, double x[n], double y[n], double r[1])
{
  r[0] = 0.0;
  for (int i = 0; i < n; i++)
    r[0] += x[i] * y[i];
}
