/* test_amdgpu.c — the arithmetic of the AMDGPU backend checked without a GPU: every MFMA fragment
 * maps (register, lane) onto its tile exactly once and agrees with the AMD matrix instruction
 * calculator's formulas; accumulators tile over waves; copy bytes dealt to waves add up; the
 * transaction-barrier word completes a phase exactly when its arrivals and bytes are in, in any
 * order; the metadata reader takes real and hostile notes; the f8 conversions, run on the host
 * through LLVM's JIT, match a brute-force reference for every input class. */
#include <elf.h>
#include <math.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>

#include "../../backend-amdgpu/amdgpu.h"
#include "unit.h"

/* ---- fragments ---- */

static LowerLayout
atom_layout(const LowerAtom *a)
{
	LowerLayout l;
	int64_t shape[2] = {a->rows, a->cols};
	bool ok = lower_layout_tiled(&l, LOWER_OTHER, shape, a, 6, 0, 0);
	CHECK(ok);
	return l;
}

/* Every (register, lane) holds a distinct element and every element is held. */
static bool
bijective(const LowerLayout *l)
{
	int64_t n = l->shape[0] * l->shape[1];
	int nl = 1 << l->nbits[LOWER_LANE], nr = lower_layout_nregs(l);
	if ((int64_t)nl * nr != n)
		return false;
	unsigned char *seen = calloc((size_t)n, 1);
	bool ok = true;
	for (int lane = 0; lane < nl; lane++)
		for (int r = 0; r < nr; r++) {
			int64_t c[2];
			lower_layout_coord(l, (uint32_t)r, (uint32_t)lane, 0, c);
			ok &= c[0] >= 0 && c[0] < l->shape[0] && c[1] >= 0 && c[1] < l->shape[1];
			if (ok)
				ok &= seen[c[0] * l->shape[1] + c[1]]++ == 0;
		}
	free(seen);
	char why[128];
	return ok && lower_layout_check(l, why, sizeof why);
}

/* The calculator's formulas (CDNA2/CDNA3, `-d` register layouts), written out independently. */
static void
calc_d(int m, int lane, int r, int64_t *c)
{
	if (m == 32) {
		c[0] = 8 * (r / 4) + 4 * (lane / 32) + r % 4;
		c[1] = lane % 32;
	} else {
		c[0] = 4 * (lane / 16) + r;
		c[1] = lane % 16;
	}
}

static void
test_fragments(void)
{
	for (int i = 0; i < AMD_MFMA_COUNT; i++) {
		const AmdMfmaInfo *f = amdgpu_mfma_info((AmdMfma)i);
		LowerAtom d = amdgpu_atom_d((AmdMfma)i), c = amdgpu_atom_c((AmdMfma)i);
		LowerAtom a = amdgpu_atom_a((AmdMfma)i), b = amdgpu_atom_b((AmdMfma)i);
		LowerLayout dl = atom_layout(&d), cl = atom_layout(&c), al = atom_layout(&a), bl = atom_layout(&b);
		CHECK(bijective(&dl));
		CHECK(bijective(&cl));
		CHECK(bijective(&al));
		CHECK(bijective(&bl));
		CHECK_EQ(lower_layout_nregs(&dl), f->m * f->n / 64);
		CHECK_EQ(lower_layout_nregs(&al), f->ab_elems);
		int E = f->ab_elems;
		bool agree = true;
		for (int lane = 0; lane < 64; lane++) {
			for (int r = 0; r < lower_layout_nregs(&dl); r++) {
				int64_t x[2], y[2], z[2];
				lower_layout_coord(&dl, (uint32_t)r, (uint32_t)lane, 0, x);
				calc_d(f->m, lane, r, y);
				lower_layout_coord(&cl, (uint32_t)r, (uint32_t)lane, 0, z);
				agree &= x[0] == y[0] && x[1] == y[1] && z[0] == y[1] && z[1] == y[0];
			}
			for (int e = 0; e < E; e++) {
				int64_t x[2];
				lower_layout_coord(&al, (uint32_t)e, (uint32_t)lane, 0, x);
				agree &= x[0] == lane % f->m && x[1] == e + E * (lane / f->m);
				lower_layout_coord(&bl, (uint32_t)e, (uint32_t)lane, 0, x);
				agree &= x[0] == e + E * (lane / f->n) && x[1] == lane % f->n;
			}
		}
		CHECK(agree);
		/* C's registers 0..3 run along columns: 16-byte stores of f32. */
		CHECK_EQ(lower_layout_vec_bits(&cl, 1), 2);
	}
}

static void
test_tiling(void)
{
	/* gemm.ave: 128x128 over 4 waves with the 32x32 atom, warps split 2 x 2. */
	LowerAtom c = amdgpu_atom_c(AMD_MFMA_32X32X8_BF16);
	int64_t shape[2] = {128, 128};
	LowerLayout l;
	char why[128];
	CHECK(lower_layout_tiled(&l, LOWER_MMA_ACC, shape, &c, 6, 2, 1));
	CHECK(lower_layout_check(&l, why, sizeof why));
	CHECK_EQ(lower_layout_nregs(&l), 64);
	/* Not a multiple of the atom: refused. */
	int64_t odd[2] = {48, 128};
	CHECK(!lower_layout_tiled(&l, LOWER_MMA_ACC, odd, &c, 6, 2, 1));
}

/* Whether `n` lanes reading the 8 bytes from dword dw[i] on touch each of the 32 banks of LDS in
 * one dword at most. */
static bool
one_per_bank(const int64_t *dw, int n)
{
	int64_t bank[32];
	for (int b = 0; b < 32; b++)
		bank[b] = -1;
	for (int i = 0; i < n; i++)
		for (int h = 0; h < 2; h++) {
			int64_t d = dw[i] + h;
			if (bank[d % 32] >= 0 && bank[d % 32] != d)
				return false;
			bank[d % 32] = d;
		}
	return true;
}

/* The B operand's staging, as the shared layer writes it and mma.c's fragments read it: every
 * element of the staged value (k x n, or n x k with transpose_b) at its own bytes, and each
 * lane's fragment one aligned vector along K whose elements are, in order, B[e + E (l / n)][l % n]
 * of the block at (k0, n0) (the calculator's formula), for every lane, k step and block; and,
 * without transpose_b, 16 consecutive lanes (the 128 bytes of one LDS cycle) read from 16 distinct
 * pairs of banks. */
static void
test_b_stage(void)
{
	static const int64_t ks[] = {8, 16, 32, 64, 128}, ns[] = {16, 32, 64, 128};
	bool all = true, wide = true, banks = true;
	int cases = 0;
	for (int i = 0; i < AMD_MFMA_COUNT; i++) {
		const AmdMfmaInfo *f = amdgpu_mfma_info((AmdMfma)i);
		LowerAtom ba = amdgpu_atom_b((AmdMfma)i);
		LowerLayout bl = atom_layout(&ba);
		int E = f->ab_elems, es = f->ab == IR_F32 ? 4 : 2;
		for (int trans = 0; trans < 2; trans++)
			for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
				for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
					int64_t K = ks[a], N = ns[c];
					if (K % f->k || N % f->n)
						continue;
					LowerSmemLayout y;
					amdgpu_b_stage(&y, K, N, es, E, trans);
					int sdim = trans ? 1 : 0; /* the view dimension K runs along */
					bool vec = amdgpu_frag_vec(&y, sdim, E);
					wide &= E == 1 || vec;
					int64_t slots = y.bytes / es;
					int64_t *at = malloc(sizeof(int64_t) * (size_t)slots);
					for (int64_t x = 0; x < slots; x++)
						at[x] = -1;
					/* The staging writes: element (kk, nn) of B. */
					for (int64_t kk = 0; kk < K; kk++)
						for (int64_t nn = 0; nn < N; nn++) {
							int64_t co[2] = {trans ? nn : kk, trans ? kk : nn};
							int64_t off = lower_smem_offset(&y, co);
							bool ok = off >= 0 && off + es <= y.bytes && off % es == 0 &&
								  at[off / es] == -1;
							all &= ok;
							if (ok)
								at[off / es] = kk * N + nn;
						}
					/* The fragment reads: E elements from the first one's bytes on. */
					for (int64_t k0 = 0; k0 < K; k0 += f->k)
						for (int64_t n0 = 0; n0 < N; n0 += f->n) {
							int64_t dw[64];
							for (int lane = 0; lane < 64; lane++) {
								int64_t tc[2];
								lower_layout_coord(&bl, 0, (uint32_t)lane, 0, tc);
								int64_t co[2] = {k0 + tc[0], n0 + tc[1]};
								if (trans) {
									int64_t t = co[0];
									co[0] = co[1];
									co[1] = t;
								}
								int64_t off = lower_smem_offset(&y, co);
								all &= E == 1 || off % (E * es) == 0;
								dw[lane] = off / 4;
								for (int e = 0; e < E; e++) {
									int64_t want = (k0 + e + E * (lane / f->n)) * N + n0 +
										       lane % f->n;
									int64_t o = off / es + e;
									all &= o < slots && at[o] == want;
								}
							}
							/* Non-transposed 8-byte fragments: the 16 lanes an LDS
							 * cycle serves (128 bytes) touch each bank once. */
							for (int p = 0; !trans && E > 1 && p < 64; p += 16)
								banks &= one_per_bank(dw + p, 16);
						}
					free(at);
					cases++;
				}
	}
	CHECK(all);
	CHECK(wide);
	CHECK(banks);
	CHECK(cases > 40);
}

/* ---- copies and transaction barriers ---- */

static void
test_wave_bytes(void)
{
	static const int64_t chunks[] = {1, 63, 64, 65, 1024, 1000, 4097};
	for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
		for (int nw = 1; nw <= 6; nw++) {
			int64_t sum = 0;
			bool each = true;
			for (int w = 0; w < nw; w++) {
				int64_t b = amdgpu_wave_bytes(chunks[i], 16, nw, w);
				sum += b;
				each &= b >= 0 && b % 16 == 0;
			}
			CHECK(each);
			CHECK_EQ(sum, chunks[i] * 16);
		}
}

/* The update of sync.c in C: returns true when it completes the phase
 * (and re-arms it, again while the re-armed phase has nothing pending). test_mbar.c explores the
 * interleavings of these atomics between waves. */
static bool
mbar_update(int64_t *word, int64_t delta, int64_t count)
{
	*word += delta;
	if (*word >> AMDGPU_MBAR_PHASE_BITS != 0)
		return false;
	int64_t mask = ((int64_t)1 << AMDGPU_MBAR_PHASE_BITS) - 1;
	do
		*word += amdgpu_mbar_word(count, 0, 0) + ((*word & mask) == mask ? -mask : 1);
	while (*word >> AMDGPU_MBAR_PHASE_BITS <= 0);
	return true;
}

static void
test_mbar(void)
{
	/* A phase of count(2): one expect_tx of 3 x 1000 bytes, three copies, one arrive; every
	 * order of the five events completes exactly at the last, and the phase flips once. */
	int64_t ev[5][2] = {{amdgpu_mbar_word(-1, 3000, 0), 0}, {amdgpu_mbar_word(0, -1000, 0), 0},
			    {amdgpu_mbar_word(0, -1000, 0), 0}, {amdgpu_mbar_word(0, -1000, 0), 0},
			    {amdgpu_mbar_word(-1, 0, 0), 0}};
	int perm[5] = {0, 1, 2, 3, 4}, orders = 0;
	bool all = true;
	for (int p = 0; p < 120; p++) {
		int k = p, avail[5] = {0, 1, 2, 3, 4}, n = 5;
		for (int i = 0; i < 5; i++) {
			int j = k % n;
			k /= n;
			perm[i] = avail[j];
			avail[j] = avail[--n];
		}
		for (int phase = 0; phase < 3; phase++) {
			int64_t w = amdgpu_mbar_word(2, 0, phase == 2 ? 0xffff : phase);
			for (int i = 0; i < 5; i++) {
				bool done = mbar_update(&w, ev[perm[i]][0], 2);
				all &= done == (i == 4);
			}
			int64_t want = phase == 2 ? 0 : phase + 1;
			all &= w == amdgpu_mbar_word(2, 0, want);
		}
		orders++;
	}
	CHECK(all);
	CHECK_EQ(orders, 120);
	/* Early arrivals for the next phase survive the re-arm. */
	int64_t w = amdgpu_mbar_word(1, 0, 0);
	CHECK(mbar_update(&w, amdgpu_mbar_word(-1, 0, 0), 1));
	CHECK(!mbar_update(&w, amdgpu_mbar_word(0, -64, 0), 1)); /* a copy of the next phase lands first */
	CHECK(!mbar_update(&w, amdgpu_mbar_word(-1, 96, 0), 1)); /* its expect_tx(96) */
	CHECK(mbar_update(&w, amdgpu_mbar_word(0, -32, 0), 1));
	CHECK_EQ(w & 0xffff, 2);
}

/* ---- metadata ---- */

/* A minimal ELF64 with one SHT_NOTE section holding `desc` as an AMDGPU metadata note. */
static size_t
make_elf(unsigned char *buf, const unsigned char *desc, size_t dlen, uint16_t machine)
{
	memset(buf, 0, 4096);
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof eh);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_machine = machine;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 2;
	size_t note = sizeof eh;
	Elf64_Nhdr nh = {7, (Elf64_Word)dlen, 32};
	memcpy(buf + note, &nh, sizeof nh);
	memcpy(buf + note + sizeof nh, "AMDGPU\0", 8);
	memcpy(buf + note + sizeof nh + 8, desc, dlen);
	size_t nlen = sizeof nh + 8 + ((dlen + 3) & ~(size_t)3);
	eh.e_shoff = (note + nlen + 7) & ~(size_t)7;
	Elf64_Shdr sh[2];
	memset(sh, 0, sizeof sh);
	sh[1].sh_type = SHT_NOTE;
	sh[1].sh_offset = note;
	sh[1].sh_size = nlen;
	memcpy(buf, &eh, sizeof eh);
	memcpy(buf + eh.e_shoff, sh, sizeof sh);
	return eh.e_shoff + sizeof sh;
}

static void
test_metadata(void)
{
	/* {"amdhsa.kernels": [{".name": "k", ".vgpr_count": 300, ".agpr_count": 64,
	 *   ".private_segment_fixed_size": 0, ".kernarg_segment_size": 104, ".args": [{".size": 8}]}],
	 *  "amdhsa.target": "amdgcn-amd-amdhsa--gfx942"} */
	static const unsigned char desc[] = {
		0x82, 0xae, 'a', 'm', 'd', 'h', 's', 'a', '.', 'k', 'e', 'r', 'n', 'e', 'l', 's', 0x91, 0x86,
		0xa5, '.', 'n', 'a', 'm', 'e', 0xa1, 'k',
		0xab, '.', 'v', 'g', 'p', 'r', '_', 'c', 'o', 'u', 'n', 't', 0xcd, 0x01, 0x2c,
		0xab, '.', 'a', 'g', 'p', 'r', '_', 'c', 'o', 'u', 'n', 't', 0x40,
		0xbb, '.', 'p', 'r', 'i', 'v', 'a', 't', 'e', '_', 's', 'e', 'g', 'm', 'e', 'n', 't', '_', 'f', 'i',
		'x', 'e', 'd', '_', 's', 'i', 'z', 'e', 0x00,
		0xb5, '.', 'k', 'e', 'r', 'n', 'a', 'r', 'g', '_', 's', 'e', 'g', 'm', 'e', 'n', 't', '_', 's', 'i',
		'z', 'e', 0x68,
		0xa5, '.', 'a', 'r', 'g', 's', 0x91, 0x81, 0xa5, '.', 's', 'i', 'z', 'e', 0x08,
		0xad, 'a', 'm', 'd', 'h', 's', 'a', '.', 't', 'a', 'r', 'g', 'e', 't', 0xb9, 'a', 'm', 'd', 'g', 'c',
		'n', '-', 'a', 'm', 'd', '-', 'a', 'm', 'd', 'h', 's', 'a', '-', '-', 'g', 'f', 'x', '9', '4', '2'};
	unsigned char buf[4096];
	size_t n = make_elf(buf, desc, sizeof desc, EM_AMDGPU);
	RaHsacoKernel k[2];
	CHECK_EQ(ra_hsaco_read(buf, n, k, 2), 1);
	CHECK(!strcmp(k[0].name, "k"));
	CHECK_EQ(k[0].vgpr, 300);
	CHECK_EQ(k[0].agpr, 64);
	CHECK_EQ(k[0].kernarg, 104);
	/* Every truncation is refused or read partially, never past the end. */
	bool safe = true;
	for (size_t cut = 0; cut < sizeof desc; cut++) {
		size_t m = make_elf(buf, desc, cut, EM_AMDGPU);
		int r = ra_hsaco_read(buf, m, k, 2);
		safe &= r == -1 || r == 0 || r == 1;
	}
	CHECK(safe);
	/* Not an AMDGPU object; not an ELF. */
	n = make_elf(buf, desc, sizeof desc, EM_X86_64);
	CHECK_EQ(ra_hsaco_read(buf, n, k, 2), -1);
	CHECK_EQ(ra_hsaco_read((const unsigned char *)"hello", 5, k, 2), -1);
}

static size_t make_code_elf(unsigned char *buf, uint32_t rsrc1, uint32_t rsrc3, uint32_t priv,
			    const unsigned char *code, size_t len);

/* A code object with one kernel descriptor `k.kd` at address 0x1000 of a .rodata section. */
static size_t
make_kd_elf(unsigned char *buf, uint32_t rsrc1, uint32_t rsrc3, uint32_t priv)
{
	return make_code_elf(buf, rsrc1, rsrc3, priv, NULL, 0);
}

/* A code object with kernel `k`: its descriptor `k.kd` (rsrc1, rsrc3, scratch bytes) and its
 * code (`len` bytes) in a .text section. */
static size_t
make_code_elf(unsigned char *buf, uint32_t rsrc1, uint32_t rsrc3, uint32_t priv,
	      const unsigned char *code, size_t len)
{
	memset(buf, 0, 4096);
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof eh);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_machine = EM_AMDGPU;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	size_t kd = 256, text = kd + 64, strtab = text + 256, symtab = strtab + 16;
	memcpy(buf + kd + 4, &priv, 4);
	memcpy(buf + kd + 44, &rsrc3, 4);
	memcpy(buf + kd + 48, &rsrc1, 4);
	if (len)
		memcpy(buf + text, code, len);
	memcpy(buf + strtab, "\0k.kd\0k\0", 9);
	Elf64_Sym sym[3];
	memset(sym, 0, sizeof sym);
	sym[1].st_name = 1, sym[1].st_shndx = 1, sym[1].st_value = 0x1000, sym[1].st_size = 64;
	sym[2].st_name = 6, sym[2].st_shndx = 2, sym[2].st_value = 0x2000, sym[2].st_size = len;
	sym[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	memcpy(buf + symtab, sym, sizeof sym);
	eh.e_shoff = symtab + sizeof sym;
	Elf64_Shdr sh[5];
	memset(sh, 0, sizeof sh);
	sh[1].sh_type = SHT_PROGBITS, sh[1].sh_addr = 0x1000, sh[1].sh_offset = kd, sh[1].sh_size = 64;
	sh[2].sh_type = SHT_PROGBITS, sh[2].sh_addr = 0x2000, sh[2].sh_offset = text, sh[2].sh_size = 256;
	sh[3].sh_type = SHT_STRTAB, sh[3].sh_offset = strtab, sh[3].sh_size = 9;
	sh[4].sh_type = SHT_SYMTAB, sh[4].sh_offset = symtab, sh[4].sh_size = sizeof sym;
	sh[4].sh_entsize = sizeof(Elf64_Sym), sh[4].sh_link = 3;
	memcpy(buf, &eh, sizeof eh);
	memcpy(buf + eh.e_shoff, sh, sizeof sh);
	return eh.e_shoff + sizeof sh;
}

/* The descriptor is read independently of the metadata note: (granules + 1) * 8 registers,
 * ACCUM_OFFSET (n + 1) * 4, the scratch size; truncations and other names are refused. */
static void
test_descriptor(void)
{
	unsigned char buf[4096];
	size_t n = make_kd_elf(buf, 24 /* 200 registers */, 32 /* AGPRs from 132 */, 16);
	RaHsacoDescriptor d;
	CHECK(ra_hsaco_descriptor(buf, n, "k", &d));
	CHECK(d.found);
	CHECK_EQ(d.vgprs, 200);
	CHECK_EQ(d.accum_offset, 132);
	CHECK_EQ(d.private_segment, 16);
	CHECK(!ra_hsaco_descriptor(buf, n, "kk", &d));
	CHECK(!ra_hsaco_descriptor(buf, n, "", &d));
	bool safe = true;
	for (size_t cut = 0; cut < n; cut += 7)
		safe &= !ra_hsaco_descriptor(buf, cut, "k", &d) || cut >= n - 4 * sizeof(Elf64_Shdr);
	CHECK(safe);
}

typedef struct Insn {
	const unsigned char *b;
	size_t n;
} Insn;

/* A code object of kernel `k` whose code is the instructions given (descriptor rsrc1, AGPRs
 * from register 8, no scratch): its code found and scanned into *sc, its descriptor into *d. */
static size_t
forge(unsigned char *buf, uint32_t rsrc1, const Insn *ins, int nins, AmdgpuScan *sc,
      RaHsacoDescriptor *d)
{
	unsigned char code[64];
	size_t cl = 0;
	for (int i = 0; i < nins; i++) {
		memcpy(code + cl, ins[i].b, ins[i].n);
		cl += ins[i].n;
	}
	size_t n = make_code_elf(buf, rsrc1, 1, 0, code, cl);
	const unsigned char *c;
	uint64_t len;
	char why[256];
	CHECK(ra_hsaco_code(buf, n, "k", &c, &len));
	CHECK_EQ(len, cl);
	CHECK(amdgpu_scan_code(c, len, "gfx942", sc, why, sizeof why));
	CHECK(ra_hsaco_descriptor(buf, n, "k", d));
	return n;
}

/* The scan of the code itself (disasm.c) against what the descriptor allocates: an honest
 * kernel passes; a forged one, whose code names registers or scratch its descriptor does not
 * allocate, is caught with the register named. Encodings from llvm-mc (gfx942). */
static void
test_code_scan(void)
{
	static const unsigned char mov_v7[] = {0x80, 0x02, 0x0e, 0x7e}, mov_v200[] = {0x80, 0x02, 0x90, 0x7f},
		acc_a9[] = {0x09, 0x40, 0xd9, 0xd3, 0x01, 0x01, 0x00, 0x18},
		scratch[] = {0x10, 0x40, 0x70, 0xdc, 0x00, 0x02, 0x00, 0x00},
		endpgm[] = {0x00, 0x00, 0x81, 0xbf};
#define I(x) {x, sizeof x}
	unsigned char buf[4096];
	size_t n;
	const unsigned char *c;
	uint64_t len;
	AmdgpuScan sc;
	char why[256];
	RaHsacoDescriptor d;
	/* Honest: v7 in 8 registers per lane, AGPRs from 8 (none used). */
	forge(buf, 0, (Insn[]){I(mov_v7), I(endpgm)}, 2, &sc, &d);
	CHECK_EQ(sc.insns, 2);
	CHECK_EQ(sc.vgprs, 8);
	CHECK(amdgpu_scan_check(&sc, d.vgprs, 0, d.accum_offset, d.private_segment, why, sizeof why));
	/* Forged: the code uses v200, the descriptor allocates 8. */
	forge(buf, 0, (Insn[]){I(mov_v200), I(endpgm)}, 2, &sc, &d);
	CHECK_EQ(sc.vgprs, 201);
	CHECK(!amdgpu_scan_check(&sc, d.vgprs, 0, d.accum_offset, d.private_segment, why, sizeof why));
	CHECK(strstr(why, "uses v200") != NULL);
	/* a9 past the 16 registers allocated with AGPRs from 8; and past the metadata's 4 AGPRs. */
	forge(buf, 1, (Insn[]){I(mov_v7), I(acc_a9), I(endpgm)}, 3, &sc, &d);
	CHECK_EQ(sc.agprs, 10);
	CHECK(!amdgpu_scan_check(&sc, d.vgprs, 16, d.accum_offset, d.private_segment, why, sizeof why));
	CHECK(strstr(why, "uses a9") != NULL);
	CHECK(!amdgpu_scan_check(&sc, 64, 4, 8, 0, why, sizeof why));
	CHECK(strstr(why, "metadata counts 4 AGPRs") != NULL);
	/* Scratch accessed with none allocated; allowed with 16 bytes. */
	n = forge(buf, 0, (Insn[]){I(scratch), I(endpgm)}, 2, &sc, &d);
	CHECK_EQ(sc.scratch, 1);
	CHECK(!amdgpu_scan_check(&sc, 8, 0, 8, 0, why, sizeof why));
	CHECK(strstr(why, "access scratch memory") != NULL);
	CHECK(amdgpu_scan_check(&sc, 8, 0, 8, 16, why, sizeof why));
#undef I
	/* Bytes that are not code; a kernel symbol that is absent or runs past the file. */
	unsigned char junk[8];
	memset(junk, 0xff, sizeof junk);
	CHECK(!amdgpu_scan_code(junk, sizeof junk, "gfx942", &sc, why, sizeof why));
	CHECK(strstr(why, "not a valid instruction") != NULL);
	CHECK(!ra_hsaco_code(buf, n, "kk", &c, &len));
	CHECK(!ra_hsaco_code(buf, 300, "k", &c, &len));
}

/* ---- f8 through the JIT ---- */

static double
f8_value(int code, bool e4m3)
{
	int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15, emax = e4m3 ? 15 : 31;
	int s = code >> 7, e = (code >> mb) & emax, m = code & ((1 << mb) - 1);
	double v;
	if (e4m3 && e == 15 && m == 7)
		return NAN;
	if (!e4m3 && e == 31)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, 1 - bias - mb);
	else
		v = ldexp(1.0 + m / (double)(1 << mb), e - bias);
	return s ? -v : v;
}

/* Nearest finite code by search, ties to the even code, saturating; NaN to the NaN code. */
static int
f8_reference(float x, bool e4m3)
{
	int maxcode = e4m3 ? 0x7e : 0x7b;
	if (isnan(x))
		return (signbit(x) ? 0x80 : 0) | (e4m3 ? 0x7f : 0x7e);
	double a = fabs((double)x);
	int best = 0;
	double bd = INFINITY;
	for (int c = 0; c <= maxcode; c++) {
		double d = fabs(f8_value(c, e4m3) - a);
		if (d < bd || (d == bd && !(c & 1))) {
			bd = d;
			best = c;
		}
	}
	if (a >= f8_value(maxcode, e4m3))
		best = maxcode;
	return (signbit(x) ? 0x80 : 0) | best;
}

static void
test_f8(void)
{
	LLVMLinkInMCJIT();
	if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
		CHECK(!"no native target for the JIT");
		return;
	}
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext("f8", ctx);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), f32 = LLVMFloatTypeInContext(ctx);
	for (int e4 = 0; e4 < 2; e4++) {
		char name[32];
		snprintf(name, sizeof name, "dec%d", e4);
		LLVMValueRef fn = LLVMAddFunction(m, name, LLVMFunctionType(f32, &i8, 1, 0));
		LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, fn, "e"));
		LLVMBuildRet(b, lower_f8_to_f32(b, ctx, LLVMGetParam(fn, 0), e4));
		snprintf(name, sizeof name, "enc%d", e4);
		fn = LLVMAddFunction(m, name, LLVMFunctionType(i8, &f32, 1, 0));
		LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, fn, "e"));
		LLVMBuildRet(b, lower_f32_to_f8(b, ctx, LLVMGetParam(fn, 0), e4));
	}
	LLVMDisposeBuilder(b);
	LLVMExecutionEngineRef ee;
	char *err = NULL;
	if (LLVMCreateExecutionEngineForModule(&ee, m, &err)) {
		fprintf(stderr, "JIT: %s\n", err);
		CHECK(!"JIT");
		return;
	}
	for (int e4 = 0; e4 < 2; e4++) {
		char name[32];
		snprintf(name, sizeof name, "dec%d", e4);
		float (*dec)(uint8_t) = (float (*)(uint8_t))(uintptr_t)LLVMGetFunctionAddress(ee, name);
		snprintf(name, sizeof name, "enc%d", e4);
		uint8_t (*enc)(float) = (uint8_t(*)(float))(uintptr_t)LLVMGetFunctionAddress(ee, name);
		bool dec_ok = true, round_trip = true, enc_ok = true;
		for (int c = 0; c < 256; c++) {
			double want = f8_value(c, e4);
			float got = dec((uint8_t)c);
			/* signbit() is only "nonzero" when set, and GCC's float and double versions return
			 * different nonzero values (clang's both return 1): compare truth values. */
			dec_ok &= isnan(want) ? isnan(got)
					      : (double)got == want && !signbit(got) == !signbit(want);
			if (!isnan(want) && !isinf(want))
				round_trip &= enc(got) == c;
		}
		/* Midpoints (ties), their neighbours, extremes, and a sweep of magnitudes. */
		for (int c = 0; c < 0x7f; c++) {
			double lo = f8_value(c, e4), hi = f8_value(c + 1, e4);
			if (isnan(hi) || isinf(hi))
				continue;
			float mid = (float)((lo + hi) / 2);
			float probes[3] = {mid, nextafterf(mid, 0), nextafterf(mid, INFINITY)};
			for (int p = 0; p < 3; p++)
				for (int s = 0; s < 2; s++) {
					float x = s ? -probes[p] : probes[p];
					enc_ok &= enc(x) == f8_reference(x, e4);
				}
		}
		float extremes[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 1e-30f, 448.0f, 464.0f,
				    57344.0f, 61440.0f, 1e-45f};
		for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; i++)
			enc_ok &= enc(extremes[i]) == f8_reference(extremes[i], e4);
		for (float x = 1e-9f; x < 1e6f; x *= 1.0137f)
			enc_ok &= enc(x) == f8_reference(x, e4) && enc(-x) == f8_reference(-x, e4);
		CHECK(dec_ok);
		CHECK(round_trip);
		CHECK(enc_ok);
	}
	LLVMDisposeExecutionEngine(ee);
	LLVMContextDispose(ctx);
}

int
main(void)
{
	test_fragments();
	test_tiling();
	test_wave_bytes();
	test_mbar();
	test_b_stage();
	test_metadata();
	test_descriptor();
	test_code_scan();
	test_f8();
	return unit_summary();
}
