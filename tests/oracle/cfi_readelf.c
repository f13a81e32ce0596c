/*
 * cfi_readelf: the readelf oracle for symbolizer/cfi. For every ELF file
 * named (or found under a directory named), it runs `readelf
 * --debug-dump=frames-interp` and checks, at every address where either
 * side starts a row, that our rule gives the same CFA, rbp and return
 * address rules as readelf's table. readelf and cfi share no code: binutils
 * has its own DWARF reader.
 *
 * readelf prints "exp" for any expression; ours are decoded (PLT,
 * realignment, signal frames) but compared as "exp" too. readelf prints
 * "u" both for a register never mentioned and for DW_CFA_undefined; for
 * rbp, "u" is therefore matched by our "same value" as well.
 *
 *   cfi_readelf [-v] PATH...    prints one line per file with a
 *                                mismatch (-v: each mismatch), then totals
 * Exit status: 0 when every row agrees, 1 otherwise, 2 on a usage error.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer/cfi.h"

#define MAX_COLS 40

struct rrow {
	uint64_t loc;
	char cfa[32], rbp[32], ra[32];
};

struct rblock {
	bool cie;
	uint64_t offset, cie_offset, start, end;
	struct rrow *rows;
	size_t n, cap;
};

struct totals {
	uint64_t files, files_with_rows, fdes, fdes_skipped, points, mismatches, bad_files;
	uint64_t our_rows, unsupported;
};

static bool verbose;

static const char *const regnames[CFI_NR_REGS] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi",
						   "rbp", "rsp", "r8",	"r9",  "r10", "r11",
						   "r12", "r13", "r14", "r15", "rip" };

static const char *regname(unsigned int r)
{
	return r < CFI_NR_REGS ? regnames[r] : "?";
}

/* Our rule in readelf's words. */
static void ours_cfa(const struct cfi_rule *r, char *out, size_t size)
{
	if (!r) {
		snprintf(out, size, "none");
		return;
	}
	if (r->flags & CFI_CFA_EXPR) {
		snprintf(out, size, "exp");
		return;
	}
	switch (r->cfa_kind) {
	case CFI_CFA_REG:
		snprintf(out, size, "%s%+d", regname(r->cfa_reg), (int)r->cfa_off);
		break;
	default:
		snprintf(out, size, "unsupported");
	}
}

static void ours_reg(uint8_t kind, uint8_t reg, int64_t off, bool expr, char *out, size_t size)
{
	if (expr) {
		snprintf(out, size, kind == CFI_REG_UNSUPPORTED ? "exp|vexp" : "exp");
		return;
	}
	switch (kind) {
	case CFI_SAME:
		snprintf(out, size, "same");
		break;
	case CFI_UNDEFINED:
		snprintf(out, size, "u");
		break;
	case CFI_AT_CFA:
		snprintf(out, size, "c%+d", (int)off);
		break;
	case CFI_VAL_CFA:
		snprintf(out, size, "v%+d", (int)off);
		break;
	case CFI_IN_REG:
		snprintf(out, size, "r%u (%s)", reg, regname(reg)); /* readelf: "r9 (r9)" */
		break;
	default:
		snprintf(out, size, "unsupported");
	}
}

/* readelf's column text against ours; "u" and a missing column mean "same" for rbp. */
static bool reg_agrees(const char *theirs, const char *ours, bool is_rbp)
{
	if (!strcmp(theirs, ours))
		return true;
	if (!strcmp(ours, "same"))
		return is_rbp ? !strcmp(theirs, "u") || !theirs[0] : !theirs[0];
	if (!strcmp(ours, "exp|vexp"))
		return !strcmp(theirs, "exp") || !strcmp(theirs, "vexp");
	return false;
}

static int block_add_row(struct rblock *b, const struct rrow *r)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct rrow *rows = realloc(b->rows, cap * sizeof(*rows));

		if (!rows)
			return -1;
		b->rows = rows;
		b->cap = cap;
	}
	b->rows[b->n++] = *r;
	return 0;
}

/* Parses one table row with the current column names into r. */
static void parse_row(const char *line, char cols[][16], int ncols, struct rrow *r)
{
	char tok[MAX_COLS + 1][64];
	int n = 0;
	const char *p = line;

	memset(r, 0, sizeof(*r));
	while (*p && n <= MAX_COLS) {
		int len = 0;

		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		while (p[len] && p[len] != ' ' && p[len] != '\n')
			len++;
		if (*p == '(' && n > 1) {
			/* "r9 (r9)": a register's name, part of the previous column */
			size_t at = strlen(tok[n - 1]);

			snprintf(tok[n - 1] + at, sizeof(tok[0]) - at, " %.*s", len, p);
		} else {
			snprintf(tok[n++], sizeof(tok[0]), "%.*s", len, p);
		}
		p += len;
	}
	if (n < 1)
		return;
	r->loc = strtoull(tok[0], NULL, 16);
	for (int i = 1; i < n && i - 1 < ncols; i++) {
		const char *col = cols[i - 1];

		if (!strcmp(col, "CFA"))
			snprintf(r->cfa, sizeof(r->cfa), "%s", tok[i]);
		else if (!strcmp(col, "rbp"))
			snprintf(r->rbp, sizeof(r->rbp), "%s", tok[i]);
		else if (!strcmp(col, "ra"))
			snprintf(r->ra, sizeof(r->ra), "%s", tok[i]);
	}
}

/* The readelf rule in effect at pc within FDE f (its CIE's when it printed no row). */
static const struct rrow *their_rule(const struct rblock *f, const struct rblock *cie, uint64_t pc)
{
	const struct rrow *best = NULL;

	for (size_t i = 0; i < f->n; i++)
		if (f->rows[i].loc <= pc)
			best = &f->rows[i];
	if (!best && cie && cie->n)
		best = &cie->rows[cie->n - 1];
	return best;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_fde(const char *path, const struct cfi *cfi, const struct rblock *f,
		      const struct rblock *cie, struct totals *t, uint64_t *file_bad)
{
	size_t n_rows, n_pts = 0, lo = 0, hi, first;
	const struct cfi_row *rows = cfi_rows(cfi, &n_rows);
	uint64_t *pts;

	/* Our rows inside the FDE: from the first past its start, by binary search. */
	hi = n_rows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= f->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (hi < n_rows && rows[hi].pc < f->end)
		hi++;
	pts = malloc((f->n + (hi - first) + 1) * sizeof(*pts));
	if (!pts)
		exit(2);
	pts[n_pts++] = f->start;
	for (size_t i = 0; i < f->n; i++)
		if (f->rows[i].loc >= f->start && f->rows[i].loc < f->end)
			pts[n_pts++] = f->rows[i].loc;
	for (size_t i = first; i < hi; i++)
		pts[n_pts++] = rows[i].pc;
	qsort(pts, n_pts, sizeof(*pts), cmp_u64);
	for (size_t i = 0; i < n_pts; i++) {
		const struct rrow *th;
		const struct cfi_rule *r;
		char cfa[64], rbp[64], ra[64];
		bool ok;

		if (i && pts[i] == pts[i - 1])
			continue;
		th = their_rule(f, cie, pts[i]);
		r = cfi_lookup(cfi, pts[i]);
		t->points++;
		ours_cfa(r, cfa, sizeof(cfa));
		if (r) {
			ours_reg(r->rbp_kind, r->rbp_reg, r->rbp_off, r->flags & CFI_RBP_EXPR, rbp,
				 sizeof(rbp));
			ours_reg(r->ra_kind, r->ra_reg, r->ra_off, r->flags & CFI_RA_EXPR, ra,
				 sizeof(ra));
		}
		ok = th && r && !strcmp(th->cfa, cfa) && reg_agrees(th->rbp, rbp, true) &&
		     reg_agrees(th->ra, ra, false);
		if (ok)
			continue;
		t->mismatches++;
		(*file_bad)++;
		if (verbose || *file_bad <= 3)
			printf("%s: at %#" PRIx64 " (FDE %#" PRIx64 "..%#" PRIx64
			       "): readelf %s rbp=%s ra=%s, ours %s rbp=%s ra=%s\n",
			       path, pts[i], f->start, f->end, th ? th->cfa : "-",
			       th ? th->rbp : "-", th ? th->ra : "-", cfa, r ? rbp : "-",
			       r ? ra : "-");
	}
	free(pts);
}

static void free_blocks(struct rblock *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(b[i].rows);
	free(b);
}

/* Reads readelf's tables of one section's worth of blocks; returns the count. */
static size_t read_blocks(FILE *in, struct rblock **out)
{
	char line[4096], cols[MAX_COLS][16];
	int ncols = 0;
	struct rblock *blocks = NULL, *cur = NULL;
	size_t n = 0, cap = 0;

	while (fgets(line, sizeof(line), in)) {
		uint64_t off, len, id, cie_off, start, end;
		char kind[8];

		if (strstr(line, "Contents of the")) {
			cur = NULL; /* each section numbers its entries from 0 */
			if (n && cap) {
				/* keep going: offsets are matched per section below */
			}
			continue;
		}
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %7s", &off, &len, &id, kind) ==
			    4 &&
		    (!strcmp(kind, "CIE") || !strcmp(kind, "FDE"))) {
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				blocks = realloc(blocks, cap * sizeof(*blocks));
				if (!blocks)
					exit(2);
			}
			cur = &blocks[n++];
			memset(cur, 0, sizeof(*cur));
			cur->offset = off;
			cur->cie = !strcmp(kind, "CIE");
			if (!cur->cie) {
				const char *c = strstr(line, "cie="), *pc = strstr(line, "pc=");

				if (!c || !pc ||
				    sscanf(c, "cie=%" SCNx64, &cie_off) != 1 ||
				    sscanf(pc, "pc=%" SCNx64 "..%" SCNx64, &start, &end) != 2) {
					n--;
					cur = NULL;
					continue;
				}
				cur->cie_offset = cie_off;
				cur->start = start;
				cur->end = end;
			}
			ncols = 0;
			continue;
		}
		if (!cur)
			continue;
		if (strstr(line, "   LOC")) {
			char *p = strstr(line, "LOC") + 3, *tok;

			ncols = 0;
			for (tok = strtok(p, " \n"); tok && ncols < MAX_COLS; tok = strtok(NULL, " \n"))
				snprintf(cols[ncols++], sizeof(cols[0]), "%s", tok);
			continue;
		}
		/* A row starts with a 16-digit location; "ZERO terminator" and the like do not. */
		if (ncols && strspn(line, "0123456789abcdef") == 16 && line[16] == ' ') {
			struct rrow r;

			parse_row(line, cols, ncols, &r);
			if (block_add_row(cur, &r))
				exit(2);
		}
	}
	*out = blocks;
	return n;
}

static bool is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool elf;

	if (fd < 0)
		return false;
	elf = read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4);
	close(fd);
	return elf;
}

static void check_file(const char *path, struct totals *t)
{
	char cmd[8192];
	struct rblock *blocks;
	struct cfi *cfi;
	struct cfi_stats st;
	FILE *in;
	size_t n, n_rows;
	uint64_t bad = 0;

	if (!is_elf(path) || strchr(path, '\''))
		return;
	t->files++;
	if (cfi_open(path, NULL, &cfi)) {
		t->bad_files++;
		return;
	}
	cfi_rows(cfi, &n_rows);
	cfi_stats(cfi, &st);
	if (n_rows)
		t->files_with_rows++;
	t->our_rows += n_rows;
	t->unsupported += st.unsupported;
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp -- '%s' 2>/dev/null", path);
	in = popen(cmd, "r");
	if (!in)
		exit(2);
	n = read_blocks(in, &blocks);
	pclose(in);
	size_t *cies = malloc((n + 1) * sizeof(*cies)), n_cies = 0;

	if (!cies)
		exit(2);
	for (size_t i = 0; i < n; i++) {
		const struct rblock *f = &blocks[i], *cie = NULL;

		/* Offsets start again at 0 in the next section: so do its CIEs. */
		if (i && f->offset < blocks[i - 1].offset)
			n_cies = 0;
		if (f->cie) {
			cies[n_cies++] = i;
			continue;
		}
		if (f->start == 0 || f->end <= f->start) {
			t->fdes_skipped++;
			continue;
		}
		/* Its CIE is one of its section's. */
		for (size_t j = 0; j < n_cies && !cie; j++)
			if (blocks[cies[j]].offset == f->cie_offset)
				cie = &blocks[cies[j]];
		/* An FDE cfi dropped as overlapping another: not comparable row by row. */
		size_t n_funcs, lo = 0, hi;
		const struct cfi_function *fn = cfi_functions(cfi, &n_funcs);
		bool kept;

		for (hi = n_funcs; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (fn[mid].start < f->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		kept = lo < n_funcs && fn[lo].start == f->start && fn[lo].end == f->end;
		if (!kept) {
			t->fdes_skipped++;
			continue;
		}
		t->fdes++;
		check_fde(path, cfi, f, cie, t, &bad);
	}
	if (bad && !verbose)
		printf("%s: %" PRIu64 " mismatching rows\n", path, bad);
	free(cies);
	free_blocks(blocks, n);
	cfi_free(cfi);
}

static void walk(const char *path, struct totals *t)
{
	struct stat st;
	DIR *d;
	struct dirent *de;

	if (lstat(path, &st))
		return;
	if (S_ISREG(st.st_mode)) {
		check_file(path, t);
		return;
	}
	if (!S_ISDIR(st.st_mode))
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char sub[8192];

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		walk(sub, t);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	struct totals t = { 0 };
	int i = 1;

	if (i < argc && !strcmp(argv[i], "-v")) {
		verbose = true;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: cfi_readelf [-v] PATH...\n");
		return 2;
	}
	for (; i < argc; i++)
		walk(argv[i], &t);
	printf("cfi_readelf: %" PRIu64 " ELF files, %" PRIu64 " with unwind rows, %" PRIu64
	       " unreadable; %" PRIu64 " FDEs compared (%" PRIu64 " skipped: empty, discarded or "
	       "overlapping); %" PRIu64 " rows compared, %" PRIu64 " disagree; %" PRIu64
	       " rows of ours, %" PRIu64 " unsupported\n",
	       t.files, t.files_with_rows, t.bad_files, t.fdes, t.fdes_skipped, t.points,
	       t.mismatches, t.our_rows, t.unsupported);
	return t.mismatches ? 1 : 0;
}
