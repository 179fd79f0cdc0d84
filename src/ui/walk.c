/* walk.c — the walk-through: the rollback plan for this job, one step per screen, written as a
 * short lesson: what the step changes, why it saves memory and what it costs, whether it is
 * already done, and the exact diff it would make. Apply, skip, go back, or read more. After the
 * last step comes the save screen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "actions.h"
#include "prompt.h"
#include "screens.h"

enum ui_req ui_walk_start(struct ui_app *a, const struct ui_ctx *c)
{
	if (!a->s.job) {
		ui_status(c, true, "%s", _("The walk-through needs a job file: start oomfix with "
					   "JOB.yaml."));
		return UI_REQ_DONE;
	}
	if (a->s.plan.n == 0) {
		ui_status(c, false, "%s", _("There is no rollback plan for this job."));
		return UI_REQ_DONE;
	}
	a->mode = UI_M_WALK;
	a->walk_step = 0;
	a->walk_more = false;
	a->walk_pos = (struct ui_pos){ 0, 0 };
	return UI_REQ_DONE;
}

static void walk_lines(struct ui_app *a, struct ui_lines *l, int width)
{
	const struct plan *p = &a->s.plan;
	enum fix_id id = p->steps[a->walk_step].fix;
	char reason[512] = "", buf[1024], words[768];
	enum fix_status st = fix_status(a->s.job, id, reason, sizeof reason);
	/* the one decision (SPEC §3.4): its words on every step, its fix marked */
	struct plan_decision dc = ui_session_decide(&a->s, words, sizeof words);
	struct ui_line *ln;
	struct err e;

	if (a->walk_step == 0)
		ui_lines_wrap(l, UI_R_DIM, _("The rollback order: change one thing, retry, and stop at "
					     "the first step that makes the job fit. Each step "
					     "trades speed or quality for memory."), width, 1);
	snprintf(buf, sizeof buf, _("Step %zu of %zu: %s"), a->walk_step + 1, p->n,
		 _(fix_defs[id].title));
	ui_lines_add(l, UI_R_HEADING, buf);
	ui_lines_wrap(l, UI_R_MARK, words, width, 1);

	ln = ui_lines_add(l, UI_R_LABEL, _(" Status: "));
	snprintf(buf, sizeof buf, "[%c] %s", st == FIX_DONE ? 'x' : st == FIX_TODO ? ' ' : '-',
		 st == FIX_DONE ? _("already done") : st == FIX_TODO ? _("to do")
								: _("not applicable"));
	ui_line_append(ln, st == FIX_DONE ? UI_R_DONE : st == FIX_TODO ? UI_R_TODO : UI_R_NA, buf);
	if (dc.what == PLAN_NEXT_APPLY && id == dc.fix)
		ui_line_append(ln, UI_R_MARK, _("  <- the first change for this failure"));
	if (reason[0])
		ui_lines_wrap(l, UI_R_DIM, reason, width, 3);
	ui_lines_add(l, UI_R_NORMAL, "");

	ui_lines_add(l, UI_R_HEADING, _("What it changes"));
	ui_lines_wrap(l, UI_R_NORMAL, _(fix_defs[id].change), width, 1);
	/* The exact change comes right after what the step does: at 80x24 it is then on the
	 * first screen, where apply or skip is decided; the lesson follows. */
	ui_lines_add(l, UI_R_HEADING, _("The change it would make"));
	char *d = st == FIX_NOT_APPLICABLE ? NULL : ui_session_fix_diff(&a->s, id, &e);
	if (st == FIX_NOT_APPLICABLE)
		ui_lines_add(l, UI_R_DIM, _(" Nothing: this step does not apply to this job."));
	else if (!d)
		ui_lines_addf(l, UI_R_ERROR, " %s", e.msg);
	else if (!*d)
		ui_lines_add(l, UI_R_DIM, id == FIX_FRESH_WORKER
						  ? _(" Nothing in the YAML: this step is advice.")
						  : _(" Nothing: the job already has it."));
	else
		ui_lines_diff(l, d);
	free(d);
	ui_lines_add(l, UI_R_NORMAL, "");
	ui_lines_add(l, UI_R_HEADING, _("Why it saves memory, and what it costs"));
	ui_lines_wrap(l, UI_R_NORMAL, _(fix_defs[id].why), width, 1);
	if (a->walk_more) {
		ui_lines_add(l, UI_R_HEADING, _("More"));
		ui_lines_wrap(l, UI_R_NORMAL, _(fix_defs[id].lesson), width, 1);
	}
}

void ui_walk_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_rect r = c->r;
	struct ui_lines l = { 0 };
	struct ui_pos *p = &a->walk_pos;

	if (a->walk_step >= a->s.plan.n)
		return;
	walk_lines(a, &l, r.w - 2);
	long long max = (long long)l.n - r.h;
	if (p->cursor > max)
		p->cursor = max > 0 ? max : 0;
	if (p->cursor < 0)
		p->cursor = 0;
	p->top = p->cursor;
	for (int i = 0; i < r.h && p->top + i < (long long)l.n; i++)
		ui_draw_line(c->win, r.y + i, r.x, r.w, &l.v[p->top + i], false);
	if ((long long)l.n > r.h)
		snprintf(c->msg->scroll_info, sizeof c->msg->scroll_info, "%lld-%lld/%zu", p->top + 1,
			 p->top + r.h < (long long)l.n ? p->top + r.h : (long long)l.n, l.n);
	ui_lines_free(&l);
}

/* Moves to the next step; after the last one, asks the app to save what was applied. */
static enum ui_req next_step(struct ui_app *a, const struct ui_ctx *c)
{
	a->walk_more = false;
	a->walk_pos = (struct ui_pos){ 0, 0 };
	if (++a->walk_step < a->s.plan.n)
		return UI_REQ_DONE;
	/* The end of the plan: save what was applied, or say there is nothing to save. */
	a->mode = UI_M_NORMAL;
	a->walk_step = 0;
	if (ui_session_dirty(&a->s))
		return UI_REQ_SAVE;
	ui_status(c, false, "%s", _("End of the walk-through. Nothing was changed, so there "
					    "is nothing to save."));
	return UI_REQ_DONE;
}

/* Applies the step on screen and moves on. */
static enum ui_req walk_apply(struct ui_app *a, const struct ui_ctx *c, enum fix_id id)
{
	struct err e;
	char note[512];
	bool changed;

	if (ui_session_apply_fix(&a->s, id, &changed, note, sizeof note, &e)) {
		ui_status_err(c, &e);
		return UI_REQ_DONE;
	}
	if (changed)
		ui_status(c, false, _("Applied: %s. %s"), _(fix_defs[id].title), note);
	else
		ui_status(c, false, _("Nothing to change for: %s"), _(fix_defs[id].title));
	return next_step(a, c);
}

static void answer_walk_pick(struct ui_app *a, const struct ui_ctx *c, int key)
{
	if (key != 'y') {
		ui_status(c, false, "%s", _("Nothing changed."));
		return;
	}
	if (a->walk_step < a->s.plan.n &&
	    walk_apply(a, c, a->s.plan.steps[a->walk_step].fix) == UI_REQ_SAVE)
		ui_ask_save(a, c, UI_M_NORMAL);
}

/* The same question as the Plan view's Enter (actions.c), answered here: a yes moves on. */
static const struct ui_question ask_walk_pick = {
	.text = N_("Apply the picked change anyway? y = apply, n = not now"),
	.answer = answer_walk_pick,
	.named = true,
	.draw_behind = ui_walk_draw,
};

enum ui_req ui_walk_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act)
{
	enum fix_id id;
	char lead[1024];

	if (a->walk_step >= a->s.plan.n) {
		a->mode = UI_M_NORMAL;
		return UI_REQ_DONE;
	}
	id = a->s.plan.steps[a->walk_step].fix;
	switch (act) {
	case UI_A_WALK_APPLY:
		/* one change, then a run: the walk-through asks the one decision as a and Enter do */
		if (id != FIX_FRESH_WORKER && ui_pick_asks(a, id, lead, sizeof lead)) {
			ui_ask(a, &ask_walk_pick, UI_M_WALK);
			ui_status(c, false, "%s", lead);
			return UI_REQ_DONE;
		}
		return walk_apply(a, c, id);
	case UI_A_WALK_SKIP:
		ui_status(c, false, _("Skipped: %s"), _(fix_defs[id].title));
		return next_step(a, c);
	case UI_A_WALK_BACK:
		if (a->walk_step > 0) {
			a->walk_step--;
			a->walk_more = false;
			a->walk_pos = (struct ui_pos){ 0, 0 };
		}
		return UI_REQ_DONE;
	case UI_A_WALK_MORE:
		a->walk_more = !a->walk_more;
		/* The longer text is added at the end: show it (drawing clamps to the last page),
		 * or go back to the top when it is hidden again. */
		a->walk_pos.cursor = a->walk_more ? UI_POS_END : 0;
		return UI_REQ_DONE;
	case UI_A_WALK_QUIT:
		a->mode = UI_M_NORMAL;
		ui_status(c, false, "%s", _("Left the walk-through. w starts it again."));
		return UI_REQ_DONE;
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		ui_pos_move(&a->walk_pos, act, UI_POS_END, c->page);
		return UI_REQ_DONE;
	default:
		return UI_REQ_PASS;
	}
}
