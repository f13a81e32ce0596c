/*
 * unwmaps: load unwind tables, rules and process mappings into the BPF
 * maps (see unwmaps.h).
 *
 * A table is a BPF array of 64-bit elements (two words each) made for it
 * alone, flagged BPF_F_INNER_MAP (so arrays of any length fit one array of
 * maps) and BPF_F_MMAPABLE (so it is filled with one memcpy, and read
 * where BPF reads it). The kernel holds it in whole pages; both sizes are
 * reported. The array of maps and our mapping keep it; its fd is closed.
 *
 * The mapping array (mapped here too, where the kernel lets it) is cut
 * into per-process ranges by a first-fit allocator over a sorted free
 * list; processes are kept in an array sorted by tgid.
 */
#include "bpf/grow.h"
#include "bpf/unwmaps.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

struct extent {
	uint32_t first, n;
};

struct unw_process {
	uint32_t tgid;
	struct extent range;
};

struct unw_table {
	uint32_t *words; /* the map's memory, mapped here read-only; NULL: a free slot */
	size_t n, mapped;
};

struct extents {
	struct extent *v;
	size_t n, cap;
};

struct unwmaps {
	pthread_mutex_t lock;
	struct unwmaps_maps maps;
	uint32_t rules_synced;
	struct unw_table *tables; /* by slot; slot 0 unused */
	uint32_t n_tables;
	uint32_t next_slot; /* where the search for a free slot starts */
	uint32_t last_id;   /* the last table's number */
	struct unw_process *procs; /* sorted by tgid */
	size_t n_procs, cap_procs;
	struct extents free;	   /* sorted by first, coalesced */
	struct extents retiring;   /* freed, reusable after the next retire */
	uint64_t used_mappings;
	uint64_t table_bytes, table_kernel_bytes;
	long page;
	/* The mapping array's memory, where it is BPF_F_MMAPABLE; NULL: written by syscall. */
	struct ebprof_unw_mapping *mappings;
	size_t mappings_mapped;
};

/* bytes rounded up to whole pages: what the kernel holds for an mmapable array. */
static size_t whole_pages(const struct unwmaps *m, size_t bytes)
{
	return (bytes + (size_t)m->page - 1) & ~((size_t)m->page - 1);
}

/*
 * Maps the mapping array into our memory, if the kernel lets it (the
 * program declares it BPF_F_MMAPABLE): a new process's mappings are then
 * one memcpy, where each was a bpf() call. Array elements lie 8-byte
 * aligned, as struct ebprof_unw_mapping is.
 */
static void map_mappings(struct unwmaps *m)
{
	size_t len = (size_t)m->maps.max_mappings * sizeof(struct ebprof_unw_mapping);
	void *mem;

	_Static_assert(sizeof(struct ebprof_unw_mapping) % 8 == 0, "array elements are 8-aligned");
	if (!len)
		return;
	len = whole_pages(m, len);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, m->maps.mappings, 0);
	if (mem == MAP_FAILED)
		return;
	m->mappings = mem;
	m->mappings_mapped = len;
}

int unwmaps_new(const struct unwmaps_maps *maps, struct unwmaps **out)
{
	struct unwmaps *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->maps = *maps;
	m->page = sysconf(_SC_PAGESIZE);
	m->tables = calloc(maps->max_tables ? maps->max_tables : 1, sizeof(*m->tables));
	m->free.v = calloc(1, sizeof(*m->free.v));
	if (!m->tables || !m->free.v) {
		unwmaps_free(m);
		return -ENOMEM;
	}
	m->free.cap = 1;
	if (maps->max_mappings)
		m->free.v[m->free.n++] = (struct extent){ 0, maps->max_mappings };
	m->next_slot = 1;
	map_mappings(m);
	pthread_mutex_init(&m->lock, NULL);
	*out = m;
	return 0;
}

void unwmaps_free(struct unwmaps *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; m->tables && i < m->maps.max_tables; i++)
		if (m->tables[i].words)
			munmap(m->tables[i].words, m->tables[i].mapped);
	if (m->mappings)
		munmap(m->mappings, m->mappings_mapped);
	free(m->tables);
	free(m->procs);
	free(m->free.v);
	free(m->retiring.v);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int unwmaps_rules_sync(struct unwmaps *m, const struct ebprof_unw_rule *rules, uint32_t n)
{
	int err = 0;

	pthread_mutex_lock(&m->lock);
	if (n > m->maps.max_rules)
		n = m->maps.max_rules, err = -E2BIG;
	for (uint32_t i = m->rules_synced; i < n; i++) {
		if (bpf_map_update_elem(m->maps.rules, &i, &rules[i], BPF_ANY)) {
			err = -errno;
			break;
		}
		m->rules_synced = i + 1;
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}

static uint32_t find_free_slot(struct unwmaps *m)
{
	for (uint32_t k = 0; k + 1 < m->maps.max_tables; k++) {
		uint32_t slot = 1 + (m->next_slot - 1 + k) % (m->maps.max_tables - 1);

		if (!m->tables[slot].words) {
			m->next_slot = slot + 1 < m->maps.max_tables ? slot + 1 : 1;
			return slot;
		}
	}
	return 0;
}

int unwmaps_table_add(struct unwmaps *m, const uint32_t *words, size_t n, uint32_t *slot,
		      uint32_t *id)
{
	struct bpf_map_create_opts opts = { .sz = sizeof(opts),
					    .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE };
	size_t mapped = whole_pages(m, n * sizeof(*words));
	uint32_t *mem;
	int fd, err = 0;

	*slot = 0;
	*id = 0;
	if (!n || n > UINT32_MAX)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	*slot = find_free_slot(m);
	if (!*slot) {
		err = -ENOSPC;
		goto unlock;
	}
	/*
	 * Elements of two words: the kernel spaces array elements 8 bytes
	 * apart, so 4-byte ones would waste half. In the mapping the words
	 * then lie packed, little-endian, as the table has them.
	 */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ebprof_unwtab", sizeof(uint32_t),
			    sizeof(uint64_t), (uint32_t)((n + 1) / 2), &opts);
	if (fd < 0) {
		err = -errno;
		goto unlock;
	}
	mem = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		goto unlock;
	}
	memcpy(mem, words, n * sizeof(*words));
	/* Filled: from here on BPF and we only read it. */
	mprotect(mem, mapped, PROT_READ);
	if (bpf_map_update_elem(m->maps.tables, slot, &fd, BPF_ANY)) {
		err = -errno;
		munmap(mem, mapped);
		close(fd);
		goto unlock;
	}
	close(fd); /* the array of maps and our mapping hold it */
	m->tables[*slot] = (struct unw_table){ mem, n, mapped };
	m->n_tables++;
	*id = ++m->last_id ? m->last_id : ++m->last_id; /* never 0, even after 2^32 tables */
	m->table_bytes += n * sizeof(*words);
	m->table_kernel_bytes += mapped;
unlock:
	if (err)
		*slot = 0;
	pthread_mutex_unlock(&m->lock);
	return err;
}

int unwmaps_table_word(struct unwmaps *m, uint32_t slot, uint32_t i, uint32_t *word,
		       struct unwmaps_pair *pair)
{
	if (!pair->slot || pair->slot != slot) {
		pthread_mutex_lock(&m->lock);
		pair->words = NULL;
		if (slot && slot < m->maps.max_tables && m->tables[slot].words) {
			pair->words = m->tables[slot].words;
			pair->n = m->tables[slot].n;
		}
		pthread_mutex_unlock(&m->lock);
		if (!pair->words)
			return -ENOENT;
		pair->slot = slot;
	}
	if (i >= pair->n)
		return -ENOENT;
	*word = pair->words[i];
	return 0;
}

void unwmaps_table_remove(struct unwmaps *m, uint32_t slot)
{
	struct unw_table *t;

	pthread_mutex_lock(&m->lock);
	if (!slot || slot >= m->maps.max_tables || !m->tables[slot].words)
		goto unlock;
	t = &m->tables[slot];
	/* A program still running with the map keeps it until it ends (RCU). */
	bpf_map_delete_elem(m->maps.tables, &slot);
	munmap(t->words, t->mapped);
	m->table_bytes -= t->n * sizeof(uint32_t);
	m->table_kernel_bytes -= t->mapped;
	m->n_tables--;
	*t = (struct unw_table){ 0 };
unlock:
	pthread_mutex_unlock(&m->lock);
}

static int extents_insert(struct extents *e, size_t at, struct extent x)
{
	if (GROW_ARRAY(&e->v, &e->cap, e->n + 1, 16))
		return -ENOMEM;
	memmove(&e->v[at + 1], &e->v[at], (e->n - at) * sizeof(*e->v));
	e->v[at] = x;
	e->n++;
	return 0;
}

/* Gives x back to the free list, merged with its neighbours. */
static void free_extent(struct extents *free_list, struct extent x)
{
	size_t at = 0;

	while (at < free_list->n && free_list->v[at].first < x.first)
		at++;
	if (at > 0 && free_list->v[at - 1].first + free_list->v[at - 1].n == x.first) {
		free_list->v[at - 1].n += x.n;
		if (at < free_list->n && x.first + x.n == free_list->v[at].first) {
			free_list->v[at - 1].n += free_list->v[at].n;
			memmove(&free_list->v[at], &free_list->v[at + 1],
				(free_list->n - at - 1) * sizeof(*free_list->v));
			free_list->n--;
		}
		return;
	}
	if (at < free_list->n && x.first + x.n == free_list->v[at].first) {
		free_list->v[at].first = x.first;
		free_list->v[at].n += x.n;
		return;
	}
	/* Out of memory for the list: the range is lost to the allocator, not to correctness. */
	extents_insert(free_list, at, x);
}

/* First fit; returns false when no free range is long enough. */
static bool alloc_extent(struct extents *free_list, uint32_t n, struct extent *out)
{
	for (size_t i = 0; i < free_list->n; i++) {
		struct extent *f = &free_list->v[i];

		if (f->n < n)
			continue;
		*out = (struct extent){ f->first, n };
		f->first += n;
		f->n -= n;
		if (!f->n) {
			memmove(f, f + 1, (free_list->n - i - 1) * sizeof(*f));
			free_list->n--;
		}
		return true;
	}
	return false;
}

/* The process's index in the sorted array, or where it would go. */
static size_t proc_search(const struct unwmaps *m, uint32_t tgid, bool *found)
{
	size_t lo = 0, hi = m->n_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->procs[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < m->n_procs && m->procs[lo].tgid == tgid;
	return lo;
}

/* After a change to the procs map: see struct unwmaps_maps. */
static void bump_gen(struct unwmaps *m)
{
	if (m->maps.gen)
		__atomic_add_fetch(m->maps.gen, 1, __ATOMIC_RELEASE);
}

static void retire_range(struct unwmaps *m, struct extent range)
{
	if (!range.n)
		return;
	m->used_mappings -= range.n;
	if (extents_insert(&m->retiring, m->retiring.n, range))
		free_extent(&m->free, range); /* no memory to wait: reuse at once */
}

static int write_mappings(struct unwmaps *m, struct extent range,
			  const struct ebprof_unw_mapping *mappings)
{
	if (m->mappings) {
		/* A range no process entry points at yet: the entry's update comes after. */
		memcpy(m->mappings + range.first, mappings, range.n * sizeof(*mappings));
		__atomic_thread_fence(__ATOMIC_RELEASE);
		return 0;
	}
	for (uint32_t i = 0; i < range.n; i++) {
		uint32_t key = range.first + i;

		if (bpf_map_update_elem(m->maps.mappings, &key, &mappings[i], BPF_ANY))
			return -errno;
	}
	return 0;
}

int unwmaps_process_set(struct unwmaps *m, uint32_t tgid, uint64_t start_time,
			const struct ebprof_unw_mapping *mappings, uint32_t n)
{
	struct ebprof_unw_proc entry = { .start_time = start_time };
	struct extent range = { 0, 0 }, old = { 0, 0 };
	bool found;
	size_t at;
	int err = 0;

	pthread_mutex_lock(&m->lock);
	at = proc_search(m, tgid, &found);
	if (found)
		old = m->procs[at].range;
	if (n && !alloc_extent(&m->free, n, &range)) {
		err = -ENOSPC;
		n = 0;
	}
	if (n) {
		m->used_mappings += n;
		err = write_mappings(m, range, mappings);
	}
	if (!err || err == -ENOSPC) {
		entry.first = range.first;
		entry.n = err ? 0 : n;
		if (bpf_map_update_elem(m->maps.procs, &tgid, &entry, BPF_ANY) && !err)
			err = -errno;
	}
	if (err && err != -ENOSPC) {
		retire_range(m, range);
		range = (struct extent){ 0, 0 };
	}
	if (!found) {
		if (GROW_ARRAY(&m->procs, &m->cap_procs, m->n_procs + 1, 64)) {
			retire_range(m, range);
			bpf_map_delete_elem(m->maps.procs, &tgid);
			err = -ENOMEM;
			goto unlock;
		}
		memmove(&m->procs[at + 1], &m->procs[at], (m->n_procs - at) * sizeof(*m->procs));
		m->n_procs++;
	}
	m->procs[at] = (struct unw_process){ tgid, range };
	retire_range(m, old);
unlock:
	bump_gen(m);
	pthread_mutex_unlock(&m->lock);
	return err;
}

void unwmaps_process_drop(struct unwmaps *m, uint32_t tgid)
{
	bool found;
	size_t at;

	pthread_mutex_lock(&m->lock);
	at = proc_search(m, tgid, &found);
	if (found) {
		bpf_map_delete_elem(m->maps.procs, &tgid);
		bump_gen(m);
		retire_range(m, m->procs[at].range);
		memmove(&m->procs[at], &m->procs[at + 1], (m->n_procs - at - 1) * sizeof(*m->procs));
		m->n_procs--;
	}
	pthread_mutex_unlock(&m->lock);
}

size_t unwmaps_retiring(struct unwmaps *m)
{
	size_t n;

	pthread_mutex_lock(&m->lock);
	n = m->retiring.n;
	pthread_mutex_unlock(&m->lock);
	return n;
}

void unwmaps_retire(struct unwmaps *m, size_t counted)
{
	pthread_mutex_lock(&m->lock);
	/* Ranges are only appended, so the first `counted` are those counted. */
	if (counted > m->retiring.n)
		counted = m->retiring.n;
	for (size_t i = 0; i < counted; i++)
		free_extent(&m->free, m->retiring.v[i]);
	if (counted) {
		memmove(m->retiring.v, m->retiring.v + counted,
			(m->retiring.n - counted) * sizeof(*m->retiring.v));
		m->retiring.n -= counted;
	}
	pthread_mutex_unlock(&m->lock);
}

void unwmaps_stats(struct unwmaps *m, struct unwmaps_stats *stats)
{
	pthread_mutex_lock(&m->lock);
	*stats = (struct unwmaps_stats){
		.tables = m->n_tables,
		.table_bytes = m->table_bytes,
		.table_kernel_bytes = m->table_kernel_bytes,
		.processes = m->n_procs,
		.mappings = m->used_mappings,
		.max_mappings = m->maps.max_mappings,
		.rules = m->rules_synced,
		.max_rules = m->maps.max_rules,
		.rules_bytes = (uint64_t)m->maps.max_rules * sizeof(struct ebprof_unw_rule),
		.mappings_bytes = (uint64_t)m->maps.max_mappings * sizeof(struct ebprof_unw_mapping),
	};
	pthread_mutex_unlock(&m->lock);
}
