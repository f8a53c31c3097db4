/* The parts of PolyBench/C's utilities/polybench.c that tests/polybench's reduced polybench.h
   declares, plus the POLYBENCH_TIME timer (wall clock around the kernel call, as PolyBench's).
   The timer prints seconds on stdout with 9 decimals (PolyBench prints 6). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double polybench_t_start, polybench_t_end;

static double rtclock(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void polybench_flush_cache(void)
{
  /* As PolyBench's: read 32 MiB so that the kernel starts with cold caches. */
  size_t n = 32 * 1024 * 1024 / sizeof(double);
  double *flush = (double *)calloc(n, sizeof(double));
  double tmp = 0.0;
  if (!flush) return;
  for (size_t i = 0; i < n; i++) tmp += flush[i];
  if (tmp > 10.0) printf("%f\n", tmp);
  free(flush);
}

void polybench_prepare_instruments(void) { polybench_flush_cache(); }

void polybench_timer_start(void)
{
  polybench_prepare_instruments();
  polybench_t_start = rtclock();
}

void polybench_timer_stop(void) { polybench_t_end = rtclock(); }

void polybench_timer_print(void) { printf("%0.9f\n", polybench_t_end - polybench_t_start); }

void *polybench_alloc_data(unsigned long long int n, int elt_size)
{
  void *p = NULL;
  size_t bytes = (size_t)n * (size_t)elt_size;
  if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0 || !p) {
    fprintf(stderr, "[PolyBench] posix_memalign: cannot allocate memory\n");
    exit(1);
  }
  return p;
}

void polybench_free_data(void *ptr) { free(ptr); }
