/*
 * rustdemangle: Rust's legacy and v0 symbol names decoded by hand (see
 * rustdemangle.h). Small enough to write here rather than link
 * libiberty, which is a static non-PIC archive a plugin cannot take:
 *
 * - legacy names are C++-like "_ZN" + length-prefixed parts + "E", the
 *   last part "h" and 16 hex digits (a hash, dropped), with "$LT$"-style
 *   escapes for characters C++ names cannot hold;
 * - v0 names ("_R") are a small grammar (RFC 2603) of paths, types,
 *   generic arguments and constants, with back-references to earlier
 *   positions and Punycode for non-ASCII identifiers. The printer below
 *   follows the grammar one production per function; it prints what
 *   rustc-demangle's alternate form and `c++filt -i` print.
 *
 * A name we cannot decode is returned NULL and shown raw: a mangled name
 * is better than a wrong one. Recursion and output length are bounded,
 * so a hostile symbol table cannot exhaust the stack or memory.
 */
#include "bpf/grow.h"
#include "symbolizer/rustdemangle.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUTPUT 8192
#define MAX_DEPTH 128

/* A growing output string; ok turns false for good on any error. */
struct out {
	char *buf;
	size_t len, cap;
	bool ok;
};

static void put_n(struct out *o, const char *s, size_t n)
{
	if (!o->ok || !n)
		return;
	if (o->len + n + 1 > MAX_OUTPUT) {
		o->ok = false;
		return;
	}
	if (GROW_ARRAY(&o->buf, &o->cap, o->len + n + 1, 256)) {
		o->ok = false;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void put(struct out *o, const char *s)
{
	put_n(o, s, strlen(s));
}

static void put_u64(struct out *o, uint64_t v)
{
	char digits[24];
	size_t i = sizeof(digits);

	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_n(o, digits + i, sizeof(digits) - i);
}

/* Code point cp as UTF-8. */
static void put_utf8(struct out *o, uint32_t cp)
{
	char b[4];

	if (cp < 0x80) {
		b[0] = (char)cp;
		put_n(o, b, 1);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		put_n(o, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		put_n(o, b, 3);
	} else if (cp < 0x110000) {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		put_n(o, b, 4);
	} else {
		o->ok = false;
	}
}

static char *out_finish(struct out *o)
{
	if (!o->ok || !o->len) {
		free(o->buf);
		return NULL;
	}
	return o->buf;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* --- Rust legacy -------------------------------------------------------- */

/* Reads a decimal length; 0 on a malformed one. */
static size_t read_len(const char **s)
{
	size_t n = 0;

	if (**s < '0' || **s > '9')
		return 0;
	while (**s >= '0' && **s <= '9') {
		n = n * 10 + (size_t)(**s - '0');
		if (n > MAX_OUTPUT)
			return 0;
		(*s)++;
	}
	return n;
}

static bool is_rust_hash(const char *s, size_t len)
{
	if (len != 17 || s[0] != 'h')
		return false;
	for (size_t i = 1; i < len; i++)
		if (hex_value(s[i]) < 0)
			return false;
	return true;
}

/* One legacy identifier, its "$..$" escapes and ".." undone. */
static void put_legacy_ident(struct out *o, const char *s, size_t len)
{
	static const struct {
		const char *code, *text;
	} escapes[] = {{"SP", "@"}, {"BP", "*"}, {"RF", "&"}, {"LT", "<"},
		       {"GT", ">"}, {"LP", "("}, {"RP", ")"}, {"C", ","}};
	const char *end = s + len;

	if (len >= 2 && s[0] == '_' && s[1] == '$')
		s++;
	while (s < end && o->ok) {
		if (*s == '$') {
			const char *close = memchr(s + 1, '$', (size_t)(end - s - 1));
			size_t n;
			bool known = false;

			if (!close) {
				o->ok = false;
				return;
			}
			n = (size_t)(close - s - 1);
			for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++)
				if (strlen(escapes[i].code) == n &&
				    !memcmp(s + 1, escapes[i].code, n)) {
					put(o, escapes[i].text);
					known = true;
				}
			if (!known && n >= 2 && s[1] == 'u') {
				uint32_t cp = 0;

				for (size_t i = 2; i <= n; i++) {
					int v = hex_value(s[i]);

					if (v < 0 || cp > 0x10ffff) {
						o->ok = false;
						return;
					}
					cp = cp << 4 | (uint32_t)v;
				}
				put_utf8(o, cp);
				known = true;
			}
			if (!known)
				o->ok = false;
			s = close + 1;
		} else if (*s == '.' && s + 1 < end && s[1] == '.') {
			put(o, "::");
			s += 2;
		} else {
			put_n(o, s, 1);
			s++;
		}
	}
}

/* "_ZN" parts "E", the last part a hash: a Rust legacy name. NULL if not one. */
char *rustdemangle_legacy(const char *name)
{
	const char *s = name + 3, *parts[64];
	size_t lens[64], n = 0;
	struct out o = {.ok = true};

	while (*s != 'E') {
		size_t len = read_len(&s);

		if (!len || strnlen(s, len) < len || n == 64)
			return NULL;
		parts[n] = s;
		lens[n++] = len;
		s += len;
	}
	/* Only a ".llvm.NNN"-like suffix may follow; the hash must be last. */
	if ((s[1] && s[1] != '.') || n < 2 || !is_rust_hash(parts[n - 1], lens[n - 1]))
		return NULL;
	for (size_t i = 0; i + 1 < n; i++) {
		if (i)
			put(&o, "::");
		put_legacy_ident(&o, parts[i], lens[i]);
	}
	return out_finish(&o);
}

/* --- Rust v0 ------------------------------------------------------------ */

struct v0 {
	const char *sym; /* just after "_R": back-references count from here */
	size_t len, pos;
	unsigned int depth;
	uint64_t bound_lifetimes; /* lifetimes bound by enclosing for<...> */
	struct out *o;
	bool ok;
};

static bool v0_eat(struct v0 *p, char c)
{
	if (p->pos < p->len && p->sym[p->pos] == c) {
		p->pos++;
		return true;
	}
	return false;
}

static char v0_next(struct v0 *p)
{
	if (p->pos >= p->len) {
		p->ok = false;
		return 0;
	}
	return p->sym[p->pos++];
}

static char v0_peek(const struct v0 *p)
{
	return p->pos < p->len ? p->sym[p->pos] : 0;
}

/* <base-62-number>: "_" is 0, digits then "_" are value + 1. */
static uint64_t v0_base62(struct v0 *p)
{
	uint64_t v = 0;
	char c;

	if (v0_eat(p, '_'))
		return 0;
	while ((c = v0_next(p)) != '_' && p->ok) {
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'z')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'Z')
			d = c - 'A' + 36;
		else {
			p->ok = false;
			return 0;
		}
		if (v > (UINT64_MAX - 61) / 62) {
			p->ok = false;
			return 0;
		}
		v = v * 62 + (uint64_t)d;
	}
	return v + 1;
}

/* An optional tag followed by a base-62 number: 0 when absent, else number + 1. */
static uint64_t v0_opt_base62(struct v0 *p, char tag)
{
	if (!v0_eat(p, tag))
		return 0;
	return v0_base62(p) + 1;
}

struct ident {
	const char *s;
	size_t len;
	bool punycode;
};

/* <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes> */
static struct ident v0_ident(struct v0 *p)
{
	struct ident id = {0};
	size_t len = 0;

	id.punycode = v0_eat(p, 'u');
	if (v0_peek(p) < '0' || v0_peek(p) > '9') {
		p->ok = false;
		return id;
	}
	if (v0_eat(p, '0')) {
		len = 0;
	} else {
		while (v0_peek(p) >= '0' && v0_peek(p) <= '9') {
			len = len * 10 + (size_t)(v0_next(p) - '0');
			if (len > p->len) {
				p->ok = false;
				return id;
			}
		}
	}
	v0_eat(p, '_');
	if (p->len - p->pos < len) {
		p->ok = false;
		return id;
	}
	id.s = p->sym + p->pos;
	id.len = len;
	p->pos += len;
	return id;
}

/* RFC 3492 Punycode, with "_" for the delimiter, as v0 writes it. */
static void put_punycode(struct out *o, const char *s, size_t len)
{
	enum { BASE = 36, TMIN = 1, TMAX = 26, SKEW = 38, DAMP = 700 };
	uint32_t cps[256];
	size_t n_cps = 0, basic = 0, in;
	uint32_t n = 128, bias = 72, i = 0;

	for (size_t k = 0; k < len; k++)
		if (s[k] == '_')
			basic = k;
	if (basic > sizeof(cps) / sizeof(cps[0]))
		goto err;
	for (size_t k = 0; k < basic; k++)
		cps[n_cps++] = (unsigned char)s[k];
	in = basic ? basic + 1 : 0;
	while (in < len) {
		uint32_t old_i = i, w = 1, delta;

		for (uint32_t k = BASE;; k += BASE) {
			uint32_t digit, t;
			char c;

			if (in >= len)
				goto err;
			c = s[in++];
			if (c >= 'a' && c <= 'z')
				digit = (uint32_t)(c - 'a');
			else if (c >= '0' && c <= '9')
				digit = (uint32_t)(c - '0' + 26);
			else
				goto err;
			if (digit > (UINT32_MAX - i) / w)
				goto err;
			i += digit * w;
			t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
			if (digit < t)
				break;
			if (w > UINT32_MAX / (BASE - t))
				goto err;
			w *= BASE - t;
		}
		/* Adapt the bias (RFC 3492 section 6.1). */
		delta = old_i == 0 ? (i - old_i) / DAMP : (i - old_i) / 2;
		delta += delta / (uint32_t)(n_cps + 1);
		{
			uint32_t k = 0;

			while (delta > ((BASE - TMIN) * TMAX) / 2) {
				delta /= BASE - TMIN;
				k += BASE;
			}
			bias = k + (BASE - TMIN + 1) * delta / (delta + SKEW);
		}
		if (n_cps == sizeof(cps) / sizeof(cps[0]))
			goto err;
		n += i / (uint32_t)(n_cps + 1);
		i %= (uint32_t)(n_cps + 1);
		memmove(&cps[i + 1], &cps[i], (n_cps - i) * sizeof(cps[0]));
		cps[i++] = n;
		n_cps++;
	}
	for (size_t k = 0; k < n_cps; k++)
		put_utf8(o, cps[k]);
	return;
err:
	o->ok = false;
}

static void put_ident(struct v0 *p, struct ident id)
{
	if (id.punycode)
		put_punycode(p->o, id.s, id.len);
	else
		put_n(p->o, id.s, id.len);
}

static void v0_path(struct v0 *p, bool in_value);
static void v0_type(struct v0 *p);
static void v0_const(struct v0 *p);

/*
 * Runs fn at the position the back-reference whose "B" is at start names,
 * then comes back. References only point backwards, so they cannot loop.
 */
static void v0_backref(struct v0 *p, size_t start, void (*fn)(struct v0 *, bool), bool in_value)
{
	size_t saved, target;

	target = (size_t)v0_base62(p);
	if (!p->ok || target >= start) {
		p->ok = false;
		return;
	}
	saved = p->pos;
	p->pos = target;
	fn(p, in_value);
	p->pos = saved;
}

static bool v0_enter(struct v0 *p)
{
	if (!p->ok || !p->o->ok || ++p->depth > MAX_DEPTH) {
		p->ok = false;
		return false;
	}
	return true;
}

static void put_lifetime(struct v0 *p, uint64_t index)
{
	put(p->o, "'");
	if (!index) {
		put(p->o, "_");
	} else if (index > p->bound_lifetimes) {
		p->ok = false;
	} else {
		uint64_t depth = p->bound_lifetimes - index;

		if (depth < 26) {
			char c = (char)('a' + depth);

			put_n(p->o, &c, 1);
		} else {
			put(p->o, "_");
			put_u64(p->o, depth);
		}
	}
}

/* "for<'a, 'b> " for a binder "G", then fn; the lifetimes are unbound after. */
static void v0_in_binder(struct v0 *p, void (*fn)(struct v0 *))
{
	uint64_t bound = v0_opt_base62(p, 'G');

	if (bound > 64) {
		p->ok = false;
		return;
	}
	if (bound) {
		put(p->o, "for<");
		for (uint64_t i = 0; i < bound; i++) {
			if (i)
				put(p->o, ", ");
			p->bound_lifetimes++;
			put_lifetime(p, 1);
		}
		put(p->o, "> ");
	}
	fn(p);
	p->bound_lifetimes -= bound;
}

static void v0_generic_arg(struct v0 *p)
{
	if (v0_eat(p, 'L'))
		put_lifetime(p, v0_base62(p));
	else if (v0_eat(p, 'K'))
		v0_const(p);
	else
		v0_type(p);
}

/* Generic arguments up to "E", comma-separated. */
static void v0_generic_args(struct v0 *p)
{
	for (int i = 0; p->ok && !v0_eat(p, 'E'); i++) {
		if (i)
			put(p->o, ", ");
		v0_generic_arg(p);
	}
}

static void v0_path_value(struct v0 *p, bool in_value)
{
	v0_path(p, in_value);
}

static void v0_path(struct v0 *p, bool in_value)
{
	char tag;

	if (!v0_enter(p))
		return;
	tag = v0_next(p);
	switch (tag) {
	case 'C': /* crate root; its disambiguator only tells builds apart */
		v0_opt_base62(p, 's');
		put_ident(p, v0_ident(p));
		break;
	case 'N': { /* nested: namespace, parent path, identifier */
		char ns = v0_next(p);
		uint64_t dis;
		struct ident id;

		v0_path(p, in_value);
		dis = v0_opt_base62(p, 's');
		id = v0_ident(p);
		if (ns >= 'A' && ns <= 'Z') {
			put(p->o, "::{");
			if (ns == 'C')
				put(p->o, "closure");
			else if (ns == 'S')
				put(p->o, "shim");
			else
				put_n(p->o, &ns, 1);
			if (id.len) {
				put(p->o, ":");
				put_ident(p, id);
			}
			put(p->o, "#");
			put_u64(p->o, dis);
			put(p->o, "}");
		} else if (ns >= 'a' && ns <= 'z') {
			if (id.len) {
				put(p->o, "::");
				put_ident(p, id);
			}
		} else {
			p->ok = false;
		}
		break;
	}
	case 'M': /* inherent impl: <Type> */
	case 'X': /* trait impl: <Type as Trait> */
	case 'Y': /* trait definition: <Type as Trait> */
		if (tag != 'Y') {
			/* The impl's own path is where it was written: not printed. */
			struct out *o = p->o, skip = {.ok = true};

			v0_opt_base62(p, 's');
			p->o = &skip;
			v0_path(p, false);
			free(skip.buf);
			p->o = o;
			if (!skip.ok)
				p->ok = false;
		}
		put(p->o, "<");
		v0_type(p);
		if (tag != 'M') {
			put(p->o, " as ");
			v0_path(p, false);
		}
		put(p->o, ">");
		break;
	case 'I': /* generic arguments */
		v0_path(p, in_value);
		put(p->o, in_value ? "::<" : "<");
		v0_generic_args(p);
		put(p->o, ">");
		break;
	case 'B':
		v0_backref(p, p->pos - 1, v0_path_value, in_value);
		break;
	default:
		p->ok = false;
	}
	p->depth--;
}

static const char *v0_basic_type(char c)
{
	switch (c) {
	case 'a':
		return "i8";
	case 'b':
		return "bool";
	case 'c':
		return "char";
	case 'd':
		return "f64";
	case 'e':
		return "str";
	case 'f':
		return "f32";
	case 'h':
		return "u8";
	case 'i':
		return "isize";
	case 'j':
		return "usize";
	case 'l':
		return "i32";
	case 'm':
		return "u32";
	case 'n':
		return "i128";
	case 'o':
		return "u128";
	case 's':
		return "i16";
	case 't':
		return "u16";
	case 'u':
		return "()";
	case 'v':
		return "...";
	case 'x':
		return "i64";
	case 'y':
		return "u64";
	case 'z':
		return "!";
	case 'p':
		return "_";
	default:
		return NULL;
	}
}

/* fn-sig = ["U"] ["K" <abi>] {<type>} "E" <type>, inside its binder. */
static void v0_fn_sig(struct v0 *p)
{
	if (v0_eat(p, 'U'))
		put(p->o, "unsafe ");
	if (v0_eat(p, 'K')) {
		put(p->o, "extern \"");
		if (v0_eat(p, 'C')) {
			put(p->o, "C");
		} else {
			struct ident abi = v0_ident(p);

			for (size_t i = 0; i < abi.len && p->ok; i++)
				put_n(p->o, abi.s[i] == '_' ? "-" : &abi.s[i], 1);
		}
		put(p->o, "\" ");
	}
	put(p->o, "fn(");
	for (int i = 0; p->ok && !v0_eat(p, 'E'); i++) {
		if (i)
			put(p->o, ", ");
		v0_type(p);
	}
	put(p->o, ")");
	if (v0_eat(p, 'u'))
		return; /* returns (): printed as nothing */
	put(p->o, " -> ");
	v0_type(p);
}

/* A path that may open generic arguments left open for associated types. */
static bool v0_path_open_generics(struct v0 *p)
{
	if (v0_peek(p) == 'B') {
		size_t saved, target, start = p->pos++;
		bool open;

		target = (size_t)v0_base62(p);
		if (!p->ok || target >= start || !v0_enter(p)) {
			p->ok = false;
			return false;
		}
		saved = p->pos;
		p->pos = target;
		open = v0_path_open_generics(p);
		p->pos = saved;
		p->depth--;
		return open;
	}
	if (v0_eat(p, 'I')) {
		v0_path(p, false);
		put(p->o, "<");
		v0_generic_args(p);
		return true;
	}
	v0_path(p, false);
	return false;
}

/* dyn-bounds: traits up to "E", joined by " + ", inside their binder. */
static void v0_dyn_traits(struct v0 *p)
{
	for (int i = 0; p->ok && !v0_eat(p, 'E'); i++) {
		bool open;

		if (i)
			put(p->o, " + ");
		open = v0_path_open_generics(p);
		while (p->ok && v0_eat(p, 'p')) {
			struct ident name;

			put(p->o, open ? ", " : "<");
			open = true;
			name = v0_ident(p);
			put_ident(p, name);
			put(p->o, " = ");
			v0_type(p);
		}
		if (open)
			put(p->o, ">");
	}
}

static void v0_type_value(struct v0 *p, bool in_value)
{
	(void)in_value;
	v0_type(p);
}

static void v0_type(struct v0 *p)
{
	const char *basic;
	char tag;

	if (!v0_enter(p))
		return;
	tag = v0_peek(p);
	basic = v0_basic_type(tag);
	if (basic) {
		p->pos++;
		put(p->o, basic);
		p->depth--;
		return;
	}
	switch (tag) {
	case 'R':
	case 'Q':
		p->pos++;
		put(p->o, "&");
		if (v0_eat(p, 'L')) {
			uint64_t lt = v0_base62(p);

			if (lt) {
				put_lifetime(p, lt);
				put(p->o, " ");
			}
		}
		if (tag == 'Q')
			put(p->o, "mut ");
		v0_type(p);
		break;
	case 'P':
	case 'O':
		p->pos++;
		put(p->o, tag == 'P' ? "*const " : "*mut ");
		v0_type(p);
		break;
	case 'A':
	case 'S':
		p->pos++;
		put(p->o, "[");
		v0_type(p);
		if (tag == 'A') {
			put(p->o, "; ");
			v0_const(p);
		}
		put(p->o, "]");
		break;
	case 'T': {
		int n = 0;

		p->pos++;
		put(p->o, "(");
		for (; p->ok && !v0_eat(p, 'E'); n++) {
			if (n)
				put(p->o, ", ");
			v0_type(p);
		}
		put(p->o, n == 1 ? ",)" : ")");
		break;
	}
	case 'F':
		p->pos++;
		v0_in_binder(p, v0_fn_sig);
		break;
	case 'D': {
		uint64_t lt;

		p->pos++;
		put(p->o, "dyn ");
		v0_in_binder(p, v0_dyn_traits);
		if (!v0_eat(p, 'L')) {
			p->ok = false;
			break;
		}
		lt = v0_base62(p);
		if (lt) {
			put(p->o, " + ");
			put_lifetime(p, lt);
		}
		break;
	}
	case 'B':
		p->pos++;
		v0_backref(p, p->pos - 1, v0_type_value, false);
		break;
	default:
		v0_path(p, false);
	}
	p->depth--;
}

static void v0_const_value(struct v0 *p, bool in_value)
{
	(void)in_value;
	v0_const(p);
}

/* Constants: integers, bool and char, as generic arguments and array lengths. */
static void v0_const(struct v0 *p)
{
	uint64_t v = 0;
	bool negative;
	char tag;
	int digits = 0;

	if (!v0_enter(p))
		return;
	tag = v0_next(p);
	if (tag == 'B') {
		v0_backref(p, p->pos - 1, v0_const_value, false);
		p->depth--;
		return;
	}
	if (tag == 'p') {
		put(p->o, "_");
		p->depth--;
		return;
	}
	if (!strchr("ahijlmnostxybc", tag) || !tag) {
		p->ok = false; /* str, references, arrays...: shown raw */
		p->depth--;
		return;
	}
	negative = v0_eat(p, 'n');
	for (char c; p->ok && (c = v0_next(p)) != '_';) {
		int d = hex_value(c);

		if (d < 0 || ++digits > 16) {
			p->ok = false;
			break;
		}
		v = v << 4 | (uint64_t)d;
	}
	if (tag == 'b') {
		if (v > 1 || negative)
			p->ok = false;
		else
			put(p->o, v ? "true" : "false");
	} else if (tag == 'c') {
		/* As c++filt spells chars: printable ASCII as is, \t \r \n, else \u{hex}. */
		if (negative || v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) {
			p->ok = false;
		} else if (v >= 0x20 && v < 0x7f) {
			char c = (char)v;

			put(p->o, "'");
			put_n(p->o, &c, 1);
			put(p->o, "'");
		} else if (v == '\t' || v == '\r' || v == '\n') {
			put(p->o, v == '\t' ? "'\\t'" : v == '\r' ? "'\\r'" : "'\\n'");
		} else {
			static const char hex[] = "0123456789abcdef";
			char buf[16];
			int n = 0;

			do {
				buf[n++] = hex[v & 0xf];
				v >>= 4;
			} while (v);
			put(p->o, "'\\u{");
			while (n--)
				put_n(p->o, &buf[n], 1);
			put(p->o, "}'");
		}
	} else {
		if (negative)
			put(p->o, "-");
		put_u64(p->o, v);
	}
	p->depth--;
}

char *rustdemangle_v0(const char *name)
{
	struct out o = {.ok = true};
	struct v0 p = {.sym = name + 2, .o = &o, .ok = true};
	const char *dot = strchr(p.sym, '.');

	/* A vendor suffix (".llvm.123") is not part of the name. */
	p.len = dot ? (size_t)(dot - p.sym) : strlen(p.sym);
	if (v0_peek(&p) >= '0' && v0_peek(&p) <= '9')
		return NULL; /* an encoding version we do not know */
	v0_path(&p, true);
	/* The instantiating crate, when present, is not printed. */
	if (p.ok && p.pos < p.len) {
		struct out skip = {.ok = true};

		p.o = &skip;
		v0_path(&p, false);
		free(skip.buf);
		p.o = &o;
		if (!skip.ok)
			p.ok = false;
	}
	if (!p.ok || p.pos != p.len) {
		free(o.buf);
		return NULL;
	}
	return out_finish(&o);
}
