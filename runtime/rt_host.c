/* rt_host.c — the `host` device: buffers in host memory, kernels run by the reference
 * interpreter on the `.ave` text carried in their bundle. */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static AveResult
host_open(RtDevice *d, int ordinal)
{
	if (ordinal != 0) {
		rt_error(d->ctx, "host: no device %d (there is one host device)", ordinal);
		return AVE_ERROR_NOT_FOUND;
	}
	strcpy(d->name, "host (reference interpreter)");
	d->target = "host";
	return AVE_SUCCESS;
}

static void
host_close(RtDevice *d)
{
	(void)d;
}

static AveResult
host_alloc(RtDevice *d, size_t bytes, void **ptr)
{
	*ptr = calloc(1, bytes ? bytes : 1);
	if (!*ptr) {
		rt_error(d->ctx, "host: out of memory allocating %zu bytes", bytes);
		return AVE_ERROR_OUT_OF_MEMORY;
	}
	return AVE_SUCCESS;
}

static void
host_free(RtDevice *d, void *ptr)
{
	(void)d;
	free(ptr);
}

static AveResult
host_copy(RtDevice *d, void *dst, const void *src, size_t n)
{
	(void)d;
	memcpy(dst, src, n);
	return AVE_SUCCESS;
}

static AveResult
host_stream_create(RtDevice *d, void **s)
{
	(void)d;
	*s = NULL;
	return AVE_SUCCESS;
}

static void
host_stream_destroy(RtDevice *d, void *s)
{
	(void)d;
	(void)s;
}

static AveResult
host_sync_stream(RtDevice *d, void *s)
{
	(void)d;
	(void)s;
	return AVE_SUCCESS; /* host launches complete before they return */
}

static AveResult
host_sync(RtDevice *d)
{
	(void)d;
	return AVE_SUCCESS;
}
