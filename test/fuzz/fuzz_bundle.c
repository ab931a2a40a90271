/* fuzz_bundle.c — libFuzzer target for what libave reads from files it did not write itself:
 * bundles (aveKernelLoadBundleFromMemory: the container, its SHA-256 sections, the metadata JSON,
 * the host text) and disk-cache entries (the request record in front of the bundle). Nothing may
 * crash, leak or read out of bounds; whatever loads must answer every getter. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/rt.h"

static void
quiet(AveDiagnostic d, void *ud)
{
	(void)d;
	(void)ud;
}

static void
touch(AveKernel k)
{
	volatile size_t sink = 0;
	const char *s = aveKernelGetName(k);
	sink += s ? strlen(s) : 0;
	s = aveKernelGetTarget(k);
	sink += s ? strlen(s) : 0;
	sink += (size_t)aveKernelGetThreads(k) + aveKernelGetSharedMemoryBytes(k);
	for (int i = 0; i < aveKernelGetNumArgs(k); i++) {
		s = aveKernelGetArgName(k, i);
		sink += s ? strlen(s) : 0;
		s = aveKernelGetArgType(k, i);
		sink += s ? strlen(s) : 0;
		for (int d = 0; d < aveKernelGetArgRank(k, i); d++)
			sink += (size_t)aveKernelGetArgDim(k, i, d) + (size_t)aveKernelGetArgStride(k, i, d);
	}
	s = aveKernelGetMetadataJson(k);
	sink += s ? strlen(s) : 0;
	(void)sink;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static AveContext c;
	static char dir[64];
	if (!c.ptr) {
		aveContextCreate(&c);
		aveContextSetDiagnosticHandler(c, quiet, NULL);
		aveContextSetCacheDir(c, NULL);
		snprintf(dir, sizeof dir, "/tmp/ave-fuzz-cache.%d", (int)getpid());
		mkdir(dir, 0700);
	}
	/* As a bundle. */
	AveKernel k;
	if (aveKernelLoadBundleFromMemory(c, data, size, &k) == AVE_SUCCESS) {
		touch(k);
		aveKernelDestroy(k);
	}
	/* As the metadata of a well-formed bundle (so that the checksums do not stop it first): the
	 * JSON reader and the kernel's signature. */
	size_t blen;
	static const char src[] = "ave.kernel @vadd() {threads = 32} {\n  ave.return\n}\n";
	uint8_t *bundle = rt_bundle_encode((const char *)data, size, NULL, 0, src, sizeof src - 1, &blen);
	if (bundle) {
		if (aveKernelLoadBundleFromMemory(c, bundle, blen, &k) == AVE_SUCCESS) {
			touch(k);
			aveKernelDestroy(k);
		}
		free(bundle);
	}
	/* As the disk-cache entry of a fixed key and request. */
	static const uint8_t key[32] = {0xab, 0xcd};
	char path[128];
	snprintf(path, sizeof path, "%s/ab", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/ab/cd%060d.avb", dir, 0);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, size, f);
		fclose(f);
		RtCache cache;
		rt_cache_init(&cache, dir);
		size_t n;
		uint8_t *b = rt_cache_get(&cache, key, "ave-cache-v3\nfuzz\n", &n);
		free(b);
		rt_cache_free(&cache);
		unlink(path);
	}
	return 0;
}
