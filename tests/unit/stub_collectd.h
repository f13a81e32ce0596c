/*
 * stub_collectd: just enough of collectd's daemon API for the plugin's
 * unit tests (Debian ships no mock). Only functions the real daemon
 * exports are stubbed (nm -D /usr/sbin/collectd), so a plugin that links
 * against these stubs also loads into collectd.
 *
 * The stubs record what the plugin did -- log lines, registered
 * callbacks, dispatched values -- for the tests to inspect, and build
 * oconfig trees the way collectd's parser would.
 */
#ifndef EBPROF_TESTS_STUB_COLLECTD_H
#define EBPROF_TESTS_STUB_COLLECTD_H

#include <stdbool.h>
#include <stddef.h>

#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"

struct stub_state {
	int (*config)(oconfig_item_t *ci);
	plugin_init_cb init;
	plugin_shutdown_cb shutdown;
	plugin_read_cb read;
	char read_name[64];
	cdtime_t interval; /* what plugin_get_interval() returns */
	value_list_t *dispatched; /* copies; values owned by the stub */
	size_t n_dispatched;
	char *log;		  /* every line, "LEVEL message\n" */
	size_t log_len;
	size_t log_lines[8];	  /* per level, LOG_ERR .. LOG_DEBUG */
};

extern struct stub_state stub;

/* Forgets everything recorded; the interval goes back to 10 s. */
void stub_reset(void);

/* True when some logged line contains every one of the (NULL-ended) needles. */
bool stub_log_has(const char *needle, ...) __attribute__((sentinel));

/* The number of lines logged at this level (LOG_ERR, LOG_WARNING, ...). */
size_t stub_log_count(int level);

/* The last dispatched list with this plugin instance and type instance. */
const value_list_t *stub_dispatched(const char *plugin_instance, const char *type_instance);

/* oconfig trees: "<Plugin ebprof>" with children, as collectd parses them. */
oconfig_item_t *stub_ci_block(const char *key);
oconfig_item_t *stub_ci_child(oconfig_item_t *parent, const char *key);
void stub_ci_string(oconfig_item_t *ci, const char *value);
void stub_ci_number(oconfig_item_t *ci, double value);
void stub_ci_bool(oconfig_item_t *ci, bool value);
void stub_ci_free(oconfig_item_t *ci);

#endif
