/* relu_if.c -- a kink written as an `if` on data (issue 26): the model if-converts it to
 * `y[i] = x[i] > 1.0 ? ... : y[i]`, and reverse mode differentiates those statements. */

void relu_if(int n, double x[n], double y[n])
{
  for (int i = 0; i < n; i++) {
    if (x[i] > 1.0)
      y[i] = x[i] * x[i];
    else
      y[i] = 0.5 * x[i];
  }
}
