/* view_plan.c — the Plan view: the checklist, the rollback order with a selected step (Enter
 * applies it), the fixes and the scale-up, searched with / like every text screen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "oomfix/estimate.h"
#include "search.h"
#include "view.h"
#include "view_diag.h"

/* The Plan view's own state. Its list: pos[UI_V_PLAN].cursor is the selected step, .top the
 * first line shown; until the user moves, the selection follows the marked step. */
struct plan_priv {
	bool picked;    /* the user moved: the selection no longer follows the marked step */
	bool follow;    /* scroll so the selected step is visible */
	/* the estimate after each step, for the job version it was worked out on */
	const struct doc *est_of;
	size_t est_pos, est_nhist;
	struct estimate after[8];
	bool changed[8];
};

static struct plan_priv *plan_priv(const struct ui_env *v)
{
	return v->priv;
}

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
static size_t plan_sel(const struct ui_env *v)
{
	const struct plan *p = &v->s->plan;
	if (plan_priv(v)->picked) {
		long long c = v->pos->cursor;
		return c < 0 ? 0 : p->n && (size_t)c >= p->n ? p->n - 1 : (size_t)c;
	}
	struct plan_decision d = ui_session_decide(v->s, NULL, 0);
	for (size_t i = 0; d.what == PLAN_NEXT_APPLY && i < p->n; i++)
		if (p->steps[i].fix == d.fix)
			return i;
	return 0;
}

/* The quick checklist, in the plan's order (as `oomfix plan` lists it). */
static void checklist_lines(const struct ui_session *s, struct ui_lines *l, int width)
{
	enum check_item order[CHECK_COUNT];

	ui_lines_add(l, UI_R_HEADING, _("Quick checklist"));
	if (!s->job)
		ui_lines_add(l, UI_R_DIM, _(" No job file is open: nothing can be ticked."));
	checklist_order(&s->plan, order);
	for (int k = 0; s->job && k < CHECK_COUNT; k++) {
		int i = (int)order[k];
		enum fix_status st = s->check.item[i];
		struct ui_line *ln = ui_lines_addf(l, status_role(st), " [%c] ", status_box(st));
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
}

/* One step of the rollback order: its box and status, whether it helps the phase that failed,
 * and the decision's mark (the first change for this failure, or the next). */
static void step_line(struct ui_lines *l, const struct plan_step *ps, size_t i, bool picked,
		      const char *mark, int width)
{
	char buf[256];
	struct ui_line *ln = ui_lines_addf(l, status_role(ps->status), "%c%2zu. [%c] ",
					   picked ? '>' : ' ', i + 1, status_box(ps->status));
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
	if (mark && text_width(ln->text, ln->len) + text_width(mark, strlen(mark)) > width) {
		while (*mark == ' ')
			mark++;
		ui_lines_wrap(l, UI_R_MARK, mark, width, 8); /* on its own line, not cut */
	} else if (mark) {
		ui_line_append(ln, UI_R_MARK, mark);
	}
}

/* The rollback order with the one decision (SPEC §3.4): its fix marked, its words said, and the
 * selected step; *sel_line receives the line of the selected step (-1 without steps). */
static void rollback_lines(const struct ui_env *v, struct ui_lines *l, int width,
			   long long *sel_line)
{
	const struct ui_session *s = v->s;
	char words[768];
	struct plan_decision d = ui_session_decide(s, words, sizeof words);
	size_t sel = plan_sel(v);
	bool stale = d.what == PLAN_NEXT_UNTRIED, verdict = s->have_diag && s->diag.oom;

	ui_lines_add(l, UI_R_HEADING, s->plan.kind == JOB_KIND_VIDEO
		     ? _("Rollback order for a video model (one change per retry)")
		     : _("Rollback order for an image model (one change per retry)"));
	if (stale)
		ui_lines_wrap(l, UI_R_MARK, words, width, 1);
	*sel_line = -1;
	/* The estimate after each step not done yet, all the ones above it applied too: worked out
	 * once per version of the job, not on every draw. */
	struct plan_priv *pp = plan_priv(v);
	const struct doc *cur = s->job ? ui_session_cur(s) : NULL;
	size_t nsteps = s->plan.n < 8 ? s->plan.n : 8;
	if (cur && (pp->est_of != cur || pp->est_pos != s->pos || pp->est_nhist != s->nhist)) {
		enum fix_id order[8];
		struct err e;
		err_clear(&e);
		for (size_t i = 0; i < nsteps; i++)
			order[i] = s->plan.steps[i].fix;
		memset(pp->after, 0, sizeof pp->after);
		memset(pp->changed, 0, sizeof pp->changed);
		estimate_plan_after(s->job, order, nsteps, pp->after, pp->changed, &e);
		pp->est_of = cur;
		pp->est_pos = s->pos;
		pp->est_nhist = s->nhist;
	}
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct plan_step *ps = &s->plan.steps[i];
		bool marked = d.what == PLAN_NEXT_APPLY && ps->fix == d.fix;
		if (i == sel)
			*sel_line = (long long)l->n;
		step_line(l, ps, i, i == sel,
			  marked && verdict ? _("  <- first change for this failure")
			  : marked ? _("  <- next") : NULL, width);
		if (cur && i < nsteps && pp->changed[i] && ps->status == FIX_TODO)
			ui_fit_step_lines(s, ps->fix, &pp->after[i], l, width, 8);
	}
	if (stale) {
		if (s->job)
			ui_lines_addf(l, UI_R_DIM, " %s", _("Enter applies the selected step anyway (it "
							    "asks first)."));
	} else if (d.what != PLAN_NEXT_APPLY) {
		ui_lines_wrap(l, UI_R_MARK, words, width, 1);
	} else if (s->job) { /* without a job a and w only say they need one */
		ui_lines_addf(l, UI_R_DIM, " %s", _("a applies the marked step, Enter the selected one; "
						    "w walks through them all."));
	}
	ui_lines_add(l, UI_R_NORMAL, "");
}

/* Every fix with its status, why it stands so, and what it does. */
static void fixes_lines(const struct job *j, struct ui_lines *l, int width)
{
	char buf[256], reason[512];

	ui_lines_add(l, UI_R_HEADING, _("Every fix"));
	for (int f = 0; f < FIX_COUNT; f++) {
		enum fix_status st = fix_status(j, (enum fix_id)f, reason, sizeof reason);
		struct ui_line *ln = ui_lines_addf(l, status_role(st), " [%c] ", status_box(st));
		ui_line_append(ln, UI_R_VALUE, _(fix_defs[f].title));
		snprintf(buf, sizeof buf, "  %s (%s)", fix_defs[f].name, status_word(st));
		ui_line_append(ln, UI_R_DIM, buf);
		if (reason[0])
			ui_lines_wrap(l, UI_R_LABEL, reason, width, 5);
		ui_lines_wrap(l, UI_R_DIM, _(fix_defs[f].why), width, 5);
	}
	ui_lines_add(l, UI_R_NORMAL, "");
}

/* After a retry that fits: the scale-up order, its next step marked and said. */
static void scaleup_lines(const struct job *j, struct ui_lines *l, int width)
{
	char buf[1024];

	ui_lines_add(l, UI_R_HEADING, _("After a successful retry: scale up one setting at a time"));
	enum scaleup_step nx = scaleup_next(j, SCALEUP_NONE, buf, sizeof buf);
	for (int k = 0; k < SCALEUP_COUNT; k++) {
		struct ui_line *ln = ui_lines_addf(l, k == (int)nx ? UI_R_MARK : UI_R_LABEL, "%c%2d. ",
						   k == (int)nx ? '>' : ' ', k + 1);
		ui_line_append(ln, k == (int)nx ? UI_R_MARK : UI_R_LABEL,
			       scaleup_title((enum scaleup_step)k));
	}
	if (nx != SCALEUP_NONE)
		ui_lines_wrap(l, UI_R_VALUE, buf, width, 5);
}

/* The Plan's lines; *sel_line receives the line of the selected step (-1 without steps). */
static void plan_lines(const struct ui_env *v, struct ui_lines *l, int width, long long *sel_line)
{
	checklist_lines(v->s, l, width);
	rollback_lines(v, l, width, sel_line);
	fixes_lines(v->s->job, l, width);
	scaleup_lines(v->s->job, l, width);
}

/* The Plan scrolls like a text screen (pos.top), with a selected step (pos.cursor) that j/k
 * move and keep in sight. */
static void plan_draw(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	struct ui_lines l = { 0 };
	struct ui_pos *p = v->pos;
	struct ui_rect r = c->r;
	long long sel = -1;

	plan_lines(v, &l, r.w - 2, &sel);
	if (plan_priv(v)->follow && sel >= 0) {
		if (sel < p->top)
			p->top = sel;
		if (sel >= p->top + r.h)
			p->top = sel - r.h + 1;
	}
	plan_priv(v)->follow = false;
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

static enum ui_req plan_action(const struct ui_env *v, enum ui_act act)
{
	const struct ui_ctx *c = v->c;
	struct ui_pos *p = v->pos;
	size_t n = v->s->plan.n, sel = plan_sel(v);

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
		plan_priv(v)->picked = true;
		plan_priv(v)->follow = true;
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
		*v->arg = v->s->plan.steps[sel].fix;
		return UI_REQ_APPLY;
	default:
		return UI_REQ_PASS;
	}
}

/* The Plan's lines as they are drawn (for the search). */
static void plan_search_lines(const struct ui_env *v, struct ui_lines *l)
{
	const struct ui_ctx *c = v->c;
	long long sel;
	plan_lines(v, l, c->r.w - 2, &sel);
}

/* The Plan's list keys first, then the search of every text screen. */
static enum ui_req plan_view_action(const struct ui_env *v, enum ui_act act)
{
	enum ui_req r = plan_action(v, act);
	return r != UI_REQ_PASS ? r : ui_text_search_action(v, act, plan_search_lines,
							     &v->pos->top);
}

static void plan_search_done(const struct ui_env *v)
{
	ui_text_search_done(v, plan_search_lines, &v->pos->top);
}

const struct ui_view_ops ui_view_plan = { .name = N_("Plan"), .priv_size = sizeof(struct plan_priv),
					  .keys = UI_CTX_PLAN | UI_CTX_TEXT,
					  .draw = plan_draw, .action = plan_view_action,
					  .prompt_done = plan_search_done, .sub = true };
