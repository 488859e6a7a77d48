"""Exit 0 when two cubins (ELF files) have the same sections, byte for byte,
apart from `.note.nv.tkinfo`: the note where ptxas records its own command
line (with -v it is four bytes longer). Prints the sections that differ.

    %python %inputs/same-cubin-code.py A.cubin B.cubin
"""
import struct
import sys


def sections(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit(f"{path}: not a 64-bit ELF file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, ...
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize)

    strtab = header(names)[4]
    out = {}
    for i in range(count):
        name_at, kind, _, _, offset, size = header(i)[:6]
        name = data[strtab + name_at:data.index(b"\0", strtab + name_at)].decode()
        out[name] = b"" if kind == 8 else data[offset:offset + size]  # SHT_NOBITS: no bytes
    return out


a, b = sections(sys.argv[1]), sections(sys.argv[2])
differ = sorted(n for n in set(a) | set(b) if n != ".note.nv.tkinfo" and a.get(n) != b.get(n))
if differ:
    sys.exit("sections that differ: " + ", ".join(differ))
