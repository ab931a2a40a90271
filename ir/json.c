/* json.c — the one JSON string writer: every JSON document ave writes (diagnostics, kernel
 * metadata, roles, host bundles) quotes its strings here, so a name with a quote, a backslash or
 * a control character stays one valid string. */
#include "ir.h"

void
ir_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", out);
		else if (ch == '\t')
			fputs("\\t", out);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}
