#!/usr/bin/env python3
"""Makes hostile ELF files out of real ones, for the e2e tests and fuzz seeds.

  elfpatch.py claim-section FILE NAME SIZE
      Section NAME's header claims SIZE bytes at the end of FILE, which is
      made that long (sparse: nothing is written). A .symtab claiming
      3 GiB made the profiler read 3 GiB (issue 20, finding 4).
  elfpatch.py claim-size FILE NAME SIZE
      Section NAME's header claims SIZE bytes where it is; the file is
      left as it is (a fuzz seed must stay small).
  elfpatch.py claim-sections FILE COUNT
      The header announces COUNT sections (extended numbering: e_shnum 0,
      the count in section 0), which libelf allocates up front.
  elfpatch.py slow-asm COUNT
      Prints assembly for a shared object with COUNT local functions: a
      real symbol table that takes a while to read.

Only 64-bit little-endian files (what the build makes) are patched.
"""
import os
import struct
import sys


def section_headers(data):
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    heads = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize)
             for i in range(shnum)]
    return shoff, shentsize, heads, heads[shstrndx]


def claim_section(path, name, size, extend=True):
    with open(path, 'rb') as f:
        data = bytearray(f.read())
    shoff, shentsize, heads, names = section_headers(data)
    for i, h in enumerate(heads):
        start = names[4] + h[0]
        if data[start:data.index(b'\0', start)].decode() != name:
            continue
        offset = (len(data) + 4095) // 4096 * 4096 if extend else h[4]
        struct.pack_into('<QQ', data, shoff + i * shentsize + 0x18, offset, size)
        with open(path, 'wb') as f:
            f.write(data)
        if extend:
            os.truncate(path, offset + size)
        return
    sys.exit('elfpatch: no section %s in %s' % (name, path))


def claim_sections(path, count):
    with open(path, 'r+b') as f:
        data = f.read()
        shoff, = struct.unpack_from('<Q', data, 0x28)
        f.seek(0x3c)
        f.write(struct.pack('<H', 0))
        f.seek(shoff + 0x20)
        f.write(struct.pack('<Q', count))


def slow_asm(count):
    print('.macro fn\n.type f\\@, @function\nf\\@:\nret\n.size f\\@, 1\n.endm')
    print('.text\n.rept %d\nfn\n.endr' % count)


def main(argv):
    if len(argv) == 5 and argv[1] == 'claim-section':
        claim_section(argv[2], argv[3], int(argv[4], 0))
    elif len(argv) == 5 and argv[1] == 'claim-size':
        claim_section(argv[2], argv[3], int(argv[4], 0), extend=False)
    elif len(argv) == 4 and argv[1] == 'claim-sections':
        claim_sections(argv[2], int(argv[3], 0))
    elif len(argv) == 3 and argv[1] == 'slow-asm':
        slow_asm(int(argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv)
