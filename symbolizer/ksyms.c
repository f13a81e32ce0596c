/*
 * ksyms: the kernel symbol table, read from kallsyms.
 *
 * Each kallsyms line is "ADDR TYPE NAME [MODULE]". We keep text symbols,
 * types t, T, w and W: in kallsyms a weak symbol is a weak function (weak
 * objects are v and V), and sampled instruction pointers only ever land
 * in text. Every other symbol (data, rodata, bss) is kept only as a
 * boundary, because kallsyms has no sizes and the next symbol of any kind
 * is the best end we know. _etext and _einittext are boundaries too: they
 * close the core and init text. Absolute symbols (a, A) carry no location
 * and are dropped.
 *
 * Several names often share one address (_stext, _text and a function);
 * we keep one per address, preferring a global over a local and a name
 * without a leading underscore, so stacks read with the names people know.
 */
#include "bpf/grow.h"
#include "symbolizer/ksyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last symbol of a module with no /proc/modules entry (the ftrace
 * trampoline) gets one page: that is what such trampolines occupy. */
#define KSYMS_TAIL_GUESS 4096

enum kentry_kind { KENTRY_TEXT, KENTRY_BOUNDARY };

/* A parsed line, before sorting; names are offsets in the pool. */
struct kentry {
	uint64_t addr;
	size_t name_off;
	size_t module_off; /* SIZE_MAX: vmlinux */
	unsigned int line; /* input order, to keep sorting stable */
	unsigned char kind;
	unsigned char rank; /* lower wins among names at one address */
};

struct kmodule {
	size_t name_off;
	uint64_t start, end;
};

/*
 * A run of symbols that share the top 32 bits of their addresses and their
 * module: kernel text lies within a few GiB, and a module's symbols come
 * together, so a table has a few hundred runs for 100,000 symbols.
 */
struct krun {
	uint32_t first; /* index of its first symbol; it ends where the next run starts */
	uint32_t high;	/* its addresses' top 32 bits */
	uint16_t module; /* 0: vmlinux; else 1 + an index in module_names */
};

/*
 * The longest name a kernel writes in kallsyms (KSYM_NAME_LEN, 512 with
 * its NUL since 6.1) and a module's (MODULE_NAME_LEN, 56): a longer line
 * is not kallsyms, and is skipped. Bounded names bound the bytes between
 * the names of KSYMS_BLOCK symbols in a row (see struct ksyms).
 */
#define KSYMS_NAME_MAX 511
#define KSYMS_MODULE_MAX 255

/* Symbols whose names share one 32-bit offset, each adding 16 bits to it. */
#define KSYMS_BLOCK 16

/* A length of this or more is in the table's list of long ones. */
#define KSYMS_LONG UINT16_MAX

/* A symbol 64 KiB long or more (a handful in a kernel), by its index. */
struct klong {
	uint32_t index, len;
};

/*
 * The table, as compact as a lookup allows: it lives as long as the
 * profiler, and a distribution kernel has over 100,000 text symbols. An
 * array per field (9.25 bytes a symbol, not 32 for a struct of pointers
 * and an array of ends), and a pool of the kept names only, each module's
 * name once, sized to fit. Lengths are 16 bits, the few longer ones
 * listed apart; a name's offset in the pool is its block's (one per
 * KSYMS_BLOCK symbols) plus 16 bits of its own: the pool grows in the
 * symbols' order, and 16 names of bounded length and their modules' fit
 * in 64 KiB. Since Linux 6.2 nearly every function follows its padding's
 * symbol ("__pfx_" and its name, 16 bytes below): the padding is no entry
 * of its own but its length in the function's entry, and the pool holds
 * its name, of which the function's is the end.
 */
struct ksyms {
	uint32_t *lows;	       /* text symbols' addresses' low 32 bits, sorted, one symbol per address */
	uint16_t *lens;	       /* bytes from each to its end (the first address past it); KSYMS_LONG: in longs */
	struct klong *longs;   /* by index */
	uint32_t *name_blocks; /* the name's offset in pool: its block's here, */
	uint16_t *name_offs;   /* plus its own here */
	uint8_t *pads;	       /* bytes of its padding's symbol just below it; 0: none */
	struct krun *runs;     /* sorted by address */
	uint32_t *module_names; /* offsets in pool */
	size_t nr, nr_runs, nr_modules, nr_pads, nr_longs;
	bool hidden;
	char *pool;
	size_t pool_len;
};

struct kparse {
	struct kentry *entries;
	size_t nr, cap;
	struct kmodule *modules;
	size_t nr_modules, cap_modules;
	char *pool;
	size_t pool_len, pool_cap;
	bool any_nonzero;
};

static int pool_add(struct kparse *p, const char *s, size_t len, size_t *off)
{
	if (GROW_ARRAY(&p->pool, &p->pool_cap, p->pool_len + len + 1, 4096))
		return -ENOMEM;
	memcpy(p->pool + p->pool_len, s, len);
	p->pool[p->pool_len + len] = '\0';
	*off = p->pool_len;
	p->pool_len += len + 1;
	return 0;
}

static int entry_add(struct kparse *p, const struct kentry *e)
{
	if (GROW_ARRAY(&p->entries, &p->cap, p->nr + 1, 1024))
		return -ENOMEM;
	p->entries[p->nr++] = *e;
	return 0;
}

static unsigned char name_rank(char type, const char *name)
{
	unsigned char rank = 0;

	if (type == 't' || type == 'w')
		rank += 2;
	if (name[0] == '_')
		rank += 1;
	return rank;
}

/* Parses one kallsyms line; malformed lines are skipped, not fatal. */
static int parse_line(struct kparse *p, char *line, unsigned int lineno)
{
	struct kentry e = {.module_off = SIZE_MAX, .line = lineno};
	char *end, *name, *module;
	char type;
	int err;

	e.addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	type = end[1];
	if (!type || end[2] != ' ')
		return 0;
	name = end + 3;
	name[strcspn(name, "\n")] = '\0';
	module = strchr(name, '\t');
	if (module) {
		*module++ = '\0';
		if (*module == '[') {
			size_t len = strcspn(module + 1, "]");

			if (len > KSYMS_MODULE_MAX)
				return 0;
			err = pool_add(p, module + 1, len, &e.module_off);
			if (err)
				return err;
		}
	}
	if (!*name || type == 'a' || type == 'A' || strlen(name) > KSYMS_NAME_MAX)
		return 0;
	if (e.addr)
		p->any_nonzero = true;

	switch (type) {
	case 't':
	case 'T':
	case 'w':
	case 'W':
		e.kind = KENTRY_TEXT;
		break;
	default:
		e.kind = KENTRY_BOUNDARY;
	}
	if (!strcmp(name, "_etext") || !strcmp(name, "_einittext"))
		e.kind = KENTRY_BOUNDARY;
	e.rank = name_rank(type, name);
	err = pool_add(p, name, strlen(name), &e.name_off);
	if (err)
		return err;
	return entry_add(p, &e);
}

/* Reads "modules" next to the kallsyms file: "name size refs deps state addr". */
static int load_modules(struct kparse *p, const char *kallsyms_path)
{
	const char *slash = strrchr(kallsyms_path, '/');
	size_t dir_len = slash ? (size_t)(slash - kallsyms_path) + 1 : 0;
	char path[4096], line[1024];
	FILE *f;
	int err = 0;

	if (dir_len + sizeof("modules") > sizeof(path))
		return 0;
	memcpy(path, kallsyms_path, dir_len);
	memcpy(path + dir_len, "modules", sizeof("modules"));
	f = fopen(path, "re");
	if (!f)
		return 0; /* optional: module ends then come from the next symbol */
	while (fgets(line, sizeof(line), f)) {
		char name[256];
		unsigned long long size, addr;
		struct kmodule m;

		if (sscanf(line, "%255s %llu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr)
			continue;
		if (GROW_ARRAY(&p->modules, &p->cap_modules, p->nr_modules + 1, 64)) {
			err = -ENOMEM;
			break;
		}
		m.start = addr;
		m.end = addr + size;
		err = pool_add(p, name, strlen(name), &m.name_off);
		if (err)
			break;
		p->modules[p->nr_modules++] = m;
	}
	fclose(f);
	return err;
}

static int kentry_cmp(const void *a, const void *b)
{
	const struct kentry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* At one address a text symbol sorts first, so it is the one kept. */
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Sorts the entries as kentry_cmp() orders them. /proc/kallsyms comes
 * nearly sorted: by address, but for the names at one address and for a
 * few late entries (BPF programs, loaded after the modules). A qsort() of
 * the whole table was a sixth of the load, so an insertion sort, which
 * costs the entries it moves; past a bound (input far from sorted) it
 * stops and qsort() sorts the whole table.
 */
static void sort_entries(struct kentry *e, size_t n)
{
	size_t budget = 4 * n;

	for (size_t i = 1; i < n; i++) {
		struct kentry x = e[i];
		size_t j = i;

		for (; j > 0 && kentry_cmp(&e[j - 1], &x) > 0; j--) {
			if (!budget--) {
				e[j] = x; /* still a permutation of the input */
				qsort(e, n, sizeof(*e), kentry_cmp);
				return;
			}
			e[j] = e[j - 1];
		}
		e[j] = x;
	}
}

static uint64_t module_end(const struct kparse *p, const struct kentry *e)
{
	for (size_t i = 0; i < p->nr_modules; i++) {
		const struct kmodule *m = &p->modules[i];

		if (e->addr >= m->start && e->addr < m->end &&
		    !strcmp(p->pool + m->name_off, p->pool + e->module_off))
			return m->end;
	}
	return UINT64_MAX;
}

/* Symbol i's name, as an offset in the pool. */
static uint32_t name_of(const struct ksyms *ks, size_t i)
{
	return ks->name_blocks[i / KSYMS_BLOCK] + ks->name_offs[i];
}

/* Symbol i's length, from its address to the first address past it. */
static uint32_t len_of(const struct ksyms *ks, size_t i)
{
	size_t lo = 0, hi = ks->nr_longs;

	if (ks->lens[i] < KSYMS_LONG)
		return ks->lens[i];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->longs[mid].index < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ks->nr_longs && ks->longs[lo].index == i ? ks->longs[lo].len : KSYMS_LONG;
}

/* The table's pool: appends the n bytes at s and a NUL, and gives their offset. */
static int kept_add(struct ksyms *ks, size_t *cap, size_t *len, const char *s, size_t n,
		    uint32_t *off)
{
	if (*len + n + 1 > UINT32_MAX)
		return -EOVERFLOW; /* not kallsyms as any kernel writes it */
	if (GROW_ARRAY(&ks->pool, cap, *len + n + 1, 1 << 16))
		return -ENOMEM;
	memcpy(ks->pool + *len, s, n + 1);
	*off = (uint32_t)*len;
	*len += n + 1;
	return 0;
}

/*
 * Keeps a name, at *off. A name often ends the one kept just before it
 * (an unfolded padding's and its function's, or two aliases): it is then
 * those last bytes of the pool, not a copy.
 */
static int name_add(struct ksyms *ks, size_t *cap, size_t *len, const char *name, uint32_t *off)
{
	size_t n = strlen(name);

	if (ks->nr) {
		uint32_t prev = name_of(ks, ks->nr - 1);
		size_t prev_len = strlen(ks->pool + prev);

		if (prev_len >= n && !memcmp(ks->pool + prev + prev_len - n, name, n)) {
			*off = prev + (uint32_t)(prev_len - n);
			return 0;
		}
	}
	return kept_add(ks, cap, len, name, n, off);
}

/* The index + 1 of the module named name, added if new; 0 with an error. */
static uint16_t module_index(struct ksyms *ks, size_t *cap, size_t *pool_cap, size_t *pool_len,
			     const char *name, int *err)
{
	uint32_t off;

	/* Symbols sorted by address come module by module: the last one first. */
	for (size_t i = ks->nr_modules; i-- > 0;)
		if (!strcmp(ks->pool + ks->module_names[i], name))
			return (uint16_t)(i + 1);
	if (ks->nr_modules == UINT16_MAX - 1) {
		*err = -EOVERFLOW;
		return 0;
	}
	if (GROW_ARRAY(&ks->module_names, cap, ks->nr_modules + 1, 64)) {
		*err = -ENOMEM;
		return 0;
	}
	*err = kept_add(ks, pool_cap, pool_len, name, strlen(name), &off);
	if (*err)
		return 0;
	ks->module_names[ks->nr_modules++] = off;
	return (uint16_t)ks->nr_modules;
}

/* Blocks of names for n symbols. */
static size_t blocks(size_t n)
{
	return (n + KSYMS_BLOCK - 1) / KSYMS_BLOCK;
}

/* Gives back what an array allocated past its last element; keeps it if that fails. */
static void *fit(void *array, size_t bytes)
{
	void *fitted = realloc(array, bytes ? bytes : 1);

	if (!fitted)
		return array; /* realloc() left it as it was */
	return fitted;
}

#define PAD_PREFIX "__pfx_"
#define PAD_PREFIX_LEN (sizeof(PAD_PREFIX) - 1)

/* A text symbol on its way into the table; a NULL name: none. */
struct kept {
	uint64_t addr, end;
	const char *name;
	uint16_t module;
};

struct kbuild {
	size_t pool_cap, pool_len, modules_cap, runs_cap, longs_cap;
};

/*
 * Appends a symbol whose name is at name in the pool, with pad bytes of
 * padding below it, starting a run where its top bits or module change.
 */
static int keep(struct ksyms *ks, struct kbuild *b, const struct kept *k, uint32_t name,
		uint8_t pad)
{
	uint32_t high = (uint32_t)(k->addr >> 32), len;
	struct krun *last = ks->nr_runs ? &ks->runs[ks->nr_runs - 1] : NULL;

	if (!last || last->high != high || last->module != k->module) {
		if (GROW_ARRAY(&ks->runs, &b->runs_cap, ks->nr_runs + 1, 64))
			return -ENOMEM;
		ks->runs[ks->nr_runs++] =
		    (struct krun){ .first = (uint32_t)ks->nr, .high = high, .module = k->module };
	}
	ks->lows[ks->nr] = (uint32_t)k->addr;
	/* end > addr: the next address is higher, and a module ends a symbol only
	 * from inside it. No function is 4 GiB long: past that, nothing resolves. */
	len = k->end - k->addr > UINT32_MAX ? UINT32_MAX : (uint32_t)(k->end - k->addr);
	if (len >= KSYMS_LONG) {
		if (GROW_ARRAY(&ks->longs, &b->longs_cap, ks->nr_longs + 1, 16))
			return -ENOMEM;
		ks->longs[ks->nr_longs++] = (struct klong){ .index = (uint32_t)ks->nr, .len = len };
		len = KSYMS_LONG;
	}
	ks->lens[ks->nr] = (uint16_t)len;
	/* The pool only grows, in the symbols' order: name is at or past its block's first. */
	if (ks->nr % KSYMS_BLOCK == 0)
		ks->name_blocks[ks->nr / KSYMS_BLOCK] = name;
	if (name - ks->name_blocks[ks->nr / KSYMS_BLOCK] > UINT16_MAX)
		return -EOVERFLOW; /* cannot happen with names of bounded length */
	ks->name_offs[ks->nr] = (uint16_t)(name - ks->name_blocks[ks->nr / KSYMS_BLOCK]);
	ks->pads[ks->nr++] = pad;
	return 0;
}

static int keep_named(struct ksyms *ks, struct kbuild *b, const struct kept *k)
{
	uint32_t name;
	int err = name_add(ks, &b->pool_cap, &b->pool_len, k->name, &name);

	return err ? err : keep(ks, b, k, name, 0);
}

/* Whether pad is fn's padding: "__pfx_" and fn's name, in its module, ending where fn starts. */
static bool pads(const struct kept *pad, const struct kept *fn)
{
	return pad->end == fn->addr && fn->addr - pad->addr <= UINT8_MAX &&
	       pad->module == fn->module && !strcmp(pad->name + PAD_PREFIX_LEN, fn->name);
}

/*
 * Keeps the next text symbol k. A padding's symbol waits in *pending for
 * the next one: if that is its function, both are one entry.
 */
static int keep_text(struct ksyms *ks, struct kbuild *b, struct kept *pending,
		     const struct kept *k)
{
	uint32_t name;
	int err;

	if (pending->name) {
		const struct kept pad = *pending;

		pending->name = NULL;
		if (pads(&pad, k)) {
			err = name_add(ks, &b->pool_cap, &b->pool_len, pad.name, &name);
			if (err)
				return err;
			ks->nr_pads++;
			return keep(ks, b, k, name + PAD_PREFIX_LEN, (uint8_t)(k->addr - pad.addr));
		}
		err = keep_named(ks, b, &pad);
		if (err)
			return err;
	}
	if (!strncmp(k->name, PAD_PREFIX, PAD_PREFIX_LEN) && k->name[PAD_PREFIX_LEN]) {
		*pending = *k;
		return 0;
	}
	return keep_named(ks, b, k);
}

/* Builds the final table from sorted entries: one text symbol per address. */
static int build(struct ksyms *ks, struct kparse *p)
{
	size_t i = 0, n = p->nr ? p->nr : 1;
	struct kbuild b = {0};
	struct kept pending = {0};
	int err = 0;

	if (p->nr > UINT32_MAX)
		return -EOVERFLOW; /* not kallsyms as any kernel writes it */
	/* calloc() checks n * size for overflow, and large blocks come zeroed anyway. */
	ks->lows = calloc(n, sizeof(*ks->lows));
	ks->lens = calloc(n, sizeof(*ks->lens));
	ks->name_blocks = calloc(n / KSYMS_BLOCK + 1, sizeof(*ks->name_blocks));
	ks->name_offs = calloc(n, sizeof(*ks->name_offs));
	ks->pads = calloc(n, sizeof(*ks->pads));
	if (!ks->lows || !ks->lens || !ks->name_blocks || !ks->name_offs || !ks->pads)
		return -ENOMEM;
	while (i < p->nr) {
		const struct kentry *e = &p->entries[i];
		size_t next = i + 1;

		while (next < p->nr && p->entries[next].addr == e->addr)
			next++;
		if (e->kind == KENTRY_TEXT) {
			struct kept k = { .addr = e->addr, .name = p->pool + e->name_off };

			if (next < p->nr)
				k.end = p->entries[next].addr;
			else if (e->addr > UINT64_MAX - KSYMS_TAIL_GUESS)
				k.end = UINT64_MAX;
			else
				k.end = e->addr + KSYMS_TAIL_GUESS;
			if (e->module_off != SIZE_MAX) {
				uint64_t mod_end = module_end(p, e);

				if (mod_end < k.end)
					k.end = mod_end;
				k.module = module_index(ks, &b.modules_cap, &b.pool_cap, &b.pool_len,
							p->pool + e->module_off, &err);
				if (err)
					return err;
			}
			err = keep_text(ks, &b, &pending, &k);
			if (err)
				return err;
		}
		i = next;
	}
	if (pending.name) {
		err = keep_named(ks, &b, &pending);
		if (err)
			return err;
	}
	ks->lows = fit(ks->lows, ks->nr * sizeof(*ks->lows));
	ks->lens = fit(ks->lens, ks->nr * sizeof(*ks->lens));
	ks->name_blocks = fit(ks->name_blocks, blocks(ks->nr) * sizeof(*ks->name_blocks));
	ks->name_offs = fit(ks->name_offs, ks->nr * sizeof(*ks->name_offs));
	ks->longs = fit(ks->longs, ks->nr_longs * sizeof(*ks->longs));
	ks->pads = fit(ks->pads, ks->nr * sizeof(*ks->pads));
	ks->runs = fit(ks->runs, ks->nr_runs * sizeof(*ks->runs));
	ks->pool = fit(ks->pool, b.pool_len);
	ks->pool_len = b.pool_len;
	return 0;
}

int ksyms_load(const char *path, struct ksyms **out)
{
	struct kparse p = {0};
	struct ksyms *ks;
	unsigned int lineno = 0;
	char line[1024];
	FILE *f;
	int err;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = -ENOMEM;
		goto err_close;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		/* A line longer than the buffer: skip its rest, it is no symbol we want. */
		if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		err = parse_line(&p, line, lineno++);
		if (err)
			goto err_parse;
	}
	if (!p.nr) {
		err = -EINVAL;
		goto err_parse;
	}
	ks->hidden = !p.any_nonzero;
	if (!ks->hidden) {
		err = load_modules(&p, path);
		if (err)
			goto err_parse;
		sort_entries(p.entries, p.nr);
		err = build(ks, &p);
		if (err)
			goto err_parse;
	}
	free(p.entries);
	free(p.modules);
	free(p.pool);
	fclose(f);
	*out = ks;
	return 0;

err_parse:
	free(p.entries);
	free(p.modules);
	free(p.pool);
	ksyms_free(ks);
err_close:
	fclose(f);
	return err;
}

void ksyms_free(struct ksyms *ksyms)
{
	if (!ksyms)
		return;
	free(ksyms->lows);
	free(ksyms->lens);
	free(ksyms->name_blocks);
	free(ksyms->name_offs);
	free(ksyms->longs);
	free(ksyms->pads);
	free(ksyms->runs);
	free(ksyms->module_names);
	free(ksyms->pool);
	free(ksyms);
}

bool ksyms_hidden(const struct ksyms *ksyms)
{
	return ksyms->hidden;
}

size_t ksyms_count(const struct ksyms *ksyms)
{
	return ksyms->nr + ksyms->nr_pads;
}

size_t ksyms_bytes(const struct ksyms *ksyms)
{
	return sizeof(*ksyms) + ksyms->pool_len + ksyms->nr_modules * sizeof(*ksyms->module_names) +
	       ksyms->nr_runs * sizeof(*ksyms->runs) + ksyms->nr_longs * sizeof(*ksyms->longs) +
	       blocks(ksyms->nr) * sizeof(*ksyms->name_blocks) +
	       ksyms->nr * (sizeof(*ksyms->lows) + sizeof(*ksyms->lens) + sizeof(*ksyms->name_offs) +
			    sizeof(*ksyms->pads));
}

static uint64_t addr_of(const struct ksyms *ks, size_t run, size_t i)
{
	return (uint64_t)ks->runs[run].high << 32 | ks->lows[i];
}

/* The index past run r's last symbol. */
static size_t run_end(const struct ksyms *ks, size_t r)
{
	return r + 1 < ks->nr_runs ? ks->runs[r + 1].first : ks->nr;
}

/*
 * The last symbol at or below addr: its index and run, or false when
 * addr is below them all.
 */
static bool find_below(const struct ksyms *ks, uint64_t addr, size_t *index, size_t *run)
{
	size_t lo = 0, hi = ks->nr_runs, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr_of(ks, mid, ks->runs[mid].first) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	*run = --lo;
	end = run_end(ks, lo);
	if (ks->runs[lo].high < addr >> 32) {
		*index = end - 1; /* the whole run lies below addr's 4 GiB */
		return true;
	}
	/* The run's first symbol is at or below addr: the search ends at or past it. */
	lo = ks->runs[*run].first + 1;
	hi = end;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->lows[mid] <= (uint32_t)addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*index = lo - 1;
	return true;
}

bool ksyms_lookup(const struct ksyms *ksyms, uint64_t addr, struct ksym *out, uint64_t *offset)
{
	size_t i = 0, run = 0, next = 0, next_run = 0;
	uint64_t start;
	const char *name;

	if (find_below(ksyms, addr, &i, &run)) {
		start = addr_of(ksyms, run, i);
		if (addr - start < len_of(ksyms, i)) {
			name = ksyms->pool + name_of(ksyms, i);
			goto found;
		}
		next = i + 1;
		next_run = next == run_end(ksyms, run) ? run + 1 : run;
	}
	/* Past it, or below them all: addr may be in the next one's padding. */
	if (next >= ksyms->nr || !ksyms->pads[next])
		return false;
	start = addr_of(ksyms, next_run, next);
	if (addr >= start || start - addr > ksyms->pads[next])
		return false;
	start -= ksyms->pads[next];
	run = next_run;
	name = ksyms->pool + name_of(ksyms, next) - PAD_PREFIX_LEN;
found:
	if (offset)
		*offset = addr - start;
	out->addr = start;
	out->name = name;
	out->module = ksyms->runs[run].module
			  ? ksyms->pool + ksyms->module_names[ksyms->runs[run].module - 1]
			  : NULL;
	return true;
}
