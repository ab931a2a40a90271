"""Rewrites one figure inside a bundle's binary and seals the bundle again (its checksums are
integrity, not authenticity), to show that a loaded binary must agree with its metadata.

  forge_bundle.py IN OUT regs|frame|regs+meta KERNEL VALUE

regs/frame: the cubin's EIATTR_REGCOUNT / EIATTR_FRAME_SIZE record for KERNEL (.nv.info), or the
AMDGPU code object's `.vgpr_count` / `.private_segment_fixed_size` (its metadata note, msgpack:
the value is rewritten in place, so VALUE must fit the encoding the note used). regs+meta: the
registers in the binary and in the bundle's metadata alike.
"""
import json
import hashlib
import struct
import sys

HDR, ENTRY, META, BINARY = 16, 56, 1, 2


def sections(b):
    n = struct.unpack_from("<I", b, 12)[0]
    for i in range(n):
        e = HDR + i * ENTRY
        kind = struct.unpack_from("<I", b, e)[0]
        off, ln = struct.unpack_from("<QQ", b, e + 8)
        yield e, kind, off, ln


def patch_cubin(elf, kernel, attr, value):
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3a)
    secs = []
    for i in range(shnum):
        h = shoff + i * shentsize
        name, typ = struct.unpack_from("<II", elf, h)
        off, size, link = struct.unpack_from("<QQI", elf, h + 0x18)
        entsize = struct.unpack_from("<Q", elf, h + 0x38)[0]
        secs.append((name, typ, off, size, link, entsize))
    stroff = secs[shstrndx][2]
    def secname(n):
        return elf[stroff + n:elf.index(b"\0", stroff + n)].decode()
    symtabs = [s for s in secs if s[1] == 2]
    if not symtabs:
        return False
    symtab = symtabs[0]
    strtab = secs[symtab[4]]
    want = None
    for i in range(symtab[3] // symtab[5]):
        so = struct.unpack_from("<I", elf, symtab[2] + i * symtab[5])[0]
        nm = elf[strtab[2] + so:elf.index(b"\0", strtab[2] + so)].decode()
        if nm == kernel:
            want = i
    info = [s for s in secs if secname(s[0]) == ".nv.info"]
    if not info or want is None:
        return False
    p, end = info[0][2], info[0][2] + info[0][3]
    while p + 4 <= end:
        fmt, a = elf[p], elf[p + 1]
        sz = struct.unpack_from("<H", elf, p + 2)[0] if fmt == 4 else 0
        if fmt == 4 and a == attr and struct.unpack_from("<I", elf, p + 4)[0] == want:
            struct.pack_into("<I", elf, p + 8, value)
            return True
        p += 4 + sz
    return False


def patch_hsaco(elf, key, value):
    k = bytes([0xa0 | len(key)]) + key.encode()  # a msgpack fixstr key
    at = elf.find(k)
    if at < 0:
        return False
    v = at + len(k)
    if elf[v] < 0x80 and value < 0x80:
        elf[v] = value
    elif elf[v] == 0xcc and value < 256:
        elf[v + 1] = value
    elif elf[v] == 0xcd and value < 65536:
        struct.pack_into(">H", elf, v + 1, value)
    else:
        return False
    return True


def encode(sects):
    """The bundle of sections [(kind, bytes)], as rt_bundle_encode writes it."""
    align8 = lambda n: (n + 7) & ~7
    off = align8(HDR + len(sects) * ENTRY)
    total = off + sum(align8(len(d)) for _, d in sects) + 32
    b = bytearray(total)
    b[0:8] = b"AVEBNDL1"
    struct.pack_into("<II", b, 8, 1, len(sects))
    for i, (kind, d) in enumerate(sects):
        e = HDR + i * ENTRY
        struct.pack_into("<IIQQ", b, e, kind, 0, off, len(d))
        b[e + 24:e + 56] = hashlib.sha256(d).digest()
        b[off:off + len(d)] = d
        off += align8(len(d))
    b[-32:] = hashlib.sha256(bytes(b[:-32])).digest()
    return bytes(b)


def main():
    src, dst, what, kernel, value = sys.argv[1:6]
    value = int(value)
    b = open(src, "rb").read()
    sects = []
    for e, kind, off, ln in sections(b):
        d = bytearray(b[off:off + ln])
        if kind == BINARY:
            if not patch_cubin(d, kernel, 0x11 if what == "frame" else 0x2f, value) and \
               not patch_hsaco(d, ".private_segment_fixed_size" if what == "frame"
                               else ".vgpr_count", value):
                sys.exit("forge_bundle.py: no %s record for %s" % (what, kernel))
        elif kind == META and what == "regs+meta":
            meta = json.loads(bytes(d))
            for k in meta["kernels"]:
                if k["name"] == kernel:
                    k["registers"] = value
            d = bytearray(json.dumps(meta, indent=2).encode())
        sects.append((kind, bytes(d)))
    open(dst, "wb").write(encode(sects))


if __name__ == "__main__":
    main()
