/*
 * elfsym: read one ELF file's function symbols and PT_LOAD segments
 * through libelf.
 *
 * The file is read once, into a sorted array of (value, size, name) with
 * all names in one string pool, and libelf's handle is closed at once:
 * the symbolizer caches many of these tables, and holding an Elf handle
 * (and its fd) per cached file would cost memory and descriptors for
 * nothing. Every size and offset read from the file goes through libelf's
 * checked accessors, so a truncated or hostile file gives -ENOEXEC.
 *
 * libelf trusts the sizes a file declares: it allocates and reads a whole
 * section when asked for its data. So before libelf sees a file its
 * header counts are checked (elfhdr_check), and before a table is read
 * its size, and its string table's, is checked against the bounds (the
 * defaults in elfsym.h); a table over them is skipped and counted, and
 * the next source of names is tried.
 */
#include "bpf/grow.h"
#include "symbolizer/elfsym.h"

#include "symbolizer/debuginfo.h"
#include "symbolizer/elfhdr.h"
#include "symbolizer/target.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longer than any build-id a linker writes (SHA-1: 20 bytes). */
#define ELFSYM_BUILD_ID_MAX 64

struct elfsym {
	struct elfsym_symbol *syms;
	uint64_t *ends; /* ends[i]: first address past syms[i] */
	size_t nr;
	struct elfsym_segment *segments;
	size_t nr_segments;
	char *pool;
	size_t bytes; /* heap memory held, as elfsym_bytes() gives it */
	unsigned char build_id[ELFSYM_BUILD_ID_MAX];
	size_t build_id_len; /* 0: none */
	bool complete;	     /* names from a full table: elfsym_complete() */
	struct elfsym_range *ranges; /* unnamed functions' bounds, sorted */
	size_t nr_ranges;
};

/* A symbol while reading, its name an offset in the growing pool. */
struct rawsym {
	uint64_t value, size;
	size_t name_off;
	unsigned int rank; /* lower wins among symbols at one address */
};

struct reader {
	struct rawsym *syms;
	size_t nr, cap;
	char *pool;
	size_t pool_len, pool_cap;
	uint64_t max_table, max_symbols;
	struct elfsym_breaches *breaches; /* never NULL: a local one when not asked */
	bool complete; /* a full table was read, not .dynsym alone */
};

static int pool_add(struct reader *r, const char *s, size_t *off)
{
	size_t len = strlen(s);

	if (GROW_ARRAY(&r->pool, &r->pool_cap, r->pool_len + len + 1, 4096))
		return -ENOMEM;
	memcpy(r->pool + r->pool_len, s, len + 1);
	*off = r->pool_len;
	r->pool_len += len + 1;
	return 0;
}

int elfsym_read_segments(Elf *e, struct elfsym_segment **out, size_t *n)
{
	struct elfsym_segment *segs;
	size_t phnum;

	*out = NULL;
	*n = 0;
	if (elf_getphdrnum(e, &phnum))
		return -ENOEXEC;
	segs = calloc(phnum ? phnum : 1, sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph)) {
			free(segs);
			*n = 0;
			return -ENOEXEC;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		segs[(*n)++] = (struct elfsym_segment){
		    .vaddr = ph.p_vaddr,
		    .offset = ph.p_offset,
		    .filesz = ph.p_filesz,
		    .memsz = ph.p_memsz,
		    .flags = ph.p_flags,
		};
	}
	*out = segs;
	return 0;
}

static int read_segments(Elf *e, struct elfsym *elf)
{
	int err = elfsym_read_segments(e, &elf->segments, &elf->nr_segments);

	if (err)
		return err;
	return elf->nr_segments ? 0 : -ENOEXEC;
}

/*
 * Ranks aliases at one address: a name without a leading underscore beats
 * one with (glibc exports "__sched_yield" global and "sched_yield" weak;
 * people know the second), then a global beats a weak beats a local. The
 * size bound does not depend on the choice: build() takes the largest
 * size among the aliases.
 */
static unsigned int sym_rank(const GElf_Sym *s, const char *name)
{
	unsigned int rank;

	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		rank = 0;
		break;
	case STB_WEAK:
		rank = 1;
		break;
	default:
		rank = 2;
	}
	return (name[0] == '_' ? 4 : 0) + rank;
}

/* True when a table and its string table are within the bound; counts a breach. */
static bool table_fits(Elf *e, const GElf_Shdr *sh, struct reader *r)
{
	if (elfhdr_table_fits(e, sh, r->max_table))
		return true;
	r->breaches->tables++;
	return false;
}

/* Appends one symbol; 0 or -ENOMEM. */
static int reader_add(struct reader *r, const GElf_Sym *s, const char *name)
{
	int err;

	if (GROW_ARRAY(&r->syms, &r->cap, r->nr + 1, 256))
		return -ENOMEM;
	err = pool_add(r, name, &r->syms[r->nr].name_off);
	if (err)
		return err;
	r->syms[r->nr].value = s->st_value;
	r->syms[r->nr].size = s->st_size;
	r->syms[r->nr].rank = sym_rank(s, name);
	r->nr++;
	return 0;
}

/*
 * Appends the function symbols of one symbol table section. A table over
 * the bounds adds nothing: a part of a table would name an address after
 * the wrong function.
 */
static int read_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct reader *r)
{
	size_t count, before = r->nr, pool_before = r->pool_len;
	Elf_Data *data;

	if (!sh->sh_entsize)
		return -ENOEXEC;
	if (!table_fits(e, sh, r))
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -ENOEXEC;
	if (!data->d_buf) /* SHT_NOBITS in a split debug file */
		return 0;
	count = data->d_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		const char *name;
		int type, err;

		if (!gelf_getsym(data, (int)i, &s))
			return -ENOEXEC;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    !s.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (r->nr - before == r->max_symbols) {
			r->breaches->symbols++;
			r->nr = before;
			r->pool_len = pool_before;
			return 0;
		}
		err = reader_add(r, &s, name);
		if (err)
			return err;
	}
	return 0;
}

/* The first section of type, or NULL. */
static Elf_Scn *find_section(Elf *e, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

/* Appends the .symtab functions of e, if it has a .symtab. */
static int read_full_symtab(Elf *e, struct reader *r)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(e, SHT_SYMTAB, &sh);

	return scn ? read_symtab(e, scn, &sh, r) : 0;
}

/*
 * Reads a separate file's .symtab; a file that turns out unreadable
 * adds nothing. Only running out of memory is an error.
 */
static int read_other_symtab(Elf *other, struct reader *r)
{
	size_t before = r->nr;
	int err = read_full_symtab(other, r);

	if (err)
		r->nr = before;
	return err == -ENOMEM ? err : 0;
}

/* elfhdr_check(), counting a file with too many headers. */
static int elfsym_check_headers(int fd, const void *image, size_t size,
				struct elfsym_breaches *breaches)
{
	int err = elfhdr_check(fd, image, size);

	if (err)
		breaches->sections++;
	return err;
}

/*
 * Reads .symtab; when there is none with functions, the separate debug
 * file's (paths given); else MiniDebugInfo's, with .dynsym, which it
 * complements.
 */
static int read_symbols(Elf *e, const struct debuginfo_paths *paths, struct reader *r)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	void *image;
	size_t size;
	int err, fd;

	err = read_full_symtab(e, r);
	r->complete = r->nr > 0;
	if (err || r->nr)
		return err;
	if (paths) {
		fd = debuginfo_open(e, paths);
		if (fd >= 0) {
			Elf *debug = NULL;

			if (!elfsym_check_headers(fd, NULL, 0, r->breaches))
				debug = elf_begin(fd, ELF_C_READ, NULL);

			err = debug ? read_other_symtab(debug, r) : 0;
			elf_end(debug);
			close(fd);
			r->complete = r->nr > 0;
			if (err || r->nr)
				return err;
		}
	}
	err = debuginfo_minidebug(e, &image, &size);
	if (err == -ENOMEM)
		return err;
	if (!err) {
		Elf *mini = NULL;

		if (!elfsym_check_headers(-1, image, size, r->breaches))
			mini = elf_memory(image, size);

		err = mini ? read_other_symtab(mini, r) : 0;
		elf_end(mini);
		free(image);
		r->complete = r->nr > 0;
		if (err)
			return err;
	}
	scn = find_section(e, SHT_DYNSYM, &sh);
	return scn ? read_symtab(e, scn, &sh, r) : 0;
}

static int rawsym_cmp(const void *a, const void *b)
{
	const struct rawsym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	/* Same address, same rank: the first in the table wins (pool order is table order). */
	return x->name_off < y->name_off ? -1 : x->name_off > y->name_off;
}

/* The PT_LOAD segment (in memory) that holds vaddr, or NULL. */
static const struct elfsym_segment *segment_of(const struct elfsym *elf, uint64_t vaddr)
{
	for (size_t i = 0; i < elf->nr_segments; i++) {
		const struct elfsym_segment *seg = &elf->segments[i];

		if (vaddr >= seg->vaddr && vaddr - seg->vaddr < seg->memsz)
			return seg;
	}
	return NULL;
}

/* The end of the PT_LOAD segment (in memory) holding vaddr, or 0. */
static uint64_t segment_end(const struct elfsym *elf, uint64_t vaddr)
{
	const struct elfsym_segment *seg = segment_of(elf, vaddr);

	return seg ? seg->vaddr + seg->memsz : 0;
}

/* Sorted raw symbols to the final table: one per address, with its end. */
static int build(struct elfsym *elf, struct reader *r)
{
	size_t i = 0;

	if (r->nr)
		qsort(r->syms, r->nr, sizeof(*r->syms), rawsym_cmp);
	elf->syms = calloc(r->nr ? r->nr : 1, sizeof(*elf->syms));
	elf->ends = calloc(r->nr ? r->nr : 1, sizeof(*elf->ends));
	if (!elf->syms || !elf->ends)
		return -ENOMEM;
	while (i < r->nr) {
		const struct rawsym *s = &r->syms[i];
		size_t next = i + 1;
		uint64_t size = s->size, end;

		while (next < r->nr && r->syms[next].value == s->value) {
			if (r->syms[next].size > size)
				size = r->syms[next].size;
			next++;
		}
		if (size) {
			end = s->value + size;
			if (end < s->value)
				end = UINT64_MAX;
		} else {
			end = segment_end(elf, s->value);
			if (next < r->nr && r->syms[next].value < end)
				end = r->syms[next].value;
		}
		elf->syms[elf->nr] = (struct elfsym_symbol){
		    .value = s->value,
		    .size = size,
		    .name = r->pool + s->name_off,
		};
		elf->ends[elf->nr++] = end;
		i = next;
	}
	return 0;
}

/*
 * libelf quietly shows no sections when the section header table lies
 * past the end of a truncated file; we would then load an empty table
 * and name every address "[file+0xoff]". Say the file is broken instead.
 */
static int check_size(Elf *e, uint64_t file_size)
{
	GElf_Ehdr eh;
	uint64_t table_end;

	if (!gelf_getehdr(e, &eh))
		return -ENOEXEC;
	if (!eh.e_shoff)
		return 0;
	table_end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
	if (table_end < eh.e_shoff || table_end > file_size)
		return -ENOEXEC;
	return 0;
}

/*
 * Counts the sections debuginfo would read that are over its bounds (it
 * skips them itself). A file whose section names are over theirs has no
 * usable names for debuginfo, and is read for its tables alone.
 */
static void count_section_breaches(Elf *e, struct elfsym_breaches *breaches)
{
	Elf_Scn *scn = NULL;
	bool over = false;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		uint64_t bound;

		if (!gelf_getshdr(scn, &sh))
			continue;
		bound = debuginfo_section_bound(e, elf_ndxscn(scn), &sh);
		if (bound && sh.sh_size > bound)
			over = true;
	}
	breaches->sections += over;
}

/* Reads the table from e, a file or image of file_size bytes; takes e. */
static int open_elf(Elf *e, uint64_t file_size, const struct elfsym_options *o,
		    struct elfsym **out)
{
	struct elfsym_breaches local = { 0 };
	struct reader r = {
		.max_table = o && o->bounds.max_table ? o->bounds.max_table
						      : ELFSYM_DEFAULT_MAX_TABLE,
		.max_symbols = o && o->bounds.max_symbols ? o->bounds.max_symbols
							  : ELFSYM_DEFAULT_MAX_SYMBOLS,
		.breaches = o && o->breaches ? o->breaches : &local,
	};
	struct elfsym *elf;
	int err;

	elf = calloc(1, sizeof(*elf));
	if (!elf) {
		err = -ENOMEM;
		goto err_end;
	}
	if (elf_kind(e) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto err_end;
	}
	err = check_size(e, file_size);
	if (err)
		goto err_end;
	count_section_breaches(e, r.breaches);
	err = read_segments(e, elf);
	if (err)
		goto err_end;
	err = debuginfo_build_id(e, elf->build_id, sizeof(elf->build_id));
	elf->build_id_len = err > 0 ? (size_t)err : 0;
	err = read_symbols(e, o ? o->debug : NULL, &r);
	if (err)
		goto err_end;
	err = build(elf, &r);
	if (err)
		goto err_end;
	elf->pool = r.pool;
	elf->complete = r.complete;
	elf->bytes = sizeof(*elf) + (r.nr ? r.nr : 1) * (sizeof(*elf->syms) + sizeof(*elf->ends)) +
		     elf->nr_segments * sizeof(*elf->segments) + r.pool_cap;
	free(r.syms);
	elf_end(e);
	*out = elf;
	return 0;

err_end:
	elf_end(e);
	free(r.syms);
	free(r.pool);
	elfsym_free(elf);
	return err;
}

int elfsym_open_fd_with(int fd, const struct elfsym_options *options, struct elfsym **out)
{
	struct elfsym_breaches local = { 0 };
	struct stat st;
	Elf *e;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE || fstat(fd, &st))
		return -ENOEXEC;
	if (elfsym_check_headers(fd, NULL, 0,
				 options && options->breaches ? options->breaches : &local))
		return -ENOEXEC;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -ENOEXEC;
	return open_elf(e, (uint64_t)st.st_size, options, out);
}

Elf *elfsym_memory(const void *image, size_t size, char **copy)
{
	Elf *e;

	*copy = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*copy = malloc(size ? size : 1);
	if (!*copy)
		return NULL;
	memcpy(*copy, image, size);
	e = elf_memory(*copy, size);
	if (!e) {
		free(*copy);
		*copy = NULL;
	}
	return e;
}

int elfsym_open_mem_with(const void *image, size_t size, const struct elfsym_options *options,
			 struct elfsym **out)
{
	struct elfsym_breaches local = { 0 };
	char *copy;
	Elf *e;
	int err;

	*out = NULL;
	if (elfsym_check_headers(-1, image, size,
				 options && options->breaches ? options->breaches : &local))
		return -ENOEXEC;
	/* libelf wants a writable buffer; the table keeps nothing of it. */
	e = elfsym_memory(image, size, &copy);
	if (!e)
		return -ENOEXEC;
	err = open_elf(e, size, options, out);
	free(copy);
	return err;
}

int elfsym_open_fd(int fd, struct elfsym **out)
{
	return elfsym_open_fd_with(fd, NULL, out);
}

int elfsym_open_fd_debug(int fd, const struct debuginfo_paths *paths, struct elfsym **out)
{
	struct elfsym_options options = { .debug = paths };

	return elfsym_open_fd_with(fd, &options, out);
}

int elfsym_open_mem(const void *image, size_t size, struct elfsym **out)
{
	return elfsym_open_mem_with(image, size, NULL, out);
}

int elfsym_open(const char *path, struct elfsym **out)
{
	return elfsym_open_debug(path, NULL, out);
}

int elfsym_open_debug(const char *path, const struct debuginfo_paths *paths, struct elfsym **out)
{
	struct target_path p = { .path = path };
	struct target_file f;
	int err;

	*out = NULL;
	err = target_open(paths ? paths->gate : NULL, &p, &f);
	if (err)
		return err;
	err = elfsym_open_fd_debug(f.fd, paths, out);
	target_file_close(&f);
	return err;
}

void elfsym_free(struct elfsym *elf)
{
	if (!elf)
		return;
	free(elf->syms);
	free(elf->ends);
	free(elf->segments);
	free(elf->pool);
	free(elf->ranges);
	free(elf);
}

const unsigned char *elfsym_build_id(const struct elfsym *elf, size_t *len)
{
	*len = elf->build_id_len;
	return elf->build_id_len ? elf->build_id : NULL;
}

size_t elfsym_count(const struct elfsym *elf)
{
	return elf->nr;
}

size_t elfsym_bytes(const struct elfsym *elf)
{
	return elf ? elf->bytes : 0;
}

size_t elfsym_segment_count(const struct elfsym *elf)
{
	return elf->nr_segments;
}

const struct elfsym_segment *elfsym_segment_at(const struct elfsym *elf, size_t i)
{
	return i < elf->nr_segments ? &elf->segments[i] : NULL;
}

int elfsym_offset_to_vaddr(const struct elfsym *elf, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < elf->nr_segments; i++) {
		const struct elfsym_segment *seg = &elf->segments[i];

		if (offset >= seg->offset && offset - seg->offset < seg->filesz) {
			*vaddr = offset - seg->offset + seg->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * How many of the n entries at base, stride bytes apart and sorted by the
 * address each begins with (elfsym_symbol.value, elfsym_range.start),
 * begin at or below vaddr: the last of those is the candidate to hold it.
 */
_Static_assert(offsetof(struct elfsym_symbol, value) == 0, "count_upto reads the first field");
_Static_assert(offsetof(struct elfsym_range, start) == 0, "count_upto reads the first field");

static size_t count_upto(const void *base, size_t n, size_t stride, uint64_t vaddr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t first;

		memcpy(&first, (const char *)base + mid * stride, sizeof(first));
		if (first <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t symbols_upto(const struct elfsym *elf, uint64_t vaddr)
{
	return count_upto(elf->syms, elf->nr, sizeof(*elf->syms), vaddr);
}

const struct elfsym_symbol *elfsym_lookup(const struct elfsym *elf, uint64_t vaddr,
					  uint64_t *offset)
{
	size_t lo = symbols_upto(elf, vaddr);

	if (!lo || vaddr >= elf->ends[lo - 1])
		return NULL;
	if (offset)
		*offset = vaddr - elf->syms[lo - 1].value;
	return &elf->syms[lo - 1];
}

bool elfsym_complete(const struct elfsym *elf)
{
	return elf->complete;
}

void elfsym_take_ranges(struct elfsym *elf, struct elfsym_range *ranges, size_t n)
{
	elf->bytes -= elf->nr_ranges * sizeof(*elf->ranges);
	free(elf->ranges);
	elf->ranges = n ? ranges : NULL;
	elf->nr_ranges = n;
	elf->bytes += n * sizeof(*ranges);
	if (!n)
		free(ranges);
}

int elfsym_function_start(const struct elfsym *elf, uint64_t vaddr, uint64_t *start)
{
	const struct elfsym_segment *seg = segment_of(elf, vaddr);
	size_t r = count_upto(elf->ranges, elf->nr_ranges, sizeof(*elf->ranges), vaddr);
	size_t s = symbols_upto(elf, vaddr);
	uint64_t gap;

	if (!seg)
		return -ENOENT;
	if (r && vaddr < elf->ranges[r - 1].end) {
		*start = elf->ranges[r - 1].start;
		return 0;
	}
	gap = seg->vaddr;
	if (r && elf->ranges[r - 1].end > gap)
		gap = elf->ranges[r - 1].end;
	/* A symbol before vaddr that still held it would have named it. */
	if (s && elf->ends[s - 1] <= vaddr && elf->ends[s - 1] > gap)
		gap = elf->ends[s - 1];
	*start = gap;
	return 0;
}
