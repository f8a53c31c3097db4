/* A read under an affine ?: (x[MAX(i - 1, 0)]) inside a choice on data (x[i] > 1.0) whose
   element a later iteration overwrites (x[n - i], with a value on the other side of 1.0):
   the adjoint's guard must read the kept value, as the partials do. */
void guarded_choice(int n, double x[n + 1])
{
  for (int i = 0; i < n; i++)
    x[n - i] = x[i] > 1.0 ? 0.5 * x[i > 0 ? i - 1 : 0] : 2.0 * x[i];
}
