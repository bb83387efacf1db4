/* A STREAM-style triad (a = b + s*c) on one thread, for a side-by-side check of corescale's
 * bandwidth workload. Written for corescale; counts 24 bytes per element as STREAM does.
 * Usage: triad ARRAY_BYTES PASSES   (prints the median GB/s over the passes) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s ARRAY_BYTES PASSES\n", argv[0]);
        return 2;
    }
    size_t n = strtoull(argv[1], NULL, 10) / sizeof(double);
    int passes = atoi(argv[2]);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    double *rates = malloc(passes * sizeof *rates);
    if (!a || !b || !c || !rates || passes < 1) {
        fprintf(stderr, "cannot allocate %zu elements\n", n);
        return 1;
    }
    const double s = 3.0;
    for (size_t i = 0; i < n; i++) { a[i] = 0.5; b[i] = 1.0; c[i] = 2.0; }
    for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i]; /* warm-up pass */
    for (int p = 0; p < passes; p++) {
        double t0 = now();
        for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        rates[p] = 24.0 * n / (now() - t0) / 1e9;
    }
    qsort(rates, passes, sizeof *rates, by_value);
    double check = 0;
    for (size_t i = 0; i < n; i += 4096) check += a[i];
    printf("%.3f\n", rates[passes / 2]);
    fprintf(stderr, "checksum %.1f\n", check);
    return 0;
}
