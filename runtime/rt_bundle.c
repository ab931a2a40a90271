/* rt_bundle.c — encoding and checked decoding of bundles: one file holding a compiled kernel's
 * binary and metadata (layout in rt.h). Every section and the whole file carry a SHA-256, so a
 * truncated or corrupted bundle is rejected, never loaded. */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum { HDR = 16, ENTRY = 56, MAXSECT = 8 };

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static size_t
align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

uint8_t *
rt_bundle_encode(const char *meta, size_t meta_len, const void *bin, size_t bin_len,
		 const char *src, size_t src_len, size_t *out_len)
{
	const void *data[3] = {meta, bin, src};
	size_t len[3] = {meta_len, bin_len, src_len};
	uint32_t kind[3] = {RT_SECT_META, RT_SECT_BINARY, RT_SECT_SOURCE};
	int n = src ? 3 : 2;
	size_t off = align8(HDR + (size_t)n * ENTRY), total = off;
	for (int i = 0; i < n; i++)
		total += align8(len[i]);
	total += 32;
	uint8_t *p = calloc(1, total);
	memcpy(p, "AVEBNDL1", 8);
	put32(p + 8, 1);
	put32(p + 12, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		uint8_t *e = p + HDR + (size_t)i * ENTRY;
		put32(e, kind[i]);
		put64(e + 8, off);
		put64(e + 16, len[i]);
		rt_sha256(data[i], len[i], e + 24);
		if (len[i])
			memcpy(p + off, data[i], len[i]);
		off += align8(len[i]);
	}
	rt_sha256(p, total - 32, p + total - 32);
	*out_len = total;
	return p;
}

bool
rt_bundle_decode(uint8_t *data, size_t size, RtBundle *b, const char **err)
{
	uint8_t sum[32];
	memset(b, 0, sizeof *b);
	if (size < HDR + 32 || memcmp(data, "AVEBNDL1", 8)) {
		*err = "not an ave bundle";
		return false;
	}
	if (get32(data + 8) != 1) {
		*err = "unsupported bundle version";
		return false;
	}
	rt_sha256(data, size - 32, sum);
	if (memcmp(sum, data + size - 32, 32)) {
		*err = "bundle checksum mismatch (corrupted or truncated)";
		return false;
	}
	uint32_t n = get32(data + 12);
	if (n > MAXSECT || HDR + (size_t)n * ENTRY > size - 32) {
		*err = "bad section table";
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = data + HDR + (size_t)i * ENTRY;
		uint64_t off = get64(e + 8), len = get64(e + 16);
		if (off > size - 32 || len > size - 32 - off) {
			*err = "section out of bounds";
			return false;
		}
		rt_sha256(data + off, len, sum);
		if (memcmp(sum, e + 24, 32)) {
			*err = "section checksum mismatch";
			return false;
		}
		switch (get32(e)) {
		case RT_SECT_META:
			b->meta = (const char *)data + off;
			b->meta_len = len;
			break;
		case RT_SECT_BINARY:
			b->binary = data + off;
			b->binary_len = len;
			break;
		case RT_SECT_SOURCE:
			b->source = (const char *)data + off;
			b->source_len = len;
			break;
		default:
			break; /* unknown sections are skipped: newer writers may add some */
		}
	}
	if (!b->meta || !b->binary) {
		*err = "bundle lacks metadata or binary";
		return false;
	}
	b->data = data;
	b->size = size;
	return true;
}

void
rt_bundle_free(RtBundle *b)
{
	free(b->data);
	memset(b, 0, sizeof *b);
}
