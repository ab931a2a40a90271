/* usage.c — the register use of a compiled kernel as the binary and its tools report it: ptxas's
 * info lines, and the register count and stack frame a cubin records for each kernel in its
 * .nv.info section. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "regalloc.h"

/* The number just before `word` in line[0, n) ("Used 12 registers"), or -1. */
static long long
num_before(const char *line, size_t n, const char *word)
{
	const char *p = strstr(line, word);
	if (!p || p >= line + n)
		return -1;
	const char *q = p;
	while (q > line && q[-1] == ' ')
		q--;
	while (q > line && isdigit((unsigned char)q[-1]))
		q--;
	return isdigit((unsigned char)*q) ? atoll(q) : -1;
}

bool
ra_ptxas_line(const char *line, RaUsage *u)
{
	size_t n = strlen(line);
	if (strstr(line, "bytes stack frame")) {
		u->stack = num_before(line, n, "bytes stack frame");
		u->spill_stores = num_before(line, n, "bytes spill stores");
		u->spill_loads = num_before(line, n, "bytes spill loads");
		return true;
	}
	if (!strncmp(line, "ptxas info    : Used ", 21)) {
		u->known = true;
		u->source = "ptxas";
		u->regs = (int)num_before(line, n, "registers");
		long long bars = num_before(line, n, "barriers");
		long long smem = num_before(line, n, "bytes smem");
		u->barriers = bars < 0 ? 0 : (int)bars;
		u->static_smem = smem < 0 ? 0 : smem;
		if (u->stack < 0)
			u->stack = 0;
		return true;
	}
	return false;
}

/* ---- ELF64 little-endian, read with bounds checks (the cubin is the tool's output, but a
 * forged or truncated one must not crash the reader) ---- */

static uint64_t
rd(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

typedef struct Sec {
	uint64_t off, size, link, entsize;
	uint32_t type, name;
} Sec;

static bool
section(const unsigned char *e, size_t len, uint16_t i, Sec *s)
{
	uint64_t shoff = rd(e + 0x28, 8), shentsize = rd(e + 0x3a, 2);
	uint64_t at = shoff + (uint64_t)i * shentsize;
	if (shentsize < 64 || at > len || len - at < 64)
		return false;
	const unsigned char *h = e + at;
	s->name = (uint32_t)rd(h, 4);
	s->type = (uint32_t)rd(h + 4, 4);
	s->off = rd(h + 0x18, 8);
	s->size = rd(h + 0x20, 8);
	s->link = rd(h + 0x28, 4);
	s->entsize = rd(h + 0x38, 8);
	return s->off <= len && s->size <= len - s->off;
}

int64_t
ra_cubin_attr(const void *elf, size_t len, const char *name, int attr_code)
{
	const unsigned char *e = elf;
	if (!e || len < 64 || memcmp(e, "\177ELF", 4) || e[4] != 2 || e[5] != 1)
		return -1;
	uint16_t shnum = (uint16_t)rd(e + 0x3c, 2), shstrndx = (uint16_t)rd(e + 0x3e, 2);
	Sec shstr, symtab = {0}, strtab, info = {0};
	if (shstrndx >= shnum || !section(e, len, shstrndx, &shstr))
		return -1;
	bool have_sym = false, have_info = false;
	for (uint16_t i = 0; i < shnum; i++) {
		Sec s;
		if (!section(e, len, i, &s) || s.name >= shstr.size)
			continue;
		const char *sn = (const char *)e + shstr.off + s.name;
		size_t room = shstr.size - s.name;
		if (s.type == 2 /* SHT_SYMTAB */)
			symtab = s, have_sym = true;
		else if (strnlen(sn, room) == 8 && !memcmp(sn, ".nv.info", 8))
			info = s, have_info = true;
	}
	if (!have_sym || !have_info || symtab.entsize < 24 || symtab.link >= shnum ||
	    !section(e, len, (uint16_t)symtab.link, &strtab))
		return -1;
	/* The kernel's symbol index. */
	uint64_t want = 0;
	size_t nlen = strlen(name);
	for (uint64_t i = 0; i < symtab.size / symtab.entsize; i++) {
		const unsigned char *sym = e + symtab.off + i * symtab.entsize;
		uint64_t so = rd(sym, 4);
		if (so < strtab.size && strtab.size - so > nlen &&
		    !memcmp(e + strtab.off + so, name, nlen + 1)) {
			want = i;
			break;
		}
	}
	if (!want)
		return -1;
	/* Attributes: format (1 byte), attribute (1), then for EIFMT_SVAL (4) a 16-bit size and the
	 * value; EIFMT_HVAL (3) a 16-bit value; EIFMT_NVAL (1) a 16-bit pad. The per-function ones
	 * read here are SVALs of {symbol index, value}. */
	const unsigned char *p = e + info.off, *end = p + info.size;
	while (end - p >= 4) {
		unsigned fmt = p[0], attr = p[1];
		uint64_t sz = fmt == 4 ? rd(p + 2, 2) : 0;
		if ((uint64_t)(end - p - 4) < sz)
			break;
		if (fmt == 4 && (int)attr == attr_code && sz >= 8 && rd(p + 4, 4) == want)
			return (int64_t)rd(p + 8, 4);
		p += 4 + sz;
	}
	return -1;
}

int
ra_cubin_regcount(const void *elf, size_t len, const char *name)
{
	return (int)ra_cubin_attr(elf, len, name, RA_EIATTR_REGCOUNT);
}

int64_t
ra_cubin_frame(const void *elf, size_t len, const char *name)
{
	return ra_cubin_attr(elf, len, name, RA_EIATTR_FRAME_SIZE);
}
