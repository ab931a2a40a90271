/* first_compiles.c — a process's first GPU compiles made by several threads at once, for sm_90a
 * and gfx942 (LLVM's target registration and the in-process lld link are process-global). Each
 * thread compiles on its own context with the disk cache off, so every compile runs the backend.
 * usage: capi-first-compiles EXAMPLES_DIR */
#include <pthread.h>

#include "capi.h"

enum { T = 8, ROUNDS = 2 };

static pthread_barrier_t start;
static const char *text;
static size_t len;

typedef struct Job {
	const char *target;
	int failures;
} Job;

static void *
work(void *ud)
{
	Job *j = ud;
	AveContext c;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c, NULL));
	AveModule m;
	CHECK_OK(aveModuleParse(c, text, len, "vadd.ave", &m));
	AveCompileOptions o;
	CHECK_OK(aveCompileOptionsCreate(&o));
	CHECK_OK(aveCompileOptionsSetTarget(o, j->target));
	pthread_barrier_wait(&start);
	for (int round = 0; round < ROUNDS; round++) {
		AveKernel k = {NULL};
		AveResult r = aveKernelCompile(m, "vadd", o, &k);
		if (r != AVE_SUCCESS || strcmp(aveKernelGetTarget(k), j->target))
			j->failures++;
		aveKernelDestroy(k);
	}
	aveCompileOptionsDestroy(o);
	aveModuleDestroy(m);
	aveContextDestroy(c);
	return NULL;
}

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char path[1024];
	snprintf(path, sizeof path, "%s/vadd.ave", argv[1]);
	text = slurp(path, &len);
	pthread_barrier_init(&start, NULL, T);
	pthread_t th[T];
	Job jobs[T];
	for (int i = 0; i < T; i++) {
		jobs[i] = (Job){i % 2 ? "gfx942" : "sm_90a", 0};
		pthread_create(&th[i], NULL, work, &jobs[i]);
	}
	int failures = 0;
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		failures += jobs[i].failures;
	}
	printf("threads: %d, compiles: %d, failures: %d\n", T, T * ROUNDS, failures);
	pthread_barrier_destroy(&start);
	free((void *)text);
	return failures != 0;
}
