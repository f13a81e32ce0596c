/*
 * fuzz_config: the <Plugin ebprof> block, as collectd's parser hands it
 * to pconf_parse().
 *
 * A config error must stop collectd with a clear line, never crash it or
 * leave a half-filled struct behind. The input is a small config text,
 * one option per line: a key, then values separated by spaces; a value
 * in double quotes is a string, true/false a boolean, anything strtod()
 * takes whole a number (nan and inf included: collectd's grammar is not
 * the only way numbers arrive), and any other word a string. A line that
 * starts with a space or tab is a child of the option above it, which
 * pconf must refuse. The result goes through pconf_finish() too, and the
 * struct must then be within the documented bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/config.h"
#include "tests/unit/stub_collectd.h"

/* Adds the values on one line (from s up to end) to ci. */
static void add_values(oconfig_item_t *ci, char *s, char *end)
{
	while (s < end) {
		char *word, *stop;

		while (s < end && *s == ' ')
			s++;
		if (s >= end)
			break;
		if (*s == '"') {
			word = ++s;
			stop = memchr(s, '"', (size_t)(end - s));
			if (!stop)
				stop = end;
			*stop = '\0';
			stub_ci_string(ci, word);
			s = stop + 1;
			continue;
		}
		word = s;
		stop = memchr(s, ' ', (size_t)(end - s));
		if (!stop)
			stop = end;
		*stop = '\0';
		s = stop + 1;
		if (!strcmp(word, "true") || !strcmp(word, "false")) {
			stub_ci_bool(ci, word[0] == 't');
		} else {
			char *rest;
			double v = strtod(word, &rest);

			if (rest != word && *rest == '\0')
				stub_ci_number(ci, v);
			else
				stub_ci_string(ci, word);
		}
	}
}

static oconfig_item_t *block_of(char *text, size_t len)
{
	oconfig_item_t *root = stub_ci_block("Plugin");
	oconfig_item_t *last = NULL;
	char *s = text, *end = text + len;

	stub_ci_string(root, "ebprof");
	while (s < end) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		char *eol = nl ? nl : end;
		bool child = *s == ' ' || *s == '\t';
		char *key, *key_end;
		oconfig_item_t *ci;

		while (s < eol && (*s == ' ' || *s == '\t'))
			s++;
		key = s;
		key_end = memchr(s, ' ', (size_t)(eol - s));
		if (!key_end)
			key_end = eol;
		*key_end = '\0';
		if (*key) {
			/* A child of the last top-level option; children of a child are rare enough. */
			ci = stub_ci_child(child && last ? last : root, key);
			if (!child || !last)
				last = ci;
			if (key_end < eol)
				add_values(ci, key_end + 1, eol);
		}
		s = eol + 1;
	}
	return root;
}

static void check_bounds(const struct pconf *c)
{
	if (c->frequency < 1 || c->top_functions < 1 || c->top_functions > PCONF_MAX_TOP)
		abort();
	if (c->max_stacks && (c->max_stacks < PCONF_MIN_MAX_STACKS ||
			      c->max_stacks > PCONF_MAX_MAX_STACKS))
		abort();
	if (c->n_pids > PCONF_MAX_FILTERS || c->n_processes > PCONF_MAX_FILTERS)
		abort();
	for (size_t i = 0; i < c->n_pids; i++)
		if (c->pids[i] < 1 || c->pids[i] > PCONF_PID_MAX)
			abort();
	for (size_t i = 0; i < c->n_processes; i++)
		if (strlen(c->processes[i]) > PCONF_COMM_MAX)
			abort();
	if (c->spool_interval < 0 || c->spool_interval > PCONF_MAX_SPOOL_INTERVAL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oconfig_item_t *root;
	struct pconf c;
	char *text;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	stub_reset();
	root = block_of(text, size);
	pconf_init(&c);
	if (pconf_parse(&c, root) == 0) {
		check_bounds(&c);
		if (pconf_finish(&c, 10.0, 100000) == 0)
			check_bounds(&c);
	}
	pconf_free(&c);
	stub_ci_free(root);
	stub_reset();
	free(text);
	return 0;
}
