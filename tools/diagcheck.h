/* diagcheck.h — shared by the tools: collecting diagnostics and checking them against
 * `expected-error @+N {{...}}` annotations (ave-opt --verify-diagnostics). */
#ifndef AVE_DIAGCHECK_H
#define AVE_DIAGCHECK_H

#include "../ir/ir.h"

typedef struct DiagRecord {
	IrSeverity sev;
	uint32_t line;
	char *msg;
} DiagRecord;

typedef struct DiagSink {
	IrCtx *c;
	bool json;
	bool collect; /* keep records instead of printing */
	DiagRecord *rec;
	int nrec, cap;
} DiagSink;

void diag_sink_handler(void *ud, const IrDiag *d);
/* The registered target `name`, or NULL after printing "<tool>: unknown target ... (the list)"
 * to stderr; `vendors` limits the list (TARGET_ALL, TARGET_GPUS). */
const TargetInfo *tool_target(const char *tool, const char *name, unsigned vendors);
void diag_sink_reset(DiagSink *s);
/* Compares the records with the annotations in text[0..len) (lines numbered from line0).
 * Reports mismatches on stderr; returns the number of mismatches. */
int diag_verify(DiagSink *s, const char *file, const char *text, size_t len, uint32_t line0);

#endif
