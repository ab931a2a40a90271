/* bench_parse.c — times parse + verify + print of one .ave file and reports MB/s and peak memory:
 * the bytes the library holds at once (through a counting IrAllocator) and the process's peak
 * resident set (getrusage), each also as a multiple of the input size.
 * usage: ave-bench-parse FILE [--repeat N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "frontend.h"

typedef struct Counter {
	size_t live, peak, total;
} Counter;

static void
bump(Counter *c, size_t add, size_t sub)
{
	c->live += add;
	c->live -= sub;
	c->total += add;
	if (c->live > c->peak)
		c->peak = c->live;
}

static void *
c_alloc(void *ud, size_t n)
{
	bump(ud, n, 0);
	return malloc(n);
}

static void *
c_realloc(void *ud, void *p, size_t old, size_t n)
{
	bump(ud, n, old);
	return realloc(p, n);
}

static void
c_free(void *ud, void *p, size_t n)
{
	bump(ud, 0, n);
	free(p);
}

static double
mb(size_t n)
{
	return (double)n / (1024.0 * 1024.0);
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	int repeat = 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "usage: ave-bench-parse FILE [--repeat N]\n");
			return 2;
		}
	}
	if (!path || repeat < 1) {
		fprintf(stderr, "usage: ave-bench-parse FILE [--repeat N]\n");
		return 2;
	}
	FILE *sink = fopen("/dev/null", "w");
	if (!sink) {
		perror("/dev/null");
		return 1;
	}

	Counter cnt = {0, 0, 0};
	IrAllocator al = {c_alloc, c_realloc, c_free, &cnt};
	double best[4] = {1e30, 1e30, 1e30, 1e30}; /* parse, verify, print, total */
	size_t len = 0, peak = 0, total = 0;
	for (int r = 0; r < repeat; r++) {
		IrCtx *c = ir_ctx_new(&al);
		cnt.peak = cnt.live;
		cnt.total = 0;
		/* Reading the file is part of parsing it: the context keeps the text for diagnostics. */
		double t0 = ir_now();
		IrModule *m = fe_parse_file(c, path);
		double t1 = ir_now();
		len = m ? ir_ctx_file(c, 1)->len : 0;
		bool ok = m && ir_verify(m);
		double t2 = ir_now();
		if (ok)
			ir_module_print(m, sink, NULL);
		fflush(sink);
		double t3 = ir_now();
		if (!ok) {
			fprintf(stderr, "ave-bench-parse: '%s' does not parse and verify\n", path);
			return 1;
		}
		double t[4] = {t1 - t0, t2 - t1, t3 - t2, t3 - t0};
		for (int i = 0; i < 4; i++)
			best[i] = t[i] < best[i] ? t[i] : best[i];
		peak = cnt.peak;
		total = cnt.total;
		ir_module_free(m);
		ir_ctx_free(c);
	}
	fclose(sink);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	size_t rss = (size_t)ru.ru_maxrss * 1024;

	double speed = mb(len) / best[3];
	printf("input:             %s, %.2f MB\n", path, mb(len));
	printf("best of %d runs:    parse %.3f s, verify %.3f s, print %.3f s, total %.3f s\n", repeat,
	       best[0], best[1], best[2], best[3]);
	printf("throughput:        %.1f MB/s (parse + verify + print; target >= 20 MB/s: %s)\n", speed,
	       speed >= 20.0 ? "met" : "NOT met");
	printf("parse alone:       %.1f MB/s\n", mb(len) / best[0]);
	printf("library peak:      %.1f MB = %.1fx the input (IrAllocator, live bytes at once)\n",
	       mb(peak), (double)peak / (double)len);
	printf("library allocated: %.1f MB in total during one run\n", mb(total));
	printf("process peak RSS:  %.1f MB = %.1fx the input (target < 10x: %s)\n", mb(rss),
	       (double)rss / (double)len, (double)rss < 10.0 * (double)len ? "met" : "NOT met");
	return 0;
}
