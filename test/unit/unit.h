/* unit.h — a minimal unit-test harness: CHECK records failures and keeps going; the summary
 * line "N passed, N failed" is what the tooling reads. */
#ifndef AVE_UNIT_H
#define AVE_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_pass, unit_fail;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (cond) {                                                          \
			unit_pass++;                                                 \
		} else {                                                             \
			unit_fail++;                                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                    \
	} while (0)

#define CHECK_EQ(a, b) CHECK((a) == (b))

static int
unit_summary(void)
{
	printf("%d passed, %d failed\n", unit_pass, unit_fail);
	return unit_fail ? 1 : 0;
}

#endif
