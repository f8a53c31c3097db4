/* triad.c -- STREAM's triad, a = b + s * c: what one and all cores of this machine can move
 * through memory, the ceiling of the memory-bound kernels (bench_cpu.py prints it). */
void triad(int n, double s, double a[n], double b[n], double c[n])
{
  for (int i = 0; i < n; i++)
    a[i] = b[i] + s * c[i];
}
