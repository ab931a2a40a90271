/* rt_world.c — a world of ranks on one device (SPEC 5.9, docs/capi.md "Worlds"): each rank's
 * copy of each symmetric buffer, the table of their addresses a communicating kernel reads
 * (its "peers" parameter), the epoch of each launch, and the launch of every rank at once
 * through the device's launch_world. */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum { WORLD_MAX = 64 };

typedef struct RtWorld {
	RtDevice *dev;
	int size;
	pthread_mutex_t mu;        /* guards symm */
	pthread_mutex_t launch_mu; /* one launch at a time: each takes the next epoch */
	RtWorldSymm **symm;
	int nsymm;
} RtWorld;

AveResult
aveWorldCreate(AveDevice dh, int size, AveWorld *out)
{
	RtDevice *d = dh.ptr;
	if (out)
		out->ptr = NULL;
	if (!d || !out)
		return rt_misuse(d ? d->ctx : NULL, "aveWorldCreate: %s is null",
				 !d ? "the device" : "'out'");
	if (size < 1 || size > WORLD_MAX)
		return rt_misuse(d->ctx, "aveWorldCreate: a world has 1 to %d ranks, not %d",
				 WORLD_MAX, size);
	if (!d->ops->launch_world) {
		rt_error(d->ctx, "device '%s' cannot run a world of ranks (host, the simulated devices "
				 "and cuda can)", d->name);
		return AVE_ERROR_UNSUPPORTED;
	}
	RtWorld *w = calloc(1, sizeof *w);
	w->dev = d;
	w->size = size;
	pthread_mutex_init(&w->mu, NULL);
	pthread_mutex_init(&w->launch_mu, NULL);
	out->ptr = w;
	return AVE_SUCCESS;
}

static void
symm_free(RtDevice *d, RtWorldSymm *s, int size)
{
	for (int r = 0; r < size && s->rank; r++)
		if (s->rank[r]) {
			d->ops->free(d, s->rank[r]->ptr);
			free(s->rank[r]);
		}
	if (s->peers)
		d->ops->free(d, s->peers);
	free(s->rank);
	free(s->symbol);
	free(s->type);
	free(s);
}

void
aveWorldDestroy(AveWorld h)
{
	RtWorld *w = h.ptr;
	if (!w)
		return;
	/* Launches on the world's buffers finish first. */
	w->dev->ops->sync(w->dev);
	for (int i = 0; i < w->nsymm; i++)
		symm_free(w->dev, w->symm[i], w->size);
	free(w->symm);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->launch_mu);
	free(w);
}

int
aveWorldGetSize(AveWorld h)
{
	RtWorld *w = h.ptr;
	return w ? w->size : 0;
}

/* The record of `symbol` in k's "symmetric" list, or NULL. */
static RtJson *
symm_record(RtKernel *k, const char *symbol)
{
	RtJson *list = rt_json_get(k->rec, "symmetric");
	for (int i = 0; list && list->kind == RT_JSON_ARRAY && i < list->n; i++) {
		const char *s = rt_json_str(list->items[i], "symbol");
		if (s && !strcmp(s, symbol))
			return list->items[i];
	}
	return NULL;
}

/* The world's buffer of k's symmetric buffer rec: found (the same type and size, else an
 * error naming both), or made (each rank's copy zero-filled, then the table of addresses). */
static AveResult
symm_get(RtWorld *w, RtKernel *k, const RtJson *rec, RtWorldSymm **out)
{
	RtDevice *d = w->dev;
	const char *symbol = rt_json_str(rec, "symbol"), *type = rt_json_str(rec, "type");
	int64_t bytes = rt_json_int(rec, "bytes", -1);
	if (!symbol || !type || bytes <= 0) {
		rt_error(d->ctx, "kernel '%s': malformed symmetric buffer in its metadata", k->name);
		return AVE_ERROR_LAUNCH;
	}
	for (int i = 0; i < w->nsymm; i++) {
		RtWorldSymm *s = w->symm[i];
		if (strcmp(s->symbol, symbol))
			continue;
		if (strcmp(s->type, type) || s->bytes != (size_t)bytes) {
			rt_error(d->ctx, "kernel '%s': symmetric buffer '@%s' holds %lld bytes of %s, "
					 "but the world made it with %zu bytes of %s for another kernel",
				 k->name, symbol, (long long)bytes, type, s->bytes, s->type);
			return AVE_ERROR_INVALID_ARGUMENT;
		}
		*out = s;
		return AVE_SUCCESS;
	}
	RtWorldSymm *s = calloc(1, sizeof *s);
	s->symbol = strdup(symbol);
	s->type = strdup(type);
	s->bytes = (size_t)bytes;
	s->rank = calloc((size_t)w->size, sizeof *s->rank);
	void *zeros = calloc(1, s->bytes);
	uint64_t *table = calloc((size_t)w->size, sizeof *table);
	AveResult r = AVE_SUCCESS;
	for (int q = 0; q < w->size && !r; q++) {
		RtBuffer *b = calloc(1, sizeof *b);
		b->dev = d;
		b->size = s->bytes;
		b->borrowed = true; /* the world's: aveBufferDestroy refuses it */
		if ((r = d->ops->alloc(d, s->bytes, &b->ptr))) {
			free(b);
			break;
		}
		s->rank[q] = b;
		table[q] = (uint64_t)(uintptr_t)b->ptr;
		r = d->ops->upload(d, b->ptr, zeros, s->bytes);
	}
	if (!r)
		r = d->ops->alloc(d, (size_t)w->size * sizeof *table, &s->peers);
	if (!r)
		r = d->ops->upload(d, s->peers, table, (size_t)w->size * sizeof *table);
	free(zeros);
	free(table);
	if (r) {
		symm_free(d, s, w->size);
		return r;
	}
	w->symm = realloc(w->symm, sizeof *w->symm * (size_t)(w->nsymm + 1));
	w->symm[w->nsymm++] = s;
	*out = s;
	return AVE_SUCCESS;
}

AveResult
aveWorldGetBuffer(AveWorld wh, AveKernel kh, const char *symbol, int rank, AveBuffer *out)
{
	RtWorld *w = wh.ptr;
	RtKernel *k = kh.ptr;
	if (out)
		out->ptr = NULL;
	if (!w || !k || !symbol || !out)
		return rt_misuse(w ? w->dev->ctx : k ? k->ctx : NULL,
				 "aveWorldGetBuffer: %s is null", !w ? "the world" : !k ? "the kernel"
								 : !symbol ? "'symbol'" : "'out'");
	if (rank < 0 || rank >= w->size)
		return rt_misuse(w->dev->ctx, "aveWorldGetBuffer: rank %d is not one of the world's %d",
				 rank, w->size);
	const char *name = symbol + (symbol[0] == '@');
	RtJson *rec = symm_record(k, name);
	if (!rec) {
		rt_error(w->dev->ctx, "kernel '%s': its module has no symmetric buffer '@%s'", k->name,
			 name);
		return AVE_ERROR_NOT_FOUND;
	}
	RtWorldSymm *s;
	pthread_mutex_lock(&w->mu);
	AveResult r = symm_get(w, k, rec, &s);
	pthread_mutex_unlock(&w->mu);
	if (!r)
		out->ptr = s->rank[rank];
	return r;
}

const RtWorldSymm *
rt_world_symm_find(const RtWorldRank *w, const char *symbol)
{
	for (int i = 0; symbol && i < w->nsymm; i++)
		if (!strcmp(w->symm[i]->symbol, symbol))
			return w->symm[i];
	return NULL;
}

/* A kernel with `gathered = @chunk` runs behind a collective (docs/passes.md, "The cost
 * model"): before it starts, each rank q's chunk q goes to every other rank, whose signal slot
 * of that chunk then counts one more (the kernel's chunk waits return at this launch's epoch).
 * Device to device where the device copies (one copy per chunk and rank when its rows are
 * contiguous), else through the host; NCCL's all-gather is to take its place on GPUs.
 * *ran says whether any counter moved. */
static AveResult
world_gather(RtDevice *d, RtKernel *k, RtWorldRank *ranks, int size, bool *ran)
{
	RtJson *g = rt_json_get(k->rec, "gather");
	*ran = false;
	if (!g || g->kind != RT_JSON_ARRAY)
		return AVE_SUCCESS;
	if (g->n != size) {
		rt_error(d->ctx, "kernel '%s' gathers the chunks of a %d-rank world before it starts "
				 "(its module's 'world'), not of %d", k->name, g->n, size);
		return AVE_ERROR_LAUNCH;
	}
	AveResult r = d->ops->sync(d);
	for (int q = 0; q < g->n && !r; q++) {
		const RtJson *e = g->items[q];
		const RtWorldSymm *b = rt_world_symm_find(&ranks[0], rt_json_str(e, "buffer"));
		const RtWorldSymm *s = rt_world_symm_find(&ranks[0], rt_json_str(e, "signal"));
		int64_t off = rt_json_int(e, "offset", -1), rows = rt_json_int(e, "rows", -1);
		int64_t rb = rt_json_int(e, "row_bytes", -1), pitch = rt_json_int(e, "pitch", -1);
		int64_t slot = rt_json_int(e, "slot", -1), sb = rt_json_int(e, "slot_bytes", -1);
		if (!b || !s || off < 0 || rows < 1 || rb < 1 || pitch < 0 || slot < 0 ||
		    (sb != 4 && sb != 8) || (uint64_t)(off + (rows - 1) * pitch + rb) > b->bytes ||
		    (uint64_t)(slot + sb) > s->bytes) {
			rt_error(d->ctx, "kernel '%s': malformed 'gather' record %d in its metadata",
				 k->name, q);
			return AVE_ERROR_LAUNCH;
		}
		/* Contiguous rows move as one block. */
		int64_t nblk = rows == 1 || pitch == rb ? 1 : rows, blk = nblk == 1 ? rows * rb : rb;
		char *stage = d->ops->copy ? NULL : malloc((size_t)blk);
		if (!d->ops->copy && !stage) {
			rt_error(d->ctx, "kernel '%s': out of host memory for the gather", k->name);
			return AVE_ERROR_OUT_OF_MEMORY;
		}
		for (int64_t i = 0; i < nblk && !r; i++) {
			size_t at = (size_t)(off + i * pitch);
			const char *src = (const char *)b->rank[q]->ptr + at;
			if (stage)
				r = d->ops->download(d, stage, src, (size_t)blk);
			for (int p = 0; p < size && !r; p++)
				if (p != q)
					r = stage ? d->ops->upload(d, (char *)b->rank[p]->ptr + at, stage,
								   (size_t)blk)
						  : d->ops->copy(d, (char *)b->rank[p]->ptr + at, src,
								 (size_t)blk);
		}
		free(stage);
		for (int p = 0; p < size && !r; p++) {
			if (p == q)
				continue;
			char *at = (char *)s->rank[p]->ptr + slot;
			int64_t v64 = 0;
			int32_t v32 = 0;
			r = d->ops->download(d, sb == 8 ? (void *)&v64 : (void *)&v32, at, (size_t)sb);
			v64++;
			v32++;
			if (!r)
				r = d->ops->upload(d, at, sb == 8 ? (void *)&v64 : (void *)&v32, (size_t)sb);
			*ran |= !r;
		}
	}
	return r;
}

AveResult
aveWorldLaunch(AveKernel kh, AveWorld wh, const uint32_t grid[3], const AveArgs *ah, AveStream sh)
{
	RtKernel *k = kh.ptr;
	RtWorld *w = wh.ptr;
	RtStream *st = sh.ptr;
	if (!k || !w || !grid || !ah)
		return rt_misuse(w ? w->dev->ctx : k ? k->ctx : NULL, "aveWorldLaunch: %s is null",
				 !k ? "the kernel" : !w ? "the world" : !grid ? "'grid'" : "'args'");
	RtDevice *d = w->dev;
	RtArgs *args = calloc((size_t)w->size, sizeof *args);
	for (int q = 0; q < w->size; q++) {
		if (!ah[q].ptr) {
			free(args);
			return rt_misuse(d->ctx, "aveWorldLaunch: the argument list of rank %d is null", q);
		}
		args[q] = *(RtArgs *)ah[q].ptr;
	}
	/* A copy of a CTA along a grid dimension the kernel never reads does everything again,
	 * its chunk signals included, and signals count launches (the next launch's waits would
	 * return early): the checker proves a kernel for one CTA along such a dimension, and the
	 * launch holds it to that. */
	RtJson *gr = rt_json_get(k->rec, "grid_read"), *sg = rt_json_get(k->rec, "signals");
	bool signals = sg && sg->kind == RT_JSON_BOOL && sg->i;
	for (int dim = 0; signals && gr && gr->kind == RT_JSON_ARRAY && dim < 3 && dim < gr->n; dim++)
		if (grid[dim] > 1 && gr->items[dim]->kind == RT_JSON_BOOL && !gr->items[dim]->i) {
			rt_error(d->ctx, "kernel '%s' never reads 'ave.program_id dim(%d)': a world launch "
					 "of it takes grid[%d] = 1, not %u (each copy of a CTA along that "
					 "dimension would signal its chunks again, and a signal counts a "
					 "launch)", k->name, dim, dim, grid[dim]);
			free(args);
			return AVE_ERROR_LAUNCH;
		}
	/* A module written for W ranks has W built in (its schedules, its chunks): another world
	 * would wait for chunks nobody sends. */
	int64_t mw = rt_json_int(k->rec, "world", 0);
	if (mw > 0 && mw != w->size) {
		rt_error(d->ctx, "kernel '%s' is written for a world of %lld ranks (its module's "
				 "'world'), not %d", k->name, (long long)mw, w->size);
		free(args);
		return AVE_ERROR_LAUNCH;
	}
	void *handle;
	AveResult r = rt_kernel_prepare(k, d, st ? st->dev : d, args, w->size, &handle);
	RtJson *list = rt_json_get(k->rec, "symmetric");
	int n = list && list->kind == RT_JSON_ARRAY ? list->n : 0;
	RtWorldSymm **symm = calloc((size_t)n + 1, sizeof *symm);
	RtWorldRank *ranks = calloc((size_t)w->size, sizeof *ranks);
	/* Launches of a world take epochs one after another: the epoch is one more than the last
	 * launch's of the signal buffers this kernel signals or waits on (a chunk wait returns once
	 * its counter reaches the epoch), and it is spent once the launch is on its way. Buffers
	 * the kernel does not signal through keep theirs. */
	pthread_mutex_lock(&w->launch_mu);
	pthread_mutex_lock(&w->mu);
	int64_t epoch = 0;
	for (int i = 0; i < n && !r; i++) {
		RtJson *sig = rt_json_get(list->items[i], "signals");
		if (!(r = symm_get(w, k, list->items[i], &symm[i])) && sig && sig->kind == RT_JSON_BOOL &&
		    sig->i && symm[i]->epochs > epoch)
			epoch = symm[i]->epochs;
	}
	epoch++;
	pthread_mutex_unlock(&w->mu);
	for (int q = 0; q < w->size; q++)
		ranks[q] = (RtWorldRank){q, w->size, epoch, symm, n};
	bool gathered = false;
	if (!r)
		r = world_gather(d, k, ranks, w->size, &gathered);
	if (!r)
		r = d->ops->launch_world(d, k, handle, grid, args, ranks, w->size, st ? st->s : NULL);
	pthread_mutex_lock(&w->mu);
	/* A launch whose gather moved counters spent its epoch even if it then failed. */
	for (int i = 0; i < n && (!r || gathered); i++) {
		RtJson *sig = rt_json_get(list->items[i], "signals");
		if (sig && sig->kind == RT_JSON_BOOL && sig->i)
			symm[i]->epochs = epoch;
	}
	pthread_mutex_unlock(&w->mu);
	pthread_mutex_unlock(&w->launch_mu);
	free(ranks);
	free(symm);
	free(args);
	return r;
}
