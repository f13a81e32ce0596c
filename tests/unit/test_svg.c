/*
 * svg: the flame graph a browser opens. Well-formedness is judged by a real
 * XML parser (xmllint), hostile names included; the rest checks what a
 * reader sees: tooltips, pruning, the data the search script counts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "render/svg.h"

static char *render(const struct profile *p, const struct svg_options *opts)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	assert_int_equal(svg_write(p, f, opts), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* Runs xmllint on the document; true when it is well-formed XML. */
static bool well_formed(const char *svg)
{
	char path[] = "/tmp/test_svg_XXXXXX";
	char cmd[128];
	int fd = mkstemp(path), rc;
	size_t len = strlen(svg);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, svg, len), (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	rc = system(cmd);
	unlink(path);
	return rc == 0;
}

static size_t occurrences(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static void add(struct profile *p, uint64_t count, const char *leaf, enum frame_kind kind)
{
	struct frame f[] = { { "app", FRAME_PROCESS }, { "main", FRAME_USER }, { leaf, kind } };

	assert_int_equal(profile_add(p, f, 3, count), 0);
}

/* The checker must be able to say no, or the tests below prove nothing. */
static void test_xmllint_rejects_broken_xml(void **state)
{
	(void)state;
	assert_false(well_formed("<svg><g></svg>"));
	assert_true(well_formed("<svg><g/></svg>"));
}

static void test_titles_show_samples_and_percent(void **state)
{
	struct profile *p = profile_new();
	char *svg;

	(void)state;
	add(p, 250, "work", FRAME_USER);
	add(p, 750, "rest", FRAME_KERNEL);
	svg = render(p, NULL);
	assert_true(well_formed(svg));
	assert_non_null(strstr(svg, "<title>work (250 samples, 25.00%)</title>"));
	assert_non_null(strstr(svg, "<title>rest (750 samples, 75.00%)</title>"));
	assert_non_null(strstr(svg, "<title>all (1000 samples, 100.00%)</title>"));
	assert_non_null(strstr(svg, ">Flame Graph</text>"));
	free(svg);
	profile_free(p);
}

static void test_options_change_title_units_and_size(void **state)
{
	struct profile *p = profile_new();
	struct svg_options opts;
	char *svg;

	(void)state;
	add(p, 3, "work", FRAME_USER);
	svg_options_init(&opts);
	opts.title = "CPU <of> host & co";
	opts.subtitle = "pid \"42\"";
	opts.count_name = "ms";
	opts.width = 800;
	svg = render(p, &opts);
	assert_true(well_formed(svg));
	assert_non_null(strstr(svg, ">CPU &lt;of&gt; host &amp; co</text>"));
	assert_non_null(strstr(svg, ">pid &quot;42&quot;</text>"));
	assert_non_null(strstr(svg, "<title>work (3 ms, 100.00%)</title>"));
	assert_non_null(strstr(svg, "width=\"800\""));
	free(svg);
	profile_free(p);
}

/*
 * A profile of time (record --mode offcpu|wall): tooltips say the time in
 * a short unit, and an off-CPU state frame has a colour of its own.
 */
static void test_time_profiles_show_times_and_offcpu_frames_apart(void **state)
{
	struct profile *p = profile_new();
	struct svg_options opts;
	char *svg, *at;

	(void)state;
	add(p, 2040000, "[off-cpu: sleep]", FRAME_OFFCPU);
	add(p, 37500, "work", FRAME_USER);
	add(p, 900, "tiny", FRAME_USER);
	svg_options_init(&opts);
	opts.unit_ns = 1000; /* counts are microseconds */
	svg = render(p, &opts);
	assert_true(well_formed(svg));
	assert_non_null(strstr(svg, "<title>[off-cpu: sleep] (2.04 s, 98.15%)</title>"));
	assert_non_null(strstr(svg, "<title>work (37.5 ms, 1.80%)</title>"));
	assert_non_null(strstr(svg, "<title>tiny (900 us, 0.04%)</title>"));
	assert_null(strstr(svg, "samples,"));
	/* Deep blue: a low red and green and a high blue component. */
	at = strstr(svg, "<title>[off-cpu: sleep]");
	at = strstr(at, "fill=\"#");
	assert_non_null(at);
	assert_true(strtol((char[]){ at[7], at[8], 0 }, NULL, 16) < 0x50);
	assert_true(strtol((char[]){ at[11], at[12], 0 }, NULL, 16) >= 190);
	free(svg);
	profile_free(p);
}

/* Sample counts are in attributes, so "Matched: x%" never sums pixels. */
static void test_frames_carry_sample_counts_for_search(void **state)
{
	struct profile *p = profile_new();
	char *svg;

	(void)state;
	add(p, 123, "alpha", FRAME_USER);
	add(p, 877, "beta", FRAME_USER);
	svg = render(p, NULL);
	assert_non_null(strstr(svg, "<g data-n=\"1000\"><title>all "));
	assert_non_null(strstr(svg, "<g data-n=\"123\"><title>alpha "));
	assert_non_null(strstr(svg, "<g data-n=\"877\"><title>beta "));
	/* The script and its controls. */
	assert_non_null(strstr(svg, "Matched: "));
	assert_non_null(strstr(svg, ">Search</text>"));
	assert_non_null(strstr(svg, ">Reset Zoom</text>"));
	assert_non_null(strstr(svg, "'data-n'")); /* the script reads them */
	assert_int_equal(occurrences(svg, "<script"), 1);
	free(svg);
	profile_free(p);
}

static void test_frames_narrower_than_min_width_are_pruned(void **state)
{
	struct profile *p = profile_new();
	struct svg_options opts;
	char *svg;

	(void)state;
	add(p, 1000000, "wide", FRAME_USER);
	add(p, 1, "tiny", FRAME_USER); /* 0.001 px */
	svg = render(p, NULL);
	assert_true(well_formed(svg));
	assert_non_null(strstr(svg, "<title>wide "));
	assert_null(strstr(svg, "tiny"));
	/* The pruned sample is not drawn, but the graph's total still has it. */
	assert_non_null(strstr(svg, "<g data-n=\"1000001\">"));
	free(svg);

	svg_options_init(&opts);
	opts.min_width = 0;
	svg = render(p, &opts);
	assert_non_null(strstr(svg, "<title>tiny "));
	free(svg);
	profile_free(p);
}

/* A pruned sibling leaves a gap; data-g lets the script place what follows. */
static void test_gap_left_by_pruned_sibling_is_recorded(void **state)
{
	struct profile *p = profile_new();
	char *svg;

	(void)state;
	add(p, 10, "a_tiny", FRAME_USER);
	add(p, 1000000, "b_wide", FRAME_USER);
	svg = render(p, NULL);
	assert_null(strstr(svg, "a_tiny"));
	assert_non_null(strstr(svg, "<g data-n=\"1000000\" data-g=\"10\"><title>b_wide "));
	free(svg);
	profile_free(p);
}

static void test_hostile_names_stay_well_formed_and_inert(void **state)
{
	static const char *const names[] = {
		"<script>alert(1)</script>",
		"\"'&amp;<>",
		"ctl\x01\x02\x1b[31m\x7f" "end\xc2\x85",
		"bad\xff\xfe utf8 \xc3( \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf",
		"]]></script><script>alert(2)</script>",
		"not xml \xef\xbf\xbe\xef\xbf\xbf",
	};
	struct profile *p = profile_new();
	struct svg_options opts;
	char *svg;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		add(p, 100 + i, names[i], i % 2 ? FRAME_KERNEL : FRAME_USER);
	svg_options_init(&opts);
	opts.title = "<script>alert(3)</script>";
	opts.subtitle = "\x01\xff";
	svg = render(p, &opts);
	assert_true(well_formed(svg));
	assert_int_equal(occurrences(svg, "<script"), 1); /* ours only */
	assert_int_equal(occurrences(svg, "]]>"), 1);
	assert_non_null(strstr(svg, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(svg, "&quot;&#39;&amp;amp;&lt;&gt;"));
	assert_non_null(strstr(svg, "<title>ctl[31mend ("));
	assert_null(strstr(svg, "\x1b"));
	assert_non_null(strstr(svg, "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd("));
	assert_non_null(strstr(svg, "not xml \xef\xbf\xbd\xef\xbf\xbd ("));
	assert_null(strstr(svg, "innerHTML"));
	free(svg);
	profile_free(p);
}

static void test_huge_name_is_cut_in_the_label(void **state)
{
	struct profile *p = profile_new();
	char *name = malloc(10001), *svg, *label;

	(void)state;
	assert_non_null(name);
	memset(name, 'x', 10000);
	name[10000] = '\0';
	add(p, 5, name, FRAME_USER);
	svg = render(p, NULL);
	assert_true(well_formed(svg));
	label = strstr(svg, "\">xxx");
	assert_non_null(label);
	/* 1180 px / (0.59 * 12 px) = 166 glyphs, two of them "..". */
	assert_non_null(strstr(label, "x..</text>"));
	assert_true(strstr(label, "..</text>") - label < 200);
	free(name);
	free(svg);
	profile_free(p);
}

/* Checks that s is valid UTF-8 (the parser would say so too, but here the
 * message points at the label). */
static bool valid_utf8(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = s[i] < 0x80 ? 1 : s[i] < 0xe0 ? 2 : s[i] < 0xf0 ? 3 : 4;

		if (i + n > len)
			return false;
		for (size_t j = 1; j < n; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
		i += n;
	}
	return true;
}

static void test_multibyte_labels_are_cut_between_characters(void **state)
{
	struct profile *p = profile_new();
	char name[4096] = "", *svg;
	const char *text, *end;

	(void)state;
	/* 2-, 3- and 4-byte characters, long enough to be cut in any frame. */
	for (int i = 0; i < 100; i++)
		strcat(name, "\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x94\xa5");
	/* Frames of many widths, so the cut lands on every kind of character. */
	for (int i = 1; i <= 60; i++) {
		char leaf[4200];

		snprintf(leaf, sizeof(leaf), "%02d%s", i, name);
		add(p, (uint64_t)i, leaf, FRAME_USER);
	}
	svg = render(p, NULL);
	assert_true(well_formed(svg));
	for (text = strstr(svg, "<text x=\""); text; text = strstr(end, "<text x=\"")) {
		text = strchr(text, '>') + 1;
		end = strstr(text, "</text>");
		assert_non_null(end);
		assert_true(valid_utf8((const unsigned char *)text, (size_t)(end - text)));
	}
	assert_non_null(strstr(svg, ".."));
	free(svg);
	profile_free(p);
}

/*
 * A minimal DOM, just what the graph's script touches, so that node can run
 * the script as a browser would and check what a user sees: layout from
 * sample offsets, search, Matched, zoom, labels, URL state, reset.
 */
static const char dom_check_js[] =
	"// Runs the graph's own script on a minimal DOM and checks what a user sees.\n"
	"const fs = require('fs'), src = fs.readFileSync(process.argv[2], 'utf8');\n"
	"const unesc = s => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '\"')\n"
	"\t.replace(/&#39;/g, \"'\").replace(/&amp;/g, '&');\n"
	"class El {\n"
	"\tconstructor(tag, attrs) { Object.assign(this, { tagName: tag, attrs, kids: [], parent: null, text: '', style: {}, cls: new Set() });\n"
	"\t\tconst c = this.cls; this.classList = { toggle: (n, on) => (on ? c.add(n) : c.delete(n)) }; }\n"
	"\tgetAttribute(a) { return a in this.attrs ? this.attrs[a] : null; }\n"
	"\tsetAttribute(a, v) { this.attrs[a] = String(v); }\n"
	"\tget id() { return this.attrs.id || ''; }\n"
	"\tget children() { return this.kids; }\n"
	"\tget firstElementChild() { return this.kids[0] || null; }\n"
	"\tget nextElementSibling() { const s = this.parent.kids; return s[s.indexOf(this) + 1] || null; }\n"
	"\tget textContent() { return this.text + this.kids.map(k => k.textContent).join(''); }\n"
	"\tset textContent(v) { this.text = String(v); this.kids = []; }\n"
	"\tappendChild(k) { k.parent = this; this.kids.push(k); return k; }\n"
	"\tclosest(tag) { let e = this; while (e && e.tagName !== tag) e = e.parent; return e; }\n"
	"}\n"
	"let root = null, open = [], m;\n"
	"const body = src.replace(/<\\?xml[^>]*\\?>/, '').replace(/<script[\\s\\S]*<\\/script>/, '');\n"
	"const re = /<(\\/?)([a-zA-Z]+)((?:\\s+[\\w:-]+=\"[^\"]*\")*)\\s*(\\/?)>|([^<]+)/g;\n"
	"while ((m = re.exec(body))) {\n"
	"\tif (m[5] !== undefined) { if (open.length) open[open.length - 1].text += unesc(m[5]); continue; }\n"
	"\tif (m[1]) { open.pop(); continue; }\n"
	"\tconst attrs = {};\n"
	"\tm[3].replace(/([\\w:-]+)=\"([^\"]*)\"/g, (_, k, v) => { attrs[k] = unesc(v); });\n"
	"\tconst e = new El(m[2], attrs);\n"
	"\tif (open.length) open[open.length - 1].appendChild(e); else root = e;\n"
	"\tif (!m[4]) open.push(e);\n"
	"}\n"
	"const ids = {}, on = {};\n"
	"(function walk(e) { if (e.attrs.id) ids[e.attrs.id] = e; e.kids.forEach(walk); })(root);\n"
	"root.addEventListener = (t, f) => { on[t] = f; };\n"
	"let answer = null, url = '';\n"
	"global.document = { documentElement: root, getElementById: id => ids[id] || null,\n"
	"\tcreateElementNS: (ns, tag) => new El(tag, {}), addEventListener: (t, f) => { on['doc' + t] = f; } };\n"
	"global.window = { alert: msg => { throw new Error(msg); }, prompt: () => answer };\n"
	"global.location = { search: '', pathname: '/graph.svg' };\n"
	"global.history = { replaceState: (a, b, u) => { url = u; } };\n"
	"eval(src.match(/<!\\[CDATA\\[([\\s\\S]*?)\\]\\]>/)[1]);\n"
	"\n"
	"let failed = 0;\n"
	"const check = (ok, what) => { if (!ok) { console.log('FAIL: ' + what); failed++; } };\n"
	"const frames = ids.frames.kids, rect = g => g.kids[1], W = +root.attrs.width;\n"
	"const name = g => { const t = g.kids[0].textContent; return t.slice(0, t.lastIndexOf(' (')); };\n"
	"const find = n => frames.find(g => name(g) === n);\n"
	"const search = rx => { answer = rx; on.dockeydown({ key: '/', preventDefault() {} }); return ids.matched.textContent; };\n"
	"const statics = frames.map(g => [+rect(g).attrs.x, +rect(g).attrs.width]);\n"
	"const laidOut = () => frames.every((g, i) => Math.abs(rect(g).attrs.x - statics[i][0]) < 0.06 &&\n"
	"\tMath.abs(rect(g).attrs.width - statics[i][1]) < 0.06);\n"
	"\n"
	"on.click({ target: rect(frames[0]) }); // a click on the root lays out from sample offsets\n"
	"check(laidOut(), 'layout from sample offsets matches the static layout');\n"
	"check(search('spin') === 'Matched: 40.0%', 'nested matches count once: ' + ids.matched.textContent);\n"
	"check(rect(find('spin')).attrs.fill === '#e600e6' && rect(find('idle')).attrs.fill !== '#e600e6', 'highlight');\n"
	"check(url === '?s=spin', 'search kept in the URL: ' + url);\n"
	"check(search('^(parse|lex)$') === 'Matched: 40.0%', 'parse/lex: ' + ids.matched.textContent);\n"
	"on.dockeydown({ key: 'Escape' });\n"
	"check(ids.matched.textContent === '' && rect(find('spin')).attrs.fill !== '#e600e6', 'Escape clears');\n"
	"\n"
	"const work = find('work');\n"
	"on.click({ target: rect(work) });\n"
	"check(+rect(work).attrs.x === 10 && +rect(work).attrs.width === W - 20, 'zoomed frame spans the width');\n"
	"check(find('app').cls.has('up') && +rect(find('app')).attrs.width === W - 20, 'ancestors span the width');\n"
	"check(find('idle').style.display === 'none' && find('parse').style.display === 'none', 'others hidden');\n"
	"check(find('spin').style.display !== 'none' && +rect(find('spin')).attrs.width === W - 20, 'child rescaled');\n"
	"check(find('spin').kids[2] && find('spin').kids[2].textContent === 'spin', 'label recomputed');\n"
	"check(url === '?x=60&y=3', 'zoom kept in the URL: ' + url);\n"
	"on.click({ target: ids.reset });\n"
	"check(frames.every(g => g.style.display !== 'none') && laidOut(), 'Reset Zoom restores the graph');\n"
	"console.log(failed ? failed + ' failed' : 'ok');\n"
	"process.exit(failed ? 1 : 0);\n";

static void add_path(struct profile *p, const char *stack, uint64_t count)
{
	struct frame f[16];
	char buf[256];
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *tok = strtok(buf, ";"); tok; tok = strtok(NULL, ";")) {
		f[n] = (struct frame){ .name = tok, .kind = n ? FRAME_USER : FRAME_PROCESS };
		n++;
	}
	assert_int_equal(profile_add(p, f, n, count), 0);
}

/* Runs the embedded script under node on the graph; true when it passes. */
static bool script_behaves(const char *svg)
{
	char svg_path[] = "/tmp/test_svg_XXXXXX", js_path[] = "/tmp/test_svg_js_XXXXXX";
	char cmd[160];
	int svg_fd = mkstemp(svg_path), js_fd = mkstemp(js_path), rc;

	assert_true(svg_fd >= 0 && js_fd >= 0);
	assert_int_equal(write(svg_fd, svg, strlen(svg)), (ssize_t)strlen(svg));
	assert_int_equal(write(js_fd, dom_check_js, strlen(dom_check_js)),
			 (ssize_t)strlen(dom_check_js));
	close(svg_fd);
	close(js_fd);
	snprintf(cmd, sizeof(cmd), "node %s %s", js_path, svg_path);
	rc = system(cmd);
	unlink(svg_path);
	unlink(js_path);
	return rc == 0;
}

/*
 * 100 samples; "spin" is in 40 of them, 5 of those twice (recursion), so a
 * script that summed every matched frame would say 45%. "work" starts at
 * sample 60 (after idle 20 and parse 40) at depth 3.
 */
static void test_script_searches_zooms_and_resets_in_samples(void **state)
{
	struct profile *p = profile_new();
	struct svg_options opts;
	char *svg;

	(void)state;
	add_path(p, "app;main;parse;lex", 30);
	add_path(p, "app;main;parse", 10);
	add_path(p, "app;main;work;spin", 25);
	add_path(p, "app;main;work;spin;spin", 5);
	add_path(p, "app;main;idle", 20);
	add_path(p, "app;other;spin", 10);
	svg_options_init(&opts);
	for (opts.inverted = 0; opts.inverted <= 1; opts.inverted++) {
		svg = render(p, &opts);
		assert_true(script_behaves(svg));
		free(svg);
	}
	profile_free(p);
}


static void test_empty_profile_says_no_samples(void **state)
{
	struct profile *p = profile_new();
	char *svg;

	(void)state;
	svg = render(p, NULL);
	assert_true(well_formed(svg));
	assert_non_null(strstr(svg, "no samples"));
	assert_null(strstr(svg, "<rect x="));
	free(svg);
	profile_free(p);
}

static double rect_y(const char *svg, const char *title)
{
	const char *s = strstr(svg, title);

	assert_non_null(s);
	s = strstr(s, " y=\"");
	assert_non_null(s);
	return atof(s + 4);
}

static void test_root_at_bottom_or_top_when_inverted(void **state)
{
	struct profile *p = profile_new();
	struct svg_options opts;
	char *svg;

	(void)state;
	add(p, 10, "leaf", FRAME_USER);
	svg = render(p, NULL);
	assert_true(rect_y(svg, "<title>all ") > rect_y(svg, "<title>leaf "));
	free(svg);
	svg_options_init(&opts);
	opts.inverted = 1;
	svg = render(p, &opts);
	assert_true(rect_y(svg, "<title>all ") < rect_y(svg, "<title>leaf "));
	free(svg);
	profile_free(p);
}

static const char *fill_of(const char *svg, const char *title)
{
	static char fill[8];
	const char *s = strstr(svg, title);

	assert_non_null(s);
	s = strstr(s, "fill=\"");
	assert_non_null(s);
	memcpy(fill, s + 6, 7);
	fill[7] = '\0';
	return fill;
}

/* Same name, same colour in every graph; kinds get different hues. */
static void test_colours_are_stable_per_name_and_differ_by_kind(void **state)
{
	struct profile *a = profile_new(), *b = profile_new();
	char *svg_a, *svg_b, fill[8];

	(void)state;
	add(a, 10, "work", FRAME_USER);
	add(a, 10, "do_syscall_64", FRAME_KERNEL);
	add(b, 99, "other", FRAME_JIT);
	add(b, 1, "work", FRAME_USER);
	svg_a = render(a, NULL);
	svg_b = render(b, NULL);
	strcpy(fill, fill_of(svg_a, "<title>work "));
	assert_string_equal(fill, fill_of(svg_b, "<title>work "));
	/* User frames are warm (red high, blue low), JIT frames green-blue. */
	assert_true(strtol((char[]){ fill[1], fill[2], 0 }, NULL, 16) > 200);
	strcpy(fill, fill_of(svg_b, "<title>other "));
	assert_true(strtol((char[]){ fill[3], fill[4], 0 }, NULL, 16) >
		    strtol((char[]){ fill[1], fill[2], 0 }, NULL, 16));
	strcpy(fill, fill_of(svg_a, "<title>do_syscall_64 "));
	assert_string_not_equal(fill, fill_of(svg_a, "<title>work "));
	free(svg_a);
	free(svg_b);
	profile_free(a);
	profile_free(b);
}

static void test_write_error_is_reported(void **state)
{
	struct profile *p = profile_new();
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(full);
	add(p, 1, "x", FRAME_USER);
	assert_int_equal(svg_write(p, full, NULL), -ENOSPC);
	fclose(full);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xmllint_rejects_broken_xml),
		cmocka_unit_test(test_titles_show_samples_and_percent),
		cmocka_unit_test(test_options_change_title_units_and_size),
		cmocka_unit_test(test_time_profiles_show_times_and_offcpu_frames_apart),
		cmocka_unit_test(test_frames_carry_sample_counts_for_search),
		cmocka_unit_test(test_frames_narrower_than_min_width_are_pruned),
		cmocka_unit_test(test_gap_left_by_pruned_sibling_is_recorded),
		cmocka_unit_test(test_hostile_names_stay_well_formed_and_inert),
		cmocka_unit_test(test_huge_name_is_cut_in_the_label),
		cmocka_unit_test(test_multibyte_labels_are_cut_between_characters),
		cmocka_unit_test(test_script_searches_zooms_and_resets_in_samples),
		cmocka_unit_test(test_empty_profile_says_no_samples),
		cmocka_unit_test(test_root_at_bottom_or_top_when_inverted),
		cmocka_unit_test(test_colours_are_stable_per_name_and_differ_by_kind),
		cmocka_unit_test(test_write_error_is_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
