/* unit.h — a minimal unit-test harness: CHECK records failures and keeps going; the summary
 * line "N passed, N failed" counts check sites and is what the tooling (scripts/lit-count.py)
 * reads. */
#ifndef AVE_UNIT_H
#define AVE_UNIT_H

#include <stdio.h>
#include <stdlib.h>

/* Counted per check site (one CHECK in the source, however often it runs): a site passes when
 * every evaluation held. */
static int unit_pass, unit_fail;
static long unit_evals;

/* state: 0 not yet run, 1 held so far, 2 failed at least once. */
static void
unit_check(int *state, int ok, const char *file, int line, const char *cond)
{
	unit_evals++;
	if (!*state) {
		*state = 1;
		unit_pass++;
	}
	if (ok)
		return;
	if (*state == 1) {
		*state = 2;
		unit_pass--;
		unit_fail++;
	}
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, cond);
}

#define CHECK(cond)                                                                  \
	do {                                                                         \
		static int unit_site_;                                               \
		unit_check(&unit_site_, (cond) ? 1 : 0, __FILE__, __LINE__, #cond);  \
	} while (0)

#define CHECK_EQ(a, b) CHECK((a) == (b))

static int
unit_summary(void)
{
	printf("checks evaluated: %ld\n", unit_evals);
	printf("%d passed, %d failed\n", unit_pass, unit_fail);
	return unit_fail ? 1 : 0;
}

#endif
