/* view_plan.c — the text screens: Plan (checklist, rollback order, fixes, scale-up), Diff
 * (unsaved edits), the save screen and the help screen generated from the action table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "ui.h"

static const char *status_word(enum fix_status st)
{
	switch (st) {
	case FIX_DONE: return _("done");
	case FIX_TODO: return _("to do");
	default: return _("not applicable");
	}
}

static enum ui_role status_role(enum fix_status st)
{
	return st == FIX_DONE ? UI_R_DONE : st == FIX_TODO ? UI_R_TODO : UI_R_NA;
}

static char status_box(enum fix_status st)
{
	return st == FIX_DONE ? 'x' : st == FIX_TODO ? ' ' : '-';
}

/* The selected step of the rollback order: the user's pick, else the marked step. */
static size_t plan_sel(const struct ui_app *a)
{
	const struct plan *p = &a->s.plan;
	if (a->plan_picked) {
		long long c = a->pos[UI_V_PLAN].cursor;
		return c < 0 ? 0 : p->n && (size_t)c >= p->n ? p->n - 1 : (size_t)c;
	}
	enum fix_id next = ui_session_next_fix(&a->s);
	for (size_t i = 0; i < p->n; i++)
		if (p->steps[i].fix == next)
			return i;
	return 0;
}

/* The Plan's lines; *sel_line receives the line of the selected step (-1 without steps). */
static void plan_lines(struct ui_app *a, struct ui_lines *l, int width, long long *sel_line)
{
	const struct ui_session *s = &a->s;
	const struct job *j = s->job;
	enum fix_id next = ui_session_next_fix(s);
	size_t sel = plan_sel(a);
	bool stale = ui_session_diag_stale(s);
	char buf[1024], reason[512];
	struct ui_line *ln;

	ln = ui_lines_add(l, UI_R_HEADING, _("Quick checklist"));
	if (!j)
		ui_lines_add(l, UI_R_DIM, _(" No job file is open: nothing can be ticked."));
	for (int i = 0; j && i < CHECK_COUNT; i++) {
		enum fix_status st = s->check.item[i];
		ln = ui_lines_addf(l, status_role(st), " [%c] ", status_box(st));
		ui_line_append(ln, status_role(st), checklist_label((enum check_item)i));
		if (s->check.reason[i][0]) {
			/* Beside the label when it fits, else wrapped below it: a clipped reason
			 * cannot be scrolled to. */
			const char *why = s->check.reason[i];
			if (text_width(ln->text, ln->len) + 2 + text_width(why, strlen(why)) <= width) {
				ui_line_append(ln, UI_R_DIM, "  ");
				ui_line_append(ln, UI_R_DIM, why);
			} else {
				ui_lines_wrap(l, UI_R_DIM, why, width, 5);
			}
		}
	}
	ui_lines_add(l, UI_R_NORMAL, "");

	snprintf(buf, sizeof buf, s->plan.kind == JOB_KIND_VIDEO
					  ? _("Rollback order for a video model (one change per retry)")
					  : _("Rollback order for an image model (one change per retry)"));
	ui_lines_add(l, UI_R_HEADING, buf);
	if (stale)
		ui_lines_wrap(l, UI_R_MARK, _("The diagnosis is out of date: the last change has not "
					      "been tried yet. Save, run the job, and its new log "
					      "gives the next change."), width, 1);
	*sel_line = -1;
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct plan_step *ps = &s->plan.steps[i];
		bool first = ps->fix == s->plan.first_fix && !stale, is_next = ps->fix == next && !stale;
		bool picked = i == sel;
		if (picked)
			*sel_line = (long long)l->n;
		ln = ui_lines_addf(l, status_role(ps->status), "%c%2zu. [%c] ", picked ? '>' : ' ', i + 1,
				   status_box(ps->status));
		ln->selectable = true;
		ln->target = (long long)i;
		ln->seg[0].role = picked ? UI_R_MARK : status_role(ps->status);
		ui_line_seg(ln, 1, status_role(ps->status));
		ui_line_append(ln, status_role(ps->status), _(fix_defs[ps->fix].title));
		snprintf(buf, sizeof buf, "  (%s)", status_word(ps->status));
		ui_line_append(ln, UI_R_DIM, buf);
		if (!ps->helps) {
			/* Beside the step when it fits, else on its own line below it. */
			snprintf(buf, sizeof buf, "  - %s", plan_no_help_label());
			if (text_width(ln->text, ln->len) + text_width(buf, strlen(buf)) <= width)
				ui_line_append(ln, UI_R_NA, buf);
			else
				ui_lines_wrap(l, UI_R_NA, buf + 4, width, 8);
		}
		const char *mark = first ? _("  <- first change for this failure")
				   : is_next ? _("  <- next") : NULL;
		if (mark && text_width(ln->text, ln->len) + text_width(mark, strlen(mark)) > width) {
			while (*mark == ' ')
				mark++;
			ui_lines_wrap(l, UI_R_MARK, mark, width, 8); /* on its own line, not cut */
		} else if (mark)
			ui_line_append(ln, UI_R_MARK, mark);
	}
	if (stale) {
		if (j)
			ui_lines_addf(l, UI_R_DIM, " %s", _("Enter applies the selected step anyway (it "
							    "asks first)."));
	} else if (s->plan.exhausted) {
		plan_exhausted_text(&s->plan, j, buf, sizeof buf);
		ui_lines_wrap(l, UI_R_MARK, buf, width, 1);
	} else if (next == FIX_FRESH_WORKER)
		ui_lines_wrap(l, UI_R_MARK, _("The log points at the worker, not the settings: start a "
					      "fresh worker instead of changing the job."), width, 1);
	else if (next != FIX_NONE && j) /* without a job a and w only say they need one */
		ui_lines_addf(l, UI_R_DIM, " %s", _("a applies the marked step, Enter the selected one; "
						    "w walks through them all."));
	ui_lines_add(l, UI_R_NORMAL, "");

	ui_lines_add(l, UI_R_HEADING, _("Every fix"));
	for (int f = 0; f < FIX_COUNT; f++) {
		enum fix_status st = fix_status(j, (enum fix_id)f, reason, sizeof reason);
		ln = ui_lines_addf(l, status_role(st), " [%c] ", status_box(st));
		ui_line_append(ln, UI_R_VALUE, _(fix_defs[f].title));
		snprintf(buf, sizeof buf, "  %s (%s)", fix_defs[f].name, status_word(st));
		ui_line_append(ln, UI_R_DIM, buf);
		if (reason[0])
			ui_lines_wrap(l, UI_R_LABEL, reason, width, 5);
		ui_lines_wrap(l, UI_R_DIM, _(fix_defs[f].why), width, 5);
	}
	ui_lines_add(l, UI_R_NORMAL, "");

	ui_lines_add(l, UI_R_HEADING, _("After a successful retry: scale up one setting at a time"));
	enum scaleup_step nx = scaleup_next(j, SCALEUP_NONE, buf, sizeof buf);
	for (int k = 0; k < SCALEUP_COUNT; k++) {
		ln = ui_lines_addf(l, k == (int)nx ? UI_R_MARK : UI_R_LABEL, "%c%2d. ",
				   k == (int)nx ? '>' : ' ', k + 1);
		ui_line_append(ln, k == (int)nx ? UI_R_MARK : UI_R_LABEL,
			       scaleup_title((enum scaleup_step)k));
	}
	if (nx != SCALEUP_NONE)
		ui_lines_wrap(l, UI_R_VALUE, buf, width, 5);
}

/* Scrolling a text screen: the cursor is the top line, so every key moves the view. */
void ui_draw_scrolled(const struct ui_ctx *c, struct ui_lines *l, struct ui_pos *p)
{
	struct ui_rect r = c->r;
	long long max = (long long)l->n - r.h;

	if (max < 0)
		max = 0;
	if (p->cursor > max)
		p->cursor = max;
	if (p->cursor < 0)
		p->cursor = 0;
	p->top = p->cursor;
	for (int i = 0; i < r.h && p->top + i < (long long)l->n; i++)
		ui_draw_line(c->win, r.y + i, r.x, r.w, &l->v[p->top + i], false);
	if ((long long)l->n > r.h)
		snprintf(c->msg->scroll_info, sizeof c->msg->scroll_info, "%lld-%lld/%zu", p->top + 1,
			 p->top + r.h < (long long)l->n ? p->top + r.h : (long long)l->n, l->n);
}

/* The Plan scrolls like a text screen (pos.top), with a selected step (pos.cursor) that j/k
 * move and keep in sight. */
static void plan_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_lines l = { 0 };
	struct ui_pos *p = &a->pos[UI_V_PLAN];
	struct ui_rect r = c->r;
	long long sel = -1;

	plan_lines(a, &l, r.w - 2, &sel);
	if (a->plan_follow && sel >= 0) {
		if (sel < p->top)
			p->top = sel;
		if (sel >= p->top + r.h)
			p->top = sel - r.h + 1;
	}
	a->plan_follow = false;
	long long max = (long long)l.n - r.h;
	if (p->top > max)
		p->top = max;
	if (p->top < 0)
		p->top = 0;
	for (int i = 0; i < r.h && p->top + i < (long long)l.n; i++)
		ui_draw_line(c->win, r.y + i, r.x, r.w, &l.v[p->top + i], p->top + i == sel);
	if ((long long)l.n > r.h)
		snprintf(c->msg->scroll_info, sizeof c->msg->scroll_info, "%lld-%lld/%zu", p->top + 1,
			 p->top + r.h < (long long)l.n ? p->top + r.h : (long long)l.n, l.n);
	ui_lines_free(&l);
}

static enum ui_req plan_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act)
{
	struct ui_pos *p = &a->pos[UI_V_PLAN];
	size_t n = a->s.plan.n, sel = plan_sel(a);

	switch (act) {
	case UI_A_UP:
	case UI_A_DOWN:
		if (!n)
			return UI_REQ_PASS;
		if (act == UI_A_UP && sel > 0)
			sel--;
		else if (act == UI_A_DOWN && sel + 1 < n)
			sel++;
		p->cursor = (long long)sel;
		a->plan_picked = true;
		a->plan_follow = true;
		return UI_REQ_DONE;
	case UI_A_PGUP:
		p->top -= c->page;
		return UI_REQ_DONE;
	case UI_A_PGDN:
		p->top += c->page; /* clamped when drawn */
		return UI_REQ_DONE;
	case UI_A_TOP:
		p->top = 0;
		return UI_REQ_DONE;
	case UI_A_BOTTOM:
		p->top = UI_POS_END;
		return UI_REQ_DONE;
	case UI_A_PICK:
		if (!n)
			return UI_REQ_DONE;
		a->pick_fix = a->s.plan.steps[sel].fix;
		return UI_REQ_APPLY;
	default:
		return UI_REQ_PASS;
	}
}

static void diff_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_lines l = { 0 };
	char *d = ui_session_diff(&a->s, 3);

	if (!a->s.job_path)
		ui_lines_add(&l, UI_R_DIM, _(" No job file is open."));
	else if (!d || !*d)
		ui_lines_add(&l, UI_R_DIM, _(" No unsaved changes. a applies the first fix; the "
					     "panels edit values."));
	else
		ui_lines_diff(&l, d);
	free(d);
	ui_draw_scrolled(c, &l, &a->pos[UI_V_DIFF]);
	ui_lines_free(&l);
}

void ui_save_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_lines l = { 0 };
	char *d = ui_session_diff(&a->s, 3);
	char buf[1200];

	snprintf(buf, sizeof buf, _("Save %s: these changes will be written"), a->s.job_path);
	ui_lines_add(&l, UI_R_HEADING, buf);
	const char *base = strrchr(a->s.job_path, '/');
	base = base ? base + 1 : a->s.job_path;
	snprintf(buf, sizeof buf,
		 _("The previous version is kept as %s~, and the change is noted in %s.oomfix.md "
		   "beside it."), base, base);
	ui_lines_wrap(&l, UI_R_DIM, buf, c->r.w - 2, 1);
	ui_lines_add(&l, UI_R_NORMAL, "");
	ui_lines_diff(&l, d ? d : "");
	free(d);
	ui_draw_scrolled(c, &l, &a->save_pos);
	ui_lines_free(&l);
}

/* The lines of the Plan or the Diff as they are drawn (for the search). */
static void view_lines(struct ui_app *a, const struct ui_ctx *c, struct ui_lines *l)
{
	if (a->view == UI_V_PLAN) {
		long long sel;
		plan_lines(a, l, c->r.w - 2, &sel);
		return;
	}
	char *d = ui_session_diff(&a->s, 3);
	if (d && *d)
		ui_lines_diff(l, d);
	free(d);
}

/* Search in a text screen: the match becomes the top line (the Plan's cursor is its selected
 * step, so there the top line is moved). */
static void text_search(struct ui_app *a, const struct ui_ctx *c, bool backward, bool here)
{
	struct ui_lines l = { 0 };
	struct ui_pos *p = &a->pos[a->view];
	long long *at = a->view == UI_V_PLAN ? &p->top : &p->cursor;
	long long line = *at;

	view_lines(a, c, &l);
	if (ui_search_lines(a, c, &l, &line, backward, here))
		*at = line;
	ui_lines_free(&l);
}

static enum ui_req text_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act)
{
	switch (act) {
	case UI_A_SEARCH: ui_search_start(a, c); return UI_REQ_DONE;
	case UI_A_SEARCH_NEXT: text_search(a, c, false, false); return UI_REQ_DONE;
	case UI_A_SEARCH_PREV: text_search(a, c, true, false); return UI_REQ_DONE;
	default: return UI_REQ_PASS;
	}
}

static void text_search_done(struct ui_app *a, const struct ui_ctx *c)
{
	if (ui_search_compile(a, c))
		text_search(a, c, false, true);
}

/* The Plan's list keys first, then the search of every text screen. */
static enum ui_req plan_view_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act)
{
	enum ui_req r = plan_action(a, c, act);
	return r != UI_REQ_PASS ? r : text_action(a, c, act);
}

const struct ui_view_ops ui_view_plan = { .name = N_("Plan"), .keys = UI_CTX_PLAN | UI_CTX_TEXT,
					  .draw = plan_draw, .action = plan_view_action,
					  .prompt_done = text_search_done, .sub = true };
const struct ui_view_ops ui_view_diff = { .name = N_("Diff"), .keys = UI_CTX_TEXT,
					  .draw = diff_draw, .action = text_action,
					  .prompt_done = text_search_done, .sub = true };

/* Groups of the help screen, in order; an action is listed under the first group it has. */
static const struct { unsigned ctx; const char *title; } help_groups[] = {
	{ UI_CTX_VIEWS, N_("Everywhere") },
	{ UI_CTX_FIELDS, N_("Training, Datasets, Sample, Model") },
	{ UI_CTX_ADVANCED, N_("Advanced (the whole YAML)") },
	{ UI_CTX_LOG, N_("Log and diagnosis") },
	{ UI_CTX_PLAN, N_("Plan") },
	{ UI_CTX_JOBS, N_("Jobs of the web UI") },
	{ UI_CTX_RETRY, N_("Retry") },
	{ UI_CTX_SCROLL, N_("Scrolling screens") },
	{ UI_CTX_WALK, N_("Walk-through") },
	{ UI_CTX_CONFIRM, N_("Questions") },
	{ UI_CTX_PROMPT, N_("Typing a value or a search") },
	{ UI_CTX_HELP, N_("This help") },
};

/* What the one-cell marks mean, listed under the group of the view that shows them: the marks
 * carry the meaning without colour, so they must be explained somewhere. */
static const struct { unsigned ctx; const char *mark, *text; } help_marks[] = {
	{ UI_CTX_FIELDS, "*", N_("changed since the file was loaded or saved") },
	{ UI_CTX_FIELDS, "[x]", N_("a switch or a resolution bucket that is on") },
	{ UI_CTX_LOG, ">", N_("evidence: a line the verdict rests on") },
	{ UI_CTX_PLAN, ">", N_("the selected step: Enter applies it, j/k pick another") },
	{ UI_CTX_LOG, "!", N_("an out-of-memory error line") },
	{ UI_CTX_LOG, "~", N_("a progress line redrawn with \\r; its last frame is shown") },
	{ UI_CTX_LOG, "^[", N_("an escape character in the log, shown as text") },
};

void ui_help_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_lines l = { 0 };
	char keys[64], col[128];

	ui_lines_add(&l, UI_R_HEADING, _("oomfix keys"));
	for (size_t g = 0; g < sizeof help_groups / sizeof help_groups[0]; g++) {
		bool any = false;
		for (size_t i = 0; i < ui_nactions; i++) {
			const struct ui_action *act = &ui_actions[i];
			unsigned lowest = act->ctx & -act->ctx;
			if (lowest != help_groups[g].ctx)
				continue;
			if (!any) {
				ui_lines_add(&l, UI_R_NORMAL, "");
				ui_lines_add(&l, UI_R_HEADING, _(help_groups[g].title));
				any = true;
			}
			ui_action_keys(act, keys, sizeof keys);
			int w = text_width(keys, strlen(keys));
			snprintf(col, sizeof col, "  %s%*s", keys, w < 18 ? 18 - w : 1, "");
			struct ui_line *ln = ui_lines_add(&l, UI_R_FOOTER_KEY, col);
			ui_line_append(ln, UI_R_NORMAL, _(act->help));
		}
		bool marks = false;
		for (size_t i = 0; i < sizeof help_marks / sizeof help_marks[0]; i++) {
			if (help_marks[i].ctx != help_groups[g].ctx)
				continue;
			if (!marks) {
				ui_lines_add(&l, UI_R_DIM, _("  Marks:"));
				marks = true;
			}
			snprintf(col, sizeof col, "  %-18s", help_marks[i].mark);
			struct ui_line *ln = ui_lines_add(&l, UI_R_MARK, col);
			ui_line_append(ln, UI_R_NORMAL, _(help_marks[i].text));
		}
	}
	ui_draw_scrolled(c, &l, &a->help_pos);
	ui_lines_free(&l);
}
