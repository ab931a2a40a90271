/* cache.c — the compile cache: a second compile is a memory hit, a fresh context finds the disk
 * entry, a corrupted entry is counted and recompiled (never loaded), and what comes back runs.
 * usage: capi-cache EXAMPLES_DIR CACHE_DIR */
#include <dirent.h>
#include <sys/stat.h>

#include "capi.h"

static void
stats(AveContext c, const char *what)
{
	uint64_t mem, disk, miss, corrupt;
	aveContextGetCacheStats(c, &mem, &disk, &miss, &corrupt);
	printf("%s: memory %llu disk %llu miss %llu corrupt %llu\n", what, (unsigned long long)mem,
	       (unsigned long long)disk, (unsigned long long)miss, (unsigned long long)corrupt);
}

/* Flips a byte in the middle of every cache file under dir. */
static int
corrupt_all(const char *dir)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat st;
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			n += corrupt_all(path);
		} else if (strstr(e->d_name, ".avb")) {
			FILE *f = fopen(path, "r+b");
			fseek(f, st.st_size / 2, SEEK_SET);
			int ch = fgetc(f);
			fseek(f, st.st_size / 2, SEEK_SET);
			fputc(ch ^ 0x5a, f);
			fclose(f);
			n++;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static int
run_vadd(AveContext c, AveKernel k)
{
	AveDevice host;
	CHECK_OK(aveDeviceOpen(c, "host", 0, &host));
	float a[1024], b[1024], out[1024];
	for (int i = 0; i < 1024; i++) {
		a[i] = (float)i;
		b[i] = 2.0f;
	}
	AveBuffer ba, bb, bc;
	CHECK_OK(aveBufferCreate(host, sizeof a, &ba));
	CHECK_OK(aveBufferCreate(host, sizeof b, &bb));
	CHECK_OK(aveBufferCreate(host, sizeof out, &bc));
	CHECK_OK(aveBufferUpload(ba, 0, a, sizeof a));
	CHECK_OK(aveBufferUpload(bb, 0, b, sizeof b));
	AveArgs args;
	CHECK_OK(aveArgsCreate(&args));
	int64_t n = 1024;
	CHECK_OK(aveArgsAddTensor(args, ba, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(args, bb, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(args, bc, 1, &n, NULL));
	uint32_t grid[3] = {1, 1, 1};
	CHECK_OK(aveKernelLaunch(k, host, grid, args, (AveStream){NULL}));
	CHECK_OK(aveBufferDownload(bc, 0, out, sizeof out));
	int bad = 0;
	for (int i = 0; i < 1024; i++)
		bad += out[i] != a[i] + 2.0f;
	aveArgsDestroy(args);
	aveBufferDestroy(ba);
	aveBufferDestroy(bb);
	aveBufferDestroy(bc);
	aveDeviceClose(host);
	return bad;
}

int
main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	char path[1024];
	snprintf(path, sizeof path, "%s/vadd.ave", argv[1]);
	AveCompileOptions o;
	CHECK_OK(aveCompileOptionsCreate(&o));
	AveKernel k1, k2;

	AveContext c1;
	CHECK_OK(aveContextCreate(&c1));
	aveContextSetDiagnosticHandler(c1, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c1, argv[2]));
	AveModule m1;
	CHECK_OK(aveModuleParseFile(c1, path, &m1));
	CHECK_OK(aveKernelCompile(m1, "vadd", o, &k1));
	stats(c1, "first");
	CHECK_OK(aveKernelCompile(m1, "vadd", o, &k2));
	stats(c1, "second");
	aveKernelDestroy(k2);
	/* Other options are another key. */
	CHECK_OK(aveCompileOptionsSetOptLevel(o, 3));
	CHECK_OK(aveKernelCompile(m1, "vadd", o, &k2));
	stats(c1, "-O3");
	aveKernelDestroy(k2);
	CHECK_OK(aveCompileOptionsSetOptLevel(o, 2));
	printf("run 1: %d mismatches\n", run_vadd(c1, k1));
	aveKernelDestroy(k1);

	AveContext c2;
	CHECK_OK(aveContextCreate(&c2));
	aveContextSetDiagnosticHandler(c2, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c2, argv[2]));
	AveModule m2;
	CHECK_OK(aveModuleParseFile(c2, path, &m2));
	CHECK_OK(aveKernelCompile(m2, "vadd", o, &k2));
	stats(c2, "fresh context");
	printf("run 2: %d mismatches\n", run_vadd(c2, k2));
	aveKernelDestroy(k2);

	printf("corrupted %d entries\n", corrupt_all(argv[2]));
	AveContext c3;
	CHECK_OK(aveContextCreate(&c3));
	aveContextSetDiagnosticHandler(c3, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c3, argv[2]));
	AveModule m3;
	CHECK_OK(aveModuleParseFile(c3, path, &m3));
	CHECK_OK(aveKernelCompile(m3, "vadd", o, &k2));
	stats(c3, "after corruption");
	printf("run 3: %d mismatches\n", run_vadd(c3, k2));
	aveKernelDestroy(k2);

	aveModuleDestroy(m1);
	aveModuleDestroy(m2);
	aveModuleDestroy(m3);
	aveCompileOptionsDestroy(o);
	aveContextDestroy(c1);
	aveContextDestroy(c2);
	aveContextDestroy(c3);
	return 0;
}
