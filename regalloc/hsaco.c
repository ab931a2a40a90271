/* hsaco.c — reads the resources of each kernel from an AMDGPU code object, twice over: the ELF
 * note "AMDGPU" of type NT_AMDGPU_METADATA (32) holds one MessagePack map
 * { "amdhsa.kernels": [ {".name": ..., ".vgpr_count": ..., ...}, ... ], "amdhsa.target": ... },
 * and each kernel's descriptor (the 64 bytes at symbol NAME.kd) holds what the hardware will
 * really allocate. Both are untrusted input here: every read is bounds-checked. */
#include <elf.h>
#include <string.h>

#include "regalloc.h"

typedef struct Mp {
	const unsigned char *p, *end;
	bool err;
} Mp;

typedef enum MpKind { MP_UINT, MP_INT, MP_STR, MP_MAP, MP_ARRAY, MP_BOOL, MP_NIL, MP_OTHER } MpKind;

static uint64_t
be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	while (n--)
		v = v << 8 | *p++;
	return v;
}

static const unsigned char *
take(Mp *m, uint64_t n)
{
	if (m->err || (uint64_t)(m->end - m->p) < n) {
		m->err = true;
		return NULL;
	}
	const unsigned char *r = m->p;
	m->p += n;
	return r;
}

/* One MessagePack header: its kind, the count (map pairs, array elements, string bytes) or
 * value, and a string's bytes. False at the end or on a malformed input. */
static bool
next(Mp *m, MpKind *k, uint64_t *n, const unsigned char **s)
{
	const unsigned char *h = take(m, 1), *q;
	int w;
	if (!h)
		return false;
	unsigned c = *h;
	*s = NULL;
	*n = 0;
	if (c <= 0x7f) {
		*k = MP_UINT;
		*n = c;
		return true;
	}
	if (c >= 0xe0) {
		*k = MP_INT;
		*n = (uint64_t)(int64_t)(signed char)c;
		return true;
	}
	if (c >= 0x80 && c <= 0x8f) {
		*k = MP_MAP;
		*n = c & 15;
		return true;
	}
	if (c >= 0x90 && c <= 0x9f) {
		*k = MP_ARRAY;
		*n = c & 15;
		return true;
	}
	if (c >= 0xa0 && c <= 0xbf) {
		*k = MP_STR;
		*n = c & 31;
		*s = take(m, *n);
		return !m->err;
	}
	switch (c) {
	case 0xc0:
		*k = MP_NIL;
		return true;
	case 0xc2:
	case 0xc3:
		*k = MP_BOOL;
		*n = c & 1;
		return true;
	case 0xcc:
	case 0xcd:
	case 0xce:
	case 0xcf:
		w = 1 << (c - 0xcc);
		if (!(q = take(m, (uint64_t)w)))
			return false;
		*k = MP_UINT;
		*n = be(q, w);
		return true;
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
		w = 1 << (c - 0xd0);
		if (!(q = take(m, (uint64_t)w)))
			return false;
		*n = be(q, w);
		if (w < 8 && (*n >> (8 * w - 1)))
			*n |= ~(uint64_t)0 << (8 * w);
		*k = MP_INT;
		return true;
	case 0xd9:
	case 0xda:
	case 0xdb:
		w = 1 << (c - 0xd9);
		if (!(q = take(m, (uint64_t)w)))
			return false;
		*k = MP_STR;
		*n = be(q, w);
		*s = take(m, *n);
		return !m->err;
	case 0xdc:
	case 0xdd:
	case 0xde:
	case 0xdf:
		w = (c & 1) ? 4 : 2;
		if (!(q = take(m, (uint64_t)w)))
			return false;
		*k = c < 0xde ? MP_ARRAY : MP_MAP;
		*n = be(q, w);
		return true;
	case 0xc4:
	case 0xc5:
	case 0xc6:
		w = 1 << (c - 0xc4);
		if (!(q = take(m, (uint64_t)w)))
			return false;
		*k = MP_OTHER;
		take(m, be(q, w));
		return !m->err;
	case 0xca:
		*k = MP_OTHER;
		take(m, 4);
		return !m->err;
	case 0xcb:
		*k = MP_OTHER;
		take(m, 8);
		return !m->err;
	default: /* ext types: LLVM never writes them */
		m->err = true;
		return false;
	}
}

/* Skips one value (recursively, with a depth bound against hostile input). */
static void
skip(Mp *m, int depth)
{
	MpKind k;
	uint64_t n;
	const unsigned char *s;
	if (depth > 64) {
		m->err = true;
		return;
	}
	if (!next(m, &k, &n, &s))
		return;
	if (k == MP_ARRAY)
		while (n-- && !m->err)
			skip(m, depth + 1);
	if (k == MP_MAP)
		while (n-- && !m->err) {
			skip(m, depth + 1);
			skip(m, depth + 1);
		}
}

static bool
is(const unsigned char *s, uint64_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(s, lit, n);
}

static void
kernel(Mp *m, uint64_t nkeys, RaHsacoKernel *k)
{
	static const char *const keys[] = {".vgpr_count", ".agpr_count", ".sgpr_count", ".vgpr_spill_count",
					   ".sgpr_spill_count", ".private_segment_fixed_size",
					   ".group_segment_fixed_size", ".kernarg_segment_size",
					   ".max_flat_workgroup_size", ".wavefront_size"};
	int64_t *dst[] = {&k->vgpr, &k->agpr, &k->sgpr, &k->vgpr_spill, &k->sgpr_spill, &k->scratch, &k->lds,
			  &k->kernarg, &k->max_wg, &k->wave};
	memset(k, 0, sizeof *k);
	k->agpr = -1; /* absent on targets without AGPRs */
	while (nkeys-- && !m->err) {
		MpKind kk;
		uint64_t kl, n;
		const unsigned char *key, *s;
		if (!next(m, &kk, &kl, &key) || kk != MP_STR) {
			m->err = true;
			return;
		}
		bool hit = false;
		for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !hit; i++)
			if (is(key, kl, keys[i])) {
				hit = true;
				if (!next(m, &kk, &n, &s) || (kk != MP_UINT && kk != MP_INT)) {
					m->err = true;
					return;
				}
				*dst[i] = (int64_t)n;
			}
		if (!hit && is(key, kl, ".name")) {
			hit = true;
			if (!next(m, &kk, &n, &s) || kk != MP_STR) {
				m->err = true;
				return;
			}
			if (n > sizeof k->name - 1)
				n = sizeof k->name - 1;
			memcpy(k->name, s, n);
			k->name[n] = 0;
		}
		if (!hit)
			skip(m, 0);
	}
}

static int
metadata(const unsigned char *p, size_t len, RaHsacoKernel *out, int max)
{
	Mp m = {p, p + len, false};
	MpKind k;
	uint64_t n, top, cnt;
	const unsigned char *s;
	int nk = 0;
	if (!next(&m, &k, &top, &s) || k != MP_MAP)
		return -1;
	while (top-- && !m.err) {
		if (!next(&m, &k, &n, &s) || k != MP_STR)
			return -1;
		if (!is(s, n, "amdhsa.kernels")) {
			skip(&m, 0);
			continue;
		}
		if (!next(&m, &k, &cnt, &s) || k != MP_ARRAY)
			return -1;
		while (cnt-- && !m.err) {
			RaHsacoKernel scratch;
			if (!next(&m, &k, &n, &s) || k != MP_MAP)
				return -1;
			kernel(&m, n, nk < max ? &out[nk] : &scratch);
			if (!m.err)
				nk++;
		}
	}
	return m.err ? -1 : (nk < max ? nk : max);
}

int
ra_hsaco_read(const unsigned char *f, size_t size, RaHsacoKernel *out, int max)
{
	Elf64_Ehdr eh;
	if (size < sizeof eh || memcmp(f, ELFMAG, SELFMAG) || f[EI_CLASS] != ELFCLASS64)
		return -1;
	memcpy(&eh, f, sizeof eh);
	if (eh.e_machine != EM_AMDGPU || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
	    (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff)
		return -1;
	for (int i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		memcpy(&sh, f + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
		if (sh.sh_type != SHT_NOTE || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			continue;
		const unsigned char *p = f + sh.sh_offset, *end = p + sh.sh_size;
		while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			memcpy(&nh, p, sizeof nh);
			uint64_t nsz = ((uint64_t)nh.n_namesz + 3) & ~(uint64_t)3;
			uint64_t dsz = ((uint64_t)nh.n_descsz + 3) & ~(uint64_t)3;
			const unsigned char *name = p + sizeof nh;
			if (nsz > (uint64_t)(end - name) || dsz > (uint64_t)(end - name) - nsz)
				break;
			const unsigned char *desc = name + nsz;
			if (nh.n_type == 32 && nh.n_namesz == 7 && !memcmp(name, "AMDGPU", 7))
				return metadata(desc, nh.n_descsz, out, max);
			p = desc + dsz;
		}
	}
	return -1;
}

/* ---- the kernel descriptor (AMDGPUUsage, "Kernel Descriptor") ---- */

/* The bytes of symbol `want` (at least `min` of them, `size` if it says more), found through
 * every symbol table, bounds-checked against the file and its section; NULL when absent. */
static const unsigned char *
symbol_bytes(const unsigned char *f, size_t size, const char *want, uint64_t min, uint64_t *len)
{
	Elf64_Ehdr eh;
	if (size < sizeof eh || memcmp(f, ELFMAG, SELFMAG) || f[EI_CLASS] != ELFCLASS64)
		return NULL;
	memcpy(&eh, f, sizeof eh);
	if (eh.e_machine != EM_AMDGPU || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
	    (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff)
		return NULL;
	size_t wl = strlen(want);
	for (int i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, strs;
		memcpy(&sh, f + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_entsize != sizeof(Elf64_Sym) ||
		    sh.sh_offset > size || sh.sh_size > size - sh.sh_offset || sh.sh_link >= eh.e_shnum)
			continue;
		memcpy(&strs, f + eh.e_shoff + (size_t)sh.sh_link * sizeof strs, sizeof strs);
		if (strs.sh_offset > size || strs.sh_size > size - strs.sh_offset)
			continue;
		for (uint64_t j = 0; j < sh.sh_size / sizeof(Elf64_Sym); j++) {
			Elf64_Sym sym;
			memcpy(&sym, f + sh.sh_offset + j * sizeof sym, sizeof sym);
			if (sym.st_name >= strs.sh_size || strs.sh_size - sym.st_name <= wl ||
			    memcmp(f + strs.sh_offset + sym.st_name, want, wl + 1))
				continue;
			if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= eh.e_shnum)
				return NULL;
			Elf64_Shdr in;
			memcpy(&in, f + eh.e_shoff + (size_t)sym.st_shndx * sizeof in, sizeof in);
			uint64_t n = sym.st_size > min ? sym.st_size : min;
			if (sym.st_value < in.sh_addr || sym.st_value - in.sh_addr > in.sh_size ||
			    in.sh_size - (sym.st_value - in.sh_addr) < n || in.sh_offset > size ||
			    in.sh_size > size - in.sh_offset || in.sh_type == SHT_NOBITS)
				return NULL;
			*len = n;
			return f + in.sh_offset + (sym.st_value - in.sh_addr);
		}
	}
	return NULL;
}

bool
ra_hsaco_code(const unsigned char *f, size_t size, const char *name, const unsigned char **code,
	      uint64_t *len)
{
	*code = name && *name ? symbol_bytes(f, size, name, 4, len) : NULL;
	return *code != NULL;
}

bool
ra_hsaco_descriptor(const unsigned char *f, size_t size, const char *name, RaHsacoDescriptor *out)
{
	memset(out, 0, sizeof *out);
	char want[160];
	if (snprintf(want, sizeof want, "%s.kd", name) >= (int)sizeof want)
		return false;
	uint64_t len;
	const unsigned char *kd = symbol_bytes(f, size, want, 64, &len);
	if (!kd)
		return false;
	uint32_t group, priv, rsrc1, rsrc3;
	memcpy(&group, kd + 0, 4);
	memcpy(&priv, kd + 4, 4);
	memcpy(&rsrc3, kd + 44, 4);
	memcpy(&rsrc1, kd + 48, 4);
	out->found = true;
	out->group_segment = group;
	out->private_segment = priv;
	/* GRANULATED_WORKITEM_VGPR_COUNT: (VGPRs + AGPRs) / 8 - 1 on gfx90a and gfx942,
	 * whose register file is unified; ACCUM_OFFSET: where the AGPRs start, / 4 - 1. */
	out->vgprs = ((int)(rsrc1 & 0x3f) + 1) * 8;
	out->accum_offset = ((int)(rsrc3 & 0x3f) + 1) * 4;
	return true;
}
