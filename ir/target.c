/* target.c — the target registry's table (targets.def) and look-ups over it. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

const TargetInfo target_table[TARGET_COUNT] = {
#define TARGET(id_, name_, vendor_, cc_, arch_, warp_, smem_, threads_, mbar_, regfile_, maxregs_,   \
	       granule_, waves_, simds_, m_, n_, k_, setmaxnreg_, copy_, triple_, cpu_, features_)   \
	{TARGET_##id_, name_, vendor_, cc_, arch_, warp_, smem_, threads_, mbar_, regfile_, maxregs_,  \
	 granule_, waves_, simds_, m_, n_, k_, setmaxnreg_, copy_, triple_, cpu_, features_},
#include "targets.def"
#undef TARGET
};

const TargetInfo *
target_find(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < TARGET_COUNT; i++)
		if (!strcmp(target_table[i].name, name))
			return &target_table[i];
	return NULL;
}

char *
target_names(char *buf, size_t n, unsigned vendors, const char *last)
{
	int total = 0, seen = 0;
	size_t len = 0;
	for (int i = 0; i < TARGET_COUNT; i++)
		total += !!(vendors & (1u << target_table[i].vendor));
	if (n)
		buf[0] = 0;
	for (int i = 0; i < TARGET_COUNT && len < n; i++) {
		if (!(vendors & (1u << target_table[i].vendor)))
			continue;
		const char *sep = !seen ? "" : seen == total - 1 ? last : ", ";
		int w = snprintf(buf + len, n - len, "%s%s", sep, target_table[i].name);
		if (w < 0)
			break;
		len += (size_t)w;
		seen++;
	}
	return buf;
}

bool
target_runs_on(const TargetInfo *k, const TargetInfo *d)
{
	if (!k || !d)
		return false;
	if (k == d)
		return true;
	if (k->vendor != d->vendor)
		return false;
	if (k->vendor == TARGET_VENDOR_NVIDIA)
		return k->arch_specific ? k->cc == d->cc : k->cc <= d->cc;
	return false;
}

const TargetInfo *
target_for_cc(int cc)
{
	const TargetInfo *best = NULL;
	for (int i = 0; i < TARGET_COUNT; i++) {
		const TargetInfo *t = &target_table[i];
		if (t->vendor != TARGET_VENDOR_NVIDIA || t->cc > cc || (t->arch_specific && t->cc != cc))
			continue;
		if (!best || t->cc > best->cc)
			best = t;
	}
	return best;
}

const TargetInfo *
target_of_vendor(TargetVendor v)
{
	for (int i = 0; i < TARGET_COUNT; i++)
		if (target_table[i].vendor == v)
			return &target_table[i];
	return NULL;
}

/* The digits of s, in order (at most n - 1). */
static void
digits(const char *s, char *out, size_t n)
{
	size_t k = 0;
	for (; *s && k + 1 < n; s++)
		if (*s >= '0' && *s <= '9')
			out[k++] = *s;
	out[k] = 0;
}

const char *
target_closest(const char *name, unsigned vendors)
{
	const char *cands[TARGET_COUNT];
	int n = 0;
	for (int i = 0; i < TARGET_COUNT; i++)
		if (vendors & (1u << target_table[i].vendor))
			cands[n++] = target_table[i].name;
	const char *near = name ? ir_closest(name, strlen(name), cands, n) : NULL;
	char a[32], b[32];
	if (!near)
		return NULL;
	digits(name, a, sizeof a);
	digits(near, b, sizeof b);
	return strcmp(a, b) ? NULL : near; /* sm_70 is not a misspelt sm_80 */
}

const TargetInfo *
target_smem_max(void)
{
	const TargetInfo *best = NULL;
	for (int i = 0; i < TARGET_COUNT; i++)
		if (target_table[i].vendor != TARGET_VENDOR_HOST &&
		    (!best || target_table[i].smem_limit > best->smem_limit))
			best = &target_table[i];
	return best;
}
