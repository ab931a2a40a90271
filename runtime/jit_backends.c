/* jit_backends.c — which GPU backends this build of libave has. */
#include <string.h>

#include "jit.h"

JitBackend
jit_gpu_backend(const char *target)
{
	(void)target;
	return NULL;
}
