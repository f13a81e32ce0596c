/*
 * pyproc: recognizing a CPython process and checking its layout (see
 * pyproc.h). Runs on the capture's worker, which may read a process's
 * files; reads a few hundred bytes of the process's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer/cfi.h"
#include "symbolizer/elfhdr.h"
#include "symbolizer/elfsym.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/pyproc.h"
#include "symbolizer/target.h"

/*
 * The rows. 3.11 from its headers (Include/cpython/code.h, pystate.h,
 * Include/internal/pycore_frame.h, pycore_runtime.h), verified on
 * Debian 12's /usr/bin/python3.11 (3.11.2) with ctypes in the process.
 */
static const struct pyproc_layout pyproc_layouts[] = {
	{
		.major = 3, .minor = 11,
		.runtime_tss = 0x250, .runtime_interp_head = 0x28,
		.interp_threads_head = 16, .tstate_thread_id = 152,
		.tstate_cframe = 56, .cframe_frame = 8,
		.frame_code = 32, .frame_previous = 48, .frame_prev_instr = 56,
		.frame_is_entry = 68,
		.code_size = 184, .code_flags = 48, .code_argcount = 56, .code_kwonly = 64,
		.code_firstlineno = 72, .code_filename = 112, .code_name = 120,
		.code_qualname = 128, .code_linetable = 136,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
		.bytes_size = 16, .bytes_data = 32,
	},
};

#define PYPROC_N_LAYOUTS (sizeof(pyproc_layouts) / sizeof(pyproc_layouts[0]))

/* PyTypeObject's tp_basicsize and tp_members; PyMemberDef's size and fields (stable ABI). */
#define PYPROC_TP_BASICSIZE 32
#define PYPROC_TP_MEMBERS 240
#define PYPROC_MEMBERDEF_SIZE 40
#define PYPROC_MEMBERDEF_OFFSET 16
#define PYPROC_MAX_MEMBERS 64
/* Branches into one other FDE that make it the evaluation function's .cold part. */
#define PYPROC_COLD_MIN 16
#define PYPROC_MAX_EVAL_BYTES (1u << 20)

const struct pyproc_layout *pyproc_layout(unsigned int version)
{
	return version < PYPROC_N_LAYOUTS ? &pyproc_layouts[version] : NULL;
}

int64_t pyproc_tsd_offset(uint32_t key)
{
	return key < 32 ? 0x310 + 16 * (int64_t)key + 8 : -1;
}

int pyproc_read(uint32_t tgid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)tgid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int pyproc_u64(uint32_t tgid, uint64_t addr, uint64_t *v)
{
	return pyproc_read(tgid, addr, v, sizeof(*v));
}

/* What a candidate file exports (addresses as linked; 0: absent). */
struct pyproc_symbols {
	uint64_t version, eval, eval_size, cold, cold_size, runtime, code_type;
};

/* A PT_LOAD segment, for the load bias of a mapping of the file. */
struct pyproc_load {
	uint64_t offset, filesz, vaddr;
};

#define PYPROC_MAX_LOADS 8

/*
 * The verdict on one file, kept in the cache: its identity (a file
 * replaced or rewritten in place has another inode, size or mtime, and
 * is examined again), and what it exports.
 */
struct pyproc_file {
	uint64_t dev, inode, size;
	int64_t mtime_sec, mtime_nsec;
	struct pyproc_symbols y; /* all 0: no interpreter */
	struct pyproc_load loads[PYPROC_MAX_LOADS];
	unsigned int n_loads;
	/* No interpreter: the mapping it was last seen as, and when (pyproc_now()). */
	uint32_t seen_major, seen_minor;
	uint64_t seen_inode, seen_at;
};

/*
 * How long a file with no interpreter is known by its mapping alone
 * (device and inode, as maps gives them): the next processes that map
 * it are answered with no open() at all, where each would otherwise cost
 * a path walk through /proc. A file rewritten in place keeps its inode,
 * so the answer is trusted only this long; then the file is checked by
 * its full identity again, and at most this long a rewritten file that
 * became an interpreter goes without Python frames.
 */
#define PYPROC_SEEN_NS (10ull * 1000000000ull)

/*
 * Every executable mapping of every new process is asked about, most of
 * them answered by their mapping: so that each answer costs a probe or
 * two, not a walk over the ring, the seen verdicts are indexed by their
 * mapping in an open-addressed table of ring positions. A slot whose
 * entry was since overwritten (or seen as another mapping) no longer
 * matches its key and is passed over; the table is rebuilt from the ring
 * before such slots fill it.
 */
struct pyproc_cache {
	struct pyproc_file *files; /* a ring: the oldest verdict goes first */
	size_t n, next, max;
	uint32_t *seen_index; /* ring position + 1; 0: empty */
	size_t index_mask, index_used;
	uint64_t max_table; /* bytes of one symbol or string table read */
	struct pyproc_cache_stats stats;
};

struct pyproc_cache *pyproc_cache_new(size_t max_entries)
{
	struct pyproc_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max = max_entries ? max_entries : PYPROC_CACHE_DEFAULT_ENTRIES;
	c->max_table = ELFSYM_DEFAULT_MAX_TABLE;
	if (c->max > PYPROC_CACHE_MAX_BYTES / sizeof(struct pyproc_file))
		c->max = PYPROC_CACHE_MAX_BYTES / sizeof(struct pyproc_file);
	c->files = calloc(c->max, sizeof(*c->files));
	/* A power of two at least 4 times the ring, rebuilt at half full: probes stay
	 * short, and a rebuild comes at most once per ring's worth of verdicts. */
	for (c->index_mask = 1; c->index_mask < 4 * c->max; c->index_mask <<= 1)
		;
	c->seen_index = calloc(c->index_mask, sizeof(*c->seen_index));
	c->index_mask--;
	if (!c->files || !c->seen_index) {
		free(c->files);
		free(c->seen_index);
		free(c);
		return NULL;
	}
	return c;
}

void pyproc_cache_bound_tables(struct pyproc_cache *c, uint64_t max_table)
{
	c->max_table = max_table ? max_table : ELFSYM_DEFAULT_MAX_TABLE;
}

void pyproc_cache_free(struct pyproc_cache *c)
{
	if (!c)
		return;
	free(c->files);
	free(c->seen_index);
	free(c);
}

void pyproc_cache_stats(const struct pyproc_cache *c, struct pyproc_cache_stats *stats)
{
	*stats = c->stats;
	stats->entries = c->n;
	stats->bytes = c->max * sizeof(struct pyproc_file) +
		       (c->index_mask + 1) * sizeof(*c->seen_index);
}

static void pyproc_file_id(struct pyproc_file *f, const struct stat *st)
{
	f->dev = st->st_dev;
	f->inode = st->st_ino;
	f->size = (uint64_t)st->st_size;
	f->mtime_sec = st->st_mtim.tv_sec;
	f->mtime_nsec = st->st_mtim.tv_nsec;
}

static bool pyproc_file_same(const struct pyproc_file *a, const struct pyproc_file *b)
{
	return a->dev == b->dev && a->inode == b->inode && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

static uint64_t pyproc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static size_t pyproc_seen_hash(const struct pyproc_cache *c, uint64_t inode, uint32_t major,
			       uint32_t minor)
{
	uint64_t h = (inode ^ ((uint64_t)major << 40) ^ ((uint64_t)minor << 20)) *
		     0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & c->index_mask;
}

static bool pyproc_seen_as(const struct pyproc_file *f, uint64_t inode, uint32_t major,
			   uint32_t minor)
{
	return f->seen_at && f->seen_inode == inode && f->seen_major == major &&
	       f->seen_minor == minor;
}

/* Indexes ring entry i by the mapping it was seen as. */
static void pyproc_index_put(struct pyproc_cache *c, size_t i)
{
	const struct pyproc_file *f = &c->files[i];
	size_t at = pyproc_seen_hash(c, f->seen_inode, f->seen_major, f->seen_minor);

	/* At most half full with live and stale slots: start again from the ring. */
	if (c->index_used + 1 > (c->index_mask + 1) / 2) {
		memset(c->seen_index, 0, (c->index_mask + 1) * sizeof(*c->seen_index));
		c->index_used = 0;
		for (size_t k = 0; k < c->n; k++)
			if (k != i && c->files[k].seen_at)
				pyproc_index_put(c, k);
		at = pyproc_seen_hash(c, f->seen_inode, f->seen_major, f->seen_minor);
	}
	for (;; at = (at + 1) & c->index_mask) {
		if (c->seen_index[at] == i + 1)
			return; /* indexed there already */
		if (!c->seen_index[at])
			break;
	}
	c->seen_index[at] = (uint32_t)(i + 1);
	c->index_used++;
}

/* Whether mapping m is of a file known, since PYPROC_SEEN_NS at most, to have no interpreter. */
static bool pyproc_cache_seen(struct pyproc_cache *c, const struct procmaps_mapping *m,
			      uint64_t now)
{
	size_t at;

	if (m->deleted) /* its inode may soon be another file's */
		return false;
	for (at = pyproc_seen_hash(c, m->inode, m->dev_major, m->dev_minor); c->seen_index[at];
	     at = (at + 1) & c->index_mask) {
		const struct pyproc_file *f = &c->files[c->seen_index[at] - 1];

		if (pyproc_seen_as(f, m->inode, m->dev_major, m->dev_minor) &&
		    now - f->seen_at < PYPROC_SEEN_NS) {
			c->stats.hits++;
			return true;
		}
	}
	return false;
}

/* Notes that the cache's entry i, with no interpreter, was just seen as mapping m. */
static void pyproc_seen(struct pyproc_cache *c, size_t i, const struct procmaps_mapping *m,
			uint64_t now)
{
	struct pyproc_file *f = &c->files[i];

	if (f->y.version || m->deleted)
		return;
	f->seen_major = m->dev_major;
	f->seen_minor = m->dev_minor;
	f->seen_inode = m->inode;
	f->seen_at = now;
	pyproc_index_put(c, i);
}

static struct pyproc_file *pyproc_cache_find(struct pyproc_cache *c, const struct pyproc_file *id)
{
	for (size_t i = 0; i < c->n; i++) {
		if (pyproc_file_same(&c->files[i], id)) {
			c->stats.hits++;
			return &c->files[i];
		}
	}
	c->stats.misses++;
	return NULL;
}

/* Keeps verdict f in the ring, in place of the oldest when full; returns its position. */
static size_t pyproc_cache_put(struct pyproc_cache *c, const struct pyproc_file *f)
{
	size_t at = c->next;

	if (c->n == c->max)
		c->stats.evicted++;
	else
		c->n++;
	c->files[at] = *f;
	c->next = at + 1 == c->max ? 0 : at + 1;
	return at;
}

static void pyproc_take_symbol(struct pyproc_symbols *y, const char *name, const GElf_Sym *sym)
{
	if (!strcmp(name, "Py_Version"))
		y->version = sym->st_value;
	else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
		y->eval = sym->st_value;
		y->eval_size = sym->st_size;
	} else if (!strcmp(name, "_PyEval_EvalFrameDefault.cold")) {
		y->cold = sym->st_value;
		y->cold_size = sym->st_size;
	} else if (!strcmp(name, "_PyRuntime"))
		y->runtime = sym->st_value;
	else if (!strcmp(name, "PyCode_Type"))
		y->code_type = sym->st_value;
}

/*
 * The symbols of .dynsym and .symtab (a .cold part is only ever a local
 * one), of the tables within max_table bytes. Returns the number of
 * tables skipped for their size.
 */
static unsigned int pyproc_read_symbols(Elf *e, uint64_t max_table, struct pyproc_symbols *y)
{
	unsigned int skipped = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize)
			continue;
		if (!elfhdr_table_fits(e, &sh, max_table)) {
			skipped++;
			continue;
		}
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && (name[0] == 'P' || name[0] == '_'))
				pyproc_take_symbol(y, name, &sym);
		}
	}
	return skipped;
}

/* The PT_LOAD segments of the file (the first PYPROC_MAX_LOADS). */
static void pyproc_read_loads(Elf *e, struct pyproc_file *f)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return;
	for (size_t i = 0; i < n && f->n_loads < PYPROC_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->n_loads++] = (struct pyproc_load){ ph.p_offset, ph.p_filesz,
								       ph.p_vaddr };
	}
}

/* The load bias of the file mapped by m: its PT_LOAD that holds m's offset. */
static int pyproc_bias(const struct pyproc_file *f, const struct procmaps_mapping *m,
		       uint64_t *bias)
{
	for (unsigned int i = 0; i < f->n_loads; i++) {
		const struct pyproc_load *l = &f->loads[i];

		if (m->pgoff >= (l->offset & ~0xfffull) && m->pgoff < l->offset + l->filesz) {
			*bias = m->start - m->pgoff - (l->vaddr - l->offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* The FDE (index in fns) that holds vaddr, or n. */
static size_t pyproc_fde_at(const struct cfi_function *fns, size_t n, uint64_t vaddr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fns[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && vaddr < fns[lo - 1].end ? lo - 1 : n;
}

/*
 * The evaluation function's .cold part where no symbol names it (Debian's
 * stripped python3.11): GCC moves the function's unlikely paths into a
 * piece of their own, with an FDE of its own, that only the function
 * jumps to. The near jumps (e9 rel32, 0f 8x rel32) in the function's
 * bytes that land outside it are counted per FDE; the FDE at least
 * PYPROC_COLD_MIN of them land in, and most, is the cold part. Bytes taken
 * for a jump by mistake land anywhere; 3.11.2's 379 real ones land in one
 * FDE of 13.9 KB.
 */
static void pyproc_find_cold(int fd, struct pyproc_symbols *y)
{
	const struct cfi_function *fns;
	uint32_t *hits = NULL;
	struct cfi *cfi = NULL;
	uint8_t *code = NULL;
	size_t n = 0, best = 0;
	uint64_t off;

	if (y->cold || !y->eval_size || y->eval_size > PYPROC_MAX_EVAL_BYTES ||
	    cfi_open_fd(fd, NULL, &cfi))
		return;
	if (cfi_vaddr_to_offset(cfi, y->eval, &off))
		goto out;
	fns = cfi_functions(cfi, &n);
	code = malloc(y->eval_size);
	hits = calloc(n + 1, sizeof(*hits));
	if (!n || !code || !hits || pread(fd, code, y->eval_size, (off_t)off) != (ssize_t)y->eval_size)
		goto out;
	for (uint64_t i = 0; i + 6 <= y->eval_size; i++) {
		uint64_t len = code[i] == 0xe9 ? 5 : code[i] == 0x0f && (code[i + 1] & 0xf0) == 0x80 ? 6
										       : 0;
		int32_t rel;
		uint64_t to;

		if (!len)
			continue;
		memcpy(&rel, code + i + len - 4, 4);
		to = y->eval + i + len + (int64_t)rel;
		if (to < y->eval || to >= y->eval + y->eval_size)
			hits[pyproc_fde_at(fns, n, to)]++;
	}
	for (size_t k = 0; k < n; k++)
		if (hits[k] > hits[best])
			best = k;
	if (hits[best] >= PYPROC_COLD_MIN) {
		y->cold = fns[best].start;
		y->cold_size = fns[best].end - fns[best].start;
	}
out:
	free(hits);
	free(code);
	cfi_free(cfi);
}

/*
 * The verdict on the file of mapping m: opened through the gate (a FIFO,
 * a device, a file bigger than its bound or out of the process's root is
 * refused there, counted, and is no interpreter), then found in the cache
 * by its identity, or read (its symbols, segments and .cold part) and
 * kept. Returns 0 with *out filled, or the gate's negative errno.
 */
static int pyproc_examine(struct pyproc_cache *cache, struct target *gate, uint32_t tgid,
			  const struct procmaps_mapping *m, struct pyproc_file *out)
{
	uint64_t now = pyproc_now();
	struct pyproc_file *known;
	struct target_file tf;
	Elf *e;
	int err;

	memset(out, 0, sizeof(*out));
	/* Known by its mapping, then checked, then opened: nearly every process is a known file. */
	if (cache && pyproc_cache_seen(cache, m, now))
		return 0;
	err = target_check_mapping(gate, tgid, m, &tf);
	if (err) {
		/* A device or an oversized file stays one: known by its mapping, it
		 * is refused (and counted) once, not again for every process that maps it. */
		if (cache && !m->deleted && (err == -EINVAL || err == -EFBIG))
			pyproc_seen(cache, pyproc_cache_put(cache, out), m, now);
		return err;
	}
	pyproc_file_id(out, &tf.st);
	known = cache ? pyproc_cache_find(cache, out) : NULL;
	if (known) {
		pyproc_seen(cache, (size_t)(known - cache->files), m, now);
		*out = *known;
		target_file_close(&tf);
		return 0;
	}
	err = target_file_reopen(gate, &tf);
	if (err)
		return err;
	if (cache)
		cache->stats.read++;
	/* The bounds the symbolizer keeps: a hostile file costs no more here. */
	if (elfhdr_check(tf.fd, NULL, 0)) {
		if (cache)
			cache->stats.oversized++;
		target_file_close(&tf);
		if (cache)
			pyproc_seen(cache, pyproc_cache_put(cache, out), m, now);
		return 0;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(tf.fd, ELF_C_READ_MMAP, NULL);
	if (e) {
		if (pyproc_read_symbols(e, cache ? cache->max_table : ELFSYM_DEFAULT_MAX_TABLE,
					&out->y) && cache)
			cache->stats.oversized++;
		pyproc_read_loads(e, out);
		if (out->y.version && out->y.eval)
			pyproc_find_cold(tf.fd, &out->y);
		else
			memset(&out->y, 0, sizeof(out->y)); /* no interpreter */
		elf_end(e);
	}
	target_file_close(&tf);
	/* A file libelf could not read (out of memory, most likely) is not
	 * remembered as "no interpreter": the next process asks again. */
	if (cache && e)
		pyproc_seen(cache, pyproc_cache_put(cache, out), m, now);
	return 0;
}

/*
 * Whether a mapping's file may hold an interpreter: any executable
 * mapping of a file. Not only the executable and a libpython by name: an
 * interpreter run through ld.so (whose /proc/PID/exe is ld.so), or linked
 * into a library of another name, is found too. That costs no more
 * reads: nearly every library is answered by its mapping
 * (pyproc_cache_seen()), and the executable needs no readlink of
 * /proc/PID/exe to be known.
 */
static bool pyproc_candidate(const struct procmaps_mapping *m)
{
	return m->exec && m->inode && m->path_len && m->path[0] == '/';
}

/* The row for a Py_Version (0xMMmmppxx), or -1. */
static int pyproc_row(uint32_t hexversion)
{
	for (size_t i = 0; i < PYPROC_N_LAYOUTS; i++)
		if (pyproc_layouts[i].major == (hexversion >> 24) &&
		    pyproc_layouts[i].minor == ((hexversion >> 16) & 0xff))
			return (int)i;
	return -1;
}

/* The member table of PyCode_Type must place each field the row names where the row does. */
static int pyproc_check_code_type(uint32_t tgid, uint64_t code_type, const struct pyproc_layout *l,
				  char *why, size_t whylen)
{
	static const struct {
		const char *name;
		size_t at;
	} want[] = {
		{ "co_flags", offsetof(struct pyproc_layout, code_flags) },
		{ "co_argcount", offsetof(struct pyproc_layout, code_argcount) },
		{ "co_kwonlyargcount", offsetof(struct pyproc_layout, code_kwonly) },
		{ "co_firstlineno", offsetof(struct pyproc_layout, code_firstlineno) },
		{ "co_filename", offsetof(struct pyproc_layout, code_filename) },
		{ "co_name", offsetof(struct pyproc_layout, code_name) },
		{ "co_qualname", offsetof(struct pyproc_layout, code_qualname) },
		{ "co_linetable", offsetof(struct pyproc_layout, code_linetable) },
	};
	unsigned int found = 0;
	uint64_t size, members;

	if (pyproc_u64(tgid, code_type + PYPROC_TP_BASICSIZE, &size) ||
	    pyproc_u64(tgid, code_type + PYPROC_TP_MEMBERS, &members) || !members) {
		snprintf(why, whylen, "PyCode_Type at 0x%" PRIx64 " could not be read", code_type);
		return -EPROTONOSUPPORT;
	}
	if (size != l->code_size) {
		snprintf(why, whylen, "PyCode_Type's tp_basicsize is %" PRIu64 ", not %u",
			 size, l->code_size);
		return -EPROTONOSUPPORT;
	}
	for (unsigned int i = 0; i < PYPROC_MAX_MEMBERS; i++) {
		uint64_t def[PYPROC_MEMBERDEF_SIZE / 8];
		char name[32] = "";

		if (pyproc_read(tgid, members + (uint64_t)i * PYPROC_MEMBERDEF_SIZE, def, sizeof(def)))
			break;
		if (!def[0])
			break; /* the table's end */
		if (pyproc_read(tgid, def[0], name, sizeof(name) - 1))
			continue;
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			uint16_t expect;

			if (strcmp(name, want[k].name))
				continue;
			memcpy(&expect, (const char *)l + want[k].at, sizeof(expect));
			if (def[PYPROC_MEMBERDEF_OFFSET / 8] != expect) {
				snprintf(why, whylen, "PyCode_Type says %s is at %" PRIu64
					 ", the table says %u", name,
					 def[PYPROC_MEMBERDEF_OFFSET / 8], expect);
				return -EPROTONOSUPPORT;
			}
			found |= 1u << k;
		}
	}
	if (found != (1u << (sizeof(want) / sizeof(want[0]))) - 1) {
		snprintf(why, whylen, "PyCode_Type's member table lacks some of co_flags .. "
			 "co_linetable (found mask 0x%x)", found);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/*
 * The TSD key from _PyRuntime, and the check that the main thread's
 * state is in the slot where the BPF walk will look for it.
 */
static int pyproc_check_tsd(uint32_t tgid, uint64_t runtime, const struct pyproc_layout *l,
			    uint64_t *tsd_offset, char *why, size_t whylen)
{
	uint32_t tss[2];
	uint64_t interp, tstate, thread, slot;
	int64_t off;

	if (pyproc_read(tgid, runtime + l->runtime_tss, tss, sizeof(tss))) {
		snprintf(why, whylen, "_PyRuntime at 0x%" PRIx64 " could not be read", runtime);
		return -EPROTONOSUPPORT;
	}
	if (pyproc_u64(tgid, runtime + l->runtime_interp_head, &interp) || !interp || !tss[0] ||
	    pyproc_u64(tgid, interp + l->interp_threads_head, &tstate) || !tstate)
		return -EAGAIN; /* not initialized yet */
	off = pyproc_tsd_offset(tss[1]);
	if (off < 0) {
		snprintf(why, whylen, "its thread-state TSD key is %u; only keys below 32 are "
			 "walked", tss[1]);
		return -EPROTONOSUPPORT;
	}
	/* The list's head is the newest thread; any thread will do for the check. */
	if (pyproc_u64(tgid, tstate + l->tstate_thread_id, &thread) || !thread ||
	    pyproc_u64(tgid, thread + (uint64_t)off, &slot) || slot != tstate) {
		snprintf(why, whylen, "the thread state 0x%" PRIx64 " is not in glibc's TSD slot "
			 "of key %u (fsbase+0x%" PRIx64 "): a C library laid out otherwise",
			 tstate, tss[1], (uint64_t)off);
		return -EPROTONOSUPPORT;
	}
	*tsd_offset = (uint64_t)off;
	return 0;
}

static void pyproc_fill(struct ebprof_py_proc *out, const struct pyproc_layout *l, int row,
			const struct pyproc_symbols *y, uint64_t bias, uint64_t tsd_offset)
{
	out->eval_start = y->eval + bias;
	out->eval_end = out->eval_start + y->eval_size;
	if (y->cold) {
		out->cold_start = y->cold + bias;
		out->cold_end = out->cold_start + y->cold_size;
	}
	out->tsd_offset = tsd_offset;
	out->version = (uint32_t)row;
	out->tstate_cframe = l->tstate_cframe;
	out->cframe_frame = l->cframe_frame;
	out->frame_code = l->frame_code;
	out->frame_previous = l->frame_previous;
	out->frame_prev_instr = l->frame_prev_instr;
	out->frame_is_entry = l->frame_is_entry;
	out->code_bytecode = l->code_size;
	/* The window the walk reads: from co_flags, the first field it checksums. */
	out->code_window = l->code_flags;
	out->code_flags = 0;
	out->code_argcount = (uint8_t)(l->code_argcount - l->code_flags);
	out->code_kwonly = (uint8_t)(l->code_kwonly - l->code_flags);
	out->code_firstlineno = (uint8_t)(l->code_firstlineno - l->code_flags);
	out->code_qualname = (uint8_t)(l->code_qualname - l->code_flags);
	out->code_linetable = (uint8_t)(l->code_linetable - l->code_flags);
}

/* One candidate file: Python or not, and if so, which and whether we can walk it. */
static int pyproc_try(struct pyproc_cache *cache, struct target *gate, uint32_t tgid,
		      const struct procmaps_mapping *m, struct ebprof_py_proc *out, char *why,
		      size_t whylen)
{
	const struct pyproc_layout *l;
	struct pyproc_file f;
	struct pyproc_symbols y;
	uint64_t tsd_offset = 0, bias;
	uint32_t hexversion;
	int row, err;

	/* A file the gate refused is no interpreter of ours: counted there. */
	if (pyproc_examine(cache, gate, tgid, m, &f) || !f.y.version || !f.y.eval ||
	    pyproc_bias(&f, m, &bias))
		return -ENOENT;
	y = f.y;
	if (pyproc_read(tgid, y.version + bias, &hexversion, sizeof(hexversion)))
		return -ESRCH;
	row = pyproc_row(hexversion);
	if (row < 0) {
		snprintf(why, whylen, "%.*s: Python %u.%u (Py_Version 0x%08x) has no layout here; "
			 "profiled without Python frames (supported: 3.11)", (int)m->path_len,
			 m->path, hexversion >> 24, (hexversion >> 16) & 0xff, hexversion);
		return -EPROTONOSUPPORT;
	}
	l = &pyproc_layouts[row];
	if (!y.runtime || !y.code_type || y.eval_size == 0) {
		snprintf(why, whylen, "%.*s: exports Py_Version %u.%u but not _PyRuntime, "
			 "PyCode_Type and a sized _PyEval_EvalFrameDefault; profiled without "
			 "Python frames", (int)m->path_len, m->path, l->major, l->minor);
		return -EPROTONOSUPPORT;
	}
	err = pyproc_check_code_type(tgid, y.code_type + bias, l, why, whylen);
	if (!err)
		err = pyproc_check_tsd(tgid, y.runtime + bias, l, &tsd_offset, why, whylen);
	if (err == -EPROTONOSUPPORT) {
		char detail[256];

		snprintf(detail, sizeof(detail), "%s", why);
		snprintf(why, whylen, "%.*s: Python %u.%u, but %s; profiled without Python frames",
			 (int)m->path_len, m->path, l->major, l->minor, detail);
	}
	/* Not started yet: where its interpreter is, so that its samples meanwhile are counted. */
	if (err == -EAGAIN)
		pyproc_fill(out, l, row, &y, bias, 0);
	if (err)
		return err;
	pyproc_fill(out, l, row, &y, bias, tsd_offset);
	return 0;
}

int pyproc_detect(struct pyproc_cache *cache, struct target *gate, const char *proc_root,
		  uint32_t tgid, uint64_t start_time, struct ebprof_py_proc *out, char *why,
		  size_t whylen)
{
	return pyproc_detect_maps(cache, gate, proc_root, tgid, start_time, NULL, out, why, whylen);
}

int pyproc_detect_maps(struct pyproc_cache *cache, struct target *gate, const char *proc_root,
		       uint32_t tgid, uint64_t start_time, const struct procmaps *maps,
		       struct ebprof_py_proc *out, char *why, size_t whylen)
{
	struct procmaps *read = NULL;
	int err, ret = -ENOENT;

	if (whylen)
		why[0] = '\0';
	memset(out, 0, sizeof(*out));
	out->start_time = start_time;
	if (!maps) {
		err = procmaps_load_pid(proc_root, tgid, true, &read);
		if (err)
			return err == -ENOENT ? -ESRCH : err;
		maps = read;
	}
	for (size_t i = 0; i < procmaps_count(maps) && ret == -ENOENT; i++) {
		const struct procmaps_mapping *m = procmaps_at(maps, i);

		/* One mapping per file is enough: the first executable one. */
		if (i > 0 && procmaps_at(maps, i - 1)->inode == m->inode &&
		    procmaps_at(maps, i - 1)->dev_minor == m->dev_minor)
			continue;
		if (pyproc_candidate(m))
			ret = pyproc_try(cache, gate, tgid, m, out, why, whylen);
	}
	procmaps_free(read);
	return ret;
}
