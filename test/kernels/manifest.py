"""The kernel library's manifest: for each kernel of kernels/, how to build inputs, launch it (on
the host interpreter, or a GPU with run_suite.py --run-target), and its NumPy reference; the shapes it is run on (ragged: not multiples of
the kernel's tiles); the tolerance per output dtype; and the diagnostics expected per target.

An entry's `run(k, rng, **shape)` launches the compiled kernel `k` (an `ave.Kernel`, or an
`ave.Module` when the file holds several kernels) and returns a list of
(output name, result, reference, (rtol, atol)). `xfail` maps a target (or "host") to
(a substring of the expected error message, the reason); run_suite.py fails the kernel if that
target compiles, or fails with another message.
"""
import numpy as np

import ave

# Tolerances by output dtype, for results computed in f32 and rounded once to the output type,
# against a float64 reference computed from the same (rounded) inputs.
TOL = {
    "f32": (2e-5, 2e-6),
    "f16": (2e-3, 1e-3),
    "bf16": (1.6e-2, 1e-2),
}


def cdiv(a, b):
    return (a + b - 1) // b


def bf16(x):
    """float32 values rounded to bf16: (bits for the kernel, exact float64 values)."""
    bits = ave.bf16_bits(np.asarray(x, np.float32))
    return bits, ave.bf16_to_float32(bits).astype(np.float64)


def unwritten(shape, dtype):
    """An output array filled with NaN (for bf16 bits, a NaN pattern), so that an element the
    kernel fails to write never matches its reference."""
    if dtype == np.uint16:
        return np.full(shape, 0x7FC1, np.uint16)
    return np.full(shape, np.nan, dtype)


def from_bf16(bits):
    return ave.bf16_to_float32(bits).astype(np.float64)


def f16(x):
    h = np.asarray(x, np.float32).astype(np.float16)
    return h, h.astype(np.float64)


def _e4m3_table():
    """The 256 f8e4m3 (OCP E4M3FN) values by bit pattern; 0x7f and 0xff are NaN."""
    v = np.zeros(256)
    for b in range(256):
        s = -1.0 if b & 0x80 else 1.0
        e = (b >> 3) & 0xF
        m = b & 7
        if e == 15 and m == 7:
            v[b] = np.nan
        elif e == 0:
            v[b] = s * m / 8.0 * 2.0 ** -6
        else:
            v[b] = s * (1 + m / 8.0) * 2.0 ** (e - 7)
    return v


E4M3 = _e4m3_table()


def f8e4m3(x):
    """Values rounded to the nearest f8e4m3 (saturating): (bits as uint8, float64 values)."""
    x = np.asarray(x, np.float64)
    finite = np.where(np.isnan(E4M3), np.inf, E4M3)
    order = np.argsort(finite, kind="stable")
    vals = finite[order]
    keep = np.isfinite(vals)
    vals, order = vals[keep], order[keep]
    # Nearest value; ties do not occur for continuous random inputs.
    idx = np.clip(np.searchsorted(vals, x), 1, len(vals) - 1)
    lo, hi = vals[idx - 1], vals[idx]
    pick = np.where(np.abs(x - lo) <= np.abs(hi - x), idx - 1, idx)
    bits = order[pick].astype(np.uint8)
    return bits, E4M3[bits]


class Entry:
    def __init__(self, name, file, what, dtypes, shapes, run, xfail=None, schedules=1):
        self.name, self.file, self.what, self.dtypes = name, file, what, dtypes
        self.shapes, self.run, self.xfail = shapes, run, xfail or {}
        self.schedules = schedules


ENTRIES = []


def entry(name, what, dtypes, shapes, file=None, xfail=None, schedules=1):
    """Registers a kernel: `run` is the decorated function; `schedules` > 1 runs each shape
    under that many interleavings of the kernel's warp roles."""
    def deco(fn):
        ENTRIES.append(Entry(name, file or name + ".ave", what, dtypes, shapes, fn, xfail,
                             schedules))
        return fn
    return deco


# ---------------------------------------------------------------------------------------------
# Elementwise: one 32x128 tile per CTA.

EW_SHAPES = [dict(M=77, N=45), dict(M=130, N=300)]


def ew_grid(M, N):
    return (cdiv(M, 32), cdiv(N, 128))


def unary_f32(fn):
    def run(k, rng, M, N, extra=()):
        x = (rng.standard_normal((M, N)) * 3).astype(np.float32)
        y = np.full((M, N), np.nan, np.float32)
        k[ew_grid(M, N)](x, y, *extra)
        return [("Y", y, fn(x.astype(np.float64)), TOL["f32"])]
    return run


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


entry("relu", "max(x, 0)", "f32", EW_SHAPES)(unary_f32(lambda x: np.maximum(x, 0)))
entry("gelu_tanh", "GELU, tanh approximation", "f32", EW_SHAPES)(unary_f32(_gelu_tanh))
entry("sigmoid", "1 / (1 + exp(-x))", "f32", EW_SHAPES)(unary_f32(_sigmoid))
entry("softplus", "log(1 + exp(x)), stable form", "f32", EW_SHAPES)(
    unary_f32(lambda x: np.logaddexp(0, x)))


@entry("clamp", "min(max(x, lo), hi)", "f32", EW_SHAPES)
def _(k, rng, M, N):
    return unary_f32(lambda x: np.clip(x, -1.25, 2.5))(k, rng, M, N, (np.float32(-1.25), 2.5))


@entry("leaky_relu", "x > 0 ? x : alpha x", "f16", EW_SHAPES)
def _(k, rng, M, N):
    x, xr = f16(rng.standard_normal((M, N)) * 3)
    y = unwritten((M, N), np.float16)
    k[ew_grid(M, N)](x, y, 0.1)
    return [("Y", y, np.where(xr > 0, xr, 0.1 * xr), TOL["f16"])]


@entry("scale_bias", "alpha x + beta (scalars)", "f16", EW_SHAPES)
def _(k, rng, M, N):
    x, xr = f16(rng.standard_normal((M, N)))
    y = unwritten((M, N), np.float16)
    k[ew_grid(M, N)](x, y, 1.5, -0.25)
    return [("Y", y, 1.5 * xr - 0.25, TOL["f16"])]


@entry("silu", "x sigmoid(x)", "bf16", EW_SHAPES)
def _(k, rng, M, N):
    x, xr = bf16(rng.standard_normal((M, N)) * 3)
    y = unwritten((M, N), np.uint16)
    k[ew_grid(M, N)](x, y)
    return [("Y", from_bf16(y), xr * _sigmoid(xr), TOL["bf16"])]


@entry("swiglu", "silu(g) u (SwiGLU gate)", "bf16", EW_SHAPES)
def _(k, rng, M, N):
    g, gr = bf16(rng.standard_normal((M, N)) * 2)
    u, ur = bf16(rng.standard_normal((M, N)))
    y = unwritten((M, N), np.uint16)
    k[ew_grid(M, N)](g, u, y)
    return [("Y", from_bf16(y), gr * _sigmoid(gr) * ur, TOL["bf16"])]


@entry("add_bias", "x + b, b (1 x N) broadcast over rows", "f32", EW_SHAPES)
def _(k, rng, M, N):
    x = rng.standard_normal((M, N)).astype(np.float32)
    b = rng.standard_normal((1, N)).astype(np.float32)
    y = unwritten((M, N), np.float32)
    k[ew_grid(M, N)](x, b, y)
    return [("Y", y, x.astype(np.float64) + b, TOL["f32"])]


@entry("mul_col", "x s, s (M x 1) broadcast over columns", "f32", EW_SHAPES)
def _(k, rng, M, N):
    x = rng.standard_normal((M, N)).astype(np.float32)
    s = rng.standard_normal((M, 1)).astype(np.float32)
    y = unwritten((M, N), np.float32)
    k[ew_grid(M, N)](x, s, y)
    return [("Y", y, x.astype(np.float64) * s, TOL["f32"])]


# ---------------------------------------------------------------------------------------------
# Reductions and normalizations over rows: 16 rows per CTA, 16x256 blocks along the row.

ROW_SHAPES = [dict(M=77, N=45), dict(M=37, N=600)]


def rows_grid(M):
    return (cdiv(M, 16),)


@entry("row_sum", "sum over each row", "f32", ROW_SHAPES)
def _(k, rng, M, N):
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = unwritten((M, 1), np.float32)
    k[rows_grid(M)](x, y, N)
    return [("Y", y, x.astype(np.float64).sum(1, keepdims=True), (1e-5, 1e-5))]


@entry("row_max", "max over each row", "f16", ROW_SHAPES)
def _(k, rng, M, N):
    x, xr = f16(rng.standard_normal((M, N)) * 4 - 6)
    y = unwritten((M, 1), np.float16)
    k[rows_grid(M)](x, y, N)
    return [("Y", y, xr.max(1, keepdims=True), (0, 0))]


@entry("row_mean", "mean over each row", "bf16 -> f32", ROW_SHAPES)
def _(k, rng, M, N):
    x, xr = bf16(rng.standard_normal((M, N)) + 0.5)
    y = unwritten((M, 1), np.float32)
    k[rows_grid(M)](x, y, N)
    return [("Y", y, xr.mean(1, keepdims=True), (1e-5, 1e-6))]


@entry("row_argmax", "index of the first maximum of each row", "f32 -> i32", ROW_SHAPES)
def _(k, rng, M, N):
    # Coarse values so that ties occur and the first-index rule is exercised.
    x = np.round(rng.standard_normal((M, N)) * 2).astype(np.float32)
    cols = np.arange(N, dtype=np.int32).reshape(1, N)
    y = np.full((M, 1), -7, np.int32)
    k[rows_grid(M)](x, cols, y, N)
    return [("Y", y, np.argmax(x, 1).reshape(M, 1), (0, 0))]


@entry("col_sum", "sum over each column", "f32", [dict(M=77, N=45), dict(M=150, N=300)])
def _(k, rng, M, N):
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = unwritten((1, N), np.float32)
    k[(cdiv(N, 128),)](x, y, M)
    return [("Y", y, x.astype(np.float64).sum(0, keepdims=True), (1e-5, 1e-5))]


@entry("l2norm", "x / max(norm2(x), eps) per row", "f32", ROW_SHAPES)
def _(k, rng, M, N):
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = unwritten((M, N), np.float32)
    k[rows_grid(M)](x, y, N, 1e-12)
    xr = x.astype(np.float64)
    ref = xr / np.maximum(np.sqrt((xr * xr).sum(1, keepdims=True)), 1e-12)
    return [("Y", y, ref, TOL["f32"])]


def _softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _lse(x):
    m = x.max(1, keepdims=True)
    return m + np.log(np.exp(x - m).sum(1, keepdims=True))


@entry("softmax", "softmax over each row (online max/sum, two passes)", "f32", ROW_SHAPES)
def _(k, rng, M, N):
    x = (rng.standard_normal((M, N)) * 4).astype(np.float32)
    y = unwritten((M, N), np.float32)
    k[rows_grid(M)](x, y, N)
    return [("Y", y, _softmax(x.astype(np.float64)), (1e-5, 1e-7))]


@entry("log_softmax", "x - logsumexp(x) per row", "f32", ROW_SHAPES)
def _(k, rng, M, N):
    x = (rng.standard_normal((M, N)) * 4).astype(np.float32)
    y = unwritten((M, N), np.float32)
    k[rows_grid(M)](x, y, N)
    xr = x.astype(np.float64)
    return [("Y", y, xr - _lse(xr), (1e-5, 2e-5))]


@entry("cross_entropy", "logsumexp(x) - x[target] per row (one pass)", "f32, i32 targets",
       [dict(M=77, N=45), dict(M=37, N=1000)])
def _(k, rng, M, N):
    x = (rng.standard_normal((M, N)) * 3).astype(np.float32)
    t = rng.integers(0, N, (M, 1)).astype(np.int32)
    cols = np.arange(N, dtype=np.int32).reshape(1, N)
    loss = unwritten((M, 1), np.float32)
    k[rows_grid(M)](x, t, cols, loss, N)
    xr = x.astype(np.float64)
    ref = _lse(xr) - np.take_along_axis(xr, t.astype(np.int64), 1)
    return [("L", loss, ref, (1e-5, 2e-5))]


@entry("layernorm", "(x - mean) / sqrt(var + eps) w + b per row", "f32", ROW_SHAPES)
def _(k, rng, M, N):
    x = (rng.standard_normal((M, N)) * 2 + 1).astype(np.float32)
    w = rng.standard_normal((1, N)).astype(np.float32)
    b = rng.standard_normal((1, N)).astype(np.float32)
    y = unwritten((M, N), np.float32)
    k[rows_grid(M)](x, w, b, y, N, 1e-5)
    xr = x.astype(np.float64)
    mu = xr.mean(1, keepdims=True)
    var = ((xr - mu) ** 2).mean(1, keepdims=True)
    return [("Y", y, (xr - mu) / np.sqrt(var + 1e-5) * w + b, (1e-4, 1e-5))]


@entry("rmsnorm", "x / sqrt(mean(x^2) + eps) w per row", "bf16", ROW_SHAPES)
def _(k, rng, M, N):
    x, xr = bf16(rng.standard_normal((M, N)))
    w, wr = bf16(rng.standard_normal((1, N)))
    y = unwritten((M, N), np.uint16)
    k[rows_grid(M)](x, w, y, N, 1e-6)
    ref = xr / np.sqrt((xr * xr).mean(1, keepdims=True) + 1e-6) * wr
    return [("Y", from_bf16(y), ref, TOL["bf16"])]


@entry("rotary", "rotary position embedding, rotate-half form, head dim 64", "bf16 (f32 cos/sin)",
       [dict(T=77, H=3), dict(T=45, H=5)])
def _(k, rng, T, H):
    x, xr = bf16(rng.standard_normal((T, H * 64)))
    inv = 1.0 / 10000 ** (np.arange(32) / 32)
    ang = np.arange(T)[:, None] * inv[None, :]
    c, s = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    y = unwritten((T, H * 64), np.uint16)
    k[(cdiv(T, 32), H)](x, c, s, y)
    xh = xr.reshape(T, H, 64)
    x1, x2 = xh[..., :32], xh[..., 32:]
    cr, sr = c.astype(np.float64)[:, None, :], s.astype(np.float64)[:, None, :]
    ref = np.concatenate([x1 * cr - x2 * sr, x2 * cr + x1 * sr], -1).reshape(T, H * 64)
    return [("Y", from_bf16(y), ref, TOL["bf16"])]


@entry("transpose", "x^T through registers (ave.trans)", "f32",
       [dict(M=77, N=45), dict(M=130, N=200)])
def _(k, rng, M, N):
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = unwritten((N, M), np.float32)
    k[(cdiv(M, 64), cdiv(N, 64))](x, y)
    return [("Y", y, x.T, (0, 0))]


# ---------------------------------------------------------------------------------------------
# Matrix multiplication: 128x128 output tiles, K steps of 64, f32 accumulation.

MM_SHAPES = [dict(M=77, N=45, K=70), dict(M=130, N=200, K=150)]


def mm_grid(M, N, bm=128, bn=128):
    return (cdiv(M, bm), cdiv(N, bn))


def mm_tol(K):
    # Products of rounded inputs are exact in f32; the sum's rounding grows with K.
    return (1e-5, 1e-5 * np.sqrt(K))


@entry("matmul_f16", "A B (row-major B)", "f16 -> f32", MM_SHAPES)
def _(k, rng, M, N, K):
    a, ar = f16(rng.standard_normal((M, K)))
    b, br = f16(rng.standard_normal((K, N)))
    c = unwritten((M, N), np.float32)
    k[mm_grid(M, N)](a, b, c, K)
    return [("C", c, ar @ br, mm_tol(K))]


@entry("matmul_bt_bf16", "A B^T", "bf16, f32 accumulate", MM_SHAPES)
def _(k, rng, M, N, K):
    a, ar = bf16(rng.standard_normal((M, K)))
    b, br = bf16(rng.standard_normal((N, K)))
    c = unwritten((M, N), np.uint16)
    k[mm_grid(M, N)](a, b, c, K)
    return [("C", from_bf16(c), ar @ br.T, TOL["bf16"])]


@entry("gemm_bias_relu", "relu(A W^T + b), fused epilogue", "bf16, f32 bias", MM_SHAPES)
def _(k, rng, M, N, K):
    a, ar = bf16(rng.standard_normal((M, K)))
    w, wr = bf16(rng.standard_normal((N, K)) / np.sqrt(K))
    bias = rng.standard_normal((1, N)).astype(np.float32)
    y = unwritten((M, N), np.uint16)
    k[mm_grid(M, N)](a, w, bias, y, K)
    return [("Y", from_bf16(y), np.maximum(ar @ wr.T + bias, 0), TOL["bf16"])]


@entry("gemm_residual", "alpha A W^T + beta R, fused epilogue", "f16", MM_SHAPES)
def _(k, rng, M, N, K):
    a, ar = f16(rng.standard_normal((M, K)))
    w, wr = f16(rng.standard_normal((N, K)) / np.sqrt(K))
    r, rr = f16(rng.standard_normal((M, N)))
    y = unwritten((M, N), np.float16)
    k[mm_grid(M, N)](a, w, r, y, K, 0.5, 2.0)
    return [("Y", y, 0.5 * (ar @ wr.T) + 2.0 * rr, (4e-3, 2e-3))]


@entry("gemm_swiglu", "silu(A Wg^T) (A Wu^T), two fused GEMMs", "bf16", MM_SHAPES)
def _(k, rng, M, N, K):
    a, ar = bf16(rng.standard_normal((M, K)))
    wg, wgr = bf16(rng.standard_normal((N, K)) / np.sqrt(K))
    wu, wur = bf16(rng.standard_normal((N, K)) / np.sqrt(K))
    y = unwritten((M, N), np.uint16)
    k[mm_grid(M, N, 128, 64)](a, wg, wu, y, K)
    g = ar @ wgr.T
    return [("Y", from_bf16(y), g * _sigmoid(g) * (ar @ wur.T), TOL["bf16"])]


@entry("gemm_splitk", "A B^T with K split S ways (partial + reduce kernels)", "bf16 -> f32",
       [dict(M=77, N=45, K=300, S=3), dict(M=130, N=200, K=520, S=4)])
def _(mod, rng, M, N, K, S):
    a, ar = bf16(rng.standard_normal((M, K)))
    b, br = bf16(rng.standard_normal((N, K)))
    nmt = cdiv(M, 128)
    kps = cdiv(cdiv(K, 64), S)
    p = np.full((S * nmt * 128, N), np.nan, np.float32)
    c = unwritten((M, N), np.float32)
    mod["splitk_partial"][(S * nmt, cdiv(N, 128))](a, b, p, K, kps, nmt)
    mod["splitk_reduce"][(cdiv(M, 64), cdiv(N, 128))](p, c, S, nmt)
    return [("C", c, ar @ br.T, mm_tol(K))]


@entry("bmm_f32", "batched A[b] B[b], FMA outer products (3-D tiles)", "f32",
       [dict(Bt=3, M=77, N=45, K=20), dict(Bt=2, M=70, N=130, K=33)])
def _(k, rng, Bt, M, N, K):
    a = rng.standard_normal((Bt, M, K)).astype(np.float32)
    b = rng.standard_normal((Bt, K, N)).astype(np.float32)
    c = unwritten((Bt, M, N), np.float32)
    k[(cdiv(M, 64), cdiv(N, 64), Bt)](a, b, c, K)
    return [("C", c, np.matmul(a.astype(np.float64), b), mm_tol(K))]


@entry("gemm_f8_scaled", "sa sb (A B^T), per-tensor scales", "f8e4m3 -> bf16", MM_SHAPES)
def _(k, rng, M, N, K):
    a, ar = f8e4m3(rng.standard_normal((M, K)) * 8)
    b, br = f8e4m3(rng.standard_normal((N, K)) * 8)
    sa, sb = 0.125, 0.0625
    y = unwritten((M, N), np.uint16)
    k[mm_grid(M, N)](a, b, y, K, sa, sb)
    return [("Y", from_bf16(y), sa * sb * (ar @ br.T), TOL["bf16"])]


@entry("gemm_persistent", "A B^T, persistent (132 CTAs walk the tiles)", "bf16 -> f32",
       [dict(M=77, N=45, K=70), dict(M=300, N=520, K=64)])
def _(k, rng, M, N, K):
    a, ar = bf16(rng.standard_normal((M, K)))
    b, br = bf16(rng.standard_normal((N, K)))
    c = unwritten((M, N), np.float32)
    k[mm_grid(M, N)](a, b, c, K)
    return [("C", c, ar @ br.T, mm_tol(K))]


@entry("moe_grouped_gemm", "per-expert A W_e^T over expert-sorted tokens (4 experts)",
       "bf16, f32 accumulate", [dict(counts=(20, 0, 40, 17), N=45, K=70),
                                dict(counts=(100, 57, 90, 53), N=130, K=64)])
def _(k, rng, counts, N, K):
    T = sum(counts)
    offs = np.concatenate([[0], np.cumsum(counts)])
    eid = np.repeat(np.arange(4), counts).astype(np.int32).reshape(T, 1)
    a, ar = bf16(rng.standard_normal((T, K)))
    w, wr = bf16(rng.standard_normal((4 * N, K)) / np.sqrt(K))
    y = unwritten((T, N), np.uint16)
    k[mm_grid(T, N)](a, w, eid, y, K, N, T, int(offs[1]), int(offs[2]), int(offs[3]))
    ref = np.zeros((T, N))
    for e in range(4):
        rows = slice(offs[e], offs[e + 1])
        ref[rows] = ar[rows] @ wr[e * N:(e + 1) * N].T
    return [("Y", from_bf16(y), ref, TOL["bf16"])]


# ---------------------------------------------------------------------------------------------
# Flash attention forward: Q, O are S x (H D); K, V are S x (Hkv D); G = H / Hkv.

def attention(k, rng, S, H, G, D, causal, bm=128):
    Hkv = H // G
    q, qr = bf16(rng.standard_normal((S, H * D)))
    kk, kr = bf16(rng.standard_normal((S, Hkv * D)))
    v, vr = bf16(rng.standard_normal((S, Hkv * D)))
    pos = np.arange(S, dtype=np.int32).reshape(1, S)
    o = unwritten((S, H * D), np.uint16)
    sm = 1 / np.sqrt(D)
    k[(cdiv(S, bm), H)](q, kk, v, o, pos, S, G, sm * 1.4426950408889634)
    ref = np.zeros((S, H * D))
    for h in range(H):
        hk = h // G
        qh, kh, vh = (qr[:, h * D:(h + 1) * D], kr[:, hk * D:(hk + 1) * D],
                      vr[:, hk * D:(hk + 1) * D])
        s = (qh @ kh.T) * sm
        if causal:
            s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
        ref[:, h * D:(h + 1) * D] = _softmax(s) @ vh
    return [("O", from_bf16(o), ref, (2e-2, 2e-2))]


ATT_SHAPES = [dict(S=77, H=2, G=1), dict(S=200, H=4, G=2)]


@entry("flash_attn_d64", "flash-attention forward, head dim 64 (MHA and GQA)", "bf16",
       ATT_SHAPES)
def _(k, rng, S, H, G):
    return attention(k, rng, S, H, G, 64, False)


@entry("flash_attn_d64_causal", "causal flash-attention forward, head dim 64", "bf16", ATT_SHAPES)
def _(k, rng, S, H, G):
    return attention(k, rng, S, H, G, 64, True)


@entry("flash_attn_d128", "flash-attention forward, head dim 128 (MHA and GQA)", "bf16",
       ATT_SHAPES)
def _(k, rng, S, H, G):
    return attention(k, rng, S, H, G, 128, False)


@entry("flash_attn_d128_causal", "causal flash-attention forward, head dim 128", "bf16",
       ATT_SHAPES)
def _(k, rng, S, H, G):
    return attention(k, rng, S, H, G, 128, True)


@entry("gemm_ws_bf16", "A B^T, warp-specialized: TMA ring + 2 wgmma consumer warpgroups",
       "bf16, f32 accumulate", [dict(M=77, N=45, K=70), dict(M=200, N=300, K=200)],
       xfail={"sm_80": ("needs 196672 bytes of shared memory, but target 'sm_80' allows 166912",
                        "written for Hopper: a 4-deep ring of 128x64 + 256x64 bf16 tiles is 192 KiB"),
              "gfx942": ("but target 'gfx942' allows 65536 per CTA",
                         "written for Hopper: the 192 KiB ring exceeds the 64 KiB of LDS"),
              "gfx90a": ("but target 'gfx90a' allows 65536 per CTA",
                         "written for Hopper: the 192 KiB ring exceeds the 64 KiB of LDS")},
       schedules=3)
def _(k, rng, M, N, K):
    a, ar = bf16(rng.standard_normal((M, K)))
    b, br = bf16(rng.standard_normal((N, K)))
    c = unwritten((M, N), np.uint16)
    k[mm_grid(M, N, 128, 256)](a, b, c, K)
    return [("C", from_bf16(c), ar @ br.T, TOL["bf16"])]


# ---------------------------------------------------------------------------------------------
# Convolutions and fused normalization.

@entry("conv1d_causal_dw", "causal depthwise conv over time, width 4", "f32",
       [dict(T=77, C=45), dict(T=130, C=300)])
def _(k, rng, T, C):
    x = rng.standard_normal((T, C)).astype(np.float32)
    w = rng.standard_normal((4, C)).astype(np.float32)
    y = unwritten((T, C), np.float32)
    k[(cdiv(T, 64), cdiv(C, 128))](x, w, y)
    xr = np.concatenate([np.zeros((3, C)), x.astype(np.float64)])
    ref = sum(w[j].astype(np.float64) * xr[3 - j:3 - j + T] for j in range(4))
    return [("Y", y, ref, (1e-5, 1e-5))]


@entry("conv2d_3x3_nhwc", "3x3 conv, stride 1, pad 1, implicit GEMM (NHWC)",
       "bf16, f32 accumulate", [dict(Nb=1, H=9, W=11, C=45, F=37),
                                dict(Nb=2, H=7, W=13, C=70, F=80)])
def _(k, rng, Nb, H, W, C, F):
    x, xr = bf16(rng.standard_normal((Nb * H * W, C)))
    wt, wr = bf16(rng.standard_normal((9 * C, F)) / np.sqrt(9 * C))
    hh, ww = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    pix = np.tile(np.stack([hh.ravel(), ww.ravel()], 1), (Nb, 1)).astype(np.int32)
    P = Nb * H * W
    y = unwritten((P, F), np.uint16)
    k[(cdiv(P, 128), cdiv(F, 64))](x, wt, pix, y, C, H, W)
    xi = np.pad(xr.reshape(Nb, H, W, C), ((0, 0), (1, 1), (1, 1), (0, 0)))
    ref = np.zeros((Nb, H, W, F))
    for r in range(3):
        for s in range(3):
            ref += xi[:, r:r + H, s:s + W, :] @ wr[(r * 3 + s) * C:(r * 3 + s + 1) * C]
    return [("Y", from_bf16(y), ref.reshape(P, F), TOL["bf16"])]


@entry("add_rmsnorm", "h = x + r; rmsnorm(h) w (fused residual add)", "bf16", ROW_SHAPES)
def _(k, rng, M, N):
    x, xr = bf16(rng.standard_normal((M, N)))
    r, rr = bf16(rng.standard_normal((M, N)))
    w, wr = bf16(rng.standard_normal((1, N)))
    h = unwritten((M, N), np.uint16)
    y = unwritten((M, N), np.uint16)
    k[rows_grid(M)](x, r, w, h, y, N, 1e-6)
    _, hr = bf16(xr + rr)
    ref = hr / np.sqrt((hr * hr).mean(1, keepdims=True) + 1e-6) * wr
    return [("H", from_bf16(h), hr, (0, 0)), ("Y", from_bf16(y), ref, TOL["bf16"])]


# ---------------------------------------------------------------------------------------------
# Quantization and more fused GEMM epilogues.

@entry("quant_rowwise_i8", "symmetric per-row int8 quantization (absmax / 127)", "f32 -> i8, f32",
       ROW_SHAPES)
def _(k, rng, M, N):
    x = (rng.standard_normal((M, N)) * 2).astype(np.float32)
    x[3] = 0  # a row of zeros: scale 0, values 0
    q = np.full((M, N), 99, np.int8)
    s = unwritten((M, 1), np.float32)
    k[rows_grid(M)](x, q, s, N)
    # The kernel's arithmetic in f32: S = max|x| / 127, x * (127 / max|x|), round half away.
    mx = np.abs(x).max(1, keepdims=True)
    inv = np.where(mx > 0, np.float32(127) / np.where(mx > 0, mx, 1), 0).astype(np.float32)
    v = (x * inv).astype(np.float32)
    ref_q = np.trunc(v + np.where(v < 0, -0.5, 0.5).astype(np.float32))
    return [("Q", q, ref_q, (0, 0)), ("S", s, mx.astype(np.float64) / 127, TOL["f32"])]


@entry("gemm_w8a16", "weight-only int8 GEMM: (A W^T) diag(s)", "bf16 x i8 -> bf16", MM_SHAPES)
def _(k, rng, M, N, K):
    a, ar = bf16(rng.standard_normal((M, K)))
    w = rng.integers(-127, 128, (N, K)).astype(np.int8)
    sc = (rng.random((1, N)) * 0.02 + 0.001).astype(np.float32)
    y = unwritten((M, N), np.uint16)
    k[mm_grid(M, N)](a, w, sc, y, K)
    return [("Y", from_bf16(y), (ar @ w.astype(np.float64).T) * sc, TOL["bf16"])]


@entry("gemm_bias_gelu", "gelu_tanh(A W^T + b) s, fused epilogue", "bf16, f32 bias", MM_SHAPES)
def _(k, rng, M, N, K):
    a, ar = bf16(rng.standard_normal((M, K)))
    w, wr = bf16(rng.standard_normal((N, K)) / np.sqrt(K))
    bias = rng.standard_normal((1, N)).astype(np.float32)
    y = unwritten((M, N), np.uint16)
    k[mm_grid(M, N)](a, w, bias, y, K, 0.5)
    return [("Y", from_bf16(y), _gelu_tanh(ar @ wr.T + bias) * 0.5, TOL["bf16"])]


@entry("matmul_f32", "A B^T in f32 (no tf32)", "f32", MM_SHAPES)
def _(k, rng, M, N, K):
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32)
    c = unwritten((M, N), np.float32)
    k[mm_grid(M, N, 64, 64)](a, b, c, K)
    return [("C", c, a.astype(np.float64) @ b.astype(np.float64).T, mm_tol(K))]


# ---------------------------------------------------------------------------------------------
# Communicating kernels (SPEC 5.9): launched on a world of 4 ranks of the kernel's device
# (ave.World: the interpreter's ranks on the host, the emitted code's on a simulated device).

AG_SHAPES = [dict(N=72), dict(N=130)]


@entry("ag_gemm_bf16", "all-gather + GEMM on 4 ranks (overlap pass), X_gathered W^T",
       "bf16, f32 accumulate and out", AG_SHAPES)
def _(k, rng, N):
    world = ave.World(4, device=k.default_device())
    own = [bf16(rng.standard_normal((128, 128))) for _ in range(4)]
    for r in range(4):
        x = np.full((512, 128), 0x7FC1, np.uint16)  # the peers' chunks: NaN until they arrive
        x[128 * r:128 * r + 128] = own[r][0]
        world.write(k, "@X", r, x)
    w, wr = bf16(rng.standard_normal((N, 128)) / np.sqrt(128))
    cs = [unwritten((512, N), np.float32) for _ in range(4)]
    world.launch(k, (4, cdiv(N, 64)), [[w, cs[r]] for r in range(4)])
    ref = np.concatenate([o[1] for o in own]) @ wr.T
    out = [("C rank %d" % r, cs[r], ref, mm_tol(128)) for r in range(4)]
    gathered = np.concatenate([o[0] for o in own])
    out += [("@X rank %d" % r, world.read(k, "@X", r).astype(np.float64),
             gathered.astype(np.float64), (0, 0)) for r in range(4)]
    return out


RS_SHAPES = [dict(K=40), dict(K=72)]


@entry("gemm_rs_bf16", "GEMM + reduce-scatter on 4 ranks (overlap pass), sum of A_r W_r^T by rows",
       "bf16, f32 accumulate and out", RS_SHAPES)
def _(k, rng, K):
    world = ave.World(4, device=k.default_device())
    a = [bf16(rng.standard_normal((512, K))) for _ in range(4)]
    w = [bf16(rng.standard_normal((96, K)) / np.sqrt(K)) for _ in range(4)]
    for r in range(4):  # the ring overwrites what it reads: NaN until a partial arrives
        world.write(k, "@C", r, np.full((512, 96), np.nan, np.float32))
    world.launch(k, (8, 2), [[a[r][0], w[r][0], K] for r in range(4)])
    total = sum(a[r][1] @ w[r][1].T for r in range(4))
    return [("@C rank %d chunk" % c, world.read(k, "@C", c)[128 * c:128 * c + 128].astype(np.float64),
             total[128 * c:128 * c + 128], mm_tol(4 * K)) for c in range(4)]


@entry("gemm_rs_f32", "GEMM + reduce-scatter on 4 ranks (puts and chunk signals by hand)",
       "f32", RS_SHAPES)
def _(k, rng, K):
    world = ave.World(4, device=k.default_device())
    a = [rng.standard_normal((256, K)).astype(np.float32) for _ in range(4)]
    w = [rng.standard_normal((64, K)).astype(np.float32) for _ in range(4)]
    cs = [unwritten((64, 64), np.float32) for _ in range(4)]
    world.launch(k, (1, 2), [[a[r], w[r], cs[r], K] for r in range(4)])
    total = sum(a[r].astype(np.float64) @ w[r].astype(np.float64).T for r in range(4))
    return [("C rank %d" % c, cs[c], total[64 * c:64 * c + 64], mm_tol(4 * K))
            for c in range(4)]
