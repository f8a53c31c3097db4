/* Loops whose step is a size known only at run time. */

void every_kth(int n, int k, double *a) {
  for (int i = 0; i < n; i += k)
    a[i] = 0.0;
}

void block_sums(int n, int bs, const double *a, double *sums) {
  for (int b = 0; b < n; b += bs) {
    sums[b] = 0.0;
    for (int i = b; i < n && i < b + bs; i++)
      sums[b] += a[i];
  }
}

void countdown(int n, int k, double *a) {
  for (int i = n - 1; i >= 0; i -= k)
    a[i] *= 0.5;
}
