/* Arrays of structs, as particle codes write them. */

struct particle {
  double x, y, vx, vy, m;
};

struct sample {
  double value;
  int flags;
};

struct matrix {
  int n;
  double *data;
};

void drift(int n, struct particle *p, double dt) {
  for (int i = 0; i < n; i++) {
    p[i].x += dt * p[i].vx;
    p[i].y += dt * p[i].vy;
  }
}

void kick(int n, struct particle *p, double dt) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (j != i)
        p[i].vx += dt * p[j].m * (p[j].x - p[i].x);
}

void clear_samples(int n, struct sample *s) {
  for (int i = 0; i < n; i++) {
    s[i].flags = 0;
    s[i].value = 0.0;
  }
}

void scale_matrix(struct matrix *mat, double f) {
  for (int i = 0; i < mat->n; i++)
    mat->data[i] *= f;
}
