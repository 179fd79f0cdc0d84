/* view_log.c — the Log view: the log with virtual scrolling (only the visible lines are read,
 * through the log index), signature lines highlighted, PCRE2 search; and beside it (or below on
 * a narrow terminal) the diagnosis: the verdict, the five timing rows, the evidence lines.
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

#include "oomfix/i18n.h"
#include "oomfix/sig.h"
#include "oomfix/text.h"
#include "follow.h"
#include "retry_ctl.h"
#include "ui.h"

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

static struct cline cache[CACHE_N];
static const struct ui_session *cache_owner;
static uint64_t cache_size;  /* log size the cache was filled at */
static struct sig_matcher *matcher;
static struct ui_pos diag_pos;
static int diag_width = 78;   /* the width the panel was last drawn at: its lines wrap by it */
static bool diag_stacked;     /* drawn below the log (few rows) rather than beside it */
/* How much the panel is squeezed so the marked timing row fits a short pane, a step at a time:
 * 0 not at all; 1 the table shows only its header and the marked row; 2 the out-of-date sentence
 * takes its short form too; 3 the table's header goes as well. */
static int diag_compact;
static long long diag_mark_end; /* the line after the marked timing row, -1 when none */
static int log_hoff;          /* cells of every log line scrolled out at the left (as less -S) */
static bool log_wrap;         /* long log lines wrap onto the next rows instead */
static int log_avail = 60;    /* cells for a line's text, as last drawn */

static void cache_drop(void)
{
	for (int i = 0; i < CACHE_N; i++) {
		free(cache[i].text);
		cache[i] = (struct cline){ 0 };
	}
}

static void log_fini(struct ui_app *a)
{
	cache_drop();
	sig_matcher_free(&matcher);
	ui_search_free(a);
}

static int classify(const char *raw, size_t len)
{
	struct sig_match hits[SIG_COUNT];
	struct err e;
	int best = 0;

	if (!sig_prefilter(raw, len))
		return 0;
	if (!matcher && sig_matcher_new(&matcher, &e))
		return 0;
	size_t n = sig_match(matcher, raw, len, SIG_ALL, hits, SIG_COUNT);
	for (size_t i = 0; i < n; i++) {
		enum sig_class c = sig_defs[hits[i].id].cls;
		int v = c == SIG_CLASS_OOM || c == SIG_CLASS_DETAIL ? 1 : c == SIG_CLASS_HINT ? 2 : 3;
		if (!best || v < best)
			best = v;
	}
	return best;
}

static const struct cline *get_line(struct ui_app *a, uint64_t line)
{
	static char *buf;
	struct cline *c = &cache[line % CACHE_N];
	size_t len = 0;
	bool clipped = false;
	struct err e;

	if (cache_owner != &a->s || cache_size != logidx_size(a->s.log)) {
		cache_drop();
		cache_owner = &a->s;
		cache_size = logidx_size(a->s.log);
	}
	if (c->line == line && c->text)
		return c;
	if (!buf && !(buf = malloc(READ_MAX)))
		return NULL;
	free(c->text);
	*c = (struct cline){ 0 };
	int rrc = logidx_read_line(a->s.log, line, buf, READ_MAX, &len, &clipped, NULL, &e);
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
	c->sig = classify(buf, sl);
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

/* ---- the diagnosis panel ------------------------------------------------------------------ */

/* The guide's table: when -> likely cause -> first change. */
static const struct { enum diag_timing t; const char *when, *cause, *change; } timing_rows[] = {
	{ DIAG_T_BEFORE_TRAINING, N_("A before training"), N_("model load, caching or baseline sample"),
	  N_("low VRAM/quantize; smaller top bucket; lighter sampling") },
	{ DIAG_T_FIRST_STEPS, N_("B first steps 1-10"), N_("one training step is too big"),
	  N_("the next step of the rollback plan") },
	{ DIAG_T_SAMPLING, N_("C while sampling"), N_("sample size, steps or frames"),
	  N_("lighter sampling, then disable it") },
	{ DIAG_T_INTERMITTENT, N_("D later, or skips"), N_("the largest bucket or longest clip"),
	  N_("drop the largest bucket; fewer frames") },
	{ DIAG_T_ENVIRONMENT, N_("E environment"), N_("GPU or worker state, other process"),
	  N_("fresh worker; escalate if it repeats") },
};

/* Text clipped or padded to exactly `cells` cells. */
static void cell_col(char *out, size_t sz, const char *s, size_t len, int cells)
{
	int used;
	size_t fit = text_fit(s, len, cells, &used);
	snprintf(out, sz, "%.*s%*s", (int)fit, s, cells - used, "");
}

/* One row of the table, its cells word-wrapped in their columns onto as many lines as the
 * longest needs (measured in cells), so nothing is cut mid-word. The mark and the role are
 * carried onto the continuation lines: the whole matching row stands out. */
static void table_row(struct ui_lines *l, enum ui_role role, const char *mark, const char *cell[3],
		      const int w[3])
{
	const char *p[3];
	size_t left[3];
	char col[3][256], line[1024];

	for (int k = 0; k < 3; k++) {
		p[k] = cell[k];
		left[k] = strlen(cell[k]);
	}
	for (bool first = true; first || left[0] || left[1] || left[2]; first = false) {
		for (int k = 0; k < 3; k++) {
			size_t next = 0, cut = left[k] ? text_wrap_next(p[k], left[k], w[k], &next) : 0;
			cell_col(col[k], sizeof col[k], p[k], cut, w[k]);
			p[k] += next;
			left[k] -= next;
		}
		snprintf(line, sizeof line, "%s %s  %s  %s", first ? mark : " ", col[0], col[1], col[2]);
		/* Padding at the end of a line is only noise in a dump. */
		size_t n = strlen(line);
		while (n > 0 && line[n - 1] == ' ')
			line[--n] = '\0';
		ui_lines_add(l, role, line);
	}
}

/* "First change: X  (a applies it, w walks the plan)", wrapped; the hint goes on the last line
 * when it fits there. Otherwise it is left out: the footer names both keys, and on a narrow
 * terminal the line is worth more to the table below. */
static void first_change_lines(struct ui_lines *l, const char *what, int width, bool have_job,
			       bool advice)
{
	/* Without a job a and w can only say they need one: point at what makes them work. Advice
	 * (a fresh worker) changes nothing in the job, so a has nothing to apply. */
	const char *hint = advice     ? _("(advice: nothing in the job changes)")
			   : have_job ? _("(a applies it, w walks the plan)")
				      : _("(open the job too to apply it)");
	size_t before = l->n;

	ui_lines_wrap(l, UI_R_MARK, what, width, 1);
	if (l->n == before)
		return;
	struct ui_line *last = &l->v[l->n - 1];
	int hw = text_width(hint, strlen(hint));
	if (text_width(last->text, last->len) + 2 + hw <= width) {
		ui_line_append(last, UI_R_DIM, "  ");
		ui_line_append(last, UI_R_DIM, hint);
	}
}

/* Lines a cell takes when wrapped at `w` cells. */
static int wrapped_lines(const char *s, int w)
{
	size_t len = strlen(s), next;
	int n = 0;

	while (len > 0) {
		text_wrap_next(s, len, w, &next);
		s += next;
		len -= next;
		n++;
	}
	return n > 0 ? n : 1;
}

/* The guide's table, the row of this failure marked. Only for an out-of-memory failure: for any
 * other it names memory fixes that do not apply, and pushes the evidence (the reason) down. */
static void timing_table(struct ui_lines *l, const struct diag_result *d, int width)
{
	/* Three columns sized from the width, two cells apart: When as wide as its widest entry
	 * (at most a quarter of the panel), the rest shared by the cause and the change. */
	const size_t nrows = sizeof timing_rows / sizeof timing_rows[0];
	const char *hdr[3] = { _("When"), _("Likely cause"), _("First change") };
	int w[3];
	w[0] = text_width(hdr[0], strlen(hdr[0]));
	for (size_t i = 0; i < nrows; i++) {
		const char *t = _(timing_rows[i].when);
		int tw = text_width(t, strlen(t));
		if (tw > w[0])
			w[0] = tw;
	}
	if (w[0] > width / 4)
		w[0] = width / 4 > 6 ? width / 4 : 6;
	int rest = width - 2 - w[0] - 4, best = -1;
	w[1] = rest / 2;
	w[2] = rest - w[1];
	/* Split the rest where the five rows take the fewest lines (ties: nearest the middle). */
	for (int c = 8; c <= rest - 8; c++) {
		int total = 0;
		for (size_t i = 0; i < nrows; i++) {
			int a1 = wrapped_lines(_(timing_rows[i].cause), c);
			int a2 = wrapped_lines(_(timing_rows[i].change), rest - c);
			total += a1 > a2 ? a1 : a2;
		}
		if (best < 0 || total < best ||
		    (total == best && abs(c - rest / 2) < abs(w[1] - rest / 2))) {
			best = total;
			w[1] = c;
			w[2] = rest - c;
		}
	}
	if (w[1] < 8)
		w[1] = 8;
	if (w[2] < 8)
		w[2] = 8;
	if (diag_compact < 3)
		table_row(l, UI_R_HEADING, " ", hdr, w);
	for (size_t i = 0; i < nrows; i++) {
		bool hit = d->oom && d->timing == timing_rows[i].t;
		const char *cells[3] = { _(timing_rows[i].when), _(timing_rows[i].cause),
					 _(timing_rows[i].change) };
		/* Compact: when the whole table would push the marked row out of a short pane,
		 * only that row is shown (the row and its first change are what matter). */
		if (diag_compact && !hit)
			continue;
		table_row(l, hit ? UI_R_MARK : UI_R_NORMAL, hit ? ">" : " ", cells, w);
		if (hit)
			diag_mark_end = (long long)l->n;
	}
}

void ui_diag_lines(struct ui_app *a, struct ui_lines *l, int width)
{
	const struct ui_session *s = &a->s;
	const struct diag_result *d = &s->diag;
	char buf[1024];
	struct ui_line *ln;

	diag_mark_end = -1;
	ln = ui_lines_add(l, UI_R_HEADING, _("Diagnosis"));
	if (s->diag_pending) {
		ui_lines_wrap(l, UI_R_DIM, _("Diagnosing the log... The verdict and the first change "
					     "appear here when it has been read; you can scroll the "
					     "log meanwhile."), width, 1);
		return;
	}
	if (!s->have_diag && s->log_path) {
		snprintf(buf, sizeof buf, _("The log could not be read: %s"), s->diag_err.msg);
		ui_lines_wrap(l, UI_R_ERROR, buf, width, 1);
		return;
	}
	if (!s->have_diag) {
		ui_lines_wrap(l, UI_R_DIM, _("No log was given. Start oomfix with JOB.yaml LOG to see "
					     "when the job ran out of memory."), width, 1);
		return;
	}
	if (s->job_bad) {
		char where[1200];
		ui_job_error_text(s, where, sizeof where);
		ui_lines_wrap(l, UI_R_ERROR, where, width, 1);
	}
	diag_sentence(d, buf, sizeof buf);
	ui_lines_wrap(l, d->oom ? UI_R_OOM : UI_R_VALUE, buf, width, 1);
	if (ui_session_diag_stale(s) && diag_compact >= 2) {
		/* A short pane keeps the marked timing row in sight: the status line has just said
		 * the rest (applied; save and run again). */
		ui_lines_wrap(l, UI_R_MARK, _("Out of date: save, then run the job again."), width, 1);
	} else if (ui_session_diag_stale(s)) {
		/* One change, then a run: the next change comes from the next run's log. */
		ui_lines_wrap(l, UI_R_MARK, _("Out of date: a change was applied after this log was "
					      "written. Save, run the job again, and its new log gives "
					      "the next change."), width, 1);
	} else if (d->oom && s->plan.first_fix != FIX_NONE) {
		snprintf(buf, sizeof buf, _("First change: %s"), _(fix_defs[s->plan.first_fix].title));
		first_change_lines(l, buf, width, s->job != NULL,
				   s->plan.first_fix == FIX_FRESH_WORKER);
	} else if (d->oom && s->plan.exhausted) {
		plan_exhausted_text(&s->plan, s->job, buf, sizeof buf);
		ui_lines_wrap(l, UI_R_MARK, buf, width, 1);
	}
	if (d->failed_step >= 0) {
		if (d->total_steps > 0)
			snprintf(buf, sizeof buf, _("Failed step: %lld of %lld   Phase: %s"), d->failed_step,
				 d->total_steps, diag_phase_label(d->phase));
		else
			snprintf(buf, sizeof buf, _("Failed step: %lld   Phase: %s"), d->failed_step,
				 diag_phase_label(d->phase));
	} else if (diag_when_unknown(d) || (d->oom && d->phase == DIAG_P_NONE)) {
		snprintf(buf, sizeof buf, _("Failed step: not shown by the log   Phase: %s"),
			 diag_phase_label(d->phase));
	} else if (d->oom) {
		snprintf(buf, sizeof buf, _("Failed step: none (before training)   Phase: %s"),
			 diag_phase_label(d->phase));
	} else {
		buf[0] = '\0';
	}
	if (buf[0])
		ui_lines_wrap(l, UI_R_LABEL, buf, width, 1);
	/* The card's account goes under the verdict; in a pane too short for the marked timing row
	 * it follows the table, so the row and its first change stay in sight. */
	if (!diag_compact)
		ui_membar_lines(l, d, width);
	if (!diag_stacked) /* stacked under the log, every row counts */
		ui_lines_add(l, UI_R_NORMAL, "");
	if (d->oom)
		timing_table(l, d, width);
	if (diag_compact)
		ui_membar_lines(l, d, width);
	for (size_t i = 0; i < d->nhints; i++) {
		/* The diagnosis keeps DIAG_MAX_TEXT bytes of the line: say so when it cut one, as the
		 * wrapped note would otherwise end mid-word as if that were all. */
		bool cut = strlen(d->hints[i].text) >= DIAG_MAX_TEXT;
		if (!strcmp(d->hints[i].id, "fragmentation") || !strcmp(d->hints[i].id, "memory_fraction"))
			continue; /* the memory bar's advice says it in words */
		snprintf(buf, sizeof buf, _("Note (line %llu): %s"), (unsigned long long)d->hints[i].line,
			 d->hints[i].text);
		if (cut && strlen(buf) + 4 < sizeof buf)
			strcat(buf, "...");
		ui_lines_wrap(l, UI_R_EVIDENCE, buf, width, 1);
	}
	ui_lines_add(l, UI_R_NORMAL, "");
	if (d->nevidence == 0) {
		ui_lines_add(l, UI_R_DIM, _(" No evidence lines."));
		return;
	}
	ui_lines_add(l, UI_R_HEADING, _("Evidence (Enter shows the line in the log)"));
	for (size_t i = 0; i < d->nevidence; i++) {
		/* The whole line, wrapped under its text: its end is often what matters (the
		 * missing path, the abort message). The first row carries the line number and is
		 * the one selected. */
		size_t first = l->n;
		ui_lines_wrap(l, UI_R_EVIDENCE, d->evidence[i].text[0] ? d->evidence[i].text : " ",
			      width - 1, 10);
		for (size_t k = first; k < l->n; k++) {
			l->v[k].gutter = ' ';
			l->v[k].gutter_role = UI_R_EVIDENCE;
		}
		if (l->n == first)
			continue;
		ln = &l->v[first];
		snprintf(buf, sizeof buf, "%8llu  ", (unsigned long long)d->evidence[i].line);
		if (ln->len >= 10)
			memcpy(ln->text, buf, 10);
		ln->seg[0].off = 0;
		ln->seg[0].role = UI_R_DIM;
		ln->seg[1].off = 10;
		ln->seg[1].role = UI_R_EVIDENCE;
		ln->nseg = 2;
		ln->gutter = '>';
		ln->target = (long long)d->evidence[i].line;
		ln->selectable = true;
	}
}

/* ---- drawing ---------------------------------------------------------------------------------- */

/* The gutter marks, explained at the right of the header when there is room (and in help). */
static const char *mark_legend(void)
{
	return _("> evidence  ! out of memory  ~ redrawn line");
}

/* A log that grows while it is open: whether it is followed, and where the run stands by its
 * last bar (phase, step/total, speed), after the position. */
static void live_header(const struct ui_app *a, char *buf, size_t sz)
{
	const struct diag_result *d = &a->s.diag;
	size_t k = strlen(buf);

	k += (size_t)snprintf(buf + k, k < sz ? sz - k : 0, "  %s",
			      ui_log_following(a) ? _("[following]") : _("[not following]"));
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
static int line_rows(struct ui_app *a, uint64_t line, int avail)
{
	const struct cline *c;
	int rows = 0;

	if (!log_wrap || !(c = get_line(a, line)) || c->missing)
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

static void draw_log(struct ui_app *a, WINDOW *win, struct ui_rect r)
{
	struct ui_pos *p = &a->pos[UI_V_LOG];
	/* Until the worker has counted, the end is found by reading: a line that is not there. */
	bool known = a->s.lines_known;
	long long n = known ? (long long)a->s.log_lines : UI_POS_END;
	char buf[512], how[64] = "";
	int numw = 1;

	for (uint64_t k = known ? a->s.log_lines : (uint64_t)p->top + (uint64_t)r.h; k >= 10; k /= 10)
		numw++;
	/* Header row: which log, where we are, and how long lines are shown when not cut. */
	if (log_wrap)
		snprintf(how, sizeof how, "%s", _("  [wrapped]"));
	else if (log_hoff)
		snprintf(how, sizeof how, _("  [from column %d]"), log_hoff + 1);
	/* A long path leaves no room for where the run stands: its last two parts are enough. */
	const char *name = logidx_name(a->s.log);
	char shortname[300];
	if (text_width(name, strlen(name)) > r.w / 3 && path_tail(name, 2) != name) {
		snprintf(shortname, sizeof shortname, ".../%s", path_tail(name, 2));
		name = shortname;
	}
	/* The name, then where the run stands (the web UI's status, the retry, the phase, step and
	 * speed), then the position: a narrow header keeps what changes while a run goes on. */
	snprintf(buf, sizeof buf, "%s", name);
	if (a->s.job_status[0]) {
		size_t k = strlen(buf);
		if (k < sizeof buf)
			snprintf(buf + k, sizeof buf - k, _("  web UI: %s"), a->s.job_status);
	}
	ui_retryctl_header(&a->retry, buf, sizeof buf);
	if (a->s.growing)
		live_header(a, buf, sizeof buf);
	size_t hk = strlen(buf);
	if (hk + 2 < sizeof buf) {
		buf[hk++] = ' ';
		buf[hk++] = ' ';
		buf[hk] = '\0';
	}
	if (known)
		snprintf(buf + hk, sizeof buf - hk, _("line %lld of %lld%s"), n ? p->cursor + 1 : 0, n,
			 logidx_truncated(a->s.log) ? _("  (file shrank)") : "");
	else
		snprintf(buf + hk, sizeof buf - hk, _("line %lld (counting...)"), p->cursor + 1);
	if (strlen(buf) + strlen(how) < sizeof buf)
		strcat(buf, how);
	int hw = ui_put(win, r.y, r.x + 1, r.w - 1, UI_R_DIM, buf);
	const char *leg = mark_legend();
	int lw = text_width(leg, strlen(leg));
	if (1 + hw + 3 + lw <= r.w)
		ui_put(win, r.y, r.x + r.w - lw - 1, lw, UI_R_DIM, leg);
	r.y++;
	r.h--;
	if (r.h <= 0)
		return;
	if (!known) {
		/* Stop at the last line read so far when the cursor went past the end. */
		while (p->cursor > 0 && get_line(a, (uint64_t)p->cursor + 1) &&
		       get_line(a, (uint64_t)p->cursor + 1)->missing)
			p->cursor--;
	}
	if (p->cursor >= n)
		p->cursor = n - 1;
	if (p->cursor < 0)
		p->cursor = 0;
	if (p->top > p->cursor)
		p->top = p->cursor;
	if (p->cursor >= p->top + r.h)
		p->top = p->cursor - r.h + 1;
	if (known && p->top > n - r.h)
		p->top = n - r.h;
	if (p->top < 0)
		p->top = 0;
	int avail = r.w - (numw + 2);
	log_avail = avail > 1 ? avail : 1;
	if (log_wrap) {
		/* Wrapped lines take several rows: start late enough for the cursor's to fit. */
		for (;;) {
			int rows = 0;
			for (long long l = p->top; l <= p->cursor && rows <= r.h; l++)
				rows += line_rows(a, (uint64_t)l + 1, log_avail);
			if (rows <= r.h || p->top >= p->cursor)
				break;
			p->top++;
		}
	}
	int row = 0;
	for (long long i = 0; row < r.h && p->top + i < n; i++) {
		uint64_t line = (uint64_t)(p->top + i) + 1;
		const struct cline *c = get_line(a, line);
		struct ui_line ln = { 0 };

		if (c && c->missing)
			break;
		char num[32];
		bool ev = is_evidence(&a->s, line);
		bool cur = !a->log_focus_diag && p->top + i == p->cursor;
		enum ui_role role = !c ? UI_R_NORMAL : c->sig == 1 ? UI_R_OOM
						   : c->sig == 3 ? UI_R_ERROR
						   : c->sig == 2 ? UI_R_EVIDENCE : UI_R_NORMAL;

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
		if (!c) {
			row++;
			continue;
		}
		ln.text = c->text;
		ln.len = c->len;
		ln.nseg = 1;
		ln.seg[0].role = role;
		/* Highlight the search match in the visible text. */
		if (a->re && a->md &&
		    pcre2_match(a->re, (PCRE2_SPTR)c->text, c->len, 0, 0, a->md, NULL) > 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(a->md);
			if (ov[1] > ov[0] && ov[1] <= c->len) {
				ln.seg[1].off = ov[0];
				ln.seg[1].role = UI_R_MATCH;
				ln.seg[2].off = ov[1];
				ln.seg[2].role = role;
				ln.nseg = ov[0] == 0 ? (ln.seg[0] = ln.seg[1], ln.seg[1] = ln.seg[2], 2) : 3;
			}
		}
		if (!log_wrap) {
			/* Cut at the right edge ('>' says there is more), from the scrolled column. */
			size_t skip = log_hoff ? text_fit(c->text, c->len, log_hoff, NULL) : 0;
			struct ui_line part = slice(&ln, skip, c->len - skip);
			ui_draw_line(win, r.y + row, r.x + used, r.w - used, &part, cur);
			row++;
			continue;
		}
		size_t off = 0;
		do {
			size_t k = row_bytes(c->text + off, c->len - off, log_avail);
			struct ui_line part = slice(&ln, off, k);
			if (off && cur)
				ui_fill(win, r.y + row, r.x, r.w, UI_R_CURSOR);
			ui_draw_line(win, r.y + row, r.x + used, r.w - used, &part, cur);
			off += k;
			row++;
		} while (off < c->len && row < r.h);
	}
}

/* Keeps the diagnosis cursor on an evidence line when there is one. */
static void diag_settle(const struct ui_lines *l, int dir)
{
	long long n = (long long)l->n;

	if (diag_pos.cursor >= n)
		diag_pos.cursor = n - 1;
	if (diag_pos.cursor < 0)
		diag_pos.cursor = 0;
	for (long long c = diag_pos.cursor; c >= 0 && c < n; c += dir)
		if (l->v[c].selectable) {
			diag_pos.cursor = c;
			return;
		}
	for (long long c = diag_pos.cursor; c >= 0 && c < n; c -= dir)
		if (l->v[c].selectable) {
			diag_pos.cursor = c;
			return;
		}
}

static void log_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_rect r = c->r;
	struct ui_lines l = { 0 };
	struct ui_rect lr = r, dr = r;

	diag_stacked = false;
	if (a->s.log && !a->s.diag_pending && a->s.diag_rc == ERR_DATA) {
		/* The diagnosis refused the file (not text: a binary given as the log). Its bytes
		 * would only draw as noise: say what it is instead. */
		ui_lines_wrap(&l, UI_R_ERROR, a->s.diag_err.msg, r.w - 4, 2);
		ui_lines_wrap(&l, UI_R_DIM, _("This file cannot be shown as a log. Start oomfix with "
					      "the training log (the text the trainer printed)."),
			      r.w - 4, 2);
		ui_draw_lines(c->win, r, &l, 0, &diag_pos.top, false);
		ui_lines_free(&l);
		return;
	}
	if (!a->s.log) {
		ui_diag_lines(a, &l, r.w - 2);
		ui_draw_lines(c->win, r, &l, 0, &diag_pos.top, false);
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
		diag_stacked = true;
		dr.h = r.h / 2;
		lr.h = r.h - dr.h - 1;
		dr.y = r.y + lr.h + 1;
		wattrset(c->win, ui_attr(UI_R_DIM));
		mvwhline(c->win, r.y + lr.h, r.x, '-', r.w);
		wattrset(c->win, A_NORMAL);
	}
	draw_log(a, c->win, lr);
	diag_width = dr.w - 1;
	diag_compact = 0;
	ui_diag_lines(a, &l, diag_width);
	while (diag_mark_end > dr.h && diag_compact < 3) {
		diag_compact++;
		ui_lines_free(&l);
		ui_diag_lines(a, &l, diag_width);
	}
	if (a->log_focus_diag)
		diag_settle(&l, 1);
	ui_draw_lines(c->win, dr, &l, diag_pos.cursor, &diag_pos.top, a->log_focus_diag);
	ui_lines_free(&l);
}

/* ---- moving, jumping, searching ------------------------------------------------------------- */

static void jump_to(struct ui_app *a, const struct ui_ctx *c, uint64_t line)
{
	struct ui_pos *p = &a->pos[UI_V_LOG];
	int page = c->page;

	if (line < 1 || (a->s.lines_known && line > a->s.log_lines))
		return;
	a->log_moved = true;
	p->cursor = (long long)line - 1;
	/* Centre it, so the lines around the evidence are visible too. */
	p->top = p->cursor - page / 4;
	if (p->top < 0)
		p->top = 0;
	a->log_focus_diag = false;
}

struct search_ctx {
	struct ui_app *a;
	uint64_t from;         /* current line (1-based) */
	bool backward;
	uint64_t first, last_before, after;  /* 0 = none */
	uint64_t last;
	char *buf;
};

static int search_cb(const struct logidx_seg *sg, void *vctx)
{
	struct search_ctx *c = vctx;
	size_t len = sg->len < READ_MAX ? sg->len : READ_MAX;

	if (!c->backward && c->first && sg->line <= c->from)
		return 0; /* the wrap target is known: only lines after the cursor matter now */
	if (sg->line == c->last)
		return 0; /* this line already matched in an earlier segment */
	memcpy(c->buf, sg->p, len);
	len = text_strip_ansi(c->buf, len);
	if (pcre2_match(c->a->re, (PCRE2_SPTR)c->buf, len, 0, 0, c->a->md, NULL) < 0)
		return 0;
	c->last = sg->line;
	if (!c->first)
		c->first = sg->line;
	if (sg->line < c->from)
		c->last_before = sg->line;
	if (!c->backward && sg->line > c->from) {
		c->after = sg->line;
		return 1;
	}
	return 0;
}

static void search(struct ui_app *a, const struct ui_ctx *cx, bool backward)
{
	struct search_ctx c = { .a = a, .backward = backward };
	struct err e;
	uint64_t hit = 0;
	bool wrapped = false;

	if (!a->re) {
		ui_status(cx, true, "%s", _("No search yet: press / to search."));
		return;
	}
	c.from = (uint64_t)a->pos[UI_V_LOG].cursor + 1;
	c.buf = malloc(READ_MAX);
	if (!c.buf)
		return;
	int rc = logidx_scan(a->s.log, search_cb, &c, &e);
	free(c.buf);
	if (rc != ERR_OK && rc != 1) {
		ui_status_err(cx, &e);
		return;
	}
	if (backward) {
		hit = c.last_before ? c.last_before : c.last;
		wrapped = !c.last_before && hit;
	} else {
		hit = c.after ? c.after : c.first;
		wrapped = !c.after && hit;
	}
	if (!hit) {
		ui_status(cx, true, _("Pattern not found: %s"), a->search);
		return;
	}
	jump_to(a, cx, hit);
	if (wrapped)
		ui_status(cx, false, "%s", backward ? _("Search wrapped to the bottom.")
						   : _("Search wrapped to the top."));
	else
		ui_status(cx, false, _("Match at line %llu"), (unsigned long long)hit);
}

static void log_search_done(struct ui_app *a, const struct ui_ctx *cx)
{
	if (a->s.log && ui_search_compile(a, cx))
		search(a, cx, false);
}

/* Jumps to the next evidence line after the cursor (or the one before it), wrapping around. */
static void next_evidence(struct ui_app *a, const struct ui_ctx *cx, bool backward)
{
	const struct diag_result *d = &a->s.diag;
	uint64_t cur = (uint64_t)a->pos[UI_V_LOG].cursor + 1, best = 0, first = 0, last = 0;

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
		ui_status(cx, false, "%s", _("No evidence lines in this log."));
		return;
	}
	jump_to(a, cx, best);
	ui_status(cx, false, _("Evidence at line %llu"), (unsigned long long)best);
}

/* The trail of tries: R shows the web UI job's next earlier run (logs/<n>_log.txt), newest
 * first, and comes back to the current log after the oldest; the diagnosis follows. */
static void next_run(struct ui_app *a, const struct ui_ctx *cx)
{
	char **runs = NULL;
	size_t n = a->s.src ? source_runs(a->s.src, &runs) : 0;
	if (n < 2) {
		ui_status(cx, false, "%s", source_row(a->s.src)
			  ? _("This job has no earlier runs (logs/<n>_log.txt).")
			  : _("Earlier runs belong to web UI jobs (aitk:NAME)."));
		source_runs_free(runs, n);
		return;
	}
	size_t cur = 0;
	for (size_t i = 0; a->s.log_path && i < n; i++)
		if (!strcmp(runs[i], a->s.log_path))
			cur = i;
	size_t next = (cur + 1) % n;
	struct err e;
	err_clear(&e);
	if (ui_session_set_log(&a->s, runs[next], &e)) {
		ui_status_err(cx, &e);
	} else {
		cache_drop();
		a->pos[UI_V_LOG] = (struct ui_pos){ 0, 0 };
		diag_pos = (struct ui_pos){ 0, 0 };
		a->log_focus_diag = false;
		a->log_moved = false;
		if (a->script)
			ui_session_diag_poll(&a->s, true);
		ui_status(cx, false, _("Run %zu of %zu (1 is the latest): %s; R shows the next one."),
			  next + 1, n, runs[next]);
	}
	source_runs_free(runs, n);
}

static enum ui_req log_action(struct ui_app *a, const struct ui_ctx *cx, enum ui_act act)
{
	struct ui_lines l = { 0 };
	bool done = true;

	if (act == UI_A_NEXT_RUN) {
		next_run(a, cx);
		return UI_REQ_DONE;
	}
	if (!a->s.log) {
		switch (act) {
		case UI_A_SEARCH: case UI_A_SEARCH_NEXT: case UI_A_SEARCH_PREV:
		case UI_A_NEXT_EVIDENCE: case UI_A_PREV_EVIDENCE: case UI_A_FOCUS_DIAG:
		case UI_A_FOCUS_LOG: case UI_A_JUMP: case UI_A_FOLLOW:
			/* The footer offers these keys here; without a log they would do nothing. */
			ui_status(cx, false, "%s", _("No log is open: start oomfix with JOB.yaml LOG to "
						    "search it and see the evidence."));
			return UI_REQ_DONE;
		default:
			return UI_REQ_PASS;
		}
	}
	switch (act) {
	case UI_A_SEARCH:
		ui_search_start(a, cx);
		break;
	case UI_A_SEARCH_NEXT:
		search(a, cx, false);
		break;
	case UI_A_SEARCH_PREV:
		search(a, cx, true);
		break;
	case UI_A_NEXT_EVIDENCE:
	case UI_A_PREV_EVIDENCE:
		next_evidence(a, cx, act == UI_A_PREV_EVIDENCE);
		break;
	case UI_A_FOCUS_DIAG:
		if (a->s.diag.nevidence == 0) {
			ui_status(cx, false, "%s", _("The diagnosis has no evidence lines to select."));
			break;
		}
		a->log_focus_diag = true;
		break;
	case UI_A_FOCUS_LOG:
		a->log_focus_diag = false;
		break;
	case UI_A_FOLLOW:
		/* Scrolled away from the end, F follows again (as in less); at the end, it stops. */
		a->follow_off = ui_log_following(a);
		if (!a->follow_off && a->s.lines_known) { /* at the end, where new lines appear */
			a->pos[UI_V_LOG].cursor = a->s.log_lines ? (long long)a->s.log_lines - 1 : 0;
			a->log_moved = false;
		}
		ui_status(cx, false, "%s", a->follow_off
			  ? _("Not following the log; F follows it again.")
			  : _("Following the log as it grows; F stops."));
		break;
	case UI_A_SCROLL_RIGHT:
		/* Half a width at a time, as less -S does. */
		if (log_wrap)
			ui_status(cx, false, "%s", _("Long lines are wrapped; W cuts them again to scroll "
						     "sideways."));
		else
			log_hoff += log_avail / 2 > 1 ? log_avail / 2 : 1;
		break;
	case UI_A_SCROLL_LEFT:
		log_hoff -= log_avail / 2 > 1 ? log_avail / 2 : 1;
		if (log_hoff < 0)
			log_hoff = 0;
		break;
	case UI_A_WRAP:
		log_wrap = !log_wrap;
		log_hoff = 0;
		ui_status(cx, false, "%s", log_wrap ? _("Long log lines are wrapped (W cuts them again).")
						    : _("Long log lines are cut at the edge (> and < "
							"scroll sideways)."));
		break;
	case UI_A_JUMP:
		if (!a->log_focus_diag) {
			done = false;
			break;
		}
		ui_diag_lines(a, &l, diag_width);
		diag_settle(&l, 1);
		if (diag_pos.cursor < (long long)l.n && l.v[diag_pos.cursor].target > 0)
			jump_to(a, cx, (uint64_t)l.v[diag_pos.cursor].target);
		break;
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		if (a->log_focus_diag) {
			ui_diag_lines(a, &l, diag_width);
			ui_pos_move(&diag_pos, act, (long long)l.n, 1);
			diag_settle(&l, act == UI_A_UP || act == UI_A_PGUP || act == UI_A_BOTTOM ? -1 : 1);
			break;
		}
		if (act == UI_A_BOTTOM && !a->s.lines_known) {
			ui_status(cx, false, "%s", _("Still counting the lines; G works once the count is "
						    "shown."));
			break;
		}
		a->log_moved = true;
		if (act == UI_A_BOTTOM)
			ui_session_recount(&a->s); /* a job still running: its new lines */
		ui_pos_move(&a->pos[UI_V_LOG], act,
			    a->s.lines_known ? (long long)a->s.log_lines : UI_POS_END, cx->page);
		break;
	default:
		done = false;
	}
	ui_lines_free(&l);
	return done ? UI_REQ_DONE : UI_REQ_PASS;
}

const struct ui_view_ops ui_view_log = {
	.name = N_("Log"), .keys = UI_CTX_LOG, .draw = log_draw, .action = log_action,
	.prompt_done = log_search_done, .fini = log_fini,
};
