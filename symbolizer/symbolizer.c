/*
 * symbolizer: the facade that turns a sampled stack into named frames.
 *
 * The sampler hands over (tgid, comm, user ips, kernel ips) per distinct
 * stack at each drain. The process's record (its mappings, the symbol
 * table of each mapped file, its JIT perf map, its start time) comes from
 * the process table, proctab.c, which reads /proc; this file turns the
 * addresses into frames with it, with kallsyms, and with our own vDSO.
 *
 * Files are opened where the process sees them, and only through the
 * gate (target_*), which never blocks, resolves inside the process's root
 * and checks what it opens: /proc/PID/map_files/ (deleted files, other
 * mount namespaces), then PATH inside /proc/PID/root, and only then our
 * own PATH, each accepted only if its device and inode are the mapping's.
 * PIDs are the host's, as the kernel reports them. What the files declare
 * is bounded (section sizes, symbol counts, perf-map lines and bytes);
 * what the gate refuses and the bounds hit are counted in the stats.
 *
 * A user address goes mapping -> ELF table (cached by file, elfcache_*)
 * -> symbol; then the JIT perf map; then "[file+0xoffset]" or "[unknown]".
 * An address that no symbol names in a file named by .dynsym alone (a
 * stripped library's internal functions) is named by the start of its
 * function, from the file's FDEs, so one function is one frame;
 * `addresses` keeps it exact.
 * Every frame but the leaf holds a return address, which may be the first
 * byte of the next function when a call ends its caller (noreturn calls
 * do), so those are looked up at ip - 1, the call instruction, as perf
 * does.
 *
 * When kptr_restrict hides kernel addresses, the kernel part of a stack
 * becomes one FRAME_KERNEL frame named "[kernel]": the time stays visible
 * and coloured as kernel time, and it is counted as unresolved.
 */
#include <linux/types.h>

#include "bpf/ebprof.h"
#include "bpf/grow.h"
#include "symbolizer/symbolizer.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolizer/cfi.h"
#include "symbolizer/dbgfetch.h"
#include "symbolizer/debuginfo.h"
#include "symbolizer/demangle.h"
#include "symbolizer/elfcache.h"
#include "symbolizer/elfsym.h"
#include "symbolizer/inlines.h"
#include "symbolizer/ksyms.h"
#include "symbolizer/perfmap.h"
#include "symbolizer/pycode.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/proctab.h"
#include "symbolizer/target.h"

#define UNKNOWN_NAME "[unknown]"

struct symbolizer {
	bool addresses;
	char *proc_root;
	char *debug_root;
	struct ksyms *ksyms; /* NULL when kallsyms could not be read */
	struct target *gate; /* every open of a process's file */
	struct elfsym_bounds elf_bounds;
	struct elfsym_breaches elf_breaches;
	struct elfcache *elfs;
	struct demangle_cache *demangled; /* NULL: raw_names */
	struct elfsym *vdso;		  /* our own vDSO's table; NULL when unreadable */
	bool vdso_tried;
	struct proctab *procs; /* the process records (proctab.h) */
	struct pycode_cache *pycode; /* Python frames' code objects */
	/* The names of the frames of the last call, where each starts, and
	 * the mapping each frame's code is in (frame.mapping points here).
	 * A mapping's path and build-id are copied into names too (map_offs
	 * says where): the maps and ELF tables they come from may be re-read
	 * or evicted by a later frame of the same stack. */
	char *names;
	size_t names_len, names_cap;
	size_t *name_offs;
	struct frame_mapping *mappings;
	struct mapping_offs {
		size_t file, build_id; /* in names; build_id SIZE_MAX: none */
	} *map_offs;
	size_t name_offs_cap;
	uint64_t frames, unresolved;
	/* debuginfod: NULL when off. What is known of each build-id asked
	 * about: a hash table (open addressing, never emptied) of at most
	 * SYMBOLIZER_MAX_FETCHED. The debug files' tables themselves are kept
	 * in elfs, under the build-id, inside its bounds and its figures. */
	struct dbgfetch *fetch;
	int fetch_err;
	struct fetched {
		unsigned char id[DBGFETCH_MAX_ID];
		uint8_t len; /* 0: a free slot */
		bool final;  /* the answer is known: a usable table, or none */
		bool usable;
		bool missing; /* not final: the servers lack it, asked again later */
		uint64_t drain; /* the drain it was last asked about, or looked up, in */
		/* The cached table as looked up in drain, valid while the
		 * ELF cache has dropped nothing since (drops). */
		const struct elfsym *table;
		uint64_t drops;
		char *path; /* the debug file, once usable (for its DWARF); NULL: none */
	} *fetched;
	size_t n_fetched;
	struct inlines *inlines; /* NULL: config.inlines off */
	uint64_t inlined_frames;
};

/* Build-ids the symbolizer keeps the state of a fetch for (~20 KiB), and
 * the slots of their hash table (a power of two, twice as many). */
#define SYMBOLIZER_MAX_FETCHED 256
#define SYMBOLIZER_FETCHED_SLOTS (2 * SYMBOLIZER_MAX_FETCHED)
/* The ELF cache's key of a fetched table: this and the build-id in hex,
 * as a path (no mapping's path looks like it). */
#define DEBUGINFOD_KEY "debuginfod:"

void symbolizer_config_init(struct symbolizer_config *config)
{
	*config = (struct symbolizer_config){
	    .addresses = false,
	    .elf_cache_max = 0,
	    .proc_root = "/proc",
	    .kallsyms = "/proc/kallsyms",
	    .perfmap_dir = "/tmp",
	    .raw_names = false,
	    .debug_root = "/usr/lib/debug",
	    .max_processes = 0,
	    .elf_cache_bytes = 0,
	    .process_bytes = 0,
	    .names_bytes = 0,
	    .max_file_size = 0,
	    .elf_bounds = {0},
	    .perfmap_max_bytes = 0,
	    .maps_text_only = false,
	};
}

struct symbolizer *symbolizer_new(const struct symbolizer_config *config)
{
	struct symbolizer_config defaults;
	struct symbolizer *sym;
	int err;

	symbolizer_config_init(&defaults);
	if (!config)
		config = &defaults;
	sym = calloc(1, sizeof(*sym));
	if (!sym)
		return NULL;
	sym->addresses = config->addresses;
	sym->proc_root = strdup(config->proc_root ? config->proc_root : defaults.proc_root);
	sym->elfs = elfcache_new(config->elf_cache_max, config->elf_cache_bytes);
	sym->debug_root = strdup(config->debug_root ? config->debug_root : "");
	sym->gate = target_new(&(struct target_config){ .proc_root = sym->proc_root,
							.max_file_size = config->max_file_size });
	sym->elf_bounds = config->elf_bounds;
	if (!sym->proc_root || !sym->elfs || !sym->debug_root || !sym->gate)
		goto err_free;
	sym->procs = proctab_new(&(struct proctab_config){
		.proc_root = sym->proc_root,
		.perfmap_dir = config->perfmap_dir ? config->perfmap_dir : defaults.perfmap_dir,
		.gate = sym->gate,
		.elfs = sym->elfs,
		.perfmap_max_bytes = config->perfmap_max_bytes,
		.max_processes = config->max_processes,
		.max_bytes = config->process_bytes ? config->process_bytes
						   : SYMBOLIZER_DEFAULT_PROCESS_BYTES,
		.maps_text_only = config->maps_text_only,
	});
	if (!sym->procs)
		goto err_free;
	sym->pycode = pycode_cache_new(0, 0);
	if (!sym->pycode)
		goto err_free;
	if (!config->raw_names) {
		sym->demangled = demangle_cache_new(0);
		if (!sym->demangled)
			goto err_free;
		demangle_cache_set_max_bytes(sym->demangled, config->names_bytes);
	}
	/* Without kallsyms kernel frames come out "[unknown]"; user frames still work. */
	err = ksyms_load(config->kallsyms ? config->kallsyms : defaults.kallsyms, &sym->ksyms);
	if (err == -ENOMEM)
		goto err_free;
	if (err == -EMFILE || err == -ENFILE) /* ours, not the file's: counted */
		target_count(sym->gate, TARGET_NO_FDS);
	/* Without libdebuginfod names stay grouped; the error is reported. */
	if (config->debuginfod) {
		sym->fetched = calloc(SYMBOLIZER_FETCHED_SLOTS, sizeof(*sym->fetched));
		if (!sym->fetched)
			goto err_free;
		sym->fetch_err = dbgfetch_new(NULL, &sym->fetch);
		if (sym->fetch_err == -ENOMEM)
			goto err_free;
	}
	if (config->inlines) {
		sym->inlines = inlines_new(&(struct inlines_config){
			.chain_bytes = config->inline_bytes });
		if (!sym->inlines)
			goto err_free;
	}
	return sym;

err_free:
	symbolizer_free(sym);
	return NULL;
}

void symbolizer_free(struct symbolizer *sym)
{
	if (!sym)
		return;
	proctab_free(sym->procs); /* first: the records let go of the tables they hold */
	dbgfetch_free(sym->fetch);
	if (sym->fetched)
		for (size_t i = 0; i < SYMBOLIZER_FETCHED_SLOTS; i++)
			free(sym->fetched[i].path);
	free(sym->fetched);
	inlines_free(sym->inlines);
	ksyms_free(sym->ksyms);
	pycode_cache_free(sym->pycode);
	elfcache_free(sym->elfs);
	elfsym_free(sym->vdso);
	demangle_cache_free(sym->demangled);
	free(sym->proc_root);
	free(sym->debug_root);
	target_free(sym->gate);
	free(sym->names);
	free(sym->name_offs);
	free(sym->mappings);
	free(sym->map_offs);
	free(sym);
}

/* Loads and holds the symbol table of mapping i of proc, once. */
static const struct elfsym *proc_elf(struct symbolizer *sym, struct proc *proc, size_t i);

/* The record, and the symbol table of every mapped file while it can be opened. */
int symbolizer_track(struct symbolizer *sym, uint32_t tgid, uint64_t start_time)
{
	return symbolizer_track_maps(sym, tgid, start_time, NULL, NULL);
}

int symbolizer_track_maps(struct symbolizer *sym, uint32_t tgid, uint64_t start_time,
			  struct procmaps *given, const struct procmaps **maps)
{
	struct proc *proc;
	int err = proctab_track(sym->procs, tgid, start_time, given, &proc);

	if (maps)
		*maps = !err && proc->maps_tracked ? proc->maps : NULL;
	if (err)
		return err;
	if (proc->maps)
		for (size_t i = 0; i < procmaps_count(proc->maps); i++)
			proc_elf(sym, proc, i);
	return 0;
}

int symbolizer_track_gone(struct symbolizer *sym, uint32_t tgid, uint64_t start_time)
{
	return proctab_track_gone(sym->procs, tgid, start_time);
}

/* Makes room for len more bytes in the per-call buffer: 0 or -ENOMEM. */
static int names_room(struct symbolizer *sym, size_t len)
{
	return GROW_ARRAY(&sym->names, &sym->names_cap, sym->names_len + len, 4096);
}

/* Appends len bytes to the per-call buffer; returns their offset or SIZE_MAX. */
static size_t names_put(struct symbolizer *sym, const void *bytes, size_t len)
{
	size_t off = sym->names_len;

	if (names_room(sym, len) < 0)
		return SIZE_MAX;
	memcpy(sym->names + off, bytes, len);
	sym->names_len += len;
	return off;
}

/* Appends len bytes of name and a NUL: names_add() without a format to parse. */
static size_t names_strn(struct symbolizer *sym, const char *name, size_t len)
{
	size_t off = sym->names_len;

	if (names_room(sym, len + 1) < 0)
		return SIZE_MAX;
	memcpy(sym->names + off, name, len);
	sym->names[off + len] = '\0';
	sym->names_len += len + 1;
	return off;
}

static size_t names_str(struct symbolizer *sym, const char *name)
{
	return names_strn(sym, name, strlen(name));
}

/* Appends a formatted name to the per-call buffer; returns its offset or SIZE_MAX. */
static size_t names_add(struct symbolizer *sym, const char *fmt, ...)
{
	va_list ap;
	size_t off = sym->names_len;
	int len;

	va_start(ap, fmt);
	/* clang-analyzer 14 misses the va_start above when it lints many files in one run. */
	len = vsnprintf(NULL, 0, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	va_end(ap);
	if (len < 0 || names_room(sym, (size_t)len + 1) < 0)
		return SIZE_MAX;
	va_start(ap, fmt);
	vsnprintf(sym->names + off, (size_t)len + 1, fmt, ap);
	va_end(ap);
	sym->names_len += (size_t)len + 1;
	return off;
}

/* Where out[] is filled: frames written, and the cap. */
struct stack_out {
	struct frame *frames;
	size_t nr, cap;
};

static void emit(struct symbolizer *sym, struct stack_out *out, enum frame_kind kind, size_t off)
{
	if (out->nr >= out->cap || off == SIZE_MAX)
		return;
	out->frames[out->nr].kind = kind;
	out->frames[out->nr].mapping = NULL;
	out->frames[out->nr].address = 0;
	sym->name_offs[out->nr] = off;
	out->nr++;
	if (kind == FRAME_PROCESS)
		return;
	sym->frames++;
	if (kind == FRAME_UNKNOWN)
		sym->unresolved++;
}

/*
 * Says where the frame emit() just wrote (if it did: nr is out->nr before
 * the call) has its code: at address, in mapping m of the process (NULL:
 * none), whose file's table elf (NULL: unread) gives the build-id.
 */
static void locate(struct symbolizer *sym, struct stack_out *out, size_t nr,
		   const struct procmaps_mapping *m, const struct elfsym *elf, uint64_t address)
{
	struct frame_mapping *fm = &sym->mappings[nr];
	const struct frame_mapping *prev = nr ? out->frames[nr - 1].mapping : NULL;
	struct mapping_offs *offs = &sym->map_offs[nr];
	const unsigned char *id = NULL;
	size_t id_len = 0;

	if (out->nr == nr)
		return;
	out->frames[nr].address = address;
	if (!m)
		return;
	if (elf)
		id = elfsym_build_id(elf, &id_len);
	/* Callers in the same file, the common case, share the copy. */
	if (prev && prev->start == m->start && prev->limit == m->end &&
	    !strcmp(sym->names + sym->map_offs[nr - 1].file, m->path)) {
		*offs = sym->map_offs[nr - 1];
		id_len = prev->build_id_len;
	} else {
		offs->file = names_str(sym, m->path);
		offs->build_id = id ? names_put(sym, id, id_len) : SIZE_MAX;
		if (offs->file == SIZE_MAX)
			return; /* no memory: the frame keeps its name, not its mapping */
		if (offs->build_id == SIZE_MAX)
			id_len = 0;
	}
	/* file and build_id are set when the buffer has stopped moving. */
	*fm = (struct frame_mapping){
		.start = m->start,
		.limit = m->end,
		.offset = m->pgoff,
		.build_id_len = id_len,
	};
	out->frames[nr].mapping = fm;
}

/*
 * A named frame, demangled unless raw_names, with "+0xoff" when the user
 * asked for addresses. Rust in the kernel mangles too, so kernel names
 * are demangled as well; JIT runtimes write perf maps demangled already.
 */
static void emit_symbol(struct symbolizer *sym, struct stack_out *out, enum frame_kind kind,
			const char *name, uint64_t offset)
{
	size_t off;

	if (sym->demangled && kind != FRAME_JIT)
		name = demangle_cache_get(sym->demangled, name);
	if (sym->addresses)
		off = names_add(sym, "%s+0x%" PRIx64, name, offset);
	else
		off = names_str(sym, name);
	emit(sym, out, kind, off);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Reads the symbol table of a mapping's file, opened through the gate
 * where the process sees it; -errno of the gate, or of elfsym. A
 * stripped file's debug file is looked for in the process's root, then
 * in ours, through the gate too.
 */
static int open_elf(struct symbolizer *sym, uint32_t tgid, const struct procmaps_mapping *m,
		    struct elfsym **elf)
{
	char root[4096];
	struct debuginfo_paths paths = {
		.debug_root = sym->debug_root, .root = root, .gate = sym->gate
	};
	struct elfsym_options options = {
		.debug = &paths, .bounds = sym->elf_bounds, .breaches = &sym->elf_breaches
	};
	struct target_file f;
	int err;

	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", sym->proc_root, tgid);
	if (m->path[0] == '/' && !m->deleted)
		paths.path = m->path;
	err = target_open_mapping(sym->gate, tgid, m, &f);
	if (err)
		return err;
	err = elfsym_open_fd_with(f.fd, &options, elf);
	if (!err) {
		err = cfi_bound_functions(f.fd, *elf);
		if (err) {
			elfsym_free(*elf);
			*elf = NULL;
		}
	}
	target_file_close(&f);
	return err;
}

/* Errors that say nothing about the file: it is tried again at its next use. */
static bool transient(int err)
{
	enum target_cause cause = target_cause_of(err);

	return err == -ENOMEM || cause == TARGET_NO_FDS || cause == TARGET_STALLED;
}

static const struct elfsym *elf_for(struct symbolizer *sym, uint32_t tgid,
				    const struct procmaps_mapping *m)
{
	struct elfcache_key key = {
	    .dev_major = m->dev_major,
	    .dev_minor = m->dev_minor,
	    .inode = m->inode,
	    .path = m->path,
	    .deleted = m->deleted,
	};
	const struct elfsym *cached;
	struct elfsym *elf = NULL;
	int err;

	if (elfcache_get(sym->elfs, &key, &cached))
		return cached;
	err = open_elf(sym, tgid, m, &elf);
	if (err && transient(err))
		return NULL;
	if (err)
		elf = NULL;
	if (elfcache_put(sym->elfs, &key, elf))
		return NULL;
	return elf;
}

static const struct elfsym *proc_elf(struct symbolizer *sym, struct proc *proc, size_t i)
{
	const struct procmaps_mapping *m = procmaps_at(proc->maps, i);
	struct proc_elf *pe = &proc->elfs[i];

	if (pe->tried)
		return pe->elf;
	pe->tried = true;
	if (!m->path_len || procmaps_is_special(m))
		return NULL;
	pe->elf = elf_for(sym, proc->tgid, m);
	if (elfcache_hold(sym->elfs, pe->elf))
		pe->elf = NULL;
	return pe->elf;
}

/*
 * Our own vDSO, which is the one every process on this kernel maps (the
 * kernel has one image per ABI). Its size is where its section headers
 * or its last segment end, whichever is further.
 */
static const struct elfsym *vdso_elf(struct symbolizer *sym)
{
	const Elf64_Ehdr *eh;
	uint64_t size;

	if (sym->vdso_tried)
		return sym->vdso;
	sym->vdso_tried = true;
	eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph =
		    (const Elf64_Phdr *)((const char *)eh + eh->e_phoff + i * eh->e_phentsize);

		if (ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	if (elfsym_open_mem(eh, size, &sym->vdso))
		sym->vdso = NULL;
	return sym->vdso;
}

/* Tries the JIT perf map; true when it named the address. */
static bool emit_jit(struct symbolizer *sym, struct stack_out *out, const struct proc *proc,
		     uint64_t addr, uint64_t adjust)
{
	const struct perfmap_symbol *jit;
	uint64_t offset;
	size_t nr = out->nr;

	if (!proc->perfmap)
		return false;
	jit = perfmap_lookup(proc->perfmap, addr, &offset);
	if (!jit)
		return false;
	emit_symbol(sym, out, FRAME_JIT, jit->name, offset + adjust);
	locate(sym, out, nr, NULL, NULL, sym->addresses ? addr + adjust : jit->start);
	return true;
}

/*
 * The slot of build-id id in the fetched table: its own, or the free one
 * it would take; NULL when it is not there and the table is full.
 */
static struct fetched *fetched_slot(const struct symbolizer *sym, const unsigned char *id,
				     size_t len)
{
	uint64_t h = 0;

	/* A build-id is a hash already: its first bytes spread well. */
	memcpy(&h, id, len < sizeof(h) ? len : sizeof(h));
	for (size_t n = 0; n < SYMBOLIZER_FETCHED_SLOTS; n++) {
		struct fetched *fe = &sym->fetched[(h + n) % SYMBOLIZER_FETCHED_SLOTS];

		if (!fe->len)
			return sym->n_fetched < SYMBOLIZER_MAX_FETCHED ? fe : NULL;
		if (fe->len == len && !memcmp(fe->id, id, len))
			return fe;
	}
	return NULL;
}

/*
 * The table of the debug file fetched for elf, a file named by .dynsym
 * alone, or NULL (none, or not yet). Never waits: a build-id not seen is
 * queued (dbgfetch_get()), and one pending is asked about again once per
 * drain, so the frames of a later drain get the names once it arrives.
 * The table is kept in the ELF cache under the build-id; dropped from
 * there (its bounds), it is read again from the client's on-disk cache.
 * It is valid until the next elfcache_put(), as any cached table.
 */
static const struct elfsym *fetched_elf(struct symbolizer *sym, const struct elfsym *elf)
{
	uint64_t drain = proctab_drain(sym->procs);
	char key_path[sizeof(DEBUGINFOD_KEY) + 2 * DBGFETCH_MAX_ID];
	struct elfcache_key key = { .path = key_path };
	const struct elfsym *cached;
	struct elfsym *debug = NULL;
	enum dbgfetch_state state;
	const unsigned char *id;
	struct fetched *fe;
	const char *path;
	size_t len;

	if (!sym->fetch || elfsym_complete(elf))
		return NULL;
	id = elfsym_build_id(elf, &len);
	if (!id || !len || len > DBGFETCH_MAX_ID)
		return NULL;
	fe = fetched_slot(sym, id, len);
	if (!fe)
		return NULL;
	if (!fe->len) {
		memcpy(fe->id, id, len);
		fe->len = (uint8_t)len;
		fe->drain = drain - 1;
		sym->n_fetched++;
	}
	if (fe->final && !fe->usable)
		return NULL;
	/* The common case, no lookup: the table seen earlier in this drain. */
	if (fe->table && fe->drain == drain && fe->drops == elfcache_drops(sym->elfs))
		return fe->table;
	fe->table = NULL;
	memcpy(key_path, DEBUGINFOD_KEY, sizeof(DEBUGINFOD_KEY) - 1);
	for (size_t i = 0; i < len; i++)
		snprintf(key_path + sizeof(DEBUGINFOD_KEY) - 1 + 2 * i, 3, "%02x", id[i]);
	if (fe->final && elfcache_get(sym->elfs, &key, &cached))
		goto keep;
	/* Pending, or dropped from the cache: asked about, and read again,
	 * at most once a drain. */
	if (fe->drain == drain)
		return NULL;
	fe->drain = drain;
	state = dbgfetch_get(sym->fetch, id, len, &path);
	fe->missing = state == DBGFETCH_MISSING;
	if (state != DBGFETCH_READY) {
		fe->final = false;
		return NULL;
	}
	fe->final = true;
	fe->usable = !elfsym_open(path, &debug) && elfsym_complete(debug);
	if (!fe->usable) {
		elfsym_free(debug);
		dbgfetch_unusable(sym->fetch, id, len);
		return NULL;
	}
	if (!fe->path)
		fe->path = strdup(path); /* for its DWARF; NULL: names only */
	if (elfcache_put(sym->elfs, &key, debug)) {
		fe->final = false; /* out of memory: tried again next drain */
		return NULL;
	}
	cached = debug;
keep:
	fe->table = cached;
	fe->drain = drain;
	fe->drops = elfcache_drops(sym->elfs);
	return cached;
}

/* Where a file's DWARF may be, for open_dwarf(): where the process maps it. */
struct dwarf_source {
	struct symbolizer *sym;
	uint32_t tgid;
	const struct procmaps_mapping *m;
	const unsigned char *id; /* its build-id, for a file debuginfod fetched */
	size_t id_len;
};

static bool has_debug_info(Elf *e)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_info"))
			return true;
	}
	return false;
}

/*
 * Whether debuginfod may still bring the debug file of elf (a file named
 * by .dynsym alone, queued by fetched_elf()): its DWARF is not looked for
 * until the answer is known, so that the file is not remembered as
 * having none when its debug file is about to arrive.
 */
static bool fetch_pending(const struct symbolizer *sym, const struct elfsym *elf)
{
	const struct fetched *fe;
	const unsigned char *id;
	size_t len;

	if (!sym->fetch || elfsym_complete(elf))
		return false;
	id = elfsym_build_id(elf, &len);
	fe = id && len && len <= DBGFETCH_MAX_ID ? fetched_slot(sym, id, len) : NULL;
	return fe && fe->len && !fe->final && !fe->missing;
}

/* The debug file debuginfod fetched for build-id id, or NULL. */
static const char *fetched_path(const struct symbolizer *sym, const unsigned char *id, size_t len)
{
	const struct fetched *fe;

	if (!sym->fetched || !len || len > DBGFETCH_MAX_ID)
		return NULL;
	fe = fetched_slot(sym, id, len);
	return fe && fe->len ? fe->path : NULL;
}

/*
 * inlines_open_fn: the file with the DWARF of a mapping's code, in the
 * order a reader expects: the file itself when it kept .debug_info, its
 * local debug file (debuginfo_open: build-id, then debuglink; through
 * the gate, in the process's root then ours), then the one debuginfod
 * fetched. Returns an fd, or a negative errno.
 */
static int open_dwarf(void *arg)
{
	const struct dwarf_source *src = arg;
	struct symbolizer *sym = src->sym;
	char root[4096];
	struct debuginfo_paths paths = {
		.debug_root = sym->debug_root, .root = root, .gate = sym->gate
	};
	const char *fetched;
	struct target_file f;
	int fd = -ENOENT, err;
	Elf *e;

	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", sym->proc_root, src->tgid);
	if (src->m->path[0] == '/' && !src->m->deleted)
		paths.path = src->m->path;
	err = target_open_mapping(sym->gate, src->tgid, src->m, &f);
	if (err) {
		fd = err; /* the fetched file may still serve */
	} else {
		e = elf_begin(f.fd, ELF_C_READ, NULL);
		if (e && has_debug_info(e)) {
			fd = fcntl(f.fd, F_DUPFD_CLOEXEC, 0);
			if (fd < 0)
				fd = -errno;
		} else if (e) {
			fd = debuginfo_open(e, &paths);
		}
		elf_end(e);
		target_file_close(&f);
	}
	fetched = fetched_path(sym, src->id, src->id_len);
	if (fd < 0 && fetched) {
		fd = open(fetched, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	return fd;
}

/*
 * Follows the named frame emit_symbol() just wrote with the functions
 * inlined at vaddr (a link-time address of elf's file, mapped by m),
 * outermost first; each carries the real frame's mapping and address.
 */
static void expand_inlines(struct symbolizer *sym, struct stack_out *out, uint32_t tgid,
			   const struct procmaps_mapping *m, const struct elfsym *elf,
			   uint64_t vaddr, uint64_t address)
{
	struct dwarf_source src = { .sym = sym, .tgid = tgid, .m = m };
	const char *const *names;
	size_t n;

	if (!sym->inlines || !m->path_len || procmaps_is_special(m) || fetch_pending(sym, elf))
		return;
	src.id = elfsym_build_id(elf, &src.id_len);
	if (!src.id || inlines_lookup(sym->inlines, src.id, src.id_len, vaddr, open_dwarf, &src,
				      &names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		size_t nr = out->nr;
		const char *name = sym->demangled ? demangle_cache_get(sym->demangled, names[i])
						  : names[i];

		emit(sym, out, FRAME_INLINED, names_str(sym, name));
		locate(sym, out, nr, m, elf, address);
		sym->inlined_frames += out->nr > nr;
	}
}

/*
 * Where the function holding vaddr starts, for a file whose functions are
 * mostly unnamed (its names from .dynsym alone): true and *start. False
 * keeps the exact address: with `addresses`, and in a file with a full
 * symbol table, where an address in no symbol is padding or untyped
 * assembly (glibc's signal trampoline), rare and best shown as it is.
 */
static bool group_start(const struct symbolizer *sym, const struct elfsym *elf, uint64_t vaddr,
			uint64_t *start)
{
	return !sym->addresses && !elfsym_complete(elf) &&
	       !elfsym_function_start(elf, vaddr, start);
}

/*
 * One user frame. addr is the address looked up (ip - 1 for callers),
 * adjust what was taken off, so "+0xoff" shows the address sampled.
 */
static void user_frame(struct symbolizer *sym, struct stack_out *out, struct proc *proc,
		       uint64_t addr, uint64_t adjust)
{
	const struct procmaps_mapping *m = NULL;
	const struct elfsym_symbol *s;
	const struct elfsym *elf;
	uint64_t file_offset, vaddr, offset, start;
	size_t index = 0, nr = out->nr;
	bool in_file;

	if (proc->maps)
		m = procmaps_find(proc->maps, addr, &index);
	if (!m && !proc->gone && proc->maps_drain != proctab_drain(sym->procs)) {
		proctab_reread(sym->procs, proc);
		if (proc->maps)
			m = procmaps_find(proc->maps, addr, &index);
	}
	if (!m) {
		if (!emit_jit(sym, out, proc, addr, adjust))
			emit(sym, out, FRAME_UNKNOWN, names_str(sym, UNKNOWN_NAME));
		return;
	}
	file_offset = addr - m->start + m->pgoff;
	if (!strcmp(m->path, "[vdso]"))
		elf = vdso_elf(sym);
	else
		elf = proc_elf(sym, proc, index);
	in_file = elf && !elfsym_offset_to_vaddr(elf, file_offset, &vaddr);
	if (in_file) {
		const struct elfsym *debug = fetched_elf(sym, elf);

		s = debug ? elfsym_lookup(debug, vaddr, &offset) : NULL;
		if (!s)
			s = elfsym_lookup(elf, vaddr, &offset);
		if (s) {
			emit_symbol(sym, out, FRAME_USER, s->name, offset + adjust);
			locate(sym, out, nr, m, elf, sym->addresses ? addr + adjust : addr - offset);
			expand_inlines(sym, out, proc->tgid, m, elf, vaddr, addr + adjust);
			return;
		}
	}
	if (emit_jit(sym, out, proc, addr, adjust))
		return;
	if (!m->path_len)
		/* JIT code the runtime has not (yet) written to its perf map, or none. */
		emit(sym, out, FRAME_UNKNOWN,
		     names_str(sym, proc->perfmap && perfmap_count(proc->perfmap) ? "[jit]"
										    : "[anon]"));
	else if (procmaps_is_special(m))
		emit(sym, out, FRAME_UNKNOWN, names_str(sym, m->path));
	else if (in_file && group_start(sym, elf, vaddr, &start)) {
		/* Unnamed, but bounded: one frame per function, at its start. */
		emit(sym, out, FRAME_UNKNOWN,
		     names_add(sym, "[%s+0x%" PRIx64 "]", basename_of(m->path),
			       file_offset - (vaddr - start)));
		locate(sym, out, nr, m, elf, addr - (vaddr - start));
	} else {
		/* Not named here, but a tool with the file's debug info can:
		 * the mapping and build-id say which file, the address where. */
		emit(sym, out, FRAME_UNKNOWN,
		     names_add(sym, "[%s+0x%" PRIx64 "]", basename_of(m->path),
			       file_offset + adjust));
		locate(sym, out, nr, m, elf, addr + adjust);
	}
}

/*
 * A Python frame (its two slots, bpf/ebprof.h): "qualname (file.py:line)",
 * or why not as an unresolved frame.
 */
static void python_frame(struct symbolizer *sym, struct stack_out *out,
			 const struct symbolizer_sample *sample, uint64_t first, uint64_t second)
{
	char name[1200];
	int err;

	err = pycode_name(sym->pycode, sample->tgid, sample->start_time, first, second, name,
			  sizeof(name));
	if (!err)
		emit(sym, out, FRAME_PYTHON, names_str(sym, name));
	else
		emit(sym, out, FRAME_UNKNOWN,
		     names_str(sym, err == -ESTALE ? "[python: code replaced]" : "[python]"));
}

static void kernel_frame(struct symbolizer *sym, struct stack_out *out, uint64_t addr,
			 uint64_t adjust)
{
	struct ksym k;
	uint64_t offset;
	size_t nr = out->nr;

	if (sym->ksyms && ksyms_lookup(sym->ksyms, addr, &k, &offset)) {
		emit_symbol(sym, out, FRAME_KERNEL, k.name, offset + adjust);
		locate(sym, out, nr, NULL, NULL, sym->addresses ? addr + adjust : k.addr);
	} else
		emit(sym, out, FRAME_UNKNOWN, names_str(sym, UNKNOWN_NAME));
}

/*
 * The kernel's comm is cut at 15 bytes, possibly inside a UTF-8 sequence;
 * returns the length without an incomplete sequence at the end.
 */
static size_t comm_length(const char *comm)
{
	size_t len = strnlen(comm, 255), lead = len, need;
	unsigned char c;

	/* Step back over continuation bytes (10xxxxxx) to the sequence's lead byte. */
	while (lead > 0 && len - lead < 3 && ((unsigned char)comm[lead - 1] & 0xc0) == 0x80)
		lead--;
	if (lead == 0)
		return len;
	c = (unsigned char)comm[lead - 1];
	if (c < 0xc0)
		return len; /* ASCII, or stray continuation bytes: not ours to judge */
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	return len - (lead - 1) < need ? lead - 1 : len;
}

size_t symbolizer_stack(struct symbolizer *sym, const struct symbolizer_sample *sample,
			struct frame *out, size_t cap)
{
	const uint64_t *uips = sample->uips, *kips = sample->kips;
	size_t n_uips = sample->n_uips, n_kips = sample->n_kips;
	struct stack_out stack = {.frames = out, .cap = cap};
	size_t comm_len = sample->comm ? comm_length(sample->comm) : 0;

	sym->names_len = 0;
	if (cap > sym->name_offs_cap) {
		size_t *offs = realloc(sym->name_offs, cap * sizeof(*offs));
		struct frame_mapping *maps;
		struct mapping_offs *map_offs;

		if (!offs)
			return 0;
		sym->name_offs = offs;
		maps = realloc(sym->mappings, cap * sizeof(*maps));
		if (!maps)
			return 0;
		sym->mappings = maps;
		map_offs = realloc(sym->map_offs, cap * sizeof(*map_offs));
		if (!map_offs)
			return 0;
		sym->map_offs = map_offs;
		sym->name_offs_cap = cap;
	}
	if (comm_len)
		emit(sym, &stack, FRAME_PROCESS,
		     names_strn(sym, sample->comm, comm_len));
	else
		emit(sym, &stack, FRAME_PROCESS, names_str(sym, UNKNOWN_NAME));

	if (n_uips) {
		struct proc *proc =
		    proctab_get(sym->procs, sample->tgid, proctab_ticks(sym->procs, sample->start_time));

		if (proc)
			proc->used_drain = proctab_drain(sym->procs);
		for (size_t i = n_uips; i-- > 0;) {
			uint64_t adjust = i > 0 && uips[i] ? 1 : 0;

			/* A Python frame's second slot never has the tag; its first always. */
			if (i > 0 && (uips[i - 1] & EBPROF_PY_FRAME)) {
				python_frame(sym, &stack, sample, uips[i - 1], uips[i]);
				i--;
				continue;
			}
			if (proc)
				user_frame(sym, &stack, proc, uips[i] - adjust, adjust);
			else
				emit(sym, &stack, FRAME_UNKNOWN, names_str(sym, UNKNOWN_NAME));
		}
	}
	if (n_kips && sym->ksyms && ksyms_hidden(sym->ksyms)) {
		size_t before = stack.nr;

		emit(sym, &stack, FRAME_KERNEL, names_str(sym, "[kernel]"));
		if (stack.nr > before)
			sym->unresolved++;
	} else {
		for (size_t i = n_kips; i-- > 0;) {
			uint64_t adjust = i > 0 && kips[i] ? 1 : 0;

			kernel_frame(sym, &stack, kips[i] - adjust, adjust);
		}
	}
	/* The buffer has stopped moving: point the frames into it. */
	for (size_t i = 0; i < stack.nr; i++) {
		struct frame_mapping *fm = &sym->mappings[i];

		out[i].name = sym->names + sym->name_offs[i];
		if (!out[i].mapping)
			continue;
		fm->file = sym->names + sym->map_offs[i].file;
		fm->build_id = fm->build_id_len ?
			(const unsigned char *)sym->names + sym->map_offs[i].build_id : NULL;
	}
	return stack.nr;
}

void symbolizer_end_drain(struct symbolizer *sym)
{
	proctab_end_drain(sym->procs);
	elfcache_trim(sym->elfs);
	pycode_end_drain(sym->pycode);
}

void symbolizer_stats(const struct symbolizer *sym, struct symbolizer_stats *stats)
{
	struct elfcache_stats cache;
	struct proctab_stats procs;
	struct pycode_stats py;

	proctab_stats(sym->procs, &procs);
	elfcache_stats(sym->elfs, &cache);
	pycode_stats(sym->pycode, &py);
	*stats = (struct symbolizer_stats){
	    .frames = sym->frames,
	    .unresolved = sym->unresolved,
	    .elf_cache_hits = cache.hits,
	    .elf_cache_misses = cache.misses,
	    .elf_cached = cache.cached,
	    .processes = procs.processes,
	    .kernel_hidden = sym->ksyms && ksyms_hidden(sym->ksyms),
	    .exited = procs.exited,
	    .evicted = procs.evicted,
	    .elf_held = cache.held,
	    .perfmaps_refused = procs.perfmaps_refused,
	    .perfmaps_opened = procs.perfmaps_opened,
	    .elf_breaches = sym->elf_breaches,
	    .perfmap_lines_too_long = procs.perfmap_lines_too_long,
	    .perfmaps_truncated = procs.perfmaps_truncated,
	    .elf_bytes = cache.bytes,
	    .elf_held_bytes = cache.held_bytes,
	    .process_bytes = procs.process_bytes,
	    .perfmap_bytes = procs.perfmap_bytes,
	    .end_checks = procs.end_checks,
	    .end_stat_reads = procs.end_stat_reads,
	    .names_bytes = (sym->demangled ? demangle_cache_bytes(sym->demangled) : 0) +
			   sym->names_cap +
			   sym->name_offs_cap * (sizeof(*sym->name_offs) + sizeof(*sym->mappings) +
						 sizeof(*sym->map_offs)),
	    .evicted_over_bytes = procs.evicted_over_bytes,
	    .python_hits = py.hits,
	    .python_reads = py.misses,
	    .python_stale = py.stale,
	    .python_faults = py.faults,
	    .python_bytes = py.bytes,
	    .kernel_bytes = sym->ksyms ? ksyms_bytes(sym->ksyms) : 0,
	};
	target_stats(sym->gate, stats->refused);
	stats->debuginfod_error = sym->fetch_err;
	if (sym->inlines) {
		struct inlines_stats is;

		inlines_stats(sym->inlines, &is);
		stats->inlined_frames = sym->inlined_frames;
		stats->inline_hits = is.hits;
		stats->inline_misses = is.misses;
		stats->inline_files = is.files_dwarf;
		stats->inline_files_none = is.files_none;
		stats->inline_bytes = is.chain_bytes;
		stats->inline_dwarf_bytes = is.dwarf_bytes;
	}
	if (sym->fetch) {
		struct dbgfetch_stats fs;

		dbgfetch_stats(sym->fetch, &fs);
		stats->debuginfod_fetched = fs.fetched;
		stats->debuginfod_not_found = fs.not_found;
		stats->debuginfod_failed = fs.failed + fs.skipped;
		stats->debuginfod_pending = fs.pending;
	}
}

uint64_t symbolizer_progress(const struct symbolizer *sym)
{
	return target_progress(sym->gate);
}
