/*
 * stub_collectd: the daemon side of the plugin API, for unit tests
 * (see stub_collectd.h). cf_util_get_boolean() and cf_util_get_string()
 * behave as collectd 5.12's do: booleans may be written unquoted or as
 * the strings "true"/"yes"/"on" and "false"/"no"/"off".
 */
#include "tests/unit/stub_collectd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct stub_state stub = { .interval = TIME_T_TO_CDTIME_T_STATIC(10) };
char *hostname_g = "stubhost";

static void stub_free_dispatched(void)
{
	for (size_t i = 0; i < stub.n_dispatched; i++)
		free(stub.dispatched[i].values);
	free(stub.dispatched);
	stub.dispatched = NULL;
	stub.n_dispatched = 0;
}

void stub_reset(void)
{
	stub_free_dispatched();
	free(stub.log);
	memset(&stub, 0, sizeof(stub));
	stub.interval = TIME_T_TO_CDTIME_T_STATIC(10);
}

void plugin_log(int level, const char *format, ...)
{
	static const char *const names[] = { "", "", "", "ERROR", "WARNING", "NOTICE", "INFO",
					     "DEBUG" };
	char line[2048];
	size_t len;
	va_list ap;
	char *grown;

	va_start(ap, format);
	vsnprintf(line, sizeof(line), format, ap);
	va_end(ap);
	if (level >= 0 && level < 8)
		stub.log_lines[level]++;
	len = strlen(line) + 16;
	grown = realloc(stub.log, stub.log_len + len + 1);
	if (!grown)
		abort();
	stub.log = grown;
	stub.log_len += (size_t)snprintf(stub.log + stub.log_len, len + 1, "%s %s\n",
					 level >= 3 && level < 8 ? names[level] : "?", line);
	/* Also on stderr, so a failing test's log shows what the plugin said. */
	fprintf(stderr, "[collectd %s] %s\n", level >= 3 && level < 8 ? names[level] : "?", line);
}

void daemon_log(int level, const char *format, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, format);
	vsnprintf(line, sizeof(line), format, ap);
	va_end(ap);
	plugin_log(level, "%s", line);
}

bool stub_log_has(const char *needle, ...)
{
	const char *start = stub.log;

	while (start && *start) {
		const char *end = strchr(start, '\n');
		size_t len = end ? (size_t)(end - start) : strlen(start);
		char *line = strndup(start, len);
		bool all = true;
		const char *n = needle;
		va_list ap;

		va_start(ap, needle);
		for (; n && all; n = va_arg(ap, const char *))
			all = strstr(line, n) != NULL;
		va_end(ap);
		free(line);
		if (all)
			return true;
		start = end ? end + 1 : start + len;
	}
	return false;
}

size_t stub_log_count(int level)
{
	return level >= 0 && level < 8 ? stub.log_lines[level] : 0;
}

int plugin_register_complex_config(const char *type, int (*callback)(oconfig_item_t *))
{
	(void)type;
	stub.config = callback;
	return 0;
}

int plugin_register_init(const char *name, plugin_init_cb callback)
{
	(void)name;
	stub.init = callback;
	return 0;
}

int plugin_register_shutdown(const char *name, plugin_shutdown_cb callback)
{
	(void)name;
	stub.shutdown = callback;
	return 0;
}

int plugin_register_complex_read(const char *group, const char *name, plugin_read_cb callback,
				 cdtime_t interval, user_data_t const *user_data)
{
	(void)group;
	(void)interval;
	(void)user_data;
	stub.read = callback;
	snprintf(stub.read_name, sizeof(stub.read_name), "%s", name);
	return 0;
}

cdtime_t plugin_get_interval(void)
{
	return stub.interval;
}

int plugin_dispatch_values(value_list_t const *vl)
{
	value_list_t *grown = realloc(stub.dispatched, (stub.n_dispatched + 1) * sizeof(*grown));
	value_list_t *copy;

	if (!grown)
		abort();
	stub.dispatched = grown;
	copy = &stub.dispatched[stub.n_dispatched++];
	*copy = *vl;
	copy->values = calloc(vl->values_len ? vl->values_len : 1, sizeof(*copy->values));
	if (!copy->values)
		abort();
	memcpy(copy->values, vl->values, vl->values_len * sizeof(*copy->values));
	return 0;
}

const value_list_t *stub_dispatched(const char *plugin_instance, const char *type_instance)
{
	for (size_t i = stub.n_dispatched; i-- > 0;) {
		const value_list_t *vl = &stub.dispatched[i];

		if (strcmp(vl->plugin_instance, plugin_instance) == 0 &&
		    strcmp(vl->type_instance, type_instance) == 0)
			return vl;
	}
	return NULL;
}

int cf_util_get_string(const oconfig_item_t *ci, char **ret_string)
{
	char *copy;

	if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING) {
		plugin_log(LOG_ERR, "cf_util_get_string: The %s option requires exactly one "
				    "string argument.",
			   ci->key);
		return -1;
	}
	copy = strdup(ci->values[0].value.string);
	if (!copy)
		return -1;
	free(*ret_string);
	*ret_string = copy;
	return 0;
}

int cf_util_get_boolean(const oconfig_item_t *ci, bool *ret_bool)
{
	const char *s;

	if (ci->values_num != 1 || (ci->values[0].type != OCONFIG_TYPE_BOOLEAN &&
				    ci->values[0].type != OCONFIG_TYPE_STRING)) {
		plugin_log(LOG_ERR, "The `%s' option requires exactly one boolean argument.",
			   ci->key);
		return -1;
	}
	if (ci->values[0].type == OCONFIG_TYPE_BOOLEAN) {
		*ret_bool = ci->values[0].value.boolean != 0;
		return 0;
	}
	s = ci->values[0].value.string;
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on")) {
		*ret_bool = true;
	} else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off")) {
		*ret_bool = false;
	} else {
		plugin_log(LOG_ERR, "Cannot parse string value `%s' of the `%s' option as a "
				    "boolean value.",
			   s, ci->key);
		return -1;
	}
	return 0;
}

/* --- oconfig trees --------------------------------------------------------- */

oconfig_item_t *stub_ci_block(const char *key)
{
	oconfig_item_t *ci = calloc(1, sizeof(*ci));

	if (!ci || !(ci->key = strdup(key)))
		abort();
	return ci;
}

oconfig_item_t *stub_ci_child(oconfig_item_t *parent, const char *key)
{
	oconfig_item_t *children, *ci;

	children = realloc(parent->children,
			   (size_t)(parent->children_num + 1) * sizeof(*children));
	if (!children)
		abort();
	parent->children = children;
	ci = &children[parent->children_num++];
	memset(ci, 0, sizeof(*ci));
	ci->key = strdup(key);
	ci->parent = parent;
	if (!ci->key)
		abort();
	return ci;
}

static oconfig_value_t *stub_ci_value(oconfig_item_t *ci, int type)
{
	oconfig_value_t *values = realloc(ci->values, (size_t)(ci->values_num + 1) * sizeof(*values));

	if (!values)
		abort();
	ci->values = values;
	values[ci->values_num].type = type;
	return &values[ci->values_num++];
}

void stub_ci_string(oconfig_item_t *ci, const char *value)
{
	oconfig_value_t *v = stub_ci_value(ci, OCONFIG_TYPE_STRING);

	v->value.string = strdup(value);
	if (!v->value.string)
		abort();
}

void stub_ci_number(oconfig_item_t *ci, double value)
{
	stub_ci_value(ci, OCONFIG_TYPE_NUMBER)->value.number = value;
}

void stub_ci_bool(oconfig_item_t *ci, bool value)
{
	stub_ci_value(ci, OCONFIG_TYPE_BOOLEAN)->value.boolean = value;
}

static void stub_ci_free_inner(oconfig_item_t *ci)
{
	for (int i = 0; i < ci->values_num; i++) {
		if (ci->values[i].type == OCONFIG_TYPE_STRING)
			free(ci->values[i].value.string);
	}
	free(ci->values);
	for (int i = 0; i < ci->children_num; i++)
		stub_ci_free_inner(&ci->children[i]);
	free(ci->children);
	free(ci->key);
}

void stub_ci_free(oconfig_item_t *ci)
{
	if (!ci)
		return;
	stub_ci_free_inner(ci);
	free(ci);
}
