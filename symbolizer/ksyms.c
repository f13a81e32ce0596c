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
 * The table, as compact as a lookup allows: it lives as long as the
 * profiler, and a distribution kernel has over 100,000 text symbols. An
 * array per field (18 bytes a symbol, not 32 for a struct of pointers and
 * an array of ends), and a pool of the kept names only, each module's
 * name once, sized to fit.
 */
struct ksyms {
	uint64_t *addrs;       /* text symbols' addresses, sorted, one symbol per address */
	uint32_t *lens;	       /* bytes from each to its end: the first address past it */
	uint32_t *names;       /* each one's name, an offset in pool */
	uint16_t *modules;     /* 0: vmlinux; else 1 + an index in module_names */
	uint32_t *module_names; /* offsets in pool */
	size_t nr, nr_modules;
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

			err = pool_add(p, module + 1, len, &e.module_off);
			if (err)
				return err;
		}
	}
	if (!*name || type == 'a' || type == 'A')
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
 * Keeps the next symbol's name. Since Linux 6.2 most functions follow
 * their padding's symbol, "__pfx_" and the function's name, at the address
 * below, so a name often ends the one kept just before it (57,359 of
 * 121,133 on a 6.18 kernel). Such a name is those last bytes of the pool,
 * not a copy: the pool is 41% smaller.
 */
static int name_add(struct ksyms *ks, size_t *cap, size_t *len, const char *name)
{
	size_t n = strlen(name);

	if (ks->nr) {
		uint32_t prev = ks->names[ks->nr - 1];
		size_t prev_len = strlen(ks->pool + prev);

		if (prev_len >= n && !memcmp(ks->pool + prev + prev_len - n, name, n)) {
			ks->names[ks->nr] = prev + (uint32_t)(prev_len - n);
			return 0;
		}
	}
	return kept_add(ks, cap, len, name, n, &ks->names[ks->nr]);
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

/* Gives back what an array allocated past its last element; keeps it if that fails. */
static void *fit(void *array, size_t bytes)
{
	void *fitted = realloc(array, bytes ? bytes : 1);

	if (!fitted)
		return array; /* realloc() left it as it was */
	return fitted;
}

/* Builds the final table from sorted entries: one text symbol per address. */
static int build(struct ksyms *ks, struct kparse *p)
{
	size_t i = 0, n = p->nr ? p->nr : 1, pool_cap = 0, pool_len = 0, modules_cap = 0;
	int err = 0;

	/* calloc() checks n * size for overflow, and large blocks come zeroed anyway. */
	ks->addrs = calloc(n, sizeof(*ks->addrs));
	ks->lens = calloc(n, sizeof(*ks->lens));
	ks->names = calloc(n, sizeof(*ks->names));
	ks->modules = calloc(n, sizeof(*ks->modules));
	if (!ks->addrs || !ks->lens || !ks->names || !ks->modules)
		return -ENOMEM;
	while (i < p->nr) {
		const struct kentry *e = &p->entries[i];
		size_t next = i + 1;
		uint64_t end;

		while (next < p->nr && p->entries[next].addr == e->addr)
			next++;
		if (e->kind == KENTRY_TEXT) {
			const char *name = p->pool + e->name_off;
			uint16_t module = 0;

			if (next < p->nr)
				end = p->entries[next].addr;
			else if (e->addr > UINT64_MAX - KSYMS_TAIL_GUESS)
				end = UINT64_MAX;
			else
				end = e->addr + KSYMS_TAIL_GUESS;
			if (e->module_off != SIZE_MAX) {
				uint64_t mod_end = module_end(p, e);

				if (mod_end < end)
					end = mod_end;
				module = module_index(ks, &modules_cap, &pool_cap, &pool_len,
						      p->pool + e->module_off, &err);
				if (err)
					return err;
			}
			err = name_add(ks, &pool_cap, &pool_len, name);
			if (err)
				return err;
			ks->addrs[ks->nr] = e->addr;
			/*
			 * end > e->addr: the next address is higher, and a
			 * module ends a symbol only from inside it. No
			 * function is 4 GiB long: past that, nothing resolves.
			 */
			ks->lens[ks->nr] = end - e->addr > UINT32_MAX ? UINT32_MAX
								  : (uint32_t)(end - e->addr);
			ks->modules[ks->nr++] = module;
		}
		i = next;
	}
	ks->addrs = fit(ks->addrs, ks->nr * sizeof(*ks->addrs));
	ks->lens = fit(ks->lens, ks->nr * sizeof(*ks->lens));
	ks->names = fit(ks->names, ks->nr * sizeof(*ks->names));
	ks->modules = fit(ks->modules, ks->nr * sizeof(*ks->modules));
	ks->pool = fit(ks->pool, pool_len);
	ks->pool_len = pool_len;
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
	free(ksyms->addrs);
	free(ksyms->lens);
	free(ksyms->names);
	free(ksyms->modules);
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
	return ksyms->nr;
}

size_t ksyms_bytes(const struct ksyms *ksyms)
{
	return sizeof(*ksyms) + ksyms->pool_len + ksyms->nr_modules * sizeof(*ksyms->module_names) +
	       ksyms->nr * (sizeof(*ksyms->addrs) + sizeof(*ksyms->lens) + sizeof(*ksyms->names) +
			    sizeof(*ksyms->modules));
}

bool ksyms_lookup(const struct ksyms *ksyms, uint64_t addr, struct ksym *out, uint64_t *offset)
{
	size_t lo = 0, hi = ksyms->nr;

	/* Find the last symbol at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ksyms->addrs[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - ksyms->addrs[lo - 1] >= ksyms->lens[lo - 1])
		return false;
	lo--;
	if (offset)
		*offset = addr - ksyms->addrs[lo];
	out->addr = ksyms->addrs[lo];
	out->name = ksyms->pool + ksyms->names[lo];
	out->module = ksyms->modules[lo] ? ksyms->pool + ksyms->module_names[ksyms->modules[lo] - 1]
					 : NULL;
	return true;
}
