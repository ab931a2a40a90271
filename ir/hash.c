/* hash.c — an open-addressing hash map keyed by (hash, pointer) with linear probing.
 * Used for interning, type and attribute uniquing, symbol tables and analyses. */
#include <string.h>

#include "ir.h"

uint64_t
ir_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

uint64_t
ir_hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

uint64_t
ir_hash_ptr(const void *p)
{
	return ir_hash_mix(0, (uint64_t)(uintptr_t)p);
}

void
ir_map_init(IrMap *m, const IrAllocator *al)
{
	memset(m, 0, sizeof *m);
	m->al = al ? al : &ir_default_allocator;
}

void
ir_map_free(IrMap *m)
{
	ir_xfree(m->al, m->slot, m->cap * sizeof *m->slot);
	m->slot = NULL;
	m->cap = m->len = 0;
}

static uint64_t
fix(uint64_t h)
{
	return h ? h : 1;
}

static bool
same(const void *a, const void *b, IrMapEq eq)
{
	return eq ? eq(a, b) : a == b;
}

static void
grow(IrMap *m)
{
	size_t ocap = m->cap, cap = ocap ? ocap * 2 : 16;
	IrMapSlot *old = m->slot;
	m->slot = ir_xalloc(m->al, cap * sizeof *m->slot);
	memset(m->slot, 0, cap * sizeof *m->slot);
	m->cap = cap;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].hash)
			continue;
		size_t j = old[i].hash & (cap - 1);
		while (m->slot[j].hash)
			j = (j + 1) & (cap - 1);
		m->slot[j] = old[i];
	}
	ir_xfree(m->al, old, ocap * sizeof *old);
}

void *
ir_map_get(const IrMap *m, uint64_t h, const void *key, IrMapEq eq)
{
	if (!m->cap)
		return NULL;
	h = fix(h);
	for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		const IrMapSlot *s = &m->slot[j];
		if (!s->hash)
			return NULL;
		if (s->hash == h && same(s->key, key, eq))
			return s->val;
	}
}

void *
ir_map_put(IrMap *m, uint64_t h, const void *key, void *val, IrMapEq eq)
{
	if ((m->len + 1) * 4 > m->cap * 3)
		grow(m);
	h = fix(h);
	size_t j = h & (m->cap - 1);
	for (; m->slot[j].hash; j = (j + 1) & (m->cap - 1)) {
		IrMapSlot *s = &m->slot[j];
		if (s->hash == h && same(s->key, key, eq)) {
			void *old = s->val;
			s->key = key;
			s->val = val;
			return old;
		}
	}
	m->slot[j] = (IrMapSlot){h, key, val};
	m->len++;
	return NULL;
}

bool
ir_map_del(IrMap *m, uint64_t h, const void *key, IrMapEq eq)
{
	if (!m->cap)
		return false;
	h = fix(h);
	size_t mask = m->cap - 1, j = h & mask;
	for (;; j = (j + 1) & mask) {
		if (!m->slot[j].hash)
			return false;
		if (m->slot[j].hash == h && same(m->slot[j].key, key, eq))
			break;
	}
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	size_t i = j;
	for (;;) {
		m->slot[i].hash = 0;
		size_t k = i;
		for (;;) {
			k = (k + 1) & mask;
			if (!m->slot[k].hash) {
				m->len--;
				return true;
			}
			size_t home = m->slot[k].hash & mask;
			/* Move k into the hole at i unless its home lies cyclically in (i, k]. */
			if (i <= k ? (home <= i || home > k) : (home <= i && home > k))
				break;
		}
		m->slot[i] = m->slot[k];
		i = k;
	}
}
