/*
 * inlines: the inlined functions at an address, from a file's DWARF,
 * cached per file and per address (see inlines.h).
 *
 * The walk is our own rather than dwarf_getscopes(): that one answers
 * "which scopes see a variable here", and for an inlined instance it
 * climbs the abstract definition, not the concrete caller; we want the
 * concrete nesting. From the compile unit that holds the address (the
 * .debug_aranges look-up of dwarf_addrdie) we go down the one child at
 * each level whose ranges hold it, through subprograms, lexical blocks
 * and inlined subroutines, and collect the inlined subroutines on the
 * way. Namespaces and classes have no ranges of their own, so their
 * children are searched in turn. Depth is bounded (INLINES_MAX_DEPTH), so
 * a hostile file cannot make the walk recurse without end.
 *
 * libdw is linked, as libelf is: both come from elfutils' one source
 * package, so a host with libelf1 has libdw1 at the same version, and the
 * walk calls a dozen functions per frame, which a dlopen() table would
 * only make harder to read (libdebuginfod is dlopen()ed because it pulls
 * in libcurl and is often absent).
 */
#include "symbolizer/inlines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INLINES_BUCKETS 4096 /* chain table buckets (power of two) */

enum file_state { FILE_CLOSED, FILE_OPEN, FILE_NONE };

/* A file by build-id: its DWARF while open, or that it has none. */
struct inl_file {
	unsigned char id[INLINES_MAX_ID];
	size_t len;
	enum file_state state;
	bool opened; /* counted in files_dwarf */
	uint8_t failures; /* opens that failed for another reason than -ENOENT */
	int fd;	/* while open */
	Elf *elf;
	Dwarf *dwarf;
	uint64_t bytes; /* debug sections' size, counted while open */
	uint64_t used;	/* look-up clock of the last use */
};

/* One cached chain: names follow the struct, as offsets into its tail. */
struct inl_chain {
	struct inl_chain *next;
	uint64_t vaddr;
	size_t len, size; /* build-id length; allocation size */
	unsigned char id[INLINES_MAX_ID];
	size_t n;
	const char *names[]; /* n pointers, then the strings */
};

struct inlines {
	uint64_t chain_max, dwarf_max;
	struct inl_chain **buckets;
	struct inl_file files[INLINES_MAX_FILES];
	size_t n_files, n_open;
	uint64_t clock;
	const char *found[INLINES_MAX_DEPTH]; /* the walk's chain, outermost first */
	size_t n_found;
	struct inlines_stats stats;
};

struct inlines *inlines_new(const struct inlines_config *config)
{
	struct inlines *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->buckets = calloc(INLINES_BUCKETS, sizeof(*in->buckets));
	if (!in->buckets) {
		free(in);
		return NULL;
	}
	in->chain_max = config && config->chain_bytes ? config->chain_bytes
						      : INLINES_DEFAULT_CHAIN_BYTES;
	in->dwarf_max = config && config->dwarf_bytes ? config->dwarf_bytes
						      : INLINES_DEFAULT_DWARF_BYTES;
	in->stats.chain_bytes = INLINES_BUCKETS * sizeof(*in->buckets);
	return in;
}

/* Closes a file's DWARF and fd; its next look-up asks open again. */
static void file_close(struct inlines *in, struct inl_file *f)
{
	if (f->state != FILE_OPEN)
		return;
	dwarf_end(f->dwarf);
	elf_end(f->elf);
	close(f->fd);
	f->dwarf = NULL;
	f->elf = NULL;
	f->fd = -1;
	in->stats.dwarf_bytes -= f->bytes;
	in->n_open--;
	f->bytes = 0;
	f->state = FILE_CLOSED;
}

static void chains_drop(struct inlines *in)
{
	for (size_t b = 0; b < INLINES_BUCKETS; b++) {
		struct inl_chain *c = in->buckets[b], *next;

		for (; c; c = next) {
			next = c->next;
			free(c);
		}
		in->buckets[b] = NULL;
	}
	in->stats.chain_bytes = INLINES_BUCKETS * sizeof(*in->buckets);
}

void inlines_free(struct inlines *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n_files; i++)
		file_close(in, &in->files[i]);
	chains_drop(in);
	free(in->buckets);
	free(in);
}

static size_t bucket_of(const unsigned char *id, size_t len, uint64_t vaddr)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ id[i]) * 1099511628211ULL;
	h ^= vaddr * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	return (size_t)(h & (INLINES_BUCKETS - 1));
}

/* The bytes libdw will read of e: its .debug_* sections, uncompressed. */
static uint64_t debug_bytes(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;

	if (elf_getshdrstrndx(e, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7))
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
			sum += ch.ch_size;
		else
			sum += sh.sh_size;
	}
	return sum;
}

/* Closes the least recently used open files until one more of bytes fits. */
static void make_room(struct inlines *in, uint64_t bytes)
{
	while (in->stats.dwarf_bytes + bytes > in->dwarf_max || in->n_open >= INLINES_MAX_OPEN) {
		struct inl_file *lru = NULL;

		for (size_t i = 0; i < in->n_files; i++)
			if (in->files[i].state == FILE_OPEN &&
			    (!lru || in->files[i].used < lru->used))
				lru = &in->files[i];
		if (!lru)
			return;
		file_close(in, lru);
	}
}

/* Opens f's DWARF from its fd; a file without any becomes FILE_NONE. */
static void file_open(struct inlines *in, struct inl_file *f)
{
	uint64_t bytes;

	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	bytes = f->elf ? debug_bytes(f->elf) : 0;
	if (bytes > in->dwarf_max)
		in->stats.too_big++;
	if (!bytes || bytes > in->dwarf_max)
		goto none;
	make_room(in, bytes);
	f->dwarf = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	if (!f->dwarf)
		goto none;
	f->bytes = bytes;
	in->stats.dwarf_bytes += bytes;
	in->n_open++;
	f->state = FILE_OPEN;
	return;
none:
	elf_end(f->elf);
	f->elf = NULL;
	close(f->fd);
	f->fd = -1;
	f->state = FILE_NONE;
	in->stats.files_none++;
}

/* The record of build-id id, made (recycling the least recently used) if new. */
static struct inl_file *file_of(struct inlines *in, const unsigned char *id, size_t len)
{
	struct inl_file *f = NULL;

	for (size_t i = 0; i < in->n_files; i++)
		if (in->files[i].len == len && !memcmp(in->files[i].id, id, len))
			return &in->files[i];
	if (in->n_files < INLINES_MAX_FILES) {
		f = &in->files[in->n_files++];
	} else {
		f = &in->files[0];
		for (size_t i = 1; i < in->n_files; i++)
			if (in->files[i].used < f->used)
				f = &in->files[i];
		file_close(in, f);
	}
	*f = (struct inl_file){ .len = len, .state = FILE_CLOSED, .fd = -1 };
	memcpy(f->id, id, len);
	return f;
}

/* The DWARF of f, opened through open if need be; NULL: none. */
static Dwarf *file_dwarf(struct inlines *in, struct inl_file *f, inlines_open_fn open, void *arg)
{
	f->used = ++in->clock;
	if (f->state != FILE_CLOSED)
		return f->state == FILE_OPEN ? f->dwarf : NULL;
	f->fd = open(arg);
	if (f->fd < 0) {
		/* No DWARF anywhere is final; a failure that may pass (no fds,
		 * the process gone, a stalled gate) is tried again, a few times. */
		if (f->fd == -ENOENT || ++f->failures >= INLINES_OPEN_TRIES) {
			f->state = FILE_NONE;
			in->stats.files_none++;
		}
		f->fd = -1;
		return NULL;
	}
	file_open(in, f);
	if (f->state == FILE_OPEN && !f->opened) {
		f->opened = true;
		in->stats.files_dwarf++;
	}
	return f->state == FILE_OPEN ? f->dwarf : NULL;
}

/* An inlined instance's name: its linkage name (mangled; the caller
 * demangles), else its name, from its abstract origin. */
static const char *inlined_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return name ? name : "[inlined]";
}

/*
 * Goes down from parent to the scope that holds pc, appending the inlined
 * subroutines on the way to in->found. Returns true once pc's innermost
 * scope is reached below parent.
 */
static bool walk(struct inlines *in, Dwarf_Die *parent, Dwarf_Addr pc, unsigned int depth)
{
	Dwarf_Die child;

	if (depth >= INLINES_MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return false;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, pc) != 1)
				break;
			if (dwarf_tag(&child) == DW_TAG_inlined_subroutine &&
			    in->n_found < INLINES_MAX_DEPTH)
				in->found[in->n_found++] = inlined_name(&child);
			walk(in, &child, pc, depth + 1);
			return true;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_module:
			if (walk(in, &child, pc, depth + 1))
				return true;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Keeps in->found as the chain of (id, vaddr): NULL when out of memory. */
static struct inl_chain *chain_put(struct inlines *in, const unsigned char *id, size_t len,
				   uint64_t vaddr)
{
	size_t size = sizeof(struct inl_chain) + in->n_found * sizeof(char *), b;
	struct inl_chain *c;
	char *tail;

	for (size_t i = 0; i < in->n_found; i++)
		size += strlen(in->found[i]) + 1;
	if (in->stats.chain_bytes + size > in->chain_max) {
		chains_drop(in);
		in->stats.flushes++;
	}
	c = malloc(size);
	if (!c)
		return NULL;
	c->vaddr = vaddr;
	c->len = len;
	c->size = size;
	memcpy(c->id, id, len);
	c->n = in->n_found;
	tail = (char *)&c->names[c->n];
	for (size_t i = 0; i < c->n; i++) {
		size_t l = strlen(in->found[i]) + 1;

		memcpy(tail, in->found[i], l);
		c->names[i] = tail;
		tail += l;
	}
	b = bucket_of(id, len, vaddr);
	c->next = in->buckets[b];
	in->buckets[b] = c;
	in->stats.chain_bytes += size;
	return c;
}

int inlines_lookup(struct inlines *in, const unsigned char *id, size_t len, uint64_t vaddr,
		   inlines_open_fn open, void *arg, const char *const **names, size_t *n)
{
	struct inl_chain *c = NULL;
	struct inl_file *f;
	Dwarf_Die cu;
	Dwarf *dw;

	*n = 0;
	*names = NULL;
	if (!len || len > INLINES_MAX_ID)
		return 0;
	for (c = in->buckets[bucket_of(id, len, vaddr)]; c; c = c->next)
		if (c->vaddr == vaddr && c->len == len && !memcmp(c->id, id, len))
			break;
	if (c) {
		in->stats.hits++;
		goto found;
	}
	f = file_of(in, id, len);
	dw = file_dwarf(in, f, open, arg);
	if (!dw)
		return 0;
	in->stats.misses++;
	in->n_found = 0;
	if (dwarf_addrdie(dw, vaddr, &cu))
		walk(in, &cu, vaddr, 0);
	c = chain_put(in, id, len, vaddr);
	if (!c)
		return -ENOMEM;
found:
	*names = c->names;
	*n = c->n;
	return 0;
}

void inlines_stats(const struct inlines *in, struct inlines_stats *stats)
{
	*stats = in->stats;
}
