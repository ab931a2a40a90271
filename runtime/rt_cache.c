/* rt_cache.c — the compile cache: content hash -> encoded bundle, in memory and on disk.
 * Disk entries are written to a temporary file and renamed into place, so readers in other
 * threads or processes see a whole entry or none; every entry is verified when read (its bundle,
 * and the request it was stored for) and a corrupted or misplaced one is counted, removed and
 * treated as a miss (the caller recompiles). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"

typedef struct RtCacheEntry {
	char *ident; /* the request the entry was stored for */
	uint8_t *data;
	size_t size;
} RtCacheEntry;

void
rt_cache_init(RtCache *c, const char *dir)
{
	memset(c, 0, sizeof *c);
	pthread_mutex_init(&c->mu, NULL);
	ir_map_init(&c->mem, NULL);
	ir_arena_init(&c->keys, NULL);
	c->dir = dir ? strdup(dir) : NULL;
}

void
rt_cache_free(RtCache *c)
{
	for (size_t i = 0; i < c->mem.cap; i++) {
		if (!IR_MAP_USED(&c->mem, i))
			continue;
		RtCacheEntry *e = c->mem.slot[i].val;
		free(e->ident);
		free(e->data);
		free(e);
	}
	ir_map_free(&c->mem);
	ir_arena_free(&c->keys);
	free(c->dir);
	pthread_mutex_destroy(&c->mu);
}

void
rt_cache_set_dir(RtCache *c, const char *dir)
{
	pthread_mutex_lock(&c->mu);
	free(c->dir);
	c->dir = dir ? strdup(dir) : NULL;
	pthread_mutex_unlock(&c->mu);
}

char *
rt_cache_default_dir(void)
{
	const char *d = getenv("AVE_CACHE_DIR");
	char buf[4096];
	if (d && *d)
		return strdup(d);
	d = getenv("XDG_CACHE_HOME");
	if (d && *d) {
		snprintf(buf, sizeof buf, "%s/ave", d);
		return strdup(buf);
	}
	d = getenv("HOME");
	if (d && *d) {
		snprintf(buf, sizeof buf, "%s/.cache/ave", d);
		return strdup(buf);
	}
	return NULL;
}

static bool
str_eq(const void *a, const void *b)
{
	return !strcmp(a, b);
}

static void
entry_path(const char *dir, const char *hex, char *out, size_t n, bool sub_only)
{
	if (sub_only)
		snprintf(out, n, "%s/%.2s", dir, hex);
	else
		snprintf(out, n, "%s/%.2s/%s.avb", dir, hex, hex + 2);
}

static uint8_t *
read_all(const char *path, size_t *size)
{
	/* Only a regular file of sane size is an entry (a directory or a FIFO at the path is
	 * not read: it would fail or block). */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 0 ||
	    sb.st_size > ((off_t)1 << 32)) {
		close(fd);
		return NULL;
	}
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return NULL;
	}
	long n = (long)sb.st_size;
	uint8_t *p = malloc((size_t)n + 1);
	size_t got = fread(p, 1, (size_t)n, f);
	fclose(f);
	if (got != (size_t)n) {
		free(p);
		return NULL;
	}
	*size = (size_t)n;
	return p;
}

static void
remember(RtCache *c, const char *hex, const char *ident, const uint8_t *data, size_t size)
{
	IrStr key = ir_arena_strndup(&c->keys, hex, strlen(hex));
	RtCacheEntry *e = malloc(sizeof *e);
	e->ident = strdup(ident);
	e->data = malloc(size);
	memcpy(e->data, data, size);
	e->size = size;
	RtCacheEntry *old = ir_map_put(&c->mem, ir_hash_bytes(hex, strlen(hex)), key, e, str_eq);
	if (old) {
		free(old->ident);
		free(old->data);
		free(old);
	}
}

#define MAGIC "AVECACHE1 "

/* The bundle inside a disk entry stored for `ident`, or NULL when the entry is malformed or was
 * stored for another request. */
static const uint8_t *
entry_bundle(const uint8_t *p, size_t n, const char *ident, size_t *bundle_len)
{
	size_t m = strlen(MAGIC), len = strlen(ident);
	if (n < m || memcmp(p, MAGIC, m))
		return NULL;
	size_t i = m, got = 0;
	while (i < n && p[i] >= '0' && p[i] <= '9' && i < m + 12)
		got = got * 10 + (size_t)(p[i++] - '0');
	if (i == m || i >= n || p[i++] != '\n' || got != len || n - i < len ||
	    memcmp(p + i, ident, len))
		return NULL;
	*bundle_len = n - i - len;
	return p + i + len;
}

uint8_t *
rt_cache_get(RtCache *c, const uint8_t key[32], const char *ident, size_t *size)
{
	char hex[65], path[4200];
	rt_hex(key, 32, hex);
	pthread_mutex_lock(&c->mu);
	RtCacheEntry *e = ir_map_get(&c->mem, ir_hash_bytes(hex, 64), hex, str_eq);
	if (e && !strcmp(e->ident, ident)) {
		uint8_t *copy = malloc(e->size);
		memcpy(copy, e->data, e->size);
		*size = e->size;
		c->stats.memory_hits++;
		pthread_mutex_unlock(&c->mu);
		return copy;
	}
	char *dir = c->dir ? strdup(c->dir) : NULL;
	pthread_mutex_unlock(&c->mu);

	uint8_t *data = NULL;
	size_t n = 0;
	bool corrupt = false;
	if (dir) {
		entry_path(dir, hex, path, sizeof path, false);
		uint8_t *file = read_all(path, &n);
		const uint8_t *bundle = file ? entry_bundle(file, n, ident, &n) : NULL;
		if (bundle) {
			RtBundle b;
			const char *err;
			uint8_t *copy = malloc(n ? n : 1);
			memcpy(copy, bundle, n);
			if (rt_bundle_decode(copy, n, &b, &err)) {
				rt_bundle_free(&b);
				data = malloc(n ? n : 1);
				memcpy(data, bundle, n);
			} else {
				free(copy);
			}
		}
		if (file && !data) {
			corrupt = true;
			unlink(path); /* the next compile writes a good one */
		}
		free(file);
	}
	free(dir);
	pthread_mutex_lock(&c->mu);
	if (corrupt)
		c->stats.corrupt++;
	if (data) {
		c->stats.disk_hits++;
		remember(c, hex, ident, data, n);
		*size = n;
	} else {
		c->stats.misses++;
	}
	pthread_mutex_unlock(&c->mu);
	return data;
}

static bool
mkdir_p(const char *path)
{
	char buf[4200];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return false;
		*p = '/';
	}
	return !mkdir(buf, 0777) || errno == EEXIST;
}

void
rt_cache_put(RtCache *c, const uint8_t key[32], const char *ident, const uint8_t *data,
	     size_t size)
{
	char hex[65], path[4200], dirpath[4200], tmp[4300], head[64];
	rt_hex(key, 32, hex);
	pthread_mutex_lock(&c->mu);
	remember(c, hex, ident, data, size);
	char *dir = c->dir ? strdup(c->dir) : NULL;
	pthread_mutex_unlock(&c->mu);
	if (!dir)
		return;
	entry_path(dir, hex, dirpath, sizeof dirpath, true);
	entry_path(dir, hex, path, sizeof path, false);
	free(dir);
	if (!mkdir_p(dirpath))
		return; /* an unwritable cache only costs recompiles */
	snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return;
	int hn = snprintf(head, sizeof head, MAGIC "%zu\n", strlen(ident));
	const void *part[3] = {head, ident, data};
	size_t plen[3] = {(size_t)hn, strlen(ident), size};
	bool ok = true;
	for (int i = 0; i < 3 && ok; i++) {
		size_t off = 0;
		while (off < plen[i]) {
			ssize_t w = write(fd, (const uint8_t *)part[i] + off, plen[i] - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		ok = off == plen[i];
	}
	ok = ok && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}
