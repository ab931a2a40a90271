/* budget.c — register budgets: what a kernel launches with, and whether its roles' budgets fit
 * (SPEC 5.10). One implementation for the verifier and the backends. */
#include <stdlib.h>
#include <string.h>

#include "regalloc.h"

int
ra_entry_regs(const TargetInfo *t, int64_t threads)
{
	if (!t || !t->regfile)
		return 0;
	int64_t g = t->reg_granule > 0 ? t->reg_granule : 1;
	int64_t e;
	if (t->vendor == TARGET_VENDOR_AMD) {
		int64_t waves = (threads + t->warp - 1) / t->warp;
		int64_t per_simd = (waves + t->simds - 1) / t->simds;
		e = t->regfile / (per_simd > 0 ? per_simd : 1);
	} else {
		e = t->regfile / (threads > 0 ? threads : 1);
	}
	if (e > t->max_regs)
		e = t->max_regs;
	return (int)(e / g * g);
}

int
ra_prefetch_regs(const TargetInfo *t)
{
	(void)t;
	return 128;
}

bool
ra_check_roles(IrCtx *c, const TargetInfo *t, int64_t threads, IrOp *ws, bool warn, RaRoles *out)
{
	enum { MAXR = 64 };
	IrRoleInfo r[MAXR];
	int n = ir_roles(c, ws, r, MAXR);
	RaRoles z = {0};
	*out = z;
	if (!t)
		return true;
	if (n > MAXR)
		n = MAXR;
	int64_t entry = ra_entry_regs(t, threads);
	for (int i = 0; i < n; i++) {
		if (r[i].regs > out->max_role_regs)
			out->max_role_regs = r[i].regs;
		if (t->setmaxnreg) {
			/* setmaxnreg is executed by every warp of a warpgroup at once: the role's
			 * warps, all replicas together (two replicas of 2 warps share one), must
			 * make whole aligned warpgroups; each replica runs it on entry. */
			if (r[i].regs && ((r[i].warps * r[i].replicas) % 4 || r[i].first_warp % 4)) {
				ir_error(c, r[i].op->loc, "role '@%s' sets 'regs' on target '%s', so it must cover "
					 "whole warpgroups (4 warps, aligned, its replicas together); it has "
					 "%lld warps starting at warp %lld", r[i].name, t->name,
					 (long long)(r[i].warps * r[i].replicas), (long long)r[i].first_warp);
				return false;
			}
			out->pool_need += (r[i].regs ? r[i].regs : entry) * t->warp * r[i].warps * r[i].replicas;
		} else if (r[i].regs && warn && t->vendor == TARGET_VENDOR_NVIDIA) {
			ir_warning(c, r[i].op->loc, "role '@%s' asks for regs(%lld), but target '%s' has no "
				   "setmaxnreg; the role runs with the kernel's registers", r[i].name,
				   (long long)r[i].regs, t->name);
		}
	}
	if (t->setmaxnreg) {
		out->pool_have = entry * threads;
		if (out->pool_need > out->pool_have) {
			ir_error(c, ws->loc, "role register budgets need %lld registers, but target '%s' gives "
				 "this %lld-thread kernel %lld per thread at launch (%lld in all)",
				 (long long)out->pool_need, t->name, (long long)threads, (long long)entry,
				 (long long)out->pool_have);
			return false;
		}
	}
	if (t->vendor == TARGET_VENDOR_AMD && out->max_role_regs) {
		int waves = (int)(threads / t->warp);
		int resident = (waves + t->simds - 1) / t->simds; /* waves per SIMD at least */
		int64_t wpe = t->regfile / out->max_role_regs;
		if (wpe > t->max_waves_per_simd)
			wpe = t->max_waves_per_simd;
		if (wpe < resident) {
			IrOp *k = ir_kernel_of(ws);
			ir_error(c, k ? k->loc : ws->loc, "roles ask for up to %lld registers per lane, but a %d-wave "
				 "workgroup runs %d waves on each SIMD of target '%s', which leaves %d",
				 (long long)out->max_role_regs, waves, resident, t->name,
				 t->regfile / (resident > 0 ? resident : 1));
			return false;
		}
		out->waves_per_eu = (int)wpe;
		for (int i = 0; warn && i < n; i++)
			if (r[i].regs)
				ir_warning(c, r[i].op->loc, "target '%s' has no per-role register reallocation: "
					   "role '@%s' runs with the kernel's largest budget, %lld registers per "
					   "lane (amdgpu-waves-per-eu=%d)", t->name, r[i].name,
					   (long long)out->max_role_regs, out->waves_per_eu);
	}
	return true;
}

void
ra_roles_json(IrCtx *c, IrOp *ws, IrVec *out)
{
	enum { MAXR = 64 };
	IrRoleInfo r[MAXR];
	int n = ir_roles(c, ws, r, MAXR);
	for (int i = 0; i < n && i < MAXR; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		fputs("{\"name\": ", f);
		ir_json_str(f, r[i].name);
		fprintf(f, ", \"first_warp\": %lld, \"warps\": %lld, \"replicate\": %lld, \"regs\": %lld}",
			(long long)r[i].first_warp, (long long)r[i].warps, (long long)r[i].replicas,
			(long long)r[i].regs);
		fclose(f);
		ir_vec_push(c->al, out, &buf, sizeof buf);
	}
}
