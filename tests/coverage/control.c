/* break, continue and structs. */

struct body {
  double x, vx;
};

int find_first(int n, const double *a, double key) {
  int found = -1;
  for (int i = 0; i < n; i++) {
    if (a[i] == key) {
      found = i;
      break;
    }
  }
  return found;
}

void skip_odd(int n, double *a) {
  for (int i = 0; i < n; i++) {
    if (i % 2)
      continue;
    a[i] = 0.0;
  }
}

void lower_triangle(int n, double A[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (j > i)
        break;
      A[i][j] = A[i][j] * 0.5 + i;
    }
}

void move(int n, struct body *bodies, double dt) {
  for (int i = 0; i < n; i++)
    bodies[i].x += dt * bodies[i].vx;
}
