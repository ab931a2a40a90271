/* diagcheck.c — diagnostic sinks for the tools and the --verify-diagnostics checker.
 * An annotation is `expected-<severity> [@+N | @-N | @above | @below] {{text}}` in a comment;
 * it is met by a diagnostic of that severity on that line whose message contains `text`. */
#include <stdlib.h>
#include <string.h>

#include "diagcheck.h"

static void
record(DiagSink *s, IrSeverity sev, uint32_t line, const char *msg)
{
	if (s->nrec == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->rec = realloc(s->rec, sizeof *s->rec * (size_t)s->cap);
	}
	s->rec[s->nrec].sev = sev;
	s->rec[s->nrec].line = line;
	s->rec[s->nrec].msg = strdup(msg);
	s->nrec++;
}

void
diag_sink_handler(void *ud, const IrDiag *d)
{
	DiagSink *s = ud;
	if (s->collect) {
		record(s, d->sev, d->loc.line, d->msg);
		for (int i = 0; i < d->nnote; i++)
			record(s, d->note[i].sev, d->note[i].loc.line, d->note[i].msg);
		return;
	}
	if (s->json)
		ir_diag_print_json(s->c, d, stderr);
	else
		ir_diag_print_text(s->c, d, stderr, false);
}

void
diag_sink_reset(DiagSink *s)
{
	for (int i = 0; i < s->nrec; i++)
		free(s->rec[i].msg);
	s->nrec = 0;
}

void
diag_sink_summary(const DiagSink *s)
{
	if (!s->json && !s->collect)
		ir_diag_summary(s->c->nerrors, s->c->nwarnings, stderr);
}

typedef struct Expect {
	IrSeverity sev;
	uint32_t line;
	char *text;
	bool met;
	uint32_t at; /* line of the annotation itself */
} Expect;

static const char *const sev_names[] = {"error", "warning", "note", "remark"};

int
diag_verify(DiagSink *s, const char *file, const char *text, size_t len, uint32_t line0)
{
	Expect *ex = NULL;
	int nex = 0, cap = 0, bad = 0;
	uint32_t line = line0;
	const char *end = text + len;
	for (const char *p = text; p < end; line++) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		for (const char *q = p; q < eol;) {
			const char *hit = NULL;
			int sev = -1;
			for (int k = 0; k < 4; k++) {
				char pat[32];
				snprintf(pat, sizeof pat, "expected-%s", sev_names[k]);
				size_t pl = strlen(pat);
				for (const char *r = q; r + pl <= eol; r++)
					if (!memcmp(r, pat, pl) && (!hit || r < hit)) {
						hit = r;
						sev = k;
					}
			}
			if (!hit) {
				/* An annotation of an unknown kind is an error, not a silent pass. */
				const char *u = NULL;
				for (const char *r = q; r + 9 <= eol && !u; r++)
					if (!memcmp(r, "expected-", 9) && r + 9 < eol && r[9] >= 'a' && r[9] <= 'z')
						u = r;
				if (u) {
					int n = 0;
					while (u + 9 + n < eol && u[9 + n] >= 'a' && u[9 + n] <= 'z')
						n++;
					fprintf(stderr, "%s:%u: unknown annotation 'expected-%.*s' (want expected-error, -warning, -note or -remark)\n",
						file, line, n, u + 9);
					bad++;
				}
				break;
			}
			const char *r = hit + strlen("expected-") + strlen(sev_names[sev]);
			uint32_t target = line;
			while (r < eol && *r == ' ')
				r++;
			if (r < eol && *r == '@') {
				r++;
				if (!strncmp(r, "above", 5)) {
					target = line - 1;
					r += 5;
				} else if (!strncmp(r, "below", 5)) {
					target = line + 1;
					r += 5;
				} else if ((*r == '+' || *r == '-') && r + 1 < eol && r[1] >= '0' && r[1] <= '9') {
					char sign = *r++;
					char *after;
					long n = strtol(r, &after, 10);
					r = after;
					long t = n > 100000000 ? 0 : sign == '+' ? (long)line + n : (long)line - n;
					if (t < 1) {
						fprintf(stderr, "%s:%u: expected-%s annotation points at no line (@%c%ld)\n",
							file, line, sev_names[sev], sign, n);
						bad++;
						q = r;
						continue;
					}
					target = (uint32_t)t;
				} else {
					fprintf(stderr, "%s:%u: malformed expected-%s annotation (want @+N, @-N, @above or @below)\n",
						file, line, sev_names[sev]);
					bad++;
					q = r;
					continue;
				}
			}
			while (r < eol && *r == ' ')
				r++;
			const char *open = r + 1 < eol && r[0] == '{' && r[1] == '{' ? r + 2 : NULL;
			const char *close = NULL;
			if (open)
				for (const char *t = open; t + 1 < eol; t++)
					if (t[0] == '}' && t[1] == '}') {
						close = t;
						break;
					}
			if (!open || !close) {
				fprintf(stderr, "%s:%u: malformed expected-%s annotation (want {{...}})\n", file,
					line, sev_names[sev]);
				bad++;
				q = hit + 1;
				continue;
			}
			if (nex == cap) {
				cap = cap ? cap * 2 : 8;
				ex = realloc(ex, sizeof *ex * (size_t)cap);
			}
			ex[nex].sev = (IrSeverity)sev;
			ex[nex].line = target;
			ex[nex].text = strndup(open, (size_t)(close - open));
			ex[nex].met = false;
			ex[nex].at = line;
			nex++;
			q = close + 2;
		}
		p = eol + 1;
	}
	for (int i = 0; i < s->nrec; i++) {
		DiagRecord *d = &s->rec[i];
		bool ok = false;
		for (int k = 0; k < nex && !ok; k++) {
			if (ex[k].met || ex[k].sev != d->sev || ex[k].line != d->line ||
			    !strstr(d->msg, ex[k].text))
				continue;
			ex[k].met = true;
			ok = true;
		}
		/* Notes attached to an error need no annotation unless some note is expected. */
		if (!ok && d->sev == IR_SEV_NOTE) {
			bool any_note = false;
			for (int k = 0; k < nex; k++)
				any_note |= ex[k].sev == IR_SEV_NOTE;
			if (!any_note)
				continue;
		}
		if (!ok) {
			fprintf(stderr, "%s:%u: unexpected %s: %s\n", file, d->line, sev_names[d->sev], d->msg);
			bad++;
		}
	}
	for (int k = 0; k < nex; k++) {
		if (!ex[k].met) {
			fprintf(stderr, "%s:%u: expected %s on line %u was not produced: %s\n", file, ex[k].at,
				sev_names[ex[k].sev], ex[k].line, ex[k].text);
			bad++;
		}
		free(ex[k].text);
	}
	free(ex);
	return bad;
}

/* The options a usage text names: words that start with '-' after a blank, '[' or '|'. */
static int
usage_options(const char *usage, char names[][40], int max)
{
	int n = 0;
	for (const char *p = usage; *p && n < max; p++) {
		if (*p != '-' || (p > usage && !strchr(" \t\n[|(", p[-1])))
			continue;
		size_t k = 1;
		while (p[k] == '-' || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') ||
		       (p[k] >= '0' && p[k] <= '9'))
			k++;
		if (k < 2 || k >= 40 || p[1] == ' ')
			continue;
		snprintf(names[n], 40, "%.*s", (int)k, p);
		bool dup = false;
		for (int i = 0; i < n && !dup; i++)
			dup = !strcmp(names[i], names[n]);
		n += !dup;
		p += k - 1;
	}
	return n;
}

void
tool_unknown_option(const char *tool, const char *arg, const char *usage)
{
	char names[96][40];
	const char *cands[96];
	int n = usage_options(usage, names, 96);
	for (int i = 0; i < n; i++)
		cands[i] = names[i];
	size_t len = strcspn(arg, "=");
	for (int i = 0; i < n; i++)
		if (strlen(cands[i]) == len && !strncmp(cands[i], arg, len)) {
			fprintf(stderr, "%s: bad option '%s' (see '%s --help')\n", tool, arg, tool);
			return;
		}
	const char *near = ir_closest(arg, len, cands, n);
	if (near)
		fprintf(stderr, "%s: unknown option '%s'; did you mean '%s%s'?\n", tool, arg, near,
			arg + len);
	else
		fprintf(stderr, "%s: unknown option '%s' (see '%s --help')\n", tool, arg, tool);
}

bool
tool_closest_word(const char *s, const char *list, char out[32])
{
	char words[16][32];
	const char *cands[16];
	int n = 0;
	for (const char *p = list; *p && n < 16;) {
		size_t k = strcspn(p, "|");
		snprintf(words[n], sizeof words[n], "%.*s", (int)k, p);
		cands[n] = words[n];
		n++;
		p += k;
		p += *p == '|';
	}
	const char *near = ir_closest(s, strlen(s), cands, n);
	if (near)
		snprintf(out, 32, "%s", near);
	return near != NULL;
}

const TargetInfo *
tool_target(const char *tool, const char *name, unsigned vendors)
{
	const TargetInfo *t = target_find(name);
	if (t && (vendors & (1u << t->vendor)))
		return t;
	char names[256];
	const char *near = target_closest(name, vendors);
	if (near)
		fprintf(stderr, "%s: unknown target '%s'; did you mean '%s'? (%s)\n", tool, name, near,
			target_names(names, sizeof names, vendors, ", "));
	else
		fprintf(stderr, "%s: unknown target '%s' (%s)\n", tool, name,
			target_names(names, sizeof names, vendors, ", "));
	return NULL;
}
