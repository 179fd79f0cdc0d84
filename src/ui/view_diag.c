/* view_diag.c — the diagnosis panel beside (or below) the log: the verdict in words, the
 * guide's timing table with the matching row marked, the first change, the memory bar, and the
 * evidence lines one key away (their targets are log lines). The Log view draws it and moves in
 * it; here are only its lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "view_diag.h"
#include "view.h"

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
			size_t next = 0, cut = left[k] ? text_wrap_items(p[k], left[k], w[k], &next) : 0;
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

/* Lines a cell takes when wrapped at `w` cells, item by item as table_row() wraps it. */
static int wrapped_lines(const char *s, int w)
{
	size_t len = strlen(s), next;
	int n = 0;

	while (len > 0) {
		text_wrap_items(s, len, w, &next);
		s += next;
		len -= next;
		n++;
	}
	return n > 0 ? n : 1;
}

/* The guide's table (diag_timings: when -> likely cause -> first change), the row of this failure
 * marked. Only for an out-of-memory failure: for any other it names memory fixes that do not
 * apply, and pushes the evidence (the reason) down. */
static void timing_table(struct ui_lines *l, struct ui_diag_layout *lay, const struct diag_result *d,
			 int width)
{
	/* Three columns sized from the width, two cells apart: When as wide as its widest entry
	 * (at most a quarter of the panel), the rest shared by the cause and the change. */
	const char *hdr[3] = { _("When"), _("Likely cause"), _("First change") };
	int w[3];
	w[0] = text_width(hdr[0], strlen(hdr[0]));
	for (int i = DIAG_T_BEFORE_TRAINING; i < DIAG_T_COUNT; i++) {
		const char *t = _(diag_timings[i].when_brief);
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
		for (int i = DIAG_T_BEFORE_TRAINING; i < DIAG_T_COUNT; i++) {
			int a1 = wrapped_lines(_(diag_timings[i].cause_brief), c);
			int a2 = wrapped_lines(_(diag_timings[i].change_brief), rest - c);
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
	if (lay->compact < 3)
		table_row(l, UI_R_HEADING, " ", hdr, w);
	for (int i = DIAG_T_BEFORE_TRAINING; i < DIAG_T_COUNT; i++) {
		const struct diag_timing_def *row = &diag_timings[i];
		bool hit = d->oom && d->timing == row->id;
		const char *cells[3] = { _(row->when_brief), _(row->cause_brief),
					 _(row->change_brief) };
		/* Compact: when the whole table would push the marked row out of a short pane,
		 * only that row is shown (the row and its first change are what matter). */
		if (lay->compact && !hit)
			continue;
		table_row(l, hit ? UI_R_MARK : UI_R_NORMAL, hit ? ">" : " ", cells, w);
		if (hit)
			lay->mark_end = (long long)l->n;
	}
}

/* The verdict in a sentence: the diagnosis's, or that the run finished or is running. */
static void verdict_line(const struct ui_session *s, struct ui_lines *l, int width)
{
	const struct diag_result *d = &s->diag;
	char buf[1024];

	diag_sentence(d, buf, sizeof buf);
	if (!d->oom && d->other == DIAG_O_NONE && d->lines && d->run_ended)
		snprintf(buf, sizeof buf, "%s", _("No GPU out-of-memory error was found in this log: "
						  "the run finished."));
	else if (!d->oom && d->other == DIAG_O_NONE && d->lines &&
		 (s->growing || !strcmp(s->job_status, "running")) && !s->run_label[0])
		snprintf(buf, sizeof buf, "%s", _("Running, no OOM so far."));
	ui_lines_wrap(l, d->oom ? UI_R_OOM : UI_R_VALUE, buf, width, 1);
}

/* What comes next: history's note for an earlier run, waiting for the run of a saved change,
 * out of date after an unsaved one, the first change, or that the plan is exhausted. */
static void next_lines(const struct ui_session *s, const struct ui_diag_layout *lay,
		       struct ui_lines *l, int width)
{
	const struct diag_result *d = &s->diag;
	char buf[1024];
	/* A web UI job whose change is saved: what it waits for is a run, not a save. */
	bool saved = ui_session_diag_stale(s) && !ui_session_dirty(s) && s->src && source_row(s->src);

	if (s->run_note[0]) {
		/* An earlier run is history: what followed it, not advice for the job now. */
		ui_lines_wrap(l, UI_R_DIM, s->run_note, width, 1);
	} else if (saved && !strcmp(s->job_status, "queued")) {
		ui_lines_wrap(l, UI_R_MARK, _("Saved and queued; waiting for the run: its log gives "
					      "the next change."), width, 1);
	} else if (saved) {
		ui_lines_wrap(l, UI_R_MARK, _("Saved, not run yet: Q queues it for the web UI's worker "
					      "(or r retries), and its new log gives the next change."),
			      width, 1);
	} else if (ui_session_diag_stale(s) && lay->compact >= 2) {
		/* A short pane keeps the marked timing row in sight: the status line has just said
		 * the rest (applied; save and run again). */
		ui_lines_wrap(l, UI_R_MARK, _("Out of date: save, then run the job again."), width, 1);
	} else if (ui_session_diag_stale(s)) {
		/* One change, then a run: the next change comes from the next run's log. */
		ui_lines_wrap(l, UI_R_MARK, _("Out of date: a change was applied after this log was "
					      "written. Save, run the job again, and its new log gives "
					      "the next change."), width, 1);
	} else if (d->oom) {
		/* the one decision (SPEC §3.4), as `a`, `fix next`, plan and retry take it: a run
		 * that survived its OOMs has no first change, whatever would stop its skips */
		struct plan_decision dec = plan_decide(&s->plan, d, false);
		if (dec.what == PLAN_NEXT_APPLY || dec.what == PLAN_NEXT_FRESH_WORKER) {
			snprintf(buf, sizeof buf, _("First change: %s"), _(fix_defs[dec.fix].title));
			first_change_lines(l, buf, width, s->job != NULL,
					   dec.fix == FIX_FRESH_WORKER);
		} else if (dec.what == PLAN_NEXT_EXHAUSTED) {
			plan_exhausted_text(&s->plan, s->job, buf, sizeof buf);
			ui_lines_wrap(l, UI_R_MARK, buf, width, 1);
		} else {
			plan_decision_text(&dec, &s->plan, s->job, buf, sizeof buf);
			ui_lines_wrap(l, UI_R_MARK, buf, width, 1);
		}
	}
}

/* "Failed step: N of M   Phase: P", or what the log does not show of it. */
static void step_line(const struct diag_result *d, struct ui_lines *l, int width)
{
	char buf[512];

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
		return;
	}
	ui_lines_wrap(l, UI_R_LABEL, buf, width, 1);
}

/* The trainer's own hints, as notes under the table. */
static void hint_lines(const struct diag_result *d, struct ui_lines *l, int width)
{
	char buf[1024];

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
}

/* The evidence lines, each whole and wrapped under its text (its end is often what matters: the
 * missing path, the abort message); the first row carries the line number and is the one
 * selected. */
static void evidence_lines(const struct diag_result *d, struct ui_lines *l, int width)
{
	char buf[32];

	if (d->nevidence == 0) {
		ui_lines_add(l, UI_R_DIM, _(" No evidence lines."));
		return;
	}
	ui_lines_add(l, UI_R_HEADING, _("Evidence (Enter shows the line in the log)"));
	for (size_t i = 0; i < d->nevidence; i++) {
		size_t first = l->n;
		ui_lines_wrap(l, UI_R_EVIDENCE, d->evidence[i].text[0] ? d->evidence[i].text : " ",
			      width - 1, 10);
		for (size_t k = first; k < l->n; k++) {
			l->v[k].gutter = ' ';
			l->v[k].gutter_role = UI_R_EVIDENCE;
		}
		if (l->n == first)
			continue;
		struct ui_line *ln = &l->v[first];
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

void ui_diag_lines(const struct ui_session *s, struct ui_diag_layout *lay, struct ui_lines *l,
		   int width)
{
	const struct diag_result *d = &s->diag;
	char buf[1024];

	lay->mark_end = -1;
	ui_lines_add(l, UI_R_HEADING, _("Diagnosis"));
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
	verdict_line(s, l, width);
	next_lines(s, lay, l, width);
	step_line(d, l, width);
	/* The card's account goes under the verdict; in a pane too short for the marked timing row
	 * it follows the table, so the row and its first change stay in sight. */
	if (!lay->compact)
		ui_membar_lines(l, d, width);
	if (!lay->stacked) /* stacked under the log, every row counts */
		ui_lines_add(l, UI_R_NORMAL, "");
	if (d->oom)
		timing_table(l, lay, d, width);
	if (lay->compact)
		ui_membar_lines(l, d, width);
	hint_lines(d, l, width);
	ui_lines_add(l, UI_R_NORMAL, "");
	evidence_lines(d, l, width);
}
