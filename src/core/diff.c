/* diff.c — unified diff of two texts, line by line (Myers' O(ND) algorithm, linear space).
 *
 * Written by hand on purpose: Debian packages no well-kept C library for unified diffs that we
 * could link statically (libxdiff is not packaged; git's xdiff is not a library), and the diff
 * the user reviews before saving must be exactly what patch(1) would apply.
 *
 * How it works: every line (its bytes including the '\n', so "a\r\n" and "a\n" differ and a last
 * line without '\n' differs from the same line with one) gets a small integer class through a
 * hash table. The comparison is Myers' "middle snake" divide and conquer (as in GNU diff's
 * diffseq.h), which needs O(N+M) memory; the recursion is an explicit stack. Past a cost bound
 * it stops looking for the minimal script and splits at the furthest-reaching diagonal, so two
 * huge unrelated texts still finish quickly; edits to a job file stay far below that bound and
 * get the minimal diff (one '-' and one '+' for a changed line). The changed-line flags are then
 * grouped into hunks with `context` lines around them, in the format GNU diff -u writes. */
#include "oomfix/diff.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/buf.h"

/* One line of a text: where it starts and its length including the '\n' if any. */
struct line {
	const char *p;
	size_t len;
};

struct side {
	struct line *lines;
	long n;
	long *cls;  /* equivalence class of each line */
	char *chg;  /* 1 when the line is deleted (old) or inserted (new) */
};

/* Splits a text into lines; returns -1 when out of memory. */
static int split_lines(const char *text, size_t len, struct side *s)
{
	long n = 0;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		i = nl ? (size_t)(nl - text) + 1 : len;
		n++;
	}
	s->n = n;
	s->lines = calloc((size_t)n + 1, sizeof *s->lines);
	s->cls = calloc((size_t)n + 1, sizeof *s->cls);
	s->chg = calloc((size_t)n + 2, 1);
	if (!s->lines || !s->cls || !s->chg)
		return -1;
	n = 0;
	i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) + 1 : len;
		s->lines[n].p = text + i;
		s->lines[n].len = end - i;
		n++;
		i = end;
	}
	return 0;
}

static uint64_t hash_bytes(const char *p, size_t len)
{
	/* FNV-1a: short lines, no adversary to defend against here beyond slowness. */
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* Gives equal lines of both texts the same class number. Returns -1 when out of memory. */
static int classify(struct side *a, struct side *b)
{
	size_t total = (size_t)a->n + (size_t)b->n;
	size_t cap = 16;
	while (cap < total * 2)
		cap <<= 1;
	/* Open addressing; a slot is empty while its class is 0 (classes start at 1). */
	struct slot {
		uint64_t h;
		long cls;
		const struct line *ln;
	} *tab = calloc(cap, sizeof *tab);
	if (!tab)
		return -1;
	long next = 1;
	struct side *sides[2] = { a, b };
	for (int k = 0; k < 2; k++) {
		struct side *s = sides[k];
		for (long i = 0; i < s->n; i++) {
			const struct line *ln = &s->lines[i];
			uint64_t h = hash_bytes(ln->p, ln->len);
			size_t pos = (size_t)h & (cap - 1);
			for (;;) {
				struct slot *sl = &tab[pos];
				if (!sl->cls) {
					sl->h = h;
					sl->cls = next++;
					sl->ln = ln;
					s->cls[i] = sl->cls;
					break;
				}
				if (sl->h == h && sl->ln->len == ln->len &&
				    memcmp(sl->ln->p, ln->p, ln->len) == 0) {
					s->cls[i] = sl->cls;
					break;
				}
				pos = (pos + 1) & (cap - 1);
			}
		}
	}
	free(tab);
	return 0;
}

/* The state of one comparison: the two class arrays and the forward/backward diagonal
 * vectors, indexed by diagonal k = x - y (offset so that negative diagonals fit). */
struct ctx {
	const long *xv, *yv;
	long *fd, *bd;
	long too_expensive;
};

struct split {
	long xmid, ymid;
};

/* Finds where to split the box [xoff,xlim) × [yoff,ylim): the middle snake of a minimal edit
 * path, or, once the cost exceeds the bound, the point furthest along the best diagonal. */
static void find_split(struct ctx *c, long xoff, long xlim, long yoff, long ylim,
		       struct split *out)
{
	const long *xv = c->xv, *yv = c->yv;
	long *fd = c->fd, *bd = c->bd;
	const long dmin = xoff - ylim, dmax = xlim - yoff;
	const long fmid = xoff - yoff, bmid = xlim - ylim;
	long fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
	const bool odd = (fmid - bmid) & 1;

	fd[fmid] = xoff;
	bd[bmid] = xlim;
	for (long cost = 1;; cost++) {
		/* Forward: extend each diagonal by one edit, then follow the snake. */
		if (fmin > dmin)
			fd[--fmin - 1] = -1;
		else
			fmin++;
		if (fmax < dmax)
			fd[++fmax + 1] = -1;
		else
			fmax--;
		for (long d = fmax; d >= fmin; d -= 2) {
			long tlo = fd[d - 1], thi = fd[d + 1];
			long x = tlo >= thi ? tlo + 1 : thi;
			long y = x - d;
			while (x < xlim && y < ylim && xv[x] == yv[y]) {
				x++;
				y++;
			}
			fd[d] = x;
			if (odd && bmin <= d && d <= bmax && bd[d] <= x) {
				out->xmid = x;
				out->ymid = y;
				return;
			}
		}
		/* Backward, the same from the other corner. */
		if (bmin > dmin)
			bd[--bmin - 1] = LONG_MAX;
		else
			bmin++;
		if (bmax < dmax)
			bd[++bmax + 1] = LONG_MAX;
		else
			bmax--;
		for (long d = bmax; d >= bmin; d -= 2) {
			long tlo = bd[d - 1], thi = bd[d + 1];
			long x = tlo < thi ? tlo : thi - 1;
			long y = x - d;
			while (x > xoff && y > yoff && xv[x - 1] == yv[y - 1]) {
				x--;
				y--;
			}
			bd[d] = x;
			if (!odd && fmin <= d && d <= fmax && x <= fd[d]) {
				out->xmid = x;
				out->ymid = y;
				return;
			}
		}
		if (cost < c->too_expensive)
			continue;

		/* Too costly to stay minimal: take whichever end has progressed furthest. */
		long fxybest = -1, fxbest = xoff;
		for (long d = fmax; d >= fmin; d -= 2) {
			long x = fd[d] < xlim ? fd[d] : xlim;
			long y = x - d;
			if (y > ylim) {
				x = ylim + d;
				y = ylim;
			}
			if (fxybest < x + y) {
				fxybest = x + y;
				fxbest = x;
			}
		}
		long bxybest = LONG_MAX, bxbest = xlim;
		for (long d = bmax; d >= bmin; d -= 2) {
			long x = bd[d] > xoff ? bd[d] : xoff;
			long y = x - d;
			if (y < yoff) {
				x = yoff + d;
				y = yoff;
			}
			if (x + y < bxybest) {
				bxybest = x + y;
				bxbest = x;
			}
		}
		if ((xlim + ylim) - bxybest < fxybest - (xoff + yoff)) {
			out->xmid = fxbest;
			out->ymid = fxybest - fxbest;
		} else {
			out->xmid = bxbest;
			out->ymid = bxybest - bxbest;
		}
		return;
	}
}

struct box {
	long xoff, xlim, yoff, ylim;
};

/* Marks the changed lines of a and b. Returns -1 when out of memory. */
static int compare(struct side *a, struct side *b)
{
	long diags = a->n + b->n + 3;
	struct ctx c = { .xv = a->cls, .yv = b->cls };
	long *fbuf = malloc((size_t)diags * 2 * sizeof *fbuf);
	if (!fbuf)
		return -1;
	/* Diagonals run from -(n_b + 1) to n_a + 1. */
	c.fd = fbuf + b->n + 1;
	c.bd = fbuf + diags + b->n + 1;
	/* GNU diff's bound: about the square root of the number of diagonals, at least 4096. */
	c.too_expensive = 1;
	for (long d = diags; d; d >>= 2)
		c.too_expensive <<= 1;
	if (c.too_expensive < 4096)
		c.too_expensive = 4096;

	size_t cap = 64, top = 0;
	struct box *stack = malloc(cap * sizeof *stack);
	if (!stack) {
		free(fbuf);
		return -1;
	}
	stack[top++] = (struct box){ 0, a->n, 0, b->n };
	while (top) {
		struct box bx = stack[--top];
		while (bx.xoff < bx.xlim && bx.yoff < bx.ylim && c.xv[bx.xoff] == c.yv[bx.yoff]) {
			bx.xoff++;
			bx.yoff++;
		}
		while (bx.xlim > bx.xoff && bx.ylim > bx.yoff &&
		       c.xv[bx.xlim - 1] == c.yv[bx.ylim - 1]) {
			bx.xlim--;
			bx.ylim--;
		}
		if (bx.xoff == bx.xlim) {
			for (long y = bx.yoff; y < bx.ylim; y++)
				b->chg[y] = 1;
			continue;
		}
		if (bx.yoff == bx.ylim) {
			for (long x = bx.xoff; x < bx.xlim; x++)
				a->chg[x] = 1;
			continue;
		}
		struct split sp;
		find_split(&c, bx.xoff, bx.xlim, bx.yoff, bx.ylim, &sp);
		if (!ARRAY_GROW(stack, top + 2, cap)) {
			free(stack);
			free(fbuf);
			return -1;
		}
		stack[top++] = (struct box){ sp.xmid, bx.xlim, sp.ymid, bx.ylim };
		stack[top++] = (struct box){ bx.xoff, sp.xmid, bx.yoff, sp.ymid };
	}
	free(stack);
	free(fbuf);
	return 0;
}

/* One line of a hunk with its ' ', '-' or '+' prefix; a line without its final '\n' is
 * followed by the marker patch(1) understands. */
static void emit_line(struct strbuf *b, char prefix, const struct line *ln)
{
	strbuf_add(b, &prefix, 1);
	strbuf_add(b, ln->p, ln->len);
	if (ln->len == 0 || ln->p[ln->len - 1] != '\n')
		strbuf_adds(b, "\n\\ No newline at end of file\n");
}

/* "-start,count" in GNU's convention: an empty range names the line before it; a count of
 * one is left out. */
static void emit_range(struct strbuf *b, char sign, long start, long count)
{
	strbuf_add(b, &sign, 1);
	strbuf_addf(b, "%ld", count == 0 ? start : start + 1);
	if (count != 1) {
		strbuf_add(b, ",", 1);
		strbuf_addf(b, "%ld", count);
	}
}

/* Skips from (i, j) over the next run of unchanged lines; returns false at the end of both. */
static bool next_change(const struct side *a, const struct side *b, long *i, long *j)
{
	while (*i < a->n && *j < b->n && !a->chg[*i] && !b->chg[*j]) {
		(*i)++;
		(*j)++;
	}
	return *i < a->n || *j < b->n;
}

/* Writes the hunks. Changes are found by walking both texts in step: unchanged lines pair up. */
static void emit_hunks(struct strbuf *out, const struct side *a, const struct side *b, long ctx)
{
	long i = 0, j = 0;
	while (next_change(a, b, &i, &j)) {
		/* The hunk starts `ctx` lines before its first change and takes in every later change
		 * whose gap to the previous one is at most 2*ctx lines. */
		long hs_a = i - ctx < 0 ? 0 : i - ctx;
		long hs_b = j - (i - hs_a);
		long ei = i, ej = j;
		for (;;) {
			while (ei < a->n && a->chg[ei])
				ei++;
			while (ej < b->n && b->chg[ej])
				ej++;
			long ni = ei, nj = ej;
			if (!next_change(a, b, &ni, &nj))
				break;
			if (ni - ei > 2 * ctx)
				break;
			ei = ni;
			ej = nj;
		}
		long tail = a->n - ei < ctx ? a->n - ei : ctx;
		long he_a = ei + tail, he_b = ej + tail;

		strbuf_adds(out, "@@ ");
		emit_range(out, '-', hs_a, he_a - hs_a);
		strbuf_adds(out, " ");
		emit_range(out, '+', hs_b, he_b - hs_b);
		strbuf_adds(out, " @@\n");

		long x = hs_a, y = hs_b;
		while (x < he_a || y < he_b) {
			if (x < he_a && y < he_b && !a->chg[x] && !b->chg[y]) {
				emit_line(out, ' ', &a->lines[x]);
				x++;
				y++;
				continue;
			}
			long before = x + y;
			while (x < he_a && a->chg[x])
				emit_line(out, '-', &a->lines[x++]);
			while (y < he_b && b->chg[y])
				emit_line(out, '+', &b->lines[y++]);
			if (x + y == before)
				break; /* cannot happen with a consistent alignment; never spin */
		}
		i = he_a;
		j = he_b;
	}
}

char *diff_unified(const char *label_old, const char *old, size_t oldlen, const char *label_new,
		   const char *new_, size_t newlen, int context)
{
	struct side a = { 0 }, b = { 0 };
	struct strbuf out = { 0 };
	char *ret = NULL;

	if (!old)
		oldlen = 0;
	if (!new_)
		newlen = 0;
	if (context < 0)
		context = 0;
	if (split_lines(old, oldlen, &a) < 0 || split_lines(new_, newlen, &b) < 0 ||
	    classify(&a, &b) < 0 || compare(&a, &b) < 0)
		goto done;

	bool any = false;
	for (long x = 0; x < a.n && !any; x++)
		any = a.chg[x];
	for (long y = 0; y < b.n && !any; y++)
		any = b.chg[y];
	if (!any) {
		ret = strdup("");
		goto done;
	}
	strbuf_adds(&out, "--- ");
	strbuf_adds(&out, label_old ? label_old : "a");
	strbuf_adds(&out, "\n+++ ");
	strbuf_adds(&out, label_new ? label_new : "b");
	strbuf_adds(&out, "\n");
	emit_hunks(&out, &a, &b, context);
	ret = strbuf_steal(&out, NULL);
done:
	strbuf_free(&out);
	free(a.lines);
	free(a.cls);
	free(a.chg);
	free(b.lines);
	free(b.cls);
	free(b.chg);
	return ret;
}

/* ---- applying a diff (reloading a file changed on disk with the unsaved edits kept) ---- */

struct pline { const char *p; size_t n; }; /* one line, without its newline */

/* Splits text into lines (without their newlines) into a malloc'd array; *n lines. */
static struct pline *patch_lines(const char *t, size_t len, size_t *n)
{
	size_t cap = 16, k = 0;
	struct pline *v = malloc(cap * sizeof *v);
	const char *p = t, *end = t + len;

	if (!v)
		return NULL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ln = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (!ARRAY_GROW(v, k + 1, cap)) {
			free(v);
			return NULL;
		}
		v[k++] = (struct pline){ p, ln };
		p += ln + (nl ? 1 : 0);
	}
	*n = k;
	return v;
}

static bool pline_eq(struct pline a, struct pline b)
{
	return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

static void pout_line(struct strbuf *o, const char *s, size_t n)
{
	strbuf_add(o, s, n);
	strbuf_add(o, "\n", 1);
}

/* Where the lines old[0..no) are in in[from..nin), or (size_t)-1. */
static size_t find_lines(const struct pline *in, size_t nin, size_t from, const struct pline *old,
			 size_t no)
{
	for (size_t k = from; no && k + no <= nin; k++) {
		size_t m = 0;
		while (m < no && pline_eq(in[k + m], old[m]))
			m++;
		if (m == no)
			return k;
	}
	return (size_t)-1;
}

/* A hunk of a patch: its lines without their first character, each one's kind (' ' context,
 * '-' removed, '+' added), and room for a run's old side. */
struct hunk {
	struct pline *body, *oldv;
	char *kind;
	size_t n;
};

/* The text a patch applies to: its lines, and how far it is copied out. */
struct patched {
	const struct pline *in;
	size_t n, pos;
};

/* Reads the hunk whose "@@" line is pl[*i] into h; *i becomes the next "@@" line or npl. A "\ No
 * newline at end of file" on the new side clears *final_nl. */
static void read_hunk(const struct pline *pl, size_t npl, size_t *i, struct hunk *h,
		      bool *final_nl)
{
	h->n = 0;
	for ((*i)++; *i < npl && !(pl[*i].n >= 2 && !memcmp(pl[*i].p, "@@", 2)); (*i)++) {
		char c = pl[*i].n ? pl[*i].p[0] : ' ';
		if (c == '\\') {
			if (h->n && h->kind[h->n - 1] != '-')
				*final_nl = false; /* "\ No newline at end of file" on the new side */
			continue;
		}
		h->kind[h->n] = c == '-' || c == '+' ? c : ' ';
		h->body[h->n++] = (struct pline){ pl[*i].p + 1, pl[*i].n ? pl[*i].n - 1 : 0 };
	}
}

/* Where the run of changes h->body[r..e) is in the input from its position on, with up to 3
 * lines of context each side, given up a line at a time (as patch's fuzz): its place, or
 * (size_t)-1. *useb is the context before it that was used, *nminus the lines it removes. */
static size_t find_run(const struct patched *t, const struct hunk *h, size_t r, size_t e,
		       size_t *useb, size_t *nminus)
{
	size_t cb = 0, ca = 0, at = (size_t)-1;
	while (cb < 3 && cb < r && h->kind[r - cb - 1] == ' ')
		cb++;
	while (ca < 3 && e + ca < h->n && h->kind[e + ca] == ' ')
		ca++;
	for (size_t f = 0; f <= 3 && at == (size_t)-1; f++) {
		*useb = cb > f ? cb - f : 0;
		size_t usea = ca > f ? ca - f : 0, no = 0;
		*nminus = 0;
		for (size_t k = r - *useb; k < r; k++)
			h->oldv[no++] = h->body[k];
		for (size_t k = r; k < e; k++)
			if (h->kind[k] == '-') {
				h->oldv[no++] = h->body[k];
				(*nminus)++;
			}
		for (size_t k = e; k < e + usea; k++)
			h->oldv[no++] = h->body[k];
		at = no ? find_lines(t->in, t->n, t->pos, h->oldv, no) : t->n == 0 ? 0 : (size_t)-1;
	}
	return at;
}

/* Each run of changes of the hunk applies on its own, with the context next to it; context
 * that changed on disk is given up a line at a time, the changed lines never. */
static void apply_hunk(struct patched *t, const struct hunk *h, struct strbuf *o, size_t *applied,
		       size_t *failed)
{
	for (size_t r = 0; r < h->n;) {
		if (h->kind[r] == ' ') {
			r++;
			continue;
		}
		size_t e = r, useb = 0, nminus = 0;
		while (e < h->n && h->kind[e] != ' ')
			e++;
		size_t at = find_run(t, h, r, e, &useb, &nminus);
		if (at == (size_t)-1) {
			(*failed)++;
			r = e;
			continue;
		}
		/* Up to the match, then the context before, the added lines; the context after
		 * stays input, for the next run to find. */
		for (; t->pos < at + useb; t->pos++)
			pout_line(o, t->in[t->pos].p, t->in[t->pos].n);
		for (size_t k = r; k < e; k++)
			if (h->kind[k] == '+')
				pout_line(o, h->body[k].p, h->body[k].n);
		t->pos += nminus;
		(*applied)++;
		r = e;
	}
}

char *diff_apply(const char *text, size_t len, const char *patch, size_t *outlen, size_t *applied,
		 size_t *failed)
{
	size_t nin = 0, npl = 0;
	struct pline *in = patch_lines(text, len, &nin);
	struct pline *pl = patch_lines(patch, strlen(patch), &npl);
	struct hunk h = { 0 };
	struct patched t = { in, nin, 0 };
	struct strbuf o = { 0 };
	bool final_nl = len == 0 || text[len - 1] == '\n';
	char *ret = NULL;

	*applied = *failed = 0;
	if ((!in && len) || (!pl && *patch))
		goto out;
	h.body = malloc((npl + 1) * sizeof *h.body);
	h.oldv = malloc((npl + 1) * sizeof *h.oldv);
	h.kind = malloc(npl + 1);
	if (!h.body || !h.oldv || !h.kind)
		goto out;
	for (size_t i = 0; i < npl;) {
		if (pl[i].n < 2 || memcmp(pl[i].p, "@@", 2) != 0) {
			i++;
			continue;
		}
		read_hunk(pl, npl, &i, &h, &final_nl);
		apply_hunk(&t, &h, &o, applied, failed);
	}
	for (; t.pos < nin; t.pos++)
		pout_line(&o, in[t.pos].p, in[t.pos].n);
	if (!o.oom) {
		if (o.len && !final_nl)
			o.p[--o.len] = '\0';
		ret = strbuf_steal(&o, outlen);
	}
out:
	free(in);
	free(pl);
	free(h.body);
	free(h.oldv);
	free(h.kind);
	strbuf_free(&o);
	return ret;
}
