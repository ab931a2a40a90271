/* capi.h — shared by the C API tests: a diagnostic handler that prints one line per diagnostic
 * (for FileCheck), file reading, and a check macro that reports the failing call. */
#ifndef AVE_CAPI_TEST_H
#define AVE_CAPI_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ave/ave.h"

static inline void
print_diag(AveDiagnostic d, void *ud)
{
	const char *sev[] = {"error", "warning", "note", "remark"};
	const char *file = aveDiagnosticGetFile(d);
	const char *slash = strrchr(file, '/');
	printf("%sdiag: %s %s:%u:%u: %s [%s]\n", ud ? (const char *)ud : "",
	       sev[aveDiagnosticGetSeverity(d)], slash ? slash + 1 : file, aveDiagnosticGetLine(d),
	       aveDiagnosticGetColumn(d), aveDiagnosticGetMessage(d), aveDiagnosticGetCode(d));
	for (int i = 0; i < aveDiagnosticGetNumNotes(d); i++) {
		AveDiagnostic n = aveDiagnosticGetNote(d, i);
		printf("  note: %u:%u: %s\n", aveDiagnosticGetLine(n), aveDiagnosticGetColumn(n),
		       aveDiagnosticGetMessage(n));
	}
	for (int i = 0; i < aveDiagnosticGetNumCounterexampleEntries(d); i++)
		printf("  cex: %s = %s\n", aveDiagnosticGetCounterexampleKey(d, i),
		       aveDiagnosticGetCounterexampleValue(d, i));
	fflush(stdout);
}

#define CHECK_OK(call)                                                                      \
	do {                                                                                \
		AveResult r_ = (call);                                                      \
		if (r_ != AVE_SUCCESS) {                                                    \
			printf("FAIL: %s returned %s (line %d)\n", #call, aveResultGetName(r_), \
			       __LINE__);                                                   \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

static inline char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("FAIL: cannot open %s\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *p = malloc((size_t)n + 1);
	if (fread(p, 1, (size_t)n, f) != (size_t)n)
		exit(1);
	p[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return p;
}

#endif
