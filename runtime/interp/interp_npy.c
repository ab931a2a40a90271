/* interp_npy.c — NumPy .npy files (format versions 1.0, 2.0 and 3.0; little-endian, C order):
 * reading with the header's descriptor parsed, converting to a kernel argument's element type,
 * and writing. bf16 and f8 are one-field structured dtypes over their bit patterns. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

static bool
errf(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return false;
}

const char *
interp_npy_descr(const IrType *e)
{
	if (e->kind == IR_TY_INDEX)
		return "<i8";
	if (e->kind == IR_TY_INT) {
		switch (e->bits) {
		case 1:
			return "|b1";
		case 8:
			return "|i1";
		case 16:
			return "<i2";
		case 32:
			return "<i4";
		default:
			return "<i8";
		}
	}
	switch (e->fk) {
	case IR_F16:
		return "<f2";
	case IR_BF16:
		return "[('bf16', '<u2')]";
	case IR_F32:
		return "<f4";
	case IR_F64:
		return "<f8";
	case IR_F8E4M3:
		return "[('f8e4m3', '|u1')]";
	default:
		return "[('f8e5m2', '|u1')]";
	}
}

static const char *
skip(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

/* '<f4' (with the quote at p) -> kind and size; returns the char after the closing quote */
static const char *
simple_descr(const char *p, char *kind, int *size, char *err, size_t n)
{
	char q = *p;
	if (q != '\'' && q != '"')
		return errf(err, n, "cannot read the dtype descriptor"), NULL;
	p++;
	char endian = *p++;
	if (endian != '<' && endian != '|' && endian != '=' && endian != '>')
		return errf(err, n, "cannot read the dtype descriptor"), NULL;
	*kind = *p++;
	char *e;
	long sz = strtol(p, &e, 10);
	if (e == p || *e != q || sz < 1 || sz > 16)
		return errf(err, n, "unsupported dtype descriptor"), NULL;
	if (endian == '>' && sz > 1)
		return errf(err, n, "big-endian data is not supported"), NULL;
	if (!strchr("fiubV", *kind))
		return errf(err, n, "unsupported dtype kind '%c'", *kind), NULL;
	*size = (int)sz;
	return e + 1;
}

static bool
parse_header(const char *h, InterpNpy *a, char *err, size_t n)
{
	const char *d = strstr(h, "'descr'");
	const char *f = strstr(h, "'fortran_order'");
	const char *s = strstr(h, "'shape'");
	if (!d || !f || !s)
		return errf(err, n, "the header lacks descr, fortran_order or shape");
	const char *p = skip(d + 7);
	if (*p++ != ':')
		return errf(err, n, "malformed header");
	p = skip(p);
	const char *start = p;
	a->field[0] = 0;
	if (*p == '[') { /* [('bf16', '<u2')] */
		p = skip(p + 1);
		if (*p++ != '(')
			return errf(err, n, "unsupported structured dtype");
		p = skip(p);
		char q = *p++;
		const char *fe = strchr(p, q);
		if (!fe || fe - p >= (long)sizeof a->field)
			return errf(err, n, "unsupported structured dtype");
		memcpy(a->field, p, (size_t)(fe - p));
		a->field[fe - p] = 0;
		p = skip(fe + 1);
		if (*p++ != ',')
			return errf(err, n, "unsupported structured dtype");
		p = simple_descr(skip(p), &a->kind, &a->size, err, n);
		if (!p)
			return false;
		p = skip(p);
		if (*p++ != ')')
			return errf(err, n,
			            "only one-field structured dtypes (with no shape) are "
			            "supported");
		p = skip(p);
		if (*p == ',')
			p = skip(p + 1);
		if (*p++ != ']')
			return errf(err, n, "only one-field structured dtypes are supported");
	} else {
		p = simple_descr(p, &a->kind, &a->size, err, n);
		if (!p)
			return false;
	}
	const char *dend = p;
	if (*start != '[') { /* '<f4' -> <f4 */
		start++;
		dend--;
	}
	size_t dl = (size_t)(dend - start) < sizeof a->descr - 1 ? (size_t)(dend - start)
	                                                         : sizeof a->descr - 1;
	memcpy(a->descr, start, dl);
	a->descr[dl] = 0;
	p = skip(f + 15);
	if (*p++ != ':')
		return errf(err, n, "malformed header");
	p = skip(p);
	if (!strncmp(p, "True", 4))
		return errf(err, n, "Fortran-order arrays are not supported (save a C-order copy)");
	p = skip(s + 7);
	if (*p++ != ':')
		return errf(err, n, "malformed header");
	p = skip(p);
	if (*p++ != '(')
		return errf(err, n, "malformed shape");
	a->rank = 0;
	a->nelem = 1;
	for (;;) {
		p = skip(p);
		if (*p == ')')
			break;
		char *e;
		long long v = strtoll(p, &e, 10);
		if (e == p || v < 0 || a->rank == IR_MAX_RANK)
			return errf(err, n, "malformed shape");
		if (v && a->nelem > ((int64_t)1 << 40) / v)
			return errf(err, n, "array too large");
		a->dims[a->rank++] = v;
		a->nelem *= v;
		p = skip(e);
		if (*p == ',')
			p++;
	}
	return true;
}

bool
interp_npy_read(const char *path, InterpNpy *a, char *err, size_t n)
{
	memset(a, 0, sizeof *a);
	FILE *f = fopen(path, "rb");
	if (!f)
		return errf(err, n, "cannot open '%s'", path);
	unsigned char pre[12];
	bool ok = false;
	char *hdr = NULL;
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
		errf(err, n, "'%s' is not a .npy file", path);
		goto out;
	}
	uint32_t hl;
	if (pre[6] == 1) {
		hl = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
	} else if (pre[6] == 2 || pre[6] == 3) {
		if (fread(pre + 10, 1, 2, f) != 2) {
			errf(err, n, "'%s' is truncated", path);
			goto out;
		}
		hl = (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 |
		     (uint32_t)pre[11] << 24;
	} else {
		errf(err, n, "'%s': unsupported .npy version %d.%d", path, pre[6], pre[7]);
		goto out;
	}
	if (hl > (1u << 24)) {
		errf(err, n, "'%s': header too large", path);
		goto out;
	}
	hdr = malloc(hl + 1);
	if (!hdr || fread(hdr, 1, hl, f) != hl) {
		errf(err, n, "'%s' is truncated", path);
		goto out;
	}
	hdr[hl] = 0;
	char sub[200];
	if (!parse_header(hdr, a, sub, sizeof sub)) {
		errf(err, n, "'%s': %s", path, sub);
		goto out;
	}
	size_t bytes = (size_t)a->nelem * (size_t)a->size;
	a->data = malloc(bytes ? bytes : 1);
	if (!a->data || fread(a->data, 1, bytes, f) != bytes) {
		errf(err, n, "'%s' is truncated: expected %zu bytes of data", path, bytes);
		free(a->data);
		a->data = NULL;
		goto out;
	}
	ok = true;
out:
	free(hdr);
	fclose(f);
	return ok;
}

/* The float type an array's dtype stands for, or IR_FK_COUNT. */
static IrFloatKind
npy_float(const InterpNpy *a)
{
	if (a->field[0]) {
		if (!strcmp(a->field, "bf16") && a->size == 2)
			return IR_BF16;
		if (!strcmp(a->field, "f8e4m3") && a->size == 1)
			return IR_F8E4M3;
		if (!strcmp(a->field, "f8e5m2") && a->size == 1)
			return IR_F8E5M2;
		return IR_FK_COUNT;
	}
	if (a->kind != 'f')
		return IR_FK_COUNT;
	return a->size == 2 ? IR_F16 : a->size == 4 ? IR_F32 : a->size == 8 ? IR_F64 : IR_FK_COUNT;
}

bool
interp_npy_convert(const InterpNpy *a, const IrType *e, void *out, char *err, size_t n)
{
	size_t esz = interp_elem_size(e);
	size_t bytes = (size_t)a->nelem * esz;
	IrFloatKind have = npy_float(a);
	if (e->kind == IR_TY_FLOAT) {
		bool narrow =
		    e->fk == IR_BF16 || e->fk == IR_F16 || e->fk == IR_F8E4M3 || e->fk == IR_F8E5M2;
		bool bits = narrow && !a->field[0] && (a->kind == 'u' || a->kind == 'V') &&
		            (size_t)a->size == esz;
		if (have == e->fk || bits) {
			memcpy(out, a->data, bytes);
			return true;
		}
		if (have != IR_FK_COUNT) { /* another float type: round to nearest even */
			IrType tmp = {.kind = IR_TY_FLOAT,
			              .fk = have,
			              .bits = have == IR_F64                      ? 64
			                      : have == IR_F32                    ? 32
			                      : have == IR_F16 || have == IR_BF16 ? 16
			                                                          : 8};
			for (int64_t i = 0; i < a->nelem; i++)
				interp_mem_set_f64(e, out, i, interp_mem_get_f64(&tmp, a->data, i));
			return true;
		}
		return errf(err, n, "holds '%s' data, which does not convert to '%s'", a->descr,
		            ir_float_name(e->fk));
	}
	int bits = e->kind == IR_TY_INDEX ? 64 : e->bits;
	if (bits == 1 && (a->kind == 'b' || a->kind == 'u' || a->kind == 'i') && a->size == 1 &&
	    !a->field[0]) {
		const unsigned char *s = a->data;
		unsigned char *d = out;
		for (int64_t i = 0; i < a->nelem; i++)
			d[i] = s[i] != 0;
		return true;
	}
	if (bits > 1 && (a->kind == 'i' || a->kind == 'u') && (size_t)a->size == esz &&
	    !a->field[0]) {
		memcpy(out, a->data, bytes);
		return true;
	}
	if (bits == 1)
		return errf(err, n, "holds '%s' data; an 'i1' argument takes '|b1'", a->descr);
	return errf(err, n, "holds '%s' data; an 'i%d' argument takes %d-byte integers", a->descr,
	            bits, (int)esz);
}

bool
interp_npy_write(const char *path, const IrType *elem, int rank, const int64_t *dims,
                 const void *data, char *err, size_t n)
{
	char shape[256] = "(";
	int64_t nel = 1;
	for (int d = 0; d < rank; d++) {
		size_t len = strlen(shape);
		snprintf(shape + len, sizeof shape - len, "%lld,%s", (long long)dims[d],
		         d + 1 < rank ? " " : "");
		nel *= dims[d];
	}
	strcat(shape, ")");
	char dict[512];
	const char *ds = interp_npy_descr(elem);
	const char *q =
	    ds[0] == '[' ? "" : "'"; /* a structured descriptor is a list, not a string */
	int dl =
	    snprintf(dict, sizeof dict, "{'descr': %s%s%s, 'fortran_order': False, 'shape': %s, }",
	             q, ds, q, shape);
	/* magic (6) + version (2) + length (2) + header, padded with spaces to 64 bytes, '\n' */
	int total = 10 + dl + 1;
	int pad = (64 - total % 64) % 64;
	int hl = dl + pad + 1;
	FILE *f = fopen(path, "wb");
	if (!f)
		return errf(err, n, "cannot write '%s'", path);
	unsigned char pre[10] = {0x93,
	                         'N',
	                         'U',
	                         'M',
	                         'P',
	                         'Y',
	                         1,
	                         0,
	                         (unsigned char)(hl & 0xFF),
	                         (unsigned char)(hl >> 8)};
	fwrite(pre, 1, 10, f);
	fwrite(dict, 1, (size_t)dl, f);
	for (int i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	size_t bytes = (size_t)nel * interp_elem_size(elem);
	bool ok = fwrite(data, 1, bytes, f) == bytes;
	ok = (fclose(f) == 0) && ok;
	if (!ok)
		return errf(err, n, "error writing '%s'", path);
	return true;
}
