/* fold.c — integer constant folding with the language's wrap-around semantics. */
#include "ir.h"

int64_t
ir_wrap_int(int64_t v, int bits)
{
	if (bits >= 64)
		return v;
	if (bits == 1)
		return v & 1;
	uint64_t m = ((uint64_t)1 << bits) - 1;
	uint64_t u = (uint64_t)v & m;
	if (u >> (bits - 1))
		u |= ~m;
	return (int64_t)u;
}

bool
ir_fold_int(int code, int bits, int64_t a, int64_t b, int64_t *out)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	int64_t r;
	switch (code) {
	case IR_OP_ADD:
		r = (int64_t)(ua + ub);
		break;
	case IR_OP_SUB:
		r = (int64_t)(ua - ub);
		break;
	case IR_OP_MUL:
		r = (int64_t)(ua * ub);
		break;
	case IR_OP_DIV:
	case IR_OP_REM:
		if (b == 0 || (a == INT64_MIN && b == -1))
			return false;
		r = code == IR_OP_DIV ? a / b : a % b;
		break;
	case IR_OP_CDIV:
		if (b <= 0)
			return false;
		r = ir_floordiv(a, b) + (ir_mod(a, b) != 0);
		break;
	case IR_OP_MAX:
		r = a > b ? a : b;
		break;
	case IR_OP_MIN:
		r = a < b ? a : b;
		break;
	case IR_OP_AND:
		r = a & b;
		break;
	case IR_OP_OR:
		r = a | b;
		break;
	case IR_OP_XOR:
		r = a ^ b;
		break;
	case IR_OP_SHL:
		r = ub >= (uint64_t)bits ? 0 : (int64_t)(ua << ub);
		break;
	case IR_OP_SHR:
		r = ub >= (uint64_t)bits ? (a < 0 ? -1 : 0) : a >> ub;
		break;
	default:
		return false;
	}
	*out = ir_wrap_int(r, bits);
	return true;
}
