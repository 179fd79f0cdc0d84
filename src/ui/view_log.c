/* view_log.c — the Log view: the log with virtual scrolling (only the visible lines are read,
 * through the log index), signature lines highlighted, PCRE2 search; and beside it (or below on
 * a narrow terminal) the diagnosis panel, whose lines view_diag.c builds; the keys move in it
 * once it has the focus (Right or l).
 *
 * Every byte of the log goes through text_sanitize before it is drawn: a log can hold escape
 * sequences (OSC 52 clipboard writes, title changes, C1 controls in UTF-8) and none may reach
 * the terminal.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oomfix/i18n.h"
#include "oomfix/sig.h"
#include "oomfix/text.h"
#include "retry.h"
#include "search.h"
#include "view.h"
#include "view_diag.h"
#include "view_log.h"

#define READ_MAX (64u * 1024)   /* bytes of one physical line read for display */
#define CACHE_N 256

/* Lines already read and sanitised, so a redraw or a one-line scroll reads at most one line. */
struct cline {
	uint64_t line;      /* 1-based; 0 = empty slot */
	char *text;         /* sanitised, the last non-empty \r segment */
	size_t len;
	unsigned redraws;   /* \r segments before the one shown */
	bool clipped;
	bool missing;       /* no such line: past the end while the count is not known yet */
	int sig;            /* 0 none, 1 OOM or detail, 2 hint, 3 other death */
};

/* The Log view's own state (its private data, allocated with the view). */
struct log_priv {
	struct cline cache[CACHE_N];
	const struct ui_session *cache_owner;
	uint64_t cache_size;          /* log size the cache was filled at */
	struct sig_matcher *matcher;
	bool focus_diag;              /* the diagnosis panel has the keys */
	struct ui_pos diag_pos;
	int diag_width;               /* the width the panel was last drawn at: its lines wrap by it */
	struct ui_diag_layout lay;    /* how the panel was laid out */
	int log_hoff;                 /* cells of every log line scrolled out at the left (less -S) */
	bool log_wrap;                /* long log lines wrap onto the next rows instead */
	int log_avail;                /* cells for a line's text, as last drawn */
	/* The number of lines that match the search, counted once per pattern and log size (a
	 * whole scan), so n and N stop at the next match and still say "match 2/3". */
	char count_pat[256];
	char count_log[512];          /* the log counted (R and a retry put another in its place) */
	uint64_t count_size, count_total;
};

static void log_init(void *priv)
{
	struct log_priv *lp = priv;
	lp->diag_width = 78;
	lp->log_avail = 60;
}

static struct log_priv *log_priv(const struct ui_env *v)
{
	return v->priv;
}

static void cache_drop(struct log_priv *lp)
{
	for (int i = 0; i < CACHE_N; i++) {
		free(lp->cache[i].text);
		lp->cache[i] = (struct cline){ 0 };
	}
}

static void log_fini(void *priv)
{
	struct log_priv *lp = priv;
	cache_drop(lp);
	sig_matcher_free(&lp->matcher);
}

static int classify(struct log_priv *lp, const char *raw, size_t len)
{
	struct sig_match hits[SIG_COUNT];
	struct err e;
	int best = 0;

	if (!sig_prefilter(raw, len))
		return 0;
	if (!lp->matcher && sig_matcher_new(&lp->matcher, &e))
		return 0;
	size_t n = sig_match(lp->matcher, raw, len, SIG_ALL, hits, SIG_COUNT);
	for (size_t i = 0; i < n; i++) {
		enum sig_class c = sig_defs[hits[i].id].cls;
		int v = c == SIG_CLASS_OOM || c == SIG_CLASS_DETAIL ? 1 : c == SIG_CLASS_HINT ? 2 : 3;
		if (!best || v < best)
			best = v;
	}
	return best;
}

static const struct cline *get_line(const struct ui_env *v, uint64_t line)
{
	struct log_priv *lp = log_priv(v);
	static char *buf;
	struct cline *c = &lp->cache[line % CACHE_N];
	size_t len = 0;
	bool clipped = false;
	struct err e;

	if (lp->cache_owner != v->s || lp->cache_size != logidx_size(v->s->log)) {
		cache_drop(lp);
		lp->cache_owner = v->s;
		lp->cache_size = logidx_size(v->s->log);
	}
	if (c->line == line && c->text)
		return c;
	if (!buf && !(buf = malloc(READ_MAX)))
		return NULL;
	free(c->text);
	*c = (struct cline){ 0 };
	int rrc = logidx_read_line(v->s->log, line, buf, READ_MAX, &len, &clipped, NULL, &e);
	if (rrc)
		len = 0;
	/* Show what a terminal would show: the last non-empty \r segment (tqdm redraws). */
	size_t start = 0;
	unsigned segs = 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\r') {
			if (i + 1 < len && buf[i + 1] != '\r') {
				start = i + 1;
				segs++;
			}
		}
	size_t seglen = len - start;
	while (seglen > 0 && buf[start + seglen - 1] == '\r')
		seglen--;
	/* ESC is shown as ^[ rather than dropped with its sequence: an OSC 52 clipboard write or
	 * a title change in a log is something the reader should see, as text. text_sanitize
	 * then makes the rest of the sequence (BEL, C1 bytes) visible too. */
	size_t nesc = 0;
	for (size_t i = 0; i < seglen; i++)
		nesc += buf[start + i] == 0x1B;
	char *vis = malloc(seglen + nesc + 1);
	c->text = malloc((seglen + nesc) * 4 + 1);
	if (!vis || !c->text) {
		free(vis);
		free(c->text);
		c->text = NULL;
		return NULL;
	}
	size_t vn = 0;
	for (size_t i = 0; i < seglen; i++) {
		if (buf[start + i] == 0x1B) {
			vis[vn++] = '^';
			vis[vn++] = '[';
		} else {
			vis[vn++] = buf[start + i];
		}
	}
	c->len = ui_for_terminal(c->text, text_sanitize(vis, vn, c->text, vn * 4 + 1));
	free(vis);
	c->line = line;
	c->redraws = segs;
	c->clipped = clipped;
	c->missing = rrc == ERR_DATA;
	/* Classify on the ANSI-stripped bytes, as the diagnosis does. */
	size_t sl = text_strip_ansi(buf, len);
	for (size_t i = 0; i < sl; i++)
		if (buf[i] == '\r')
			buf[i] = ' ';
	c->sig = classify(lp, buf, sl);
	return c;
}

static bool is_evidence(const struct ui_session *s, uint64_t line)
{
	for (size_t i = 0; i < s->diag.nevidence; i++)
		if (s->diag.evidence[i].line == line)
			return true;
	for (size_t i = 0; i < s->diag.nsigs; i++)
		if (s->diag.sigs[i].line == line)
			return true;
	return false;
}

/* ---- drawing ---------------------------------------------------------------------------------- */

/* The gutter marks, explained at the right of the header when there is room (and in help). */
static const char *mark_legend(void)
{
	return _("> evidence  ! out of memory  ~ redrawn line");
}

/* A log that grows while it is open: whether it is followed, and where the run stands by its
 * last bar (phase, step/total, speed), after the position. */
static void live_header(const struct ui_env *v, char *buf, size_t sz)
{
	const struct diag_result *d = &v->s->diag;
	size_t k = strlen(buf);

	k += (size_t)snprintf(buf + k, k < sz ? sz - k : 0, "  %s",
			      ui_follow_on(v->follow, v->s, v->pos->cursor) ? _("[following]")
									     : _("[not following]"));
	/* The run is over: how it ended, not the last bar as if it still went on. */
	if (k < sz && v->s->have_diag && d->oom && !d->survived) {
		if (d->failed_step >= 0)
			snprintf(buf + k, sz - k, _("  ended: OOM at step %lld"), d->failed_step);
		else
			snprintf(buf + k, sz - k, _("  ended: OOM, %s"), diag_phase_label(d->phase));
		return;
	}
	if (k < sz && v->s->have_diag && d->run_ended) {
		if (d->other != DIAG_O_NONE)
			snprintf(buf + k, sz - k, "  %s", _("ended: an error"));
		else if (d->now_step >= 0 && d->total_steps > 0)
			snprintf(buf + k, sz - k, _("  finished %lld/%lld"), d->now_step, d->total_steps);
		else
			snprintf(buf + k, sz - k, "  %s", _("finished"));
		return;
	}
	if (d->now_phase != DIAG_P_NONE && k < sz)
		k += (size_t)snprintf(buf + k, sz - k, "  %s", diag_phase_label(d->now_phase));
	if (d->now_step >= 0 && k < sz)
		k += (size_t)(d->total_steps > 0
			      ? snprintf(buf + k, sz - k, "  %lld/%lld", d->now_step, d->total_steps)
			      : snprintf(buf + k, sz - k, "  %lld", d->now_step));
	if (d->now_rate[0] && k < sz)
		snprintf(buf + k, sz - k, "  %s", d->now_rate);
}

/* Part of a display line, bytes [off, off + len), with the segments that fall in it. */
static struct ui_line slice(const struct ui_line *ln, size_t off, size_t len)
{
	struct ui_line s = *ln;

	s.text = ln->text + off;
	s.len = len;
	s.nseg = 0;
	for (int i = 0; i < ln->nseg; i++) {
		size_t st = ln->seg[i].off, en = i + 1 < ln->nseg ? ln->seg[i + 1].off : ln->len;
		if (en <= off || st >= off + len)
			continue;
		s.seg[s.nseg].off = st > off ? st - off : 0;
		s.seg[s.nseg].role = ln->seg[i].role;
		s.nseg++;
	}
	if (s.nseg == 0) {
		s.seg[0].off = 0;
		s.seg[0].role = ln->seg[0].role;
		s.nseg = 1;
	}
	return s;
}

/* Bytes of the next wrapped row of s (at least one character, so a row always advances). */
static size_t row_bytes(const char *s, size_t len, int cells)
{
	size_t k = text_fit(s, len, cells > 0 ? cells : 1, NULL);
	uint32_t cp;

	if (k == 0 && len > 0) {
		k = text_utf8_decode((const unsigned char *)s, len, &cp);
		if (k == 0)
			k = 1;
	}
	return k;
}

/* The rows a log line takes: one, or as many as wrapping needs. */
static int line_rows(const struct ui_env *v, uint64_t line, int avail)
{
	struct log_priv *lp = log_priv(v);
	const struct cline *c;
	int rows = 0;

	if (!lp->log_wrap || !(c = get_line(v, line)) || c->missing)
		return 1;
	for (size_t off = 0; off < c->len; rows++)
		off += row_bytes(c->text + off, c->len - off, avail);
	return rows > 0 ? rows : 1;
}

/* The last `parts` parts of a path ("a/b/c", 2: "b/c"), or the whole path when it has fewer. */
static const char *path_tail(const char *p, int parts)
{
	for (const char *t = p + strlen(p); t > p; t--)
		if (t[-1] == '/' && --parts == 0)
			return t;
	return p;
}

/* `s` in at most `cells` cells, its start given up for a mark when longer: a path keeps its end. */
static void cut_front(const char *s, int cells, char *out, size_t size)
{
	size_t len = strlen(s), t = 0;
	if (text_width(s, len) <= cells) {
		snprintf(out, size, "%s", s);
		return;
	}
	while (t < len && text_width(s + t, len - t) > cells - 1) {
		uint32_t cp;
		size_t k = text_utf8_decode((const unsigned char *)s + t, len - t, &cp);
		t += k ? k : 1;
	}
	snprintf(out, size, "%s%s", ui_ascii() ? "<" : "\u2026", s + t);
}

/* The header row: which log, where the run stands (the web UI's status, the retry, the phase,
 * step and speed), the position, and how long lines are shown when not cut. Where the row is
 * narrow the log's path gives up its start first, so that what changes while a run goes on and
 * the position stay whole (E14); a row still too wide ends in a marked cut. */
static void log_header(const struct ui_env *v, WINDOW *win, struct ui_rect r, long long n)
{
	struct log_priv *lp = log_priv(v);
	char rest[512] = "", how[64] = "", buf[1024];

	if (lp->log_wrap)
		snprintf(how, sizeof how, "%s", _("  [wrapped]"));
	else if (lp->log_hoff)
		snprintf(how, sizeof how, _("  [from column %d]"), lp->log_hoff + 1);
	if (v->s->run_label[0]) /* an earlier run is history: not the job's status now */
		snprintf(rest, sizeof rest, "  [%s]", v->s->run_label);
	else if (v->s->job_status[0])
		snprintf(rest, sizeof rest, _("  web UI: %s"), v->s->job_status);
	ui_retry_progress(v->retry, rest, sizeof rest);
	if (v->s->growing)
		live_header(v, rest, sizeof rest);
	size_t hk = strlen(rest);
	if (hk + 2 < sizeof rest) {
		rest[hk++] = ' ';
		rest[hk++] = ' ';
		rest[hk] = '\0';
	}
	if (v->s->lines_known)
		snprintf(rest + hk, sizeof rest - hk, _("line %lld of %lld%s"),
			 n ? v->pos->cursor + 1 : 0, n,
			 logidx_truncated(v->s->log) ? _("  (file shrank)") : "");
	else
		snprintf(rest + hk, sizeof rest - hk, _("line %lld (counting...)"), v->pos->cursor + 1);
	if (strlen(rest) + strlen(how) < sizeof rest)
		strcat(rest, how);
	/* A long path leaves no room for where the run stands: its last two parts are enough, and
	 * then what the row has left. */
	const char *name = logidx_name(v->s->log);
	char shortname[300], cut[320];
	if (text_width(name, strlen(name)) > r.w / 3 && path_tail(name, 2) != name) {
		snprintf(shortname, sizeof shortname, ".../%s", path_tail(name, 2));
		name = shortname;
	}
	int room = r.w - 1 - text_width(rest, strlen(rest));
	cut_front(name, room < 12 ? 12 : room, cut, sizeof cut);
	snprintf(buf, sizeof buf, "%s%s", cut, rest);
	int bw = text_width(buf, strlen(buf));
	int hw;
	if (bw > r.w - 1 && r.w > 2) { /* still too wide: cut, and say so */
		hw = ui_put(win, r.y, r.x + 1, r.w - 2, UI_R_DIM, buf);
		ui_put(win, r.y, r.x + 1 + hw, 1, UI_R_DIM, ">");
		hw++;
	} else {
		hw = ui_put(win, r.y, r.x + 1, r.w - 1, UI_R_DIM, buf);
	}
	const char *leg = mark_legend();
	int lw = text_width(leg, strlen(leg));
	if (1 + hw + 3 + lw <= r.w)
		ui_put(win, r.y, r.x + r.w - lw - 1, lw, UI_R_DIM, leg);
}

/* Keeps the cursor within the log (n lines; until the worker has counted, the end is found by
 * reading: a line that is not there) and on screen in a pane of r.h rows. */
static void log_clamp(const struct ui_env *v, long long n, int h)
{
	struct log_priv *lp = log_priv(v);
	struct ui_pos *p = v->pos;

	if (!v->s->lines_known) {
		/* Stop at the last line read so far when the cursor went past the end. */
		while (p->cursor > 0 && get_line(v, (uint64_t)p->cursor + 1) &&
		       get_line(v, (uint64_t)p->cursor + 1)->missing)
			p->cursor--;
	}
	if (p->cursor >= n)
		p->cursor = n - 1;
	if (p->cursor < 0)
		p->cursor = 0;
	if (p->top > p->cursor)
		p->top = p->cursor;
	if (p->cursor >= p->top + h)
		p->top = p->cursor - h + 1;
	if (v->s->lines_known && p->top > n - h)
		p->top = n - h;
	if (p->top < 0)
		p->top = 0;
	if (lp->log_wrap) {
		/* Wrapped lines take several rows: start late enough for the cursor's to fit. */
		for (;;) {
			int rows = 0;
			for (long long l = p->top; l <= p->cursor && rows <= h; l++)
				rows += line_rows(v, (uint64_t)l + 1, lp->log_avail);
			if (rows <= h || p->top >= p->cursor)
				break;
			p->top++;
		}
	}
}

/* The display line of a log line: its role by what the line is, and the search's match
 * highlighted in it. */
static struct ui_line log_line(const struct ui_env *v, const struct cline *c)
{
	enum ui_role role = c->sig == 1 ? UI_R_OOM : c->sig == 3 ? UI_R_ERROR
			  : c->sig == 2 ? UI_R_EVIDENCE : UI_R_NORMAL;
	struct ui_line ln = { 0 };

	ln.text = c->text;
	ln.len = c->len;
	ln.nseg = 1;
	ln.seg[0].role = role;
	if (v->search->re && v->search->md &&
	    pcre2_match(v->search->re, (PCRE2_SPTR)c->text, c->len, 0, 0, v->search->md,
			NULL) > 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(v->search->md);
		if (ov[1] > ov[0] && ov[1] <= c->len) {
			ln.seg[1].off = ov[0];
			ln.seg[1].role = UI_R_MATCH;
			ln.seg[2].off = ov[1];
			ln.seg[2].role = role;
			ln.nseg = ov[0] == 0 ? (ln.seg[0] = ln.seg[1], ln.seg[1] = ln.seg[2], 2) : 3;
		}
	}
	return ln;
}

/* Draws log line `line` from row `row` (its number and mark in a gutter of numw digits, the
 * text cut at the edge or wrapped); returns the rows it took. */
static int draw_log_line(const struct ui_env *v, WINDOW *win, struct ui_rect r, int row,
			 uint64_t line, const struct cline *c, int numw)
{
	struct log_priv *lp = log_priv(v);
	char num[32];
	bool ev = is_evidence(v->s, line);
	bool cur = !lp->focus_diag && (long long)line - 1 == v->pos->cursor;

	/* gutter: > evidence, ! OOM line, ~ redrawn progress line: the mark says it without
	 * colour */
	snprintf(num, sizeof num, "%c%*llu ",
		 ev ? '>' : c && c->sig == 1 ? '!' : c && c->redraws ? '~' : ' ', numw,
		 (unsigned long long)line);
	if (cur)
		ui_fill(win, r.y + row, r.x, r.w, UI_R_CURSOR);
	int used = ui_put(win, r.y + row, r.x, r.w,
			  cur ? UI_R_CURSOR : ev ? UI_R_EVIDENCE : c && c->sig == 1 ? UI_R_OOM
										: UI_R_DIM, num);
	if (!c)
		return 1;
	struct ui_line ln = log_line(v, c);
	if (!lp->log_wrap) {
		/* Cut at the right edge ('>' says there is more), from the scrolled column. */
		size_t skip = lp->log_hoff ? text_fit(c->text, c->len, lp->log_hoff, NULL) : 0;
		struct ui_line part = slice(&ln, skip, c->len - skip);
		ui_draw_line(win, r.y + row, r.x + used, r.w - used, &part, cur);
		return 1;
	}
	size_t off = 0;
	int rows = 0;
	do {
		size_t k = row_bytes(c->text + off, c->len - off, lp->log_avail);
		struct ui_line part = slice(&ln, off, k);
		if (off && cur)
			ui_fill(win, r.y + row + rows, r.x, r.w, UI_R_CURSOR);
		ui_draw_line(win, r.y + row + rows, r.x + used, r.w - used, &part, cur);
		off += k;
		rows++;
	} while (off < c->len && row + rows < r.h);
	return rows;
}

static void draw_log(const struct ui_env *v, WINDOW *win, struct ui_rect r)
{
	struct log_priv *lp = log_priv(v);
	struct ui_pos *p = v->pos;
	bool known = v->s->lines_known;
	long long n = known ? (long long)v->s->log_lines : UI_POS_END;
	int numw = 1;

	for (uint64_t k = known ? v->s->log_lines : (uint64_t)p->top + (uint64_t)r.h; k >= 10;
	     k /= 10)
		numw++;
	log_header(v, win, r, n);
	r.y++;
	r.h--;
	if (r.h <= 0)
		return;
	int avail = r.w - (numw + 2);
	lp->log_avail = avail > 1 ? avail : 1;
	log_clamp(v, n, r.h);
	for (long long i = 0, row = 0; row < r.h && p->top + i < n; i++) {
		uint64_t line = (uint64_t)(p->top + i) + 1;
		const struct cline *c = get_line(v, line);
		if (c && c->missing)
			break;
		row += draw_log_line(v, win, r, (int)row, line, c, numw);
	}
}

/* Keeps the diagnosis cursor on an evidence line when there is one. */
static void diag_settle(struct log_priv *lp, const struct ui_lines *l, int dir)
{
	long long n = (long long)l->n;

	if (lp->diag_pos.cursor >= n)
		lp->diag_pos.cursor = n - 1;
	if (lp->diag_pos.cursor < 0)
		lp->diag_pos.cursor = 0;
	for (long long c = lp->diag_pos.cursor; c >= 0 && c < n; c += dir)
		if (l->v[c].selectable) {
			lp->diag_pos.cursor = c;
			return;
		}
	for (long long c = lp->diag_pos.cursor; c >= 0 && c < n; c -= dir)
		if (l->v[c].selectable) {
			lp->diag_pos.cursor = c;
			return;
		}
}

static void log_draw(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	struct log_priv *lp = log_priv(v);
	struct ui_rect r = c->r;
	struct ui_lines l = { 0 };
	struct ui_rect lr = r, dr = r;

	lp->lay.stacked = false;
	if (v->s->log && !v->s->diag_pending && v->s->diag_rc == ERR_DATA) {
		/* The diagnosis refused the file (not text: a binary given as the log). Its bytes
		 * would only draw as noise: say what it is instead. */
		ui_lines_wrap(&l, UI_R_ERROR, v->s->diag_err.msg, r.w - 4, 2);
		ui_lines_wrap(&l, UI_R_DIM, _("This file cannot be shown as a log. Start oomfix with "
					      "the training log (the text the trainer printed)."),
			      r.w - 4, 2);
		ui_draw_lines(c->win, r, &l, 0, &lp->diag_pos.top, false);
		ui_lines_free(&l);
		return;
	}
	if (!v->s->log) {
		ui_diag_lines(v->s, &lp->lay, &l, r.w - 2);
		ui_draw_lines(c->win, r, &l, 0, &lp->diag_pos.top, false);
		ui_lines_free(&l);
		return;
	}
	if (r.w >= 120) { /* side by side: the diagnosis gets 45%, so its table hardly wraps */
		lr.w = r.w * 55 / 100;
		dr.x = r.x + lr.w + 1;
		dr.w = r.w - lr.w - 1;
		wattrset(c->win, ui_attr(UI_R_DIM));
		mvwvline(c->win, r.y, r.x + lr.w, '|', r.h);
		wattrset(c->win, A_NORMAL);
	} else {          /* stacked: the diagnosis below */
		lp->lay.stacked = true;
		dr.h = r.h / 2;
		lr.h = r.h - dr.h - 1;
		dr.y = r.y + lr.h + 1;
		wattrset(c->win, ui_attr(UI_R_DIM));
		mvwhline(c->win, r.y + lr.h, r.x, '-', r.w);
		wattrset(c->win, A_NORMAL);
	}
	draw_log(v, c->win, lr);
	lp->diag_width = dr.w - 1;
	lp->lay.compact = 0;
	ui_diag_lines(v->s, &lp->lay, &l, lp->diag_width);
	while (lp->lay.mark_end > dr.h && lp->lay.compact < 3) {
		lp->lay.compact++;
		ui_lines_free(&l);
		ui_diag_lines(v->s, &lp->lay, &l, lp->diag_width);
	}
	if (lp->focus_diag)
		diag_settle(lp, &l, 1);
	ui_draw_lines(c->win, dr, &l, lp->diag_pos.cursor, &lp->diag_pos.top, lp->focus_diag);
	ui_lines_free(&l);
}

/* ---- moving, jumping, searching ------------------------------------------------------------- */

static void jump_to(const struct ui_env *v, uint64_t line)
{
	const struct ui_ctx *c = v->c;
	struct log_priv *lp = log_priv(v);
	struct ui_pos *p = v->pos;
	int page = c->page;

	if (line < 1 || (v->s->lines_known && line > v->s->log_lines))
		return;
	v->follow->moved = true;
	p->cursor = (long long)line - 1;
	/* Centre it, so the lines around the evidence are visible too. */
	p->top = p->cursor - page / 4;
	if (p->top < 0)
		p->top = 0;
	lp->focus_diag = false;
}

struct search_ctx {
	const struct ui_search *sr;
	uint64_t from;         /* current line (1-based) */
	bool backward;
	bool count_all;        /* scan to the end: the total is not known yet */
	uint64_t first, last_before, after;  /* 0 = none */
	uint64_t last;
	uint64_t total, upto, before; /* matching lines: all, at or before `from`, before it */
	char *buf;
};

static int search_cb(const struct logidx_seg *sg, void *vctx)
{
	struct search_ctx *c = vctx;
	size_t len = sg->len < READ_MAX ? sg->len : READ_MAX;

	if (sg->line == c->last)
		return 0; /* this line already matched in an earlier segment */
	memcpy(c->buf, sg->p, len);
	len = text_strip_ansi(c->buf, len);
	if (pcre2_match(c->sr->re, (PCRE2_SPTR)c->buf, len, 0, 0, c->sr->md, NULL) < 0)
		return 0;
	c->last = sg->line;
	c->total++;
	if (!c->first)
		c->first = sg->line;
	if (sg->line <= c->from)
		c->upto++;
	if (sg->line < c->from) {
		c->before++;
		c->last_before = sg->line;
	}
	if (!c->backward && !c->after && sg->line > c->from) {
		c->after = sg->line;
		if (!c->count_all)
			return 1;
	}
	return 0;
}

static void search(const struct ui_env *v, bool backward)
{
	struct log_priv *lp = log_priv(v);
	struct search_ctx c = { .sr = v->search, .backward = backward };
	struct err e;
	uint64_t hit = 0, idx = 0, size = logidx_size(v->s->log);
	bool wrapped = false;

	if (!v->search->re) {
		ui_status(v->c, true, "%s", _("No search yet: press / to search."));
		return;
	}
	const char *logname = v->s->log_path ? v->s->log_path : "";
	bool known = lp->count_size == size && !strcmp(lp->count_pat, v->search->text) &&
		     !strcmp(lp->count_log, logname);
	c.count_all = !known;
	c.from = (uint64_t)v->pos->cursor + 1;
	c.buf = malloc(READ_MAX);
	if (!c.buf)
		return;
	int rc = logidx_scan(v->s->log, search_cb, &c, &e);
	free(c.buf);
	if (rc != ERR_OK && rc != 1) {
		ui_status_err(v->c, &e);
		return;
	}
	if (!known) {
		snprintf(lp->count_log, sizeof lp->count_log, "%s", logname);
		lp->count_size = size;
		lp->count_total = c.total;
		snprintf(lp->count_pat, sizeof lp->count_pat, "%s", v->search->text);
	}
	uint64_t total = lp->count_total;
	if (backward) {
		hit = c.last_before ? c.last_before : c.last;
		wrapped = !c.last_before && hit;
		idx = c.last_before ? c.before : total;
	} else {
		hit = c.after ? c.after : c.first;
		wrapped = !c.after && hit;
		idx = c.after ? c.upto + 1 : 1;
	}
	if (!hit) {
		ui_status(v->c, false, _("Pattern not found: %s"), v->search->text);
		return;
	}
	jump_to(v, hit);
	if (idx > total)
		total = idx; /* the log grew since it was counted */
	if (wrapped)
		ui_status(v->c, false, backward ? _("Search wrapped to the bottom: match %llu/%llu at line "
						  "%llu.")
					      : _("Search wrapped to the top: match %llu/%llu at line "
						  "%llu."),
			  (unsigned long long)idx, (unsigned long long)total, (unsigned long long)hit);
	else
		ui_status(v->c, false, _("match %llu/%llu at line %llu"), (unsigned long long)idx,
			  (unsigned long long)total, (unsigned long long)hit);
}

static void log_search_done(const struct ui_env *v)
{
	if (v->s->log && ui_search_compile(v))
		search(v, false);
}

/* Jumps to the next evidence line after the cursor (or the one before it), wrapping around. */
static void next_evidence(const struct ui_env *v, bool backward)
{
	const struct diag_result *d = &v->s->diag;
	uint64_t cur = (uint64_t)v->pos->cursor + 1, best = 0, first = 0, last = 0;

	for (size_t i = 0; i < d->nevidence; i++) {
		uint64_t ln = d->evidence[i].line;
		if (!first || ln < first)
			first = ln;
		if (ln > last)
			last = ln;
		if (!backward && ln > cur && (!best || ln < best))
			best = ln;
		if (backward && ln < cur && ln > best)
			best = ln;
	}
	if (!best)
		best = backward ? last : first;
	if (!best) {
		ui_status(v->c, false, "%s", _("No evidence lines in this log."));
		return;
	}
	jump_to(v, best);
	ui_status(v->c, false, _("Evidence at line %llu"), (unsigned long long)best);
}

/* R: the job's next earlier run in place of the log on screen (log_runs.c); the view starts it
 * from the top, its caches dropped. */
static void next_run(const struct ui_env *v)
{
	struct log_priv *lp = log_priv(v);
	if (!ui_log_next_run(v))
		return;
	cache_drop(lp);
	*v->pos = (struct ui_pos){ 0, 0 };
	lp->diag_pos = (struct ui_pos){ 0, 0 };
	lp->focus_diag = false;
}

/* F, > < and W: following the log, and how long lines are shown. */
static void log_view_key(const struct ui_env *v, enum ui_act act)
{
	struct log_priv *lp = log_priv(v);
	int half = lp->log_avail / 2 > 1 ? lp->log_avail / 2 : 1; /* sideways, as less -S */

	switch (act) {
	case UI_A_FOLLOW:
		/* Scrolled away from the end, F follows again (as in less); at the end, it stops. */
		v->follow->off = ui_follow_on(v->follow, v->s, v->pos->cursor);
		if (!v->follow->off && v->s->lines_known) { /* at the end, where new lines appear */
			v->pos->cursor = v->s->log_lines ? (long long)v->s->log_lines - 1 : 0;
			v->follow->moved = false;
		}
		ui_status(v->c, false, "%s", v->follow->off
			  ? _("Not following the log; F follows it again.")
			  : _("Following the log as it grows; F stops."));
		break;
	case UI_A_SCROLL_RIGHT:
		if (lp->log_wrap)
			ui_status(v->c, false, "%s", _("Long lines are wrapped; W cuts them again to "
						       "scroll sideways."));
		else
			lp->log_hoff += half;
		break;
	case UI_A_SCROLL_LEFT:
		lp->log_hoff = lp->log_hoff > half ? lp->log_hoff - half : 0;
		break;
	default: /* UI_A_WRAP */
		lp->log_wrap = !lp->log_wrap;
		lp->log_hoff = 0;
		ui_status(v->c, false, "%s",
			  lp->log_wrap ? _("Long log lines are wrapped (W cuts them again).")
				       : _("Long log lines are cut at the edge (> and < scroll "
					   "sideways)."));
		break;
	}
}

/* Enter and the moves: in the diagnosis panel when it has the keys, else in the log. False when
 * Enter is not the panel's (the app's then). */
static bool log_move(const struct ui_env *v, enum ui_act act)
{
	struct log_priv *lp = log_priv(v);
	struct ui_lines l = { 0 };

	if (lp->focus_diag) {
		ui_diag_lines(v->s, &lp->lay, &l, lp->diag_width);
		if (act == UI_A_JUMP) {
			diag_settle(lp, &l, 1);
			if (lp->diag_pos.cursor < (long long)l.n && l.v[lp->diag_pos.cursor].target > 0)
				jump_to(v, (uint64_t)l.v[lp->diag_pos.cursor].target);
		} else {
			ui_pos_move(&lp->diag_pos, act, (long long)l.n, 1);
			diag_settle(lp, &l, act == UI_A_UP || act == UI_A_PGUP || act == UI_A_BOTTOM
						    ? -1 : 1);
		}
		ui_lines_free(&l);
		return true;
	}
	if (act == UI_A_JUMP)
		return false;
	if (act == UI_A_BOTTOM && !v->s->lines_known) {
		ui_status(v->c, false, "%s", _("Still counting the lines; G works once the count is "
					       "shown."));
		return true;
	}
	v->follow->moved = true;
	if (act == UI_A_BOTTOM)
		ui_session_recount(v->s); /* a job still running: its new lines */
	ui_pos_move(v->pos, act, v->s->lines_known ? (long long)v->s->log_lines : UI_POS_END,
		    v->c->page);
	return true;
}

static enum ui_req log_action(const struct ui_env *v, enum ui_act act)
{
	struct log_priv *lp = log_priv(v);

	if (act == UI_A_NEXT_RUN) {
		next_run(v);
		return UI_REQ_DONE;
	}
	if (!v->s->log) {
		switch (act) {
		case UI_A_SEARCH: case UI_A_SEARCH_NEXT: case UI_A_SEARCH_PREV:
		case UI_A_NEXT_EVIDENCE: case UI_A_PREV_EVIDENCE: case UI_A_FOCUS_DIAG:
		case UI_A_FOCUS_LOG: case UI_A_JUMP: case UI_A_FOLLOW:
			/* The footer offers these keys here; without a log they would do nothing. */
			ui_status(v->c, false, "%s", _("No log is open: start oomfix with JOB.yaml LOG "
						       "to search it and see the evidence."));
			return UI_REQ_DONE;
		default:
			return UI_REQ_PASS;
		}
	}
	switch (act) {
	case UI_A_SEARCH:
		ui_search_start(v);
		return UI_REQ_DONE;
	case UI_A_SEARCH_NEXT:
	case UI_A_SEARCH_PREV:
		search(v, act == UI_A_SEARCH_PREV);
		return UI_REQ_DONE;
	case UI_A_NEXT_EVIDENCE:
	case UI_A_PREV_EVIDENCE:
		next_evidence(v, act == UI_A_PREV_EVIDENCE);
		return UI_REQ_DONE;
	case UI_A_FOCUS_DIAG:
		if (v->s->diag.nevidence == 0)
			ui_status(v->c, false, "%s", _("The diagnosis has no evidence lines to "
						       "select."));
		else
			lp->focus_diag = true;
		return UI_REQ_DONE;
	case UI_A_FOCUS_LOG:
		lp->focus_diag = false;
		return UI_REQ_DONE;
	case UI_A_FOLLOW: case UI_A_SCROLL_RIGHT: case UI_A_SCROLL_LEFT: case UI_A_WRAP:
		log_view_key(v, act);
		return UI_REQ_DONE;
	case UI_A_JUMP: case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		return log_move(v, act) ? UI_REQ_DONE : UI_REQ_PASS;
	default:
		return UI_REQ_PASS;
	}
}

const struct ui_view_ops ui_view_log = {
	.priv_size = sizeof(struct log_priv), .init = log_init,
	.name = N_("Log"), .keys = UI_CTX_LOG, .draw = log_draw, .action = log_action,
	.prompt_done = log_search_done, .fini = log_fini,
};
