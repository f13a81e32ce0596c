/*
 * metrics: builds the plugin's value lists (see metrics.h for the names).
 *
 * A batch is a growing array of value_list_t whose values live in a second
 * array the batch owns; when that array moves, every list is re-pointed.
 * Function names become identifiers here: the kind suffix, '/', control
 * characters and bytes of invalid UTF-8 replaced (write_prometheus passes
 * them through, and one invalid label makes Prometheus drop the host's
 * whole scrape), long names cut with a hash so they stay apart, and
 * a final pass that makes the batch's identifiers unique even when two
 * different names sanitize to one ("a/b" and "a_b").
 */
#include "bpf/grow.h"
#include "plugin/metrics.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/utf8.h"

void metrics_batch_init(struct metrics_batch *b)
{
	memset(b, 0, sizeof(*b));
}

void metrics_batch_reset(struct metrics_batch *b)
{
	b->n = 0;
}

void metrics_batch_free(struct metrics_batch *b)
{
	free(b->lists);
	free(b->values);
	metrics_batch_init(b);
}

static int metrics_grow(struct metrics_batch *b)
{
	size_t cap = b->cap, values_cap = 2 * b->cap;

	/* Two values a list; b->cap moves once both arrays hold the new size. */
	if (GROW_ARRAY(&b->lists, &cap, b->n + 1, 64) ||
	    GROW_ARRAY(&b->values, &values_cap, 2 * cap, 128))
		return -ENOMEM;
	b->cap = cap;
	for (size_t i = 0; i < b->n; i++)
		b->lists[i].values = &b->values[2 * i];
	return 0;
}

/* Appends a list with n_values (1 or 2) zeroed values; returns it or NULL. */
static value_list_t *metrics_append(struct metrics_batch *b, const char *plugin_instance,
				    const char *type, const char *type_instance,
				    size_t n_values)
{
	value_list_t *vl;

	if (b->n == b->cap && metrics_grow(b))
		return NULL;
	vl = &b->lists[b->n];
	memset(vl, 0, sizeof(*vl));
	vl->values = &b->values[2 * b->n];
	memset(vl->values, 0, 2 * sizeof(*vl->values));
	vl->values_len = n_values;
	snprintf(vl->plugin, sizeof(vl->plugin), "%s", METRICS_PLUGIN);
	snprintf(vl->plugin_instance, sizeof(vl->plugin_instance), "%s", plugin_instance);
	snprintf(vl->type, sizeof(vl->type), "%s", type);
	snprintf(vl->type_instance, sizeof(vl->type_instance), "%s", type_instance);
	b->n++;
	return vl;
}

static int metrics_gauge(struct metrics_batch *b, const char *plugin_instance, const char *type,
			 const char *type_instance, double value)
{
	value_list_t *vl = metrics_append(b, plugin_instance, type, type_instance, 1);

	if (!vl)
		return -ENOMEM;
	vl->values[0].gauge = value;
	return 0;
}

static int metrics_derive(struct metrics_batch *b, const char *type_instance, uint64_t value)
{
	value_list_t *vl = metrics_append(b, "health", "derive", type_instance, 1);

	if (!vl)
		return -ENOMEM;
	vl->values[0].derive = (derive_t)value;
	return 0;
}

/* FNV-1a, 32 bits: small, and good enough to tell names with one prefix apart. */
static uint32_t metrics_hash(const char *name, const char *suffix, unsigned int salt)
{
	uint32_t h = 2166136261u;

	for (const char *s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	for (const char *s = suffix; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	for (unsigned int i = 0; i < salt; i++)
		h = (h ^ 0xffu) * 16777619u;
	return h;
}

/*
 * The identifier, optionally forced into the hashed form (salt > 0) when
 * the plain one collided with another in the batch.
 */
static void metrics_name_salted(const char *name, enum frame_kind kind, unsigned int salt,
				char *out)
{
	const char *suffix = frame_kind_suffix(kind);
	size_t len = 0, keep;

	for (const char *s = name; *s && len < METRICS_NAME_MAX;) {
		unsigned char ch = (unsigned char)*s;
		uint32_t cp;
		size_t n = utf8_decode((const unsigned char *)s, &cp);

		if (n > 1) {
			/* One character; a cut inside it is backed off below. */
			for (size_t i = 0; i < n && len < METRICS_NAME_MAX; i++)
				out[len++] = s[i];
			s += n;
			continue;
		}
		out[len++] = (n == 0 || ch == '/' || ch < 0x20 || ch == 0x7f) ? '_' : (char)ch;
		s++;
	}
	for (const char *s = suffix; *s && len < METRICS_NAME_MAX; s++)
		out[len++] = *s;
	out[len] = '\0';
	if (salt == 0 && strlen(name) + strlen(suffix) <= METRICS_NAME_MAX)
		return;

	keep = len < METRICS_NAME_MAX - METRICS_HASH_LEN ? len
							  : METRICS_NAME_MAX - METRICS_HASH_LEN;
	/* Never end on half a UTF-8 sequence: back off continuation bytes
	 * and the lead byte they belong to. */
	if (keep < len && ((unsigned char)out[keep] & 0xc0) == 0x80) {
		while (keep > 0 && ((unsigned char)out[keep] & 0xc0) == 0x80)
			keep--;
	}
	snprintf(out + keep, DATA_MAX_NAME_LEN - keep, "~%08x",
		 metrics_hash(name, suffix, salt));
}

void metrics_function_name(const char *name, enum frame_kind kind, char *out)
{
	metrics_name_salted(name, kind, 0, out);
}

static int metrics_cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Makes names[0..n) unique: on a repeat, the later entry is re-made in the
 * hashed form with a fresh salt. reserved (e.g. "[other]") is never used.
 * Returns 0 or -ENOMEM.
 */
static int metrics_unique(char (*names)[DATA_MAX_NAME_LEN], const struct profile_function *fns,
			  size_t n, const char *reserved)
{
	char **sorted = malloc((n + 1) * sizeof(*sorted));
	unsigned int *salt = calloc(n + 1, sizeof(*salt));
	bool clash = true;
	int err = 0;

	if (!sorted || !salt) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned int round = 0; clash && round < 16; round++) {
		clash = false;
		for (size_t i = 0; i < n; i++)
			sorted[i] = names[i];
		sorted[n] = (char *)reserved;
		qsort(sorted, n + 1, sizeof(*sorted), metrics_cmp_name);
		for (size_t i = 1; i <= n; i++) {
			char *later;
			size_t idx;

			if (strcmp(sorted[i - 1], sorted[i]) != 0)
				continue;
			/* Re-make the one that is not the reserved name, the
			 * higher index if both are ours: the top entries keep
			 * their plain names. */
			later = sorted[i] == reserved ? sorted[i - 1] : sorted[i];
			if (sorted[i - 1] != reserved && sorted[i - 1] > later)
				later = sorted[i - 1];
			idx = (size_t)((char(*)[DATA_MAX_NAME_LEN])later - names);
			metrics_name_salted(fns[idx].name, fns[idx].kind, ++salt[idx], names[idx]);
			clash = true;
		}
	}
out:
	free(sorted);
	free(salt);
	return err;
}

/* metrics_functions() under other plugin instances (self_as, total_as). */
static int metrics_functions_as(struct metrics_batch *b, const struct profile *p,
				unsigned int top_n, double frequency, double seconds,
				const char *self_as, const char *total_as)
{
	struct profile_function *fns = NULL;
	char(*names)[DATA_MAX_NAME_LEN] = NULL;
	uint64_t total = profile_total(p), self_sum = 0;
	size_t n = 0, k;
	int err;

	if (!(frequency > 0) || !(seconds > 0))
		return -EINVAL;
	err = profile_functions(p, &fns, &n);
	if (err)
		return err;
	k = n < top_n ? n : top_n;
	names = calloc(k ? k : 1, sizeof(*names));
	if (!names) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < k; i++)
		metrics_function_name(fns[i].name, fns[i].kind, names[i]);
	err = metrics_unique(names, fns, k, METRICS_OTHER);
	if (err)
		goto out;
	for (size_t i = 0; i < k; i++) {
		err = metrics_gauge(b, self_as, "gauge", names[i],
				    profile_cpu_percent(fns[i].self, frequency, seconds));
		if (!err)
			err = metrics_gauge(b, total_as, "gauge", names[i],
					    profile_cpu_percent(fns[i].total, frequency, seconds));
		if (err)
			goto out;
		self_sum += fns[i].self;
	}
	/* Whatever the top N did not cover, including stacks that hold only
	 * a process name (every frame lost), so that the sum is every sample. */
	err = metrics_gauge(b, self_as, "gauge", METRICS_OTHER,
			    profile_cpu_percent(total - self_sum, frequency, seconds));
out:
	free(names);
	free(fns);
	return err;
}

int metrics_functions(struct metrics_batch *b, const struct profile *p, unsigned int top_n,
		      double frequency, double seconds)
{
	return metrics_functions_as(b, p, top_n, frequency, seconds, "self", "total");
}

/* Microseconds as percent of one thread's time: 1e6 "samples" a second. */
#define METRICS_US_PER_S 1e6

/* The time of each off-CPU state: the self time of its leaf frame. */
static int metrics_offcpu_states(struct metrics_batch *b, const struct profile *p, double seconds)
{
	static const char *const states[] = { "runnable", "sleep", "io" };
	struct profile_function *fns = NULL;
	size_t n = 0;
	int err = profile_functions(p, &fns, &n);

	for (unsigned int s = 0; !err && s < sizeof(states) / sizeof(states[0]); s++) {
		const char *leaf = frame_offcpu_name(s + 1);
		uint64_t us = 0;

		for (size_t i = 0; i < n; i++)
			if (fns[i].kind == FRAME_OFFCPU && strcmp(fns[i].name, leaf) == 0)
				us = fns[i].self;
		err = metrics_gauge(b, "offcpu_state", "gauge", states[s],
				    profile_cpu_percent(us, METRICS_US_PER_S, seconds));
	}
	free(fns);
	return err;
}

int metrics_offcpu(struct metrics_batch *b, const struct profile *p, unsigned int top_n,
		   double seconds)
{
	struct profile *bare;
	int err;

	if (!(seconds > 0))
		return -EINVAL;
	bare = profile_new();
	if (!bare)
		return -ENOMEM;
	/* Without the state leaves, a wait's self time is the frame it blocked in. */
	err = profile_add_without(bare, p, FRAME_OFFCPU);
	if (!err)
		err = metrics_functions_as(b, bare, top_n, METRICS_US_PER_S, seconds, "offcpu_self",
					   "offcpu_total");
	if (!err)
		err = metrics_offcpu_states(b, p, seconds);
	profile_free(bare);
	return err;
}

/*
 * What profiled processes' files cost: the gate's refusals by cause, the
 * bounds hit, and stalled workers; counters since start. Without
 * h->files (no symbolizer yet), zeros, so the series exist from the start.
 */
static int metrics_files(struct metrics_batch *b, const struct metrics_health *h)
{
	static const struct symbolizer_stats none;
	const struct symbolizer_stats *f = h->files ? h->files : &none;
	const struct {
		const char *name;
		uint64_t value;
	} bounds[] = {
		{ "bound-symbol_table", f->elf_breaches.tables },
		{ "bound-symbols", f->elf_breaches.symbols },
		{ "bound-elf_headers", f->elf_breaches.sections },
		{ "bound-perfmap_line", f->perfmap_lines_too_long },
		{ "bound-perfmap_size", f->perfmaps_truncated },
		{ "debuginfod-fetched", f->debuginfod_fetched },
		{ "debuginfod-not_found", f->debuginfod_not_found },
		{ "debuginfod-failed", f->debuginfod_failed },
	};
	char name[DATA_MAX_NAME_LEN];
	int err = 0;

	for (int i = 0; i < TARGET_CAUSES; i++) {
		snprintf(name, sizeof(name), "refused-%s", target_cause_name((enum target_cause)i));
		err |= metrics_derive(b, name, f->refused[i]);
	}
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
		err |= metrics_derive(b, bounds[i].name, bounds[i].value);
	err |= metrics_derive(b, "stalls", h->stalls);
	return err;
}

/*
 * Memory now, in bytes: glibc's heap of the whole daemon (in use, freed
 * but kept by the allocator, and mapped from the system, arenas and big
 * blocks both) and each of our caches. A leak raises heap_in_use;
 * allocator retention raises heap_free; a cache that misses its bound
 * raises its own line.
 */
static int metrics_memory(struct metrics_batch *b, const struct metrics_health *h)
{
	static const struct symbolizer_stats none;
	const struct symbolizer_stats *f = h->files ? h->files : &none;
	const struct {
		const char *name;
		uint64_t value;
	} sizes[] = {
		{ "heap_in_use", h->heap.uordblks + h->heap.hblkhd },
		{ "heap_free", h->heap.fordblks },
		{ "heap_mapped", h->heap.arena + h->heap.hblkhd },
		{ "cache_symbols", f->elf_bytes },
		{ "cache_processes", f->process_bytes },
		{ "cache_perfmaps", f->perfmap_bytes },
		{ "cache_names", f->names_bytes },
		{ "cache_inline", f->inline_bytes + f->inline_dwarf_bytes },
		{ "cache_python", f->python_bytes },
		{ "kernel_symbols", f->kernel_bytes },
		{ "cache_window", h->window_bytes },
		{ "cache_interval", h->interval_bytes },
		{ "cache_unwind", h->unwind_user_bytes },
		{ "cache_forks", h->forks_bytes },
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		err |= metrics_gauge(b, "health", "bytes", sizes[i].name, (double)sizes[i].value);
	err |= metrics_derive(b, "lost-window", h->lost_window_bytes);
	return err;
}

int metrics_health(struct metrics_batch *b, const struct metrics_health *h)
{
	const struct {
		const char *name;
		uint64_t value;
	} losses[] = {
		{ "lost-kernel_stack", h->total.kstack_errors },
		{ "lost-user_stack", h->total.ustack_errors },
		{ "lost-collision", h->total.stack_collisions },
		{ "lost-stacks_full", h->total.stacks_full },
		{ "lost-counts_full", h->total.counts_full },
		{ "lost-missing_stack", h->total.missing_stacks },
		{ "lost-memory", h->lost_memory },
		{ "lost-stalled", h->lost_stalled },
		/* Not samples: reports of new processes the ring buffer had no room for. */
		{ "lost-process_event", h->total.process_events_lost },
		/* Not samples: ticks that fell due and never ran the program (bpf/tickgrid.h). */
		{ "ticks-missed", h->total.ticks_missed },
		/* Not samples: CPUs that went offline, and came online (bpf/cpuevents.h). */
		{ "cpus-went_offline", h->total.cpus_detached },
		{ "cpus-came_online", h->total.cpus_reopened },
		/* Off-CPU: samples over the per-CPU cap, and waits never timed. */
		{ "lost-offcpu_throttled", h->total.offcpu_throttled },
		{ "lost-offcpu_untimed", h->total.offcpu_untimed },
		/* Not a loss: waits whose switch-in the program missed, timed by the scheduler's stamp. */
		{ "offcpu-unseen", h->total.offcpu_unseen },
		/* Not losses: stacks recorded truncated, by why the unwinder stopped. */
		{ "truncated-no_table", h->total.unw_no_table },
		{ "truncated-no_row", h->total.unw_no_row },
		{ "truncated-unsupported", h->total.unw_unsupported },
		{ "truncated-read_fault", h->total.unw_read_fault },
		{ "truncated-depth_cap", h->total.unw_depth_cap },
		/* A thread's Python frames cut short by a read fault (its native ones go on). */
		{ "truncated-python", h->total.py_faults },
		/* Samples in a walked Python's interpreter that have no Python frames. */
		{ "python-native_only", h->python_native_only },
		{ "copied", h->total.copied },
		/* The unwind table cache (not losses). */
		{ "unwind-built", h->unwind_built },
		{ "unwind-reused", h->unwind_reused },
		{ "unwind-evicted", h->unwind_evicted },
		{ "unwind-expired", h->unwind_expired },
		{ "unwind-build_stalled", h->unwind_build_stalled },
		{ "unwind-wait_timeout", h->unwind_wait_timeout },
		{ "unwind-wait_stalled", h->unwind_wait_stalled },
		{ "unwind-copy_gone", h->unwind_copy_gone },
		{ "unwind-copy_rereads", h->unwind_copy_rereads },
		{ "unwind-copy_unmapped", h->unwind_copy_unmapped },
	};
	value_list_t *vl;
	int err = 0;

	if (!(h->seconds > 0))
		return -EINVAL;
	err |= metrics_gauge(b, "health", "frequency", "samples",
			     (double)sampler_stats_recorded(&h->window) / h->seconds);
	err |= metrics_gauge(b, "health", "frequency", "events",
			     (double)h->window.samples / h->seconds);
	for (size_t i = 0; i < sizeof(losses) / sizeof(losses[0]); i++)
		err |= metrics_derive(b, losses[i].name, losses[i].value);
	err |= metrics_files(b, h);
	err |= metrics_gauge(b, "health", "count", "stacks", (double)h->window.unique_stacks);
	err |= metrics_gauge(b, "health", "percent", "unresolved",
			     h->frames ? 100.0 * (double)h->unresolved / (double)h->frames : 0.0);
	err |= metrics_gauge(b, "health", "duration", "drain", h->drain_seconds);
	err |= metrics_gauge(b, "health", "count", "unwind_tables", (double)h->unwind_tables);
	err |= metrics_gauge(b, "health", "bytes", "unwind_tables", (double)h->unwind_bytes);
	err |= metrics_gauge(b, "health", "gauge", "offcpu_fp_walk", h->offcpu_fp ? 1.0 : 0.0);
	err |= metrics_memory(b, h);
	if (err)
		return -ENOMEM;
	vl = metrics_append(b, "health", "ps_cputime", "", 2);
	if (!vl)
		return -ENOMEM;
	vl->values[0].derive = (derive_t)h->cpu_user_us;
	vl->values[1].derive = (derive_t)h->cpu_system_us;
	return 0;
}

const value_list_t *metrics_find(const struct metrics_batch *b, const char *plugin_instance,
				 const char *type_instance)
{
	for (size_t i = 0; i < b->n; i++) {
		if (strcmp(b->lists[i].plugin_instance, plugin_instance) == 0 &&
		    strcmp(b->lists[i].type_instance, type_instance) == 0)
			return &b->lists[i];
	}
	return NULL;
}
