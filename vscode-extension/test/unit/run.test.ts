import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configuredSizes, formatRunResult, integerParameters, parseSize } from '../../src/run';

test('integer parameters of a signature are the sizes to ask for', () => {
  assert.deepEqual(integerParameters('void matmul(int n, double alpha, double C[n][n], double A[n][n], double B[n][n]) '), ['n']);
  assert.deepEqual(integerParameters('void jacobi_2d(int tsteps, int n, double A[n][n], double B[n][n])'), ['tsteps', 'n']);
  assert.deepEqual(integerParameters('void scatter_add(int n, const int *idx, const double *x, double *y)'), ['n']);
  assert.deepEqual(
    integerParameters('static void kernel(const unsigned long m, long long  k, size_t len, float s, int (*f)(int), char *name)'),
    ['m', 'k', 'len'],
  );
  assert.deepEqual(integerParameters('int main(void)'), []);
  assert.deepEqual(integerParameters('void f(int n /* rows */,\n       int m)'), ['n', 'm']);
  assert.deepEqual(integerParameters('no parameters here'), []);
});

test('size answers: empty for the default, else a positive integer', () => {
  assert.deepEqual(parseSize(''), {});
  assert.deepEqual(parseSize(' 64 '), { value: 64 });
  for (const bad of ['0', '-3', '2.5', 'n', '1e3']) assert.ok(parseSize(bad).error, bad);
});

test('run results for the output channel', () => {
  assert.deepEqual(
    formatRunResult('matmul', {
      status: 'mismatch', message: 'array C differs', sizes: { n: 12 }, kernels: 1, elapsed_ms: 812.4,
      arrays: [
        { name: 'C', ok: false, message: 'differs at [0][3]', maxAbsError: 0.5 },
        { name: 'A', ok: true, message: 'ok', maxAbsError: null },
      ],
    }),
    [
      'hexplore run matmul: mismatch — array C differs',
      '  sizes: n=12; kernels: 1; 812.4 ms',
      '  MISMATCH C: differs at [0][3] (max abs error 0.5)',
      '  ok       A: ok',
    ],
  );
});

test('sizes from the hexplore.run.sizes setting are used, the others asked for', () => {
  assert.deepEqual(configuredSizes({ n: 128, m: 0, tsteps: 2.5, other: 4 }, ['tsteps', 'n', 'm']), { sizes: { n: 128 }, ask: ['tsteps', 'm'] });
  assert.deepEqual(configuredSizes(undefined, ['n']), { sizes: {}, ask: ['n'] });
  assert.deepEqual(configuredSizes([64], ['n']), { sizes: {}, ask: ['n'] });
});
