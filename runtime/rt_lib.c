/* rt_lib.c — the object that anchors libave and libave_rt; the API itself comes from the core
 * archives linked whole. */
#include "rt.h"
