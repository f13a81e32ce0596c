#!/usr/bin/env python3
"""A FUSE file system that serves one file, then stops answering.

  fuse_stall.py MOUNTPOINT FILE ARM

Mounts MOUNTPOINT (root only) with one file, FILE's basename, holding
FILE's bytes, and serves it, until the path ARM exists: from the next
request on it reads no more requests at all, as a container's FUSE server
that hangs would. A process that then opens the file waits for an answer
that never comes; only a fatal signal frees it (the request was never
read, so the kernel can drop it), or the end of this process (the kernel
then fails every request with ENOTCONN).

It speaks the kernel's FUSE protocol (include/uapi/linux/fuse.h) itself,
for the few requests a dlopen() and a profiler make: no libfuse needed.
Prints "mounted" once it serves.
"""
import ctypes
import errno
import os
import select
import stat
import struct
import sys
import time

LOOKUP, FORGET, GETATTR, OPEN, READ, STATFS, RELEASE = 1, 2, 3, 14, 15, 17, 18
FLUSH, INIT, OPENDIR, READDIR, RELEASEDIR, ACCESS = 25, 26, 27, 28, 29, 34
INTERRUPT, DESTROY, BATCH_FORGET = 36, 38, 42
NO_REPLY = (FORGET, INTERRUPT, BATCH_FORGET)
ROOT, FILE = 1, 2
IN_HEADER = struct.Struct('<IIQQIIIHH')   # len opcode unique nodeid uid gid pid extlen pad
OUT_HEADER = struct.Struct('<IiQ')         # len error unique
LONG = 1 << 30                             # seconds the kernel may cache entries and attributes


def attr(node, size):
    mode = (stat.S_IFDIR | 0o755) if node == ROOT else (stat.S_IFREG | 0o755)
    now = int(time.time())
    # ino size blocks atime mtime ctime atimensec mtimensec ctimensec mode nlink uid gid rdev blksize flags
    return struct.pack('<QQQQQQIIIIIIIIII', node, size, (size + 511) // 512, now, now, now,
                       0, 0, 0, mode, 2 if node == ROOT else 1, 0, 0, 0, 4096, 0)


def reply(fd, unique, error=0, body=b''):
    os.write(fd, OUT_HEADER.pack(OUT_HEADER.size + len(body), -error, unique) + body)


def serve(fd, name, content, arm):
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        if not poller.poll(100):
            continue
        if os.path.exists(arm):
            while True:  # hung: the request stays unread, and unanswered
                time.sleep(3600)
        request = os.read(fd, 1 << 21)
        length, opcode, unique, node = IN_HEADER.unpack_from(request)[:4]
        arg = request[IN_HEADER.size:length]
        if opcode in NO_REPLY:
            continue
        if opcode == INIT:
            major, minor = struct.unpack_from('<II', arg)
            # major minor max_readahead flags max_background congestion_threshold
            # max_write time_gran max_pages map_alignment flags2 unused[7]
            reply(fd, unique, body=struct.pack('<IIIIHHIIHHI7I', 7, min(minor, 31), 1 << 17, 0,
                                               16, 12, 1 << 17, 1, 32, 0, 0, *[0] * 7))
        elif opcode == LOOKUP:
            if node == ROOT and arg.rstrip(b'\0') == name:
                reply(fd, unique, body=struct.pack('<QQQQII', FILE, 0, LONG, LONG, 0, 0) +
                      attr(FILE, len(content)))
            else:
                reply(fd, unique, errno.ENOENT)
        elif opcode == GETATTR:
            reply(fd, unique, body=struct.pack('<QII', LONG, 0, 0) + attr(node, len(content)))
        elif opcode in (OPEN, OPENDIR):
            reply(fd, unique, body=struct.pack('<QII', 1, 0, 0))
        elif opcode == READ:
            offset, size = struct.unpack_from('<QQI', arg)[1:3]
            reply(fd, unique, body=content[offset:offset + size])
        elif opcode in (RELEASE, RELEASEDIR, FLUSH, ACCESS, READDIR):
            reply(fd, unique)
        elif opcode == STATFS:
            reply(fd, unique, body=struct.pack('<QQQQQIIII6I', 0, 0, 0, 0, 0, 4096, 255, 4096, 0,
                                               *[0] * 6))
        elif opcode == DESTROY:
            reply(fd, unique)
            return
        else:
            reply(fd, unique, errno.ENOSYS)


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    mountpoint, source, arm = argv[1:]
    with open(source, 'rb') as f:
        content = f.read()
    fd = os.open('/dev/fuse', os.O_RDWR)
    libc = ctypes.CDLL(None, use_errno=True)
    options = 'fd=%d,rootmode=40000,user_id=0,group_id=0' % fd
    if libc.mount(b'ebprof-stall', mountpoint.encode(), b'fuse', 0, options.encode()):
        sys.exit('fuse_stall: mount: %s' % os.strerror(ctypes.get_errno()))
    print('mounted', flush=True)
    serve(fd, os.path.basename(source).encode(), content, arm)


if __name__ == '__main__':
    main(sys.argv)
