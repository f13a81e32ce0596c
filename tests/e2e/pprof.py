"""Our own pprof reader for the end-to-end tests: gunzips a profile.proto
file, decodes the protobuf wire format by hand (no protobuf library), checks
the format's rules, and prints what a test compares.

Usage: pprof.py FILE.pb.gz COMMAND
  folded     the samples as folded stacks (root first, counts from value[0],
             "_[k]"/"_[j]" for locations in the [kernel.kallsyms]/[jit] mappings)
  summary    "samples=N cpu_ns=N period=N types=samples/count,cpu/nanoseconds"
  locations  one line per location: "FUNCTION ADDRESS FILE BUILD_ID START LIMIT
             OFFSET HAS_FUNCTIONS" (hex numbers; "-" for no mapping or build-id)
Exits 1 with a message when a rule is broken.
"""
import gzip
import sys


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def fields(buf):
    """Yields (number, wire, value) where value is an int or bytes."""
    i = 0
    while i < len(buf):
        tag, i = varint(buf, i)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise ValueError("field number 0")
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise ValueError("truncated field")
            v, i = buf[i:i + n], i + n
        elif wire == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wire == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise ValueError("wire type %d" % wire)
        yield number, wire, v


def ints(wire, v):
    """A repeated integer field, packed or not."""
    if wire == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def msg(buf):
    d = {}
    for number, wire, v in fields(buf):
        d.setdefault(number, []).append((wire, v))
    return d


def one(d, n, default=0):
    return d[n][-1][1] if n in d else default


def load(path):
    data = gzip.open(path, "rb").read()
    top = msg(data)
    strings = [v.decode("utf-8") for _, v in top.get(6, [])]
    rule(strings and strings[0] == "", "string_table[0] must be empty")
    s = lambda i: (rule(0 <= i < len(strings), "string index %d out of range" % i), strings[i])[1]
    types = [(s(one(t, 1)), s(one(t, 2))) for t in (msg(v) for _, v in top.get(1, []))]
    maps, funcs, locs = {}, {}, {}
    for _, v in top.get(3, []):
        m = msg(v)
        rule(one(m, 1) != 0 and one(m, 1) not in maps, "mapping id 0 or repeated")
        maps[one(m, 1)] = s(one(m, 5))
        MAPPINGS[one(m, 1)] = (s(one(m, 5)), s(one(m, 6)), one(m, 2), one(m, 3), one(m, 4),
                               one(m, 7))
    for _, v in top.get(5, []):
        f = msg(v)
        rule(one(f, 1) != 0 and one(f, 1) not in funcs, "function id 0 or repeated")
        funcs[one(f, 1)] = s(one(f, 2))
    for _, v in top.get(4, []):
        loc = msg(v)
        lid = one(loc, 1)
        rule(lid != 0 and lid not in locs, "location id 0 or repeated")
        rule(one(loc, 2) == 0 or one(loc, 2) in maps, "location names a missing mapping")
        lines = [msg(lv) for _, lv in loc.get(4, [])]
        rule(len(lines) >= 1, "location without a line")
        names = []
        for line in lines:
            rule(one(line, 1) in funcs, "line names a missing function")
            names.append(funcs[one(line, 1)])
        locs[lid] = (names, maps.get(one(loc, 2), ""))
        address, mapping = one(loc, 3), one(loc, 2)
        if address and mapping:
            _, _, start, limit, _, _ = MAPPINGS[mapping]
            rule(start <= address < limit, "location %d's address is outside its mapping" % lid)
        LOCATIONS[lid] = (names, address, mapping)
    samples = []
    for _, v in top.get(2, []):
        smp = msg(v)
        ids = [x for w, val in smp.get(1, []) for x in ints(w, val)]
        values = [x for w, val in smp.get(2, []) for x in ints(w, val)]
        rule(len(values) == len(types), "a sample has %d values for %d types" % (len(values), len(types)))
        rule(all(i in locs for i in ids), "a sample names a missing location")
        samples.append((ids, values))
    period = one(top, 12)
    return types, locs, samples, period


MAPPINGS = {}   # id -> (file, build_id, start, limit, offset, has_functions)
LOCATIONS = {}  # id -> (function names, address, mapping id)


def rule(ok, why):
    if not ok:
        print("pprof rule broken: " + why, file=sys.stderr)
        sys.exit(1)


def main():
    path, command = sys.argv[1], sys.argv[2]
    types, locs, samples, period = load(path)
    if command == "folded":
        suffix = {"[kernel.kallsyms]": "_[k]", "[jit]": "_[j]"}
        for ids, values in samples:
            frames = []
            for i in reversed(ids):  # leaf first in pprof
                names, mapping = locs[i]
                frames += [n + suffix.get(mapping, "") for n in reversed(names)]
            print("%s %d" % (";".join(frames), values[0]))
    elif command == "summary":
        total = sum(v[0] for _, v in samples)
        cpu = sum(v[1] for _, v in samples) if len(types) > 1 else 0
        print("samples=%d cpu_ns=%d period=%d types=%s" % (
            total, cpu, period, ",".join("%s/%s" % t for t in types)))
    elif command == "locations":
        for names, address, mapping in LOCATIONS.values():
            f, b, start, limit, offset, has = MAPPINGS.get(mapping, ("-", "", 0, 0, 0, 0))
            print("%s %x %s %s %x %x %x %d" % (";".join(names), address, f, b or "-",
                                              start, limit, offset, has))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
