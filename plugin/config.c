/*
 * pconf: parses <Plugin ebprof> into struct pconf (see config.h).
 *
 * One loop over the children, one strcasecmp per key, one small checker
 * per kind of value. Numbers are checked here rather than with
 * cf_util_get_int(): that one silently truncates 1.5 to 1 and casts
 * 1e12 into an int, and we want both refused with the value named.
 * Booleans and strings go through cf_util_get_boolean() and
 * cf_util_get_string(), so they accept what every other plugin accepts.
 */
#include "plugin/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/sampler.h"
#include "symbolizer/dbgfetch.h"

#define PCONF_STR_(x) #x
#define PCONF_STR(x) PCONF_STR_(x)

void pconf_init(struct pconf *c)
{
	memset(c, 0, sizeof(*c));
	c->frequency = PCONF_DEFAULT_FREQUENCY;
	c->kernel_stacks = true;
	c->user_stacks = true;
	c->python = true;
	c->top_functions = PCONF_DEFAULT_TOP;
	c->keep_files = PCONF_DEFAULT_KEEP_FILES;
	c->window_bytes = PCONF_DEFAULT_WINDOW_BYTES;
	c->malloc_trim = true;
}

void pconf_free(struct pconf *c)
{
	for (size_t i = 0; i < c->n_processes; i++)
		free(c->processes[i]);
	free(c->processes);
	free(c->pids);
	free(c->spool_dir);
	pconf_init(c);
}

/* Whole numbers are shown whole: "PID 4194305", not "4.19430e+06". */
static bool pconf_whole(double d)
{
	return isfinite(d) && d > -1e15 && d < 1e15 && d == (double)(int64_t)d;
}

/* The values of an option as the user wrote them, for error messages. */
static void pconf_describe(const oconfig_item_t *ci, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	if (ci->values_num == 0) {
		snprintf(buf, len, "(no value)");
		return;
	}
	for (int i = 0; i < ci->values_num && used < len; i++) {
		const oconfig_value_t *v = &ci->values[i];
		const char *sep = i ? " " : "";
		int n;

		if (v->type == OCONFIG_TYPE_STRING)
			n = snprintf(buf + used, len - used, "%s\"%s\"", sep, v->value.string);
		else if (v->type == OCONFIG_TYPE_NUMBER && pconf_whole(v->value.number))
			n = snprintf(buf + used, len - used, "%s%.0f", sep, v->value.number);
		else if (v->type == OCONFIG_TYPE_NUMBER)
			n = snprintf(buf + used, len - used, "%s%g", sep, v->value.number);
		else
			n = snprintf(buf + used, len - used, "%s%s", sep,
				     v->value.boolean ? "true" : "false");
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static int pconf_bad(const oconfig_item_t *ci, const char *expected)
{
	char value[256];

	pconf_describe(ci, value, sizeof(value));
	ERROR(PLUGIN_LOG "%s %s: bad value; expected %s", ci->key, value, expected);
	return -EINVAL;
}

/* Exactly one number, integral, within [min, max]. */
static int pconf_uint(const oconfig_item_t *ci, uint64_t min, uint64_t max, uint64_t *out)
{
	char expected[128];
	double d;

	snprintf(expected, sizeof(expected), "a whole number from %llu to %llu",
		 (unsigned long long)min, (unsigned long long)max);
	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_NUMBER)
		return pconf_bad(ci, expected);
	d = ci->values[0].value.number;
	if (!isfinite(d) || d < (double)min || d > (double)max || d != (double)(uint64_t)d)
		return pconf_bad(ci, expected);
	*out = (uint64_t)d;
	return 0;
}

static int pconf_bool(const oconfig_item_t *ci, bool *out)
{
	if (ci->values_num != 1 || (ci->values[0].type != OCONFIG_TYPE_BOOLEAN &&
				    ci->values[0].type != OCONFIG_TYPE_STRING))
		return pconf_bad(ci, "true or false");
	if (cf_util_get_boolean(ci, out) != 0)
		return pconf_bad(ci, "true or false");
	return 0;
}

/*
 * DebuginfodURLs "http://host:8002 https://...": the servers, as the
 * standard DEBUGINFOD_URLS, which libdebuginfod reads from the
 * environment, so it is set for the daemon (collectd has one plugin
 * process; other clients in it see the same servers).
 */
static int pconf_debuginfod(const oconfig_item_t *ci, struct pconf *c)
{
	const char *v;
	int err;

	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
		return pconf_bad(ci, "a quoted list of http:// or https:// URLs");
	v = ci->values[0].value.string;
	if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
		return pconf_bad(ci, "a quoted list of http:// or https:// URLs");
	if (setenv("DEBUGINFOD_URLS", v, 1))
		return pconf_bad(ci, "a list that fits the environment");
	/* The config callback runs before collectd's read threads. */
	err = dbgfetch_prepare();
	if (err) {
		ERROR(PLUGIN_LOG "%s: cannot make debuginfod's cache directory: %s; set "
				 "DEBUGINFOD_CACHE_PATH in collectd's environment to a writable one",
		      ci->key, strerror(-err));
		return -1;
	}
	c->debuginfod = true;
	return 0;
}

static int pconf_pid(struct pconf *c, const oconfig_item_t *ci)
{
	uint32_t *pids;
	uint64_t pid;
	int err;

	err = pconf_uint(ci, 1, PCONF_PID_MAX, &pid);
	if (err)
		return err;
	if (c->n_pids >= PCONF_MAX_FILTERS)
		return pconf_bad(ci, "at most " PCONF_STR(PCONF_MAX_FILTERS) " PID entries");
	pids = realloc(c->pids, (c->n_pids + 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	pids[c->n_pids++] = (uint32_t)pid;
	c->pids = pids;
	return 0;
}

static int pconf_process(struct pconf *c, const oconfig_item_t *ci)
{
	char **names;
	char *name = NULL;

	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
		return pconf_bad(ci, "one process name in quotes");
	if (c->n_processes >= PCONF_MAX_FILTERS)
		return pconf_bad(ci, "at most " PCONF_STR(PCONF_MAX_FILTERS) " Process entries");
	if (cf_util_get_string(ci, &name) != 0)
		return -ENOMEM;
	if (name[0] == '\0' || strlen(name) > PCONF_COMM_MAX) {
		free(name);
		return pconf_bad(ci, "a process name (comm) of 1 to 15 characters, "
				     "as in /proc/PID/comm");
	}
	names = realloc(c->processes, (c->n_processes + 1) * sizeof(*names));
	if (!names) {
		free(name);
		return -ENOMEM;
	}
	names[c->n_processes++] = name;
	c->processes = names;
	return 0;
}

static int pconf_spool_dir(struct pconf *c, const oconfig_item_t *ci)
{
	char *dir = NULL;

	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING ||
	    ci->values[0].value.string[0] != '/')
		return pconf_bad(ci, "an absolute directory path in quotes");
	if (cf_util_get_string(ci, &dir) != 0)
		return -ENOMEM;
	free(c->spool_dir);
	c->spool_dir = dir;
	return 0;
}

static int pconf_spool_interval(struct pconf *c, const oconfig_item_t *ci)
{
	double d;

	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_NUMBER)
		return pconf_bad(ci, "seconds, from 1 to 86400");
	d = ci->values[0].value.number;
	if (!isfinite(d) || d < 1.0 || d > PCONF_MAX_SPOOL_INTERVAL)
		return pconf_bad(ci, "seconds, from 1 to 86400");
	c->spool_interval = d;
	return 0;
}

/*
 * SpoolFormat svg / folded / speedscope / pprof, several on one line
 * (SpoolFormat svg folded) or quoted ("svg folded pprof"). The first
 * SpoolFormat line replaces the default (svg and folded); later lines add
 * to it.
 */
static int pconf_spool_format(struct pconf *c, const oconfig_item_t *ci)
{
	static const char expected[] = "svg, folded, speedscope and/or pprof";
	unsigned int formats = 0;

	if (ci->values_num < 1)
		return pconf_bad(ci, expected);
	for (int i = 0; i < ci->values_num; i++) {
		char word[32];
		const char *s, *end;
		int format;

		if (ci->values[i].type != OCONFIG_TYPE_STRING)
			return pconf_bad(ci, expected);
		for (s = ci->values[i].value.string; *s; s = end) {
			while (*s == ' ' || *s == ',' || *s == '\t')
				s++;
			end = s;
			while (*end && *end != ' ' && *end != ',' && *end != '\t')
				end++;
			if (end == s)
				continue;
			if ((size_t)(end - s) >= sizeof(word))
				return pconf_bad(ci, expected);
			/* Keys and words of collectd.conf are case-insensitive. */
			for (size_t k = 0; k < (size_t)(end - s); k++)
				word[k] = (char)tolower((unsigned char)s[k]);
			word[end - s] = '\0';
			format = format_parse(word);
			if (format < 0)
				return pconf_bad(ci, expected);
			formats |= FORMAT_BIT(format);
		}
	}
	if (!formats)
		return pconf_bad(ci, expected);
	c->spool_formats |= formats;
	return 0;
}

/* "200MB", "1.5 GiB", "4096": bytes for a size, files for a bare number. */
static int pconf_parse_size(const char *s, uint64_t *bytes, bool *is_size)
{
	static const struct {
		const char *unit;
		uint64_t scale;
	} units[] = {
		{ "b", 1 },	      { "k", 1ULL << 10 },  { "kb", 1ULL << 10 },
		{ "kib", 1ULL << 10 }, { "m", 1ULL << 20 },  { "mb", 1ULL << 20 },
		{ "mib", 1ULL << 20 }, { "g", 1ULL << 30 },  { "gb", 1ULL << 30 },
		{ "gib", 1ULL << 30 }, { "t", 1ULL << 40 },  { "tb", 1ULL << 40 },
		{ "tib", 1ULL << 40 },
	};
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (end == s || errno || !isfinite(d) || d <= 0)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end == '\0') {
		*is_size = false;
		if (d > (double)PCONF_MAX_KEEP_FILES || d != (double)(uint64_t)d)
			return -EINVAL;
		*bytes = (uint64_t)d;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].unit) == 0) {
			d *= (double)units[i].scale;
			if (d > (double)PCONF_MAX_KEEP_BYTES * 2)
				return -EINVAL;
			*is_size = true;
			*bytes = (uint64_t)d;
			return 0;
		}
	}
	return -EINVAL;
}

static int pconf_spool_retention(struct pconf *c, const oconfig_item_t *ci)
{
	static const char expected[] =
		"a number of files per format from 1 to 100000, or a size in "
		"quotes from \"1KiB\" to \"1TiB\" such as \"200MB\"";
	uint64_t n;
	bool is_size = false;

	if (ci->values_num != 1)
		return pconf_bad(ci, expected);
	if (ci->values[0].type == OCONFIG_TYPE_NUMBER) {
		if (pconf_uint(ci, 1, PCONF_MAX_KEEP_FILES, &n))
			return -EINVAL; /* logged with the range of files */
	} else if (ci->values[0].type == OCONFIG_TYPE_STRING) {
		if (pconf_parse_size(ci->values[0].value.string, &n, &is_size))
			return pconf_bad(ci, expected);
	} else {
		return pconf_bad(ci, expected);
	}
	if (is_size) {
		if (n < PCONF_MIN_KEEP_BYTES || n > PCONF_MAX_KEEP_BYTES)
			return pconf_bad(ci, expected);
		c->keep_bytes = n;
		c->keep_files = 0;
	} else {
		if (n < 1 || n > PCONF_MAX_KEEP_FILES)
			return pconf_bad(ci, expected);
		c->keep_files = n;
		c->keep_bytes = 0;
	}
	return 0;
}

/*
 * One quoted word of a fixed list (case-insensitive): *out gets its index.
 * expected names the words for the error line.
 */
static int pconf_word(const oconfig_item_t *ci, const char *const *words, int n,
		      const char *expected, int *out)
{
	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING)
		return pconf_bad(ci, expected);
	for (int i = 0; i < n; i++) {
		if (strcasecmp(ci->values[0].value.string, words[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return pconf_bad(ci, expected);
}

static int pconf_unwind(struct pconf *c, const oconfig_item_t *ci)
{
	static const char *const words[] = { [PCONF_UNWIND_AUTO] = "auto",
					     [PCONF_UNWIND_FP] = "fp",
					     [PCONF_UNWIND_DWARF] = "dwarf" };
	int i, err = pconf_word(ci, words, 3, "fp, dwarf or auto", &i);

	if (!err)
		c->unwind = (enum pconf_unwind)i;
	return err;
}

/* A quoted size with a unit ("256MiB"), in [min, PCONF_MAX_BOUND]. */
static int pconf_size_between(const oconfig_item_t *ci, uint64_t min, const char *expected,
			      uint64_t *out)
{
	bool is_size = false;
	uint64_t n;

	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING ||
	    pconf_parse_size(ci->values[0].value.string, &n, &is_size) || !is_size ||
	    n < min || n > PCONF_MAX_BOUND)
		return pconf_bad(ci, expected);
	*out = n;
	return 0;
}

/* MaxSymbolTable, MaxPerfMap: [PCONF_MIN_BOUND, PCONF_MAX_BOUND]. */
static int pconf_bound(const oconfig_item_t *ci, uint64_t *out)
{
	return pconf_size_between(ci, PCONF_MIN_BOUND,
				  "a size in quotes from \"1KiB\" to \"1TiB\" such as \"256MiB\"", out);
}

/* UnwindMemory: [PCONF_MIN_UNWIND_BYTES, PCONF_MAX_BOUND]. */
static int pconf_unwind_memory(struct pconf *c, const oconfig_item_t *ci)
{
	return pconf_size_between(ci, PCONF_MIN_UNWIND_BYTES,
				  "a size in quotes from \"1MiB\" to \"1TiB\" such as \"64MiB\"",
				  &c->unwind_bytes);
}

static int pconf_mode(struct pconf *c, const oconfig_item_t *ci)
{
	static const char *const words[] = { [PCONF_MODE_CPU] = "cpu",
					     [PCONF_MODE_OFFCPU] = "offcpu",
					     [PCONF_MODE_WALL] = "wall" };
	int i, err = pconf_word(ci, words, 3, "cpu, offcpu or wall", &i);

	if (!err)
		c->mode = (enum pconf_mode)i;
	return err;
}

/* SymbolCacheMemory, ProcessMemory, NameCacheMemory, SpoolWindowMemory:
 * [PCONF_MIN_CACHE_BYTES, PCONF_MAX_BOUND]. */
static int pconf_cache_memory(const oconfig_item_t *ci, uint64_t *out)
{
	return pconf_size_between(ci, PCONF_MIN_CACHE_BYTES,
				  "a size in quotes from \"64KiB\" to \"1TiB\" such as \"64MiB\"",
				  out);
}

static int pconf_option(struct pconf *c, const oconfig_item_t *ci)
{
	const char *key = ci->key;
	uint64_t n;
	int err;

	if (strcasecmp(key, "Frequency") == 0) {
		err = pconf_uint(ci, 1, SAMPLER_MAX_FREQUENCY, &n);
		if (!err)
			c->frequency = (unsigned int)n;
	} else if (strcasecmp(key, "PID") == 0) {
		err = pconf_pid(c, ci);
	} else if (strcasecmp(key, "Process") == 0) {
		err = pconf_process(c, ci);
	} else if (strcasecmp(key, "KernelStacks") == 0) {
		err = pconf_bool(ci, &c->kernel_stacks);
	} else if (strcasecmp(key, "UserStacks") == 0) {
		err = pconf_bool(ci, &c->user_stacks);
	} else if (strcasecmp(key, "Python") == 0) {
		err = pconf_bool(ci, &c->python);
	} else if (strcasecmp(key, "IncludeIdle") == 0) {
		err = pconf_bool(ci, &c->include_idle);
	} else if (strcasecmp(key, "IncludeSelf") == 0) {
		err = pconf_bool(ci, &c->include_self);
	} else if (strcasecmp(key, "Addresses") == 0) {
		err = pconf_bool(ci, &c->addresses);
	} else if (strcasecmp(key, "Inline") == 0) {
		err = pconf_bool(ci, &c->inlines);
	} else if (strcasecmp(key, "TopFunctions") == 0) {
		err = pconf_uint(ci, 1, PCONF_MAX_TOP, &n);
		if (!err)
			c->top_functions = (unsigned int)n;
	} else if (strcasecmp(key, "MaxStacks") == 0) {
		err = pconf_uint(ci, PCONF_MIN_MAX_STACKS, PCONF_MAX_MAX_STACKS, &n);
		if (!err)
			c->max_stacks = (unsigned int)n;
	} else if (strcasecmp(key, "SpoolDir") == 0) {
		err = pconf_spool_dir(c, ci);
	} else if (strcasecmp(key, "SpoolInterval") == 0) {
		err = pconf_spool_interval(c, ci);
	} else if (strcasecmp(key, "SpoolFormat") == 0) {
		err = pconf_spool_format(c, ci);
	} else if (strcasecmp(key, "SpoolRetention") == 0) {
		err = pconf_spool_retention(c, ci);
	} else if (strcasecmp(key, "Unwind") == 0) {
		err = pconf_unwind(c, ci);
	} else if (strcasecmp(key, "UnwindMemory") == 0) {
		err = pconf_unwind_memory(c, ci);
	} else if (strcasecmp(key, "MaxFrames") == 0) {
		err = pconf_uint(ci, 1, EBPROF_MAX_FRAMES, &n);
		if (!err)
			c->max_frames = (unsigned int)n;
	} else if (strcasecmp(key, "StallTimeout") == 0) {
		err = pconf_uint(ci, 1, PCONF_MAX_STALL_TIMEOUT, &n);
		if (!err)
			c->stall_ms = (unsigned int)n * 1000;
	} else if (strcasecmp(key, "MaxSymbolTable") == 0) {
		err = pconf_bound(ci, &c->max_symbol_table);
	} else if (strcasecmp(key, "MaxPerfMap") == 0) {
		err = pconf_bound(ci, &c->max_perf_map);
	} else if (strcasecmp(key, "Mode") == 0) {
		err = pconf_mode(c, ci);
	} else if (strcasecmp(key, "OffCPUPeriod") == 0) {
		err = pconf_uint(ci, SAMPLER_MIN_OFFCPU_PERIOD_NS / 1000,
				 SAMPLER_MAX_OFFCPU_PERIOD_NS / 1000, &c->offcpu_period_us);
	} else if (strcasecmp(key, "OffCPUMinimum") == 0) {
		err = pconf_uint(ci, 0, 3600ULL * 1000000, &c->offcpu_min_us);
	} else if (strcasecmp(key, "SymbolCacheMemory") == 0) {
		err = pconf_cache_memory(ci, &c->symbol_cache_bytes);
	} else if (strcasecmp(key, "ProcessMemory") == 0) {
		err = pconf_cache_memory(ci, &c->process_bytes);
	} else if (strcasecmp(key, "NameCacheMemory") == 0) {
		err = pconf_cache_memory(ci, &c->name_cache_bytes);
	} else if (strcasecmp(key, "SpoolWindowMemory") == 0) {
		err = pconf_cache_memory(ci, &c->window_bytes);
	} else if (strcasecmp(key, "MallocTrim") == 0) {
		err = pconf_bool(ci, &c->malloc_trim);
	} else if (strcasecmp(key, "DebuginfodURLs") == 0) {
		err = pconf_debuginfod(ci, c);
	} else {
		ERROR(PLUGIN_LOG "unknown option \"%s\" in <Plugin ebprof>; the options "
				       "are Frequency, PID, Process, KernelStacks, UserStacks, "
				       "Python, IncludeIdle, IncludeSelf, Addresses, Inline, TopFunctions, "
				       "MaxStacks, SpoolDir, SpoolInterval, SpoolFormat, "
				       "SpoolRetention, Unwind, UnwindMemory, MaxFrames, "
				       "StallTimeout, MaxSymbolTable, MaxPerfMap, Mode, "
				       "OffCPUPeriod, OffCPUMinimum, SymbolCacheMemory, "
				       "ProcessMemory, NameCacheMemory, SpoolWindowMemory, "
				       "MallocTrim and DebuginfodURLs",
		      key);
		err = -EINVAL;
	}
	return err;
}

int pconf_parse(struct pconf *c, const oconfig_item_t *ci)
{
	for (int i = 0; i < ci->children_num; i++) {
		const oconfig_item_t *child = &ci->children[i];
		int err;

		if (child->children_num > 0) {
			ERROR(PLUGIN_LOG "\"%s\" is a block; <Plugin ebprof> takes "
					       "only simple options",
			      child->key);
			return -EINVAL;
		}
		err = pconf_option(c, child);
		if (err == -ENOMEM)
			ERROR(PLUGIN_LOG "out of memory reading option \"%s\"", child->key);
		if (err)
			return err;
	}
	if (!c->user_stacks && !c->kernel_stacks) {
		ERROR(PLUGIN_LOG "KernelStacks false and UserStacks false: nothing would "
				       "be sampled; enable at least one");
		return -EINVAL;
	}
	return 0;
}

unsigned int pconf_kernel_max_rate(const char *path)
{
	unsigned int rate = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	if (fscanf(f, "%u", &rate) != 1)
		rate = 0;
	fclose(f);
	return rate;
}

int pconf_finish(struct pconf *c, double read_interval, unsigned int kernel_max_rate)
{
	double windows, off;

	if (kernel_max_rate && c->frequency > kernel_max_rate) {
		ERROR(PLUGIN_LOG "Frequency %u is above the kernel's limit of %u Hz "
				       "(/proc/sys/kernel/perf_event_max_sample_rate); lower "
				       "Frequency, or raise the sysctl kernel.perf_event_max_sample_rate",
		      c->frequency, kernel_max_rate);
		return -EINVAL;
	}
	if (!c->spool_formats)
		c->spool_formats = FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED);
	if (!(read_interval > 0))
		return -EINVAL;
	if (c->spool_interval == 0) {
		/* The default window: 60 s, or the next multiple of the interval. */
		uint64_t n = (uint64_t)(PCONF_DEFAULT_SPOOL_INTERVAL / read_interval);

		if ((double)n * read_interval < PCONF_DEFAULT_SPOOL_INTERVAL - 1e-9)
			n++;
		c->spool_interval = (double)(n ? n : 1) * read_interval;
		return 0;
	}
	/* A multiple, up to floating-point noise (Interval 0.1 is not exact). */
	windows = c->spool_interval / read_interval;
	off = windows - (double)(uint64_t)(windows + 0.5);
	if (windows < 1 - 1e-9 || off > 1e-6 || off < -1e-6) {
		ERROR(PLUGIN_LOG "SpoolInterval %g is not a multiple of the read interval "
				       "%g s; set SpoolInterval to a multiple of %g",
		      c->spool_interval, read_interval, read_interval);
		return -EINVAL;
	}
	return 0;
}
