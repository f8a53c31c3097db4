/* Scalars set in the loop body and used in subscripts. */

void shift_left(int n, double *a) {
  int j;
  for (int i = 0; i < n - 1; i++) {
    j = i + 1;
    a[i] = a[j];
  }
}

void neighbours(int n, double *restrict in, double *restrict out) {
  for (int i = 1; i < n - 1; i++) {
    int left = i - 1;
    int right = i + 1;
    out[i] = (in[left] + in[i] + in[right]) / 3.0;
  }
}

void flat_rows(int n, int m, double *restrict a, double *restrict b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      int k = i * m + j;
      b[k] = 2.0 * a[k];
    }
}

void stride_two(int n, float *restrict x, float *restrict y) {
  for (int i = 0; i < n; i++) {
    int idx = 2 * i;
    y[i] = x[idx] + x[idx + 1];
  }
}

void running_offset(int n, double *a) {
  int j = 0;
  for (int i = 0; i < n; i++) {
    a[j] = i;
    j = j + 2;
  }
}

int copy_count(int n, const double *restrict src, double *restrict dst) {
  int out = 0;
  for (int i = 0; i < n; i++) {
    dst[out] = src[i];
    out++;
  }
  return out;
}

void interleave(int n, const double *restrict a, const double *restrict b, double *restrict c) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    c[k++] = a[i];
    c[k++] = b[i];
  }
}
