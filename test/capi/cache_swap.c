/* cache_swap.c — disk cache entries are checked against the request, not trusted by their file
 * name: two valid entries swapped between keys (or an entry copied over another) are recompiled,
 * and the compile returns the kernel asked for. usage: capi-cache-swap CACHE_DIR */
#include <dirent.h>
#include <sys/stat.h>

#include "capi.h"

static const char text[] =
	"ave.kernel @saxpy(%x: !ave.tensor<?xf32, global, [1]>) {threads = 32} {\n"
	"  ave.return\n"
	"}\n"
	"ave.kernel @mm(%a: !ave.tensor<?xf32, global, [1]>, %b: !ave.tensor<?xf32, global, [1]>) "
	"{threads = 64} {\n"
	"  ave.return\n"
	"}\n";

/* Collects the paths of the cache files under dir. */
static int
entries(const char *dir, char paths[][2048], int n)
{
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
		if (S_ISDIR(st.st_mode))
			n = entries(path, paths, n);
		else if (strstr(e->d_name, ".avb") && n < 8)
			snprintf(paths[n++], 2048, "%s", path);
	}
	if (d)
		closedir(d);
	return n;
}

static void
compile(const char *dir, const char *name, int opt, const char *what)
{
	AveContext c;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c, dir));
	AveModule m;
	CHECK_OK(aveModuleParse(c, text, strlen(text), "swap.ave", &m));
	AveCompileOptions o;
	CHECK_OK(aveCompileOptionsCreate(&o));
	CHECK_OK(aveCompileOptionsSetOptLevel(o, opt));
	AveKernel k;
	CHECK_OK(aveKernelCompile(m, name, o, &k));
	uint64_t disk, miss, corrupt;
	aveContextGetCacheStats(c, NULL, &disk, &miss, &corrupt);
	printf("%s: asked %s -O%d, got %s with %d args; disk %llu miss %llu corrupt %llu\n", what,
	       name, opt, aveKernelGetName(k), aveKernelGetNumArgs(k), (unsigned long long)disk,
	       (unsigned long long)miss, (unsigned long long)corrupt);
	aveKernelDestroy(k);
	aveCompileOptionsDestroy(o);
	aveModuleDestroy(m);
	aveContextDestroy(c);
}

static void
swap(const char *a, const char *b)
{
	char tmp[2100];
	snprintf(tmp, sizeof tmp, "%s.swap", a);
	if (rename(a, tmp) || rename(b, a) || rename(tmp, b))
		printf("FAIL: cannot swap %s and %s\n", a, b);
}

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	const char *dir = argv[1];
	char paths[8][2048];

	/* Two kernels: swapping their entries must not turn saxpy into mm. */
	compile(dir, "saxpy", 2, "fill");
	compile(dir, "mm", 2, "fill");
	int n = entries(dir, paths, 0);
	printf("entries: %d\n", n);
	if (n != 2)
		return 1;
	swap(paths[0], paths[1]);
	compile(dir, "saxpy", 2, "swapped");
	compile(dir, "mm", 2, "swapped");
	compile(dir, "saxpy", 2, "again");

	/* One kernel at two optimisation levels: same name and target, other options. */
	compile(dir, "saxpy", 3, "fill");
	n = entries(dir, paths, 0);
	printf("entries: %d\n", n);
	if (n != 3)
		return 1;
	swap(paths[0], paths[1]); /* a rotation: every entry moves */
	swap(paths[1], paths[2]);
	compile(dir, "saxpy", 3, "shuffled");
	compile(dir, "saxpy", 2, "shuffled");
	compile(dir, "mm", 2, "shuffled");
	return 0;
}
