/* threads.c — one context used by 8 threads at once: each parses its own module, compiles
 * (through the shared cache), launches on the host device with its own buffers and checks the
 * result. Run under ASan in the sanitizer build. usage: capi-threads EXAMPLES_DIR */
#include <pthread.h>

#include "capi.h"

typedef struct Job {
	AveContext c;
	AveDevice host;
	const char *text;
	size_t len;
	int id, bad;
} Job;

static void *
work(void *ud)
{
	Job *j = ud;
	for (int round = 0; round < 4; round++) {
		AveModule m;
		AveKernel k;
		AveCompileOptions o;
		CHECK_OK(aveModuleParse(j->c, j->text, j->len, "vadd.ave", &m));
		CHECK_OK(aveCompileOptionsCreate(&o));
		CHECK_OK(aveKernelCompile(m, "vadd", o, &k));
		float a[2048], b[2048], out[2048];
		for (int i = 0; i < 2048; i++) {
			a[i] = (float)(i * (j->id + 1));
			b[i] = (float)round;
		}
		AveBuffer ba, bb, bc;
		CHECK_OK(aveBufferCreate(j->host, sizeof a, &ba));
		CHECK_OK(aveBufferCreate(j->host, sizeof b, &bb));
		CHECK_OK(aveBufferCreate(j->host, sizeof out, &bc));
		CHECK_OK(aveBufferUpload(ba, 0, a, sizeof a));
		CHECK_OK(aveBufferUpload(bb, 0, b, sizeof b));
		AveArgs args;
		CHECK_OK(aveArgsCreate(&args));
		int64_t n = 2048;
		CHECK_OK(aveArgsAddTensor(args, ba, 1, &n, NULL));
		CHECK_OK(aveArgsAddTensor(args, bb, 1, &n, NULL));
		CHECK_OK(aveArgsAddTensor(args, bc, 1, &n, NULL));
		uint32_t grid[3] = {2, 1, 1};
		CHECK_OK(aveKernelLaunch(k, j->host, grid, args, (AveStream){NULL}));
		CHECK_OK(aveBufferDownload(bc, 0, out, sizeof out));
		for (int i = 0; i < 2048; i++)
			j->bad += out[i] != a[i] + b[i];
		aveArgsDestroy(args);
		aveBufferDestroy(ba);
		aveBufferDestroy(bb);
		aveBufferDestroy(bc);
		aveKernelDestroy(k);
		aveCompileOptionsDestroy(o);
		aveModuleDestroy(m);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char path[1024];
	snprintf(path, sizeof path, "%s/vadd.ave", argv[1]);
	size_t len;
	char *text = slurp(path, &len);
	AveContext c;
	AveDevice host;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c, NULL));
	CHECK_OK(aveDeviceOpen(c, "host", 0, &host));
	enum { T = 8 };
	pthread_t th[T];
	Job jobs[T];
	for (int i = 0; i < T; i++) {
		jobs[i] = (Job){c, host, text, len, i, 0};
		pthread_create(&th[i], NULL, work, &jobs[i]);
	}
	int bad = 0;
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		bad += jobs[i].bad;
	}
	uint64_t mem, miss;
	aveContextGetCacheStats(c, &mem, NULL, &miss, NULL);
	printf("threads: %d, mismatches: %d, compiles: %llu\n", T, bad,
	       (unsigned long long)(mem + miss));
	aveDeviceClose(host);
	aveContextDestroy(c);
	free(text);
	return bad != 0;
}
