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
/* Reports an option the tool does not take, on stderr, with the closest of the options its usage
 * text lists ("ave compile: unknown option '--targt=sm_80'; did you mean '--target=sm_80'?"). */
void tool_unknown_option(const char *tool, const char *arg, const char *usage);
/* The closest of the '|'-separated words of `list` to `s` (a misspelt value), copied to out;
 * false when none is close. */
bool tool_closest_word(const char *s, const char *list, char out[32]);
void diag_sink_reset(DiagSink *s);
/* "N errors generated." on stderr after text diagnostics (not JSON, not collected). */
void diag_sink_summary(const DiagSink *s);
/* Compares the records with the annotations in text[0..len) (lines numbered from line0).
 * Reports mismatches on stderr; returns the number of mismatches. */
int diag_verify(DiagSink *s, const char *file, const char *text, size_t len, uint32_t line0);

#endif
