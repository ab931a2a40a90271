/* test_rt.c — runtime internals: SHA-256 against FIPS vectors, the JSON reader, bundle encoding
 * with corruption detection, and the compile cache (memory, disk, corrupt entries, threads). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/rt.h"
#include "unit.h"

static void
sha_hex(const char *msg, size_t n, char *out)
{
	uint8_t d[32];
	rt_sha256(msg, n, d);
	rt_hex(d, 32, out);
}

static char cache_dir[256];

static void *
hammer(void *ud)
{
	RtCache *c = ud;
	uint8_t key[32];
	char meta[] = "{\"kernel\":\"k\"}";
	for (int i = 0; i < 200; i++) {
		memset(key, i % 7, sizeof key);
		size_t n;
		uint8_t *got = rt_cache_get(c, key, "k", &n);
		if (got) {
			RtBundle b;
			const char *err;
			if (!rt_bundle_decode(got, n, &b, &err)) {
				fprintf(stderr, "thread saw a bad entry: %s\n", err);
				free(got);
				return (void *)1;
			}
			rt_bundle_free(&b);
		} else {
			size_t len;
			uint8_t *bundle = rt_bundle_encode(meta, strlen(meta), &i, sizeof i, NULL, 0, &len);
			rt_cache_put(c, key, "k", bundle, len);
			free(bundle);
		}
	}
	return NULL;
}

int
main(void)
{
	char hex[65];
	sha_hex("", 0, hex);
	CHECK(!strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	sha_hex("abc", 3, hex);
	CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha_hex(two, strlen(two), hex);
	CHECK(!strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
	/* A million 'a's, fed in uneven pieces. */
	RtSha256 s;
	rt_sha256_init(&s);
	char as[997];
	memset(as, 'a', sizeof as);
	size_t left = 1000000;
	while (left) {
		size_t k = left < sizeof as ? left : sizeof as;
		rt_sha256_update(&s, as, k);
		left -= k;
	}
	uint8_t d[32];
	rt_sha256_final(&s, d);
	rt_hex(d, 32, hex);
	CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));

	/* JSON. */
	IrArena a;
	ir_arena_init(&a, NULL);
	const char *err = NULL;
	const char *doc = "{\"kernel\": \"gemm\", \"threads\": 384, \"x\": -1.5e2, \"ok\": true,"
			  " \"args\": [{\"name\": \"A\\u0041\", \"dims\": [-1, 64]}], \"n\": null}";
	RtJson *j = rt_json_parse(&a, doc, strlen(doc), &err);
	CHECK(j && j->kind == RT_JSON_OBJECT);
	CHECK(!strcmp(rt_json_str(j, "kernel"), "gemm"));
	CHECK_EQ(rt_json_int(j, "threads", 0), 384);
	CHECK(rt_json_get(j, "x")->f == -150.0);
	RtJson *args = rt_json_get(j, "args");
	CHECK(args && args->n == 1 && !strcmp(rt_json_str(args->items[0], "name"), "AA"));
	CHECK(rt_json_get(rt_json_get(j, "n"), "x") == NULL);
	const char *bad[] = {"{", "{\"a\" 1}", "[1,]", "\"abc", "{\"a\":1} x", "[01x]", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err = NULL;
		CHECK(rt_json_parse(&a, bad[i], strlen(bad[i]), &err) == NULL && err);
	}
	ir_arena_free(&a);

	/* Bundles: round trip, then every single-byte corruption is caught. */
	const char *meta = "{\"kernel\":\"k\",\"target\":\"host\"}";
	const char bin[] = "binary payload";
	size_t len;
	uint8_t *enc = rt_bundle_encode(meta, strlen(meta), bin, sizeof bin, "src", 3, &len);
	RtBundle b;
	uint8_t *copy = malloc(len);
	memcpy(copy, enc, len);
	CHECK(rt_bundle_decode(copy, len, &b, &err));
	CHECK(b.meta_len == strlen(meta) && !memcmp(b.meta, meta, b.meta_len));
	CHECK(b.binary_len == sizeof bin && !memcmp(b.binary, bin, sizeof bin));
	CHECK(b.source_len == 3 && !memcmp(b.source, "src", 3));
	rt_bundle_free(&b);
	int caught = 0;
	for (size_t i = 0; i < len; i++) {
		copy = malloc(len);
		memcpy(copy, enc, len);
		copy[i] ^= 0x40;
		if (!rt_bundle_decode(copy, len, &b, &err))
			caught++, free(copy);
		else
			rt_bundle_free(&b);
	}
	CHECK_EQ((size_t)caught, len);
	copy = malloc(len);
	memcpy(copy, enc, len);
	CHECK(!rt_bundle_decode(copy, len - 1, &b, &err)); /* truncated */
	free(copy);

	/* Cache: miss, put, memory hit, disk hit from a second cache, corrupt entry. */
	snprintf(cache_dir, sizeof cache_dir, "/tmp/ave-test-cache-%d", (int)getpid());
	RtCache c1, c2;
	rt_cache_init(&c1, cache_dir);
	uint8_t key[32];
	rt_sha256("key", 3, key);
	size_t n;
	CHECK(rt_cache_get(&c1, key, "key", &n) == NULL);
	rt_cache_put(&c1, key, "key", enc, len);
	uint8_t *got = rt_cache_get(&c1, key, "key", &n);
	CHECK(got && n == len && !memcmp(got, enc, len));
	free(got);
	CHECK_EQ(c1.stats.misses, 1);
	CHECK_EQ(c1.stats.memory_hits, 1);
	rt_cache_init(&c2, cache_dir);
	got = rt_cache_get(&c2, key, "key", &n);
	CHECK(got && n == len);
	free(got);
	CHECK_EQ(c2.stats.disk_hits, 1);
	rt_cache_free(&c2);
	/* Corrupt the file on disk: a fresh cache must count it, refuse it and remove it. */
	char path[512];
	rt_hex(key, 32, hex);
	snprintf(path, sizeof path, "%s/%.2s/%s.avb", cache_dir, hex, hex + 2);
	FILE *f = fopen(path, "r+b");
	CHECK(f != NULL);
	if (f) {
		fseek(f, (long)len / 2, SEEK_SET);
		fputc('#', f);
		fclose(f);
	}
	rt_cache_init(&c2, cache_dir);
	CHECK(rt_cache_get(&c2, key, "key", &n) == NULL);
	CHECK_EQ(c2.stats.corrupt, 1);
	CHECK(access(path, F_OK) != 0);
	rt_cache_free(&c2);
	rt_cache_free(&c1);

	/* Eight threads on one cache and its directory: nobody sees a partial entry. */
	rt_cache_init(&c1, cache_dir);
	pthread_t th[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, hammer, &c1);
	int bad_threads = 0;
	for (int i = 0; i < 8; i++) {
		void *r;
		pthread_join(th[i], &r);
		bad_threads += r != NULL;
	}
	CHECK_EQ(bad_threads, 0);
	CHECK_EQ(c1.stats.corrupt, 0);
	rt_cache_free(&c1);
	free(enc);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
	CHECK(system(cmd) == 0);
	return unit_summary();
}
