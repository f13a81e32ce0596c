/*
 * svg: a profile drawn as an interactive flame graph in one file.
 *
 * This is the last step of the data flow for people: the plugin's spool
 * and `ebprof record/render` write it, a browser shows it. Each drawn frame
 * is one element, in the profile's stable depth-first order:
 *
 *   <g data-n="SAMPLES" [data-g="GAP"]><title>NAME (N samples, P%)</title>
 *   <rect x y width height fill/>[<text x y>LABEL</text>]</g>
 *
 * Markup per frame is kept small because a graph has tens of thousands of
 * frames: no per-frame ids or styles, colours as #rrggbb, one decimal for
 * pixels, and no <text> when not even "x.." would fit. The embedded script
 * rebuilds the exact sample offset of every frame from that order: a
 * frame's children start at its own offset, each child ends where the next
 * begins, and data-g carries the samples of pruned siblings skipped before
 * a frame (rare, so it is written only when not zero). Zoom and search
 * then work in samples, not in rounded pixels, and "Matched" is the union
 * of the matched frames' sample intervals, so nested matches count once.
 * The script reads names from the <title> with textContent and writes
 * labels with textContent: a name is never parsed as markup.
 *
 * Names go through one filter: invalid UTF-8 becomes U+FFFD, control
 * characters (C0, DEL, C1) are dropped, U+FFFE/U+FFFF (not XML characters)
 * become U+FFFD, and & < > " ' become entities. Labels are cut on code
 * points, so ".." never follows half a character.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "render/svg.h"
#include "symbolizer/utf8.h"

#define SVG_PAD 10	     /* left and right margin, pixels */
#define SVG_GLYPH_WIDTH 0.59 /* average glyph width / font size, Verdana-like */
#define SVG_SEARCH_FILL "#e600e6"

void svg_options_init(struct svg_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->min_width = -1;
}

/* --- names ------------------------------------------------------------------ */

/* One code point at s; a malformed sequence reads as U+FFFD and takes one
 * byte, so decoding always moves on. */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	size_t len = utf8_decode(s, cp);

	if (len)
		return len;
	*cp = 0xfffd;
	return 1;
}

/* What a code point becomes in the SVG: false when it is dropped. */
static bool svg_visible(uint32_t *cp)
{
	if (*cp < 0x20 || (*cp >= 0x7f && *cp <= 0x9f))
		return false;
	if (*cp == 0xfffe || *cp == 0xffff)
		*cp = 0xfffd;
	return true;
}

/* Visible code points of name: the length the label has to fit in. */
static size_t svg_name_length(const char *name)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = 0;
	uint32_t cp;

	while (*s) {
		s += utf8_next(s, &cp);
		n += svg_visible(&cp);
	}
	return n;
}

static void svg_put_code_point(uint32_t cp, const unsigned char *raw, size_t len, FILE *out)
{
	switch (cp) {
	case '&':
		fputs_unlocked("&amp;", out);
		return;
	case '<':
		fputs_unlocked("&lt;", out);
		return;
	case '>':
		fputs_unlocked("&gt;", out);
		return;
	case '"':
		fputs_unlocked("&quot;", out);
		return;
	case '\'':
		fputs_unlocked("&#39;", out);
		return;
	case 0xfffd:
		fputs_unlocked("\xef\xbf\xbd", out);
		return;
	default:
		fwrite_unlocked(raw, 1, len, out);
	}
}

/* Printable ASCII that needs no escaping: written in runs, not one by one. */
static bool svg_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '&' && c != '<' && c != '>' && c != '"' &&
	       c != '\'';
}

/* Writes at most max visible code points of text, escaped and filtered. */
static void svg_put_text(const char *text, size_t max, FILE *out)
{
	const unsigned char *s = (const unsigned char *)text;
	uint32_t cp;

	while (*s && max) {
		size_t len = 0;

		while (len < max && svg_plain(s[len]))
			len++;
		if (len) {
			fwrite_unlocked(s, 1, len, out);
			s += len;
			max -= len;
			continue;
		}
		len = utf8_next(s, &cp);

		if (svg_visible(&cp)) {
			svg_put_code_point(cp, s, len, out);
			max--;
		}
		s += len;
	}
}

/* Decimal digits, without printf's format parsing: the SVG has ~8 numbers a frame. */
static void svg_put_u64(unsigned long long v, FILE *out)
{
	char digits[20];
	size_t n = sizeof(digits);

	do {
		digits[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(digits + n, 1, sizeof(digits) - n, out);
}

/* --- colours ---------------------------------------------------------------- */

struct svg_range {
	unsigned char base[3], span[3];
};

/* Warm for user code as flamegraph.pl's users expect, red-orange for the
 * kernel, aqua for JIT code, light blue for inlined frames, greys for the
 * process root and unresolved frames, deep blue for the state an off-CPU
 * stack waited in (flamegraph.pl's off-CPU graphs are blue), violet for
 * Python functions (apart from every other kind, the warm native ones
 * they sit on most of all). */
static const struct svg_range svg_palette[FRAME_KIND_NR] = {
	[FRAME_PROCESS] = { { 180, 180, 180 }, { 30, 30, 30 } },
	[FRAME_USER] = { { 225, 110, 30 }, { 30, 110, 40 } },
	[FRAME_KERNEL] = { { 205, 60, 40 }, { 40, 50, 30 } },
	[FRAME_JIT] = { { 40, 180, 150 }, { 60, 50, 60 } },
	[FRAME_INLINED] = { { 140, 185, 230 }, { 40, 35, 25 } },
	[FRAME_UNKNOWN] = { { 150, 150, 160 }, { 20, 20, 20 } },
	[FRAME_OFFCPU] = { { 40, 70, 190 }, { 30, 40, 50 } },
	[FRAME_PYTHON] = { { 150, 90, 200 }, { 40, 40, 40 } },
};

/* The same name gets the same colour in every graph: FNV-1a, no random. */
static void svg_put_fill(const char *name, enum frame_kind kind, FILE *out)
{
	const struct svg_range *r = &svg_palette[(unsigned int)kind < FRAME_KIND_NR ? kind
									  : FRAME_UNKNOWN];
	uint32_t h = 2166136261u;
	unsigned int rgb[3];

	for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
		h ^= *s;
		h *= 16777619u;
	}
	for (int i = 0; i < 3; i++) {
		rgb[i] = r->base[i] + (h & 0xff) * r->span[i] / 255;
		h >>= 8;
	}
	if (kind == FRAME_PROCESS || kind == FRAME_UNKNOWN)
		rgb[1] = rgb[2] = rgb[0]; /* stay grey */
	static const char hex[] = "0123456789abcdef";
	char text[7] = { '#' };

	for (int i = 0; i < 3; i++) {
		text[1 + 2 * i] = hex[(rgb[i] >> 4) & 0xf];
		text[2 + 2 * i] = hex[rgb[i] & 0xf];
	}
	fwrite_unlocked(text, 1, sizeof(text), out);
}

/* --- layout ------------------------------------------------------------------ */

struct svg_layout {
	double width, frame_height, font, scale, min_width;
	double top;	/* y of the first frame row */
	size_t depth;	/* drawn rows, root included */
	uint64_t total;
	const char *count_name;
	int inverted;
	const struct svg_options *opts; /* for the frame_fill/frame_note hooks */
};

/* Per depth d of the walk, for the node there whose children are drawn. */
struct svg_level {
	uint64_t child_offset; /* where the next child starts, in samples */
	uint64_t drawn_end;    /* where the last drawn child ended */
};

struct svg_walk {
	struct svg_layout *l;
	struct svg_level *level; /* level[d] */
	FILE *out;
};

/* The layout's width, scale and minimum width: what decides which frames
 * are drawn, shared with svg_frame_drawn(). */
static void svg_layout_init(struct svg_layout *l, const struct svg_options *opts,
			    uint64_t total)
{
	*l = (struct svg_layout){
		.width = opts->width ? opts->width : 1200,
		.frame_height = opts->frame_height ? opts->frame_height : 16,
		.min_width = opts->min_width < 0 ? 0.1 : opts->min_width,
		.count_name = opts->count_name ? opts->count_name : "samples",
		.inverted = opts->inverted,
		.total = total,
		.opts = opts,
	};
	if (l->width < 2 * SVG_PAD + 100)
		l->width = 2 * SVG_PAD + 100;
	l->scale = total ? (l->width - 2 * SVG_PAD) / (double)total : 0;
}

static bool svg_drawn(const struct svg_layout *l, uint64_t samples)
{
	return samples && (double)samples * l->scale >= l->min_width;
}

bool svg_frame_drawn(const struct svg_options *opts, uint64_t samples, uint64_t total)
{
	struct svg_options defaults;
	struct svg_layout l;

	if (!opts) {
		svg_options_init(&defaults);
		opts = &defaults;
	}
	svg_layout_init(&l, opts, total);
	return svg_drawn(&l, samples);
}

/* Rows the drawn frames need: pruned frames hide their whole subtree. */
static int svg_measure(const struct profile_node *kid, size_t depth, void *ctx)
{
	struct svg_layout *l = ctx;

	if (!svg_drawn(l, profile_node_total(kid, 0)))
		return PROFILE_WALK_SKIP;
	if (depth + 1 > l->depth)
		l->depth = depth + 1;
	return 0;
}

static double svg_row_y(const struct svg_layout *l, size_t depth)
{
	if (l->inverted)
		return l->top + (double)depth * l->frame_height;
	return l->top + (double)(l->depth - 1 - depth) * l->frame_height;
}

/*
 * A non-negative number with up to `decimals` decimals, trailing zeros cut
 * ("12", "12.5"). Formatted by hand: printf's %f follows LC_NUMERIC, and a
 * program that set a German locale would write "12,5" into the XML.
 */
static void svg_put_fixed(double v, unsigned int decimals, FILE *out)
{
	unsigned long long scale = 1, fixed, frac;
	char digits[8];
	unsigned int n = decimals;

	for (unsigned int i = 0; i < decimals; i++)
		scale *= 10;
	fixed = (unsigned long long)(v < 0 ? 0 : v * (double)scale + 0.5);
	frac = fixed % scale;
	svg_put_u64(fixed / scale, out);
	while (n && frac % 10 == 0) {
		frac /= 10;
		n--;
	}
	if (!n)
		return;
	for (unsigned int i = n; i > 0; i--) {
		digits[i - 1] = (char)('0' + frac % 10);
		frac /= 10;
	}
	putc_unlocked('.', out);
	fwrite_unlocked(digits, 1, n, out);
}

static void svg_put_px(double v, FILE *out)
{
	svg_put_fixed(v, 1, out);
}

/* "12.34%", always two decimals, as flamegraph.pl's tooltips. */
static void svg_put_percent(uint64_t part, uint64_t whole, FILE *out)
{
	unsigned long long hundredths =
		(unsigned long long)(10000.0 * (double)part / (double)whole + 0.5);

	svg_put_u64(hundredths / 100, out);
	putc_unlocked('.', out);
	putc_unlocked((int)('0' + hundredths % 100 / 10), out);
	putc_unlocked((int)('0' + hundredths % 10), out);
	putc_unlocked('%', out);
}

/* A time for a tooltip, in the unit that keeps it short: "2.01 s", "37.5 ms", "120 us". */
static void svg_put_time(uint64_t ns, FILE *out)
{
	if (ns >= 1000000000ull)
		fprintf(out, "%.2f s", ns / 1e9);
	else if (ns >= 1000000ull)
		fprintf(out, "%.1f ms", ns / 1e6);
	else
		fprintf(out, "%.0f us", ns / 1e3);
}

static void svg_put_frame(const struct svg_layout *l, const struct profile_node *node,
			  const char *name, enum frame_kind kind, size_t depth, uint64_t offset,
			  uint64_t samples, uint64_t gap, FILE *out)
{
	const struct svg_options *o = l->opts;
	const char *note = o->frame_note ? o->frame_note(node, o->frame_ctx) : NULL;
	double x = SVG_PAD + (double)offset * l->scale;
	double w = (double)samples * l->scale;
	double y = svg_row_y(l, depth);
	long fit = (long)((w - 6) / (SVG_GLYPH_WIDTH * l->font));

	fputs_unlocked("<g data-n=\"", out);
	svg_put_u64(samples, out);
	if (gap) {
		fputs_unlocked("\" data-g=\"", out);
		svg_put_u64(gap, out);
	}
	fputs_unlocked("\"><title>", out);
	svg_put_text(name, SIZE_MAX, out);
	fputs_unlocked(" (", out);
	if (o->unit_ns) {
		svg_put_time(samples * o->unit_ns, out);
	} else {
		svg_put_u64(samples, out);
		putc_unlocked(' ', out);
		svg_put_text(l->count_name, SIZE_MAX, out);
	}
	fputs_unlocked(", ", out);
	svg_put_percent(samples, l->total, out);
	if (note && *note) {
		fputs_unlocked("; ", out);
		svg_put_text(note, SIZE_MAX, out);
	}
	fputs_unlocked(")</title><rect x=\"", out);
	svg_put_px(x, out);
	fputs_unlocked("\" y=\"", out);
	svg_put_px(y, out);
	fputs_unlocked("\" width=\"", out);
	svg_put_px(w, out);
	fputs_unlocked("\" height=\"", out);
	svg_put_px(l->frame_height - 1, out);
	fputs_unlocked("\" fill=\"", out);
	if (o->frame_fill) {
		char rgb[8] = "#c8c8c8";

		o->frame_fill(node, o->frame_ctx, rgb);
		rgb[7] = '\0';
		fputs_unlocked(rgb, out);
	} else if (depth)
		svg_put_fill(name, kind, out);
	else
		fputs_unlocked("#c8c8c8", out);
	fputs_unlocked("\"/>", out);
	/* A label needs room for at least "x..". */
	if (fit >= 3) {
		size_t len = svg_name_length(name);

		fputs_unlocked("<text x=\"", out);
		svg_put_px(x + 3, out);
		fputs_unlocked("\" y=\"", out);
		svg_put_px(y + l->frame_height - 5, out);
		fputs_unlocked("\">", out);
		if (len <= (size_t)fit) {
			svg_put_text(name, len, out);
		} else {
			svg_put_text(name, (size_t)fit - 2, out);
			fputs_unlocked("..", out);
		}
		fputs_unlocked("</text>", out);
	}
	fputs_unlocked("</g>\n", out);
}

static int svg_put_frames(const struct profile_node *kid, size_t depth, void *ctx)
{
	struct svg_walk *w = ctx;
	struct svg_level *up = &w->level[depth - 1];
	uint64_t samples = profile_node_total(kid, 0), offset = up->child_offset;

	up->child_offset += samples;
	if (!svg_drawn(w->l, samples))
		return PROFILE_WALK_SKIP;
	svg_put_frame(w->l, kid, profile_node_name(kid), profile_node_kind(kid), depth, offset,
		      samples, offset - up->drawn_end, w->out);
	up->drawn_end = offset + samples;
	w->level[depth] = (struct svg_level){ offset, offset };
	return 0;
}

/* --- document ------------------------------------------------------------------ */

/*
 * The script. It finds its numbers in the <svg> element's data-* attributes
 * and everything else in the frames, so it is one constant string.
 */
static const char svg_script[] =
	"(function () {\n"
	"'use strict';\n"
	"/* The <svg> that holds this script, also when inlined in a page. */\n"
	"var me = document.currentScript, NS = 'http://www.w3.org/2000/svg';\n"
	"var svg = (me && me.ownerSVGElement) || document.documentElement;\n"
	"var num = function (e, a) { return +(e.getAttribute(a) || 0); };\n"
	"var W = num(svg, 'width'), PAD = num(svg, 'data-pad'), FH = num(svg, 'data-fh');\n"
	"var FONT = num(svg, 'data-font'), Y0 = num(svg, 'data-y0'), DIR = num(svg, 'data-dir');\n"
	"var MINW = num(svg, 'data-minw'), GLYPH = num(svg, 'data-glyph');\n"
	"var $ = function (id) { return document.getElementById(id); };\n"
	"var details = $('details'), matched = $('matched'), reset = $('reset');\n"
	"var clear = $('clear'), frames = [], byG = new Map(), cursor = [], zoomed = null;\n"
	"var pattern = null;\n"
	"/* Exact sample offsets from document order: see svg.c. */\n"
	"Array.prototype.forEach.call($('frames').children, function (g) {\n"
	"  var title = g.firstElementChild, rect = title.nextElementSibling;\n"
	"  var n = num(g, 'data-n'), d = Math.round((num(rect, 'y') - Y0) / (DIR * FH));\n"
	"  var o = d ? cursor[d] + num(g, 'data-g') : 0, t = title.textContent;\n"
	"  cursor[d] = o + n;\n"
	"  cursor[d + 1] = o;\n"
	"  var f = { g: g, rect: rect, text: rect.nextElementSibling, n: n, o: o, d: d,\n"
	"    name: t.slice(0, t.lastIndexOf(' (' + n + ' ')), fill: rect.getAttribute('fill'),\n"
	"    cps: null };\n"
	"  frames.push(f);\n"
	"  byG.set(g, f);\n"
	"});\n"
	"var total = frames.length ? frames[0].n : 0;\n"
	"function label(f, x, w) {\n"
	"  var fit = Math.floor((w - 6) / (GLYPH * FONT)), s = '';\n"
	"  if (fit >= 3) {\n"
	"    if (!f.cps) f.cps = Array.from(f.name);\n"
	"    s = f.cps.length <= fit ? f.name : f.cps.slice(0, fit - 2).join('') + '..';\n"
	"  }\n"
	"  if (!f.text) {\n"
	"    if (!s) return;\n"
	"    f.text = document.createElementNS(NS, 'text');\n"
	"    f.text.setAttribute('y', num(f.rect, 'y') + FH - 5);\n"
	"    f.g.appendChild(f.text);\n"
	"  }\n"
	"  f.text.setAttribute('x', (x + 3).toFixed(1));\n"
	"  f.text.textContent = s;\n"
	"}\n"
	"function layout(z) {\n"
	"  var o0 = z ? z.o : 0, n0 = z ? z.n : total, d0 = z ? z.d : 0;\n"
	"  var s = (W - 2 * PAD) / n0;\n"
	"  frames.forEach(function (f) {\n"
	"    var x, w, show, above = f.d < d0;\n"
	"    if (above) {\n"
	"      show = f.o <= o0 && o0 < f.o + f.n;\n"
	"      x = PAD;\n"
	"      w = W - 2 * PAD;\n"
	"    } else {\n"
	"      x = PAD + (f.o - o0) * s;\n"
	"      w = f.n * s;\n"
	"      show = f.o >= o0 && f.o + f.n <= o0 + n0 && w >= MINW;\n"
	"    }\n"
	"    f.g.style.display = show ? '' : 'none';\n"
	"    if (!show) return;\n"
	"    f.g.classList.toggle('up', above);\n"
	"    f.rect.setAttribute('x', x.toFixed(1));\n"
	"    f.rect.setAttribute('width', w.toFixed(1));\n"
	"    label(f, x, w);\n"
	"  });\n"
	"  zoomed = z;\n"
	"  reset.style.visibility = z ? 'visible' : 'hidden';\n"
	"  save();\n"
	"}\n"
	"function search(re) {\n"
	"  var rx = null, iv = [], sum = 0, end = -1;\n"
	"  if (re) {\n"
	"    try { rx = new RegExp(re); } catch (e) { window.alert('Bad regular expression: ' + e.message); return; }\n"
	"  }\n"
	"  frames.forEach(function (f) {\n"
	"    var m = rx !== null && f.d > 0 && rx.test(f.name);\n"
	"    f.rect.setAttribute('fill', m ? '" SVG_SEARCH_FILL "' : f.fill);\n"
	"    if (m) iv.push([f.o, f.o + f.n]);\n"
	"  });\n"
	"  /* A nested match lies inside its matched ancestor: count the union. */\n"
	"  iv.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  iv.forEach(function (v) {\n"
	"    if (v[1] <= end) return;\n"
	"    sum += v[1] - Math.max(v[0], end);\n"
	"    end = v[1];\n"
	"  });\n"
	"  pattern = rx ? re : null;\n"
	"  matched.textContent = rx ? 'Matched: ' + (total ? 100 * sum / total : 0).toFixed(1) + '%' : '';\n"
	"  matched.setAttribute('data-samples', rx ? sum : 0);\n"
	"  clear.style.visibility = rx ? 'visible' : 'hidden';\n"
	"  save();\n"
	"}\n"
	"function ask() {\n"
	"  var re = window.prompt('Search for a regular expression (empty: clear)', pattern || '');\n"
	"  if (re !== null) search(re);\n"
	"}\n"
	"function save() {\n"
	"  try {\n"
	"    var q = new URLSearchParams();\n"
	"    if (pattern) q.set('s', pattern);\n"
	"    if (zoomed) { q.set('x', zoomed.o); q.set('y', zoomed.d); }\n"
	"    var s = q.toString();\n"
	"    history.replaceState(null, '', s ? '?' + s : location.pathname);\n"
	"  } catch (e) { /* not a top-level document: no URL state */ }\n"
	"}\n"
	"svg.addEventListener('click', function (e) {\n"
	"  var t = e.target;\n"
	"  if (t === reset) return layout(null);\n"
	"  if (t.id === 'search') return ask();\n"
	"  if (t === clear) return search('');\n"
	"  var g = t.closest ? t.closest('g') : null, f = g && byG.get(g);\n"
	"  if (f) layout(f.d ? f : null);\n"
	"});\n"
	"svg.addEventListener('mouseover', function (e) {\n"
	"  var g = e.target.closest ? e.target.closest('g') : null, f = g && byG.get(g);\n"
	"  details.textContent = f ? f.g.firstElementChild.textContent : ' ';\n"
	"});\n"
	"document.addEventListener('keydown', function (e) {\n"
	"  if (((e.ctrlKey || e.metaKey) && e.key === 'f') || e.key === '/') {\n"
	"    e.preventDefault();\n"
	"    ask();\n"
	"  } else if (e.key === 'Escape') {\n"
	"    search('');\n"
	"  }\n"
	"});\n"
	"try {\n"
	"  var q = new URLSearchParams(location.search), x = q.get('x'), y = q.get('y');\n"
	"  if (x !== null && y !== null)\n"
	"    layout(frames.find(function (f) { return f.o === +x && f.d === +y; }) || null);\n"
	"  if (q.get('s')) search(q.get('s'));\n"
	"} catch (e) { /* no URL to read */ }\n"
	"})();\n";

static const char svg_style[] =
	"text{font-family:Verdana,sans-serif;fill:#000}\n"
	"#frames text{pointer-events:none}\n"
	"#frames g{cursor:pointer}\n"
	"#frames g:hover rect{stroke:#000;stroke-width:.5}\n"
	"#frames .up rect{opacity:.5}\n"
	".ctl{cursor:pointer}\n"
	".ctl:hover{fill:#c00}\n";

static void svg_put_header(const struct svg_layout *l, double height,
			   const struct svg_options *opts, FILE *out)
{
	const char *title = opts->title ? opts->title : "Flame Graph";

	fputs_unlocked("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" data-pad=\"%d\" data-fh=\"%.0f\" "
		"data-font=\"%.0f\" data-y0=\"%.0f\" data-dir=\"%d\" font-size=\"%.0f\" "
		"data-glyph=\"",
		l->width, height, l->width, height, SVG_PAD, l->frame_height, l->font,
		svg_row_y(l, 0), l->inverted ? 1 : -1, l->font);
	svg_put_fixed(SVG_GLYPH_WIDTH, 3, out);
	fputs_unlocked("\" data-minw=\"", out);
	svg_put_fixed(l->min_width, 6, out);
	fputs_unlocked("\">\n", out);
	fprintf(out, "<style>\n%s</style>\n", svg_style);
	fputs_unlocked("<rect width=\"100%\" height=\"100%\" fill=\"#f6f6f2\"/>\n", out);
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" font-size=\"%.0f\">",
		l->width / 2, l->font * 2, l->font + 5);
	svg_put_text(title, SIZE_MAX, out);
	fputs_unlocked("</text>\n", out);
	if (opts->subtitle) {
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#555\">",
			l->width / 2, l->font * 4);
		svg_put_text(opts->subtitle, SIZE_MAX, out);
		fputs_unlocked("</text>\n", out);
	}
}

int svg_write(const struct profile *p, FILE *out, const struct svg_options *opts)
{
	struct svg_options defaults;
	struct svg_walk w = { .out = out };
	struct svg_layout l;
	double height, bottom;
	int err = 0;

	if (!opts) {
		svg_options_init(&defaults);
		opts = &defaults;
	}
	svg_layout_init(&l, opts, profile_total(p));
	/* 12px text in 16px rows, as flamegraph.pl; smaller rows, smaller text. */
	l.font = l.frame_height >= 16 ? 12 : (l.frame_height > 10 ? l.frame_height - 4 : 6);
	l.top = l.font * (opts->subtitle ? 5 : 3);
	bottom = l.font * 2 + 10;
	l.depth = 1;

	/* Allocations come before anything is written, but for the walk's own. */
	w.l = &l;
	w.level = calloc(profile_max_depth(p) + 1, sizeof(*w.level));
	if (!w.level)
		return -ENOMEM;
	if (l.total && profile_walk(p, 0, svg_measure, NULL, &l)) {
		free(w.level);
		return -ENOMEM;
	}
	errno = 0;
	height = l.top + (double)l.depth * l.frame_height + bottom;
	svg_put_header(&l, height, opts, out);

	if (!l.total) {
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no samples</text>\n",
			l.width / 2, l.top + l.frame_height - 4);
		fputs_unlocked("</svg>\n", out);
		goto out_flush;
	}

	fprintf(out, "<text id=\"reset\" class=\"ctl\" x=\"%d\" y=\"%.0f\" "
		     "style=\"visibility:hidden\">Reset Zoom</text>\n",
		SVG_PAD, l.font * 2);
	fprintf(out, "<text id=\"clear\" class=\"ctl\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\" "
		     "style=\"visibility:hidden\">Clear</text>\n",
		l.width - SVG_PAD - 8 * l.font, l.font * 2);
	fprintf(out, "<text id=\"search\" class=\"ctl\" x=\"%.0f\" y=\"%.0f\" "
		     "text-anchor=\"end\">Search</text>\n",
		l.width - SVG_PAD, l.font * 2);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%.0f\"> </text>\n", SVG_PAD,
		height - bottom / 2 + 4);
	fprintf(out, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"></text>\n",
		l.width - SVG_PAD, height - bottom / 2 + 4);
	fputs_unlocked("<g id=\"frames\">\n", out);
	svg_put_frame(&l, profile_root(p), "all", FRAME_PROCESS, 0, 0, l.total, 0, out);
	err = profile_walk(p, 0, svg_put_frames, NULL, &w);
	fputs_unlocked("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs_unlocked(svg_script, out);
	fputs_unlocked("]]></script>\n</svg>\n", out);

out_flush:
	free(w.level);
	return err ? err : format_stream_error(out);
}
