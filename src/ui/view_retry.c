/* view_retry.c — the Retry view: the loop started with r (SPEC §11), its tries listed as they
 * happen — each try's verdict, the fix applied after it with its `path: old → new` and the fix's
 * lesson, so the loop teaches the order — and how it ended. Enter shows a try's log in the Log
 * view; r stops a loop that runs. The loop itself is a child process (retry.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "retry.h"
#include "view.h"

/* The Retry view's own state. */
struct retry_priv {
	bool picked;        /* the user moved in the list: it no longer follows the newest try */
	unsigned loop;      /* ... in this loop (ui_retry.loop): a new loop is followed again */
};

static bool picked(const struct ui_env *v)
{
	const struct retry_priv *rp = v->priv;
	return rp->picked && rp->loop == v->retry->loop;
}

/* The try under the cursor (-1 when there are none). */
static long long selected(const struct ui_env *v)
{
	long long n = (long long)v->retry->ntries, c = v->pos->cursor;
	if (!n)
		return -1;
	return c < 0 ? 0 : c >= n ? n - 1 : c;
}

static bool is_last(const struct ui_env *v, size_t i)
{
	return i + 1 == v->retry->ntries;
}

/* Where a run under way stands: the web UI's status, then phase, step/total and speed from the
 * log being followed, when that log is this try's. */
static void under_way(const struct ui_env *v, const struct ui_try *t, char *buf, size_t sz)
{
	const struct diag_result *d = &v->s->diag;
	bool here = t->log && v->s->log_path && !strcmp(t->log, v->s->log_path) && v->s->have_diag;
	size_t k;

	if (!v->retry->cmd && !t->taken)
		snprintf(buf, sz, "%s", _("queued in the web UI, waiting for its worker"));
	else if (v->retry->stopping)
		snprintf(buf, sz, "%s", _("stopping the run..."));
	else
		snprintf(buf, sz, "%s", _("running"));
	k = strlen(buf);
	if (!here || k >= sz)
		return;
	if (d->now_phase != DIAG_P_NONE)
		k += (size_t)snprintf(buf + k, sz - k, ": %s", diag_phase_label(d->now_phase));
	if (d->now_step >= 0 && k < sz)
		k += (size_t)(d->total_steps > 0
			      ? snprintf(buf + k, sz - k, _(", step %lld of %lld"), d->now_step,
					 d->total_steps)
			      : snprintf(buf + k, sz - k, _(", step %lld"), d->now_step));
	if (d->now_rate[0] && k < sz)
		snprintf(buf + k, sz - k, ", %s", d->now_rate);
}

/* The sentence for how the loop ended, and its role. */
static enum ui_role ending(const struct ui_env *v, char *buf, size_t sz)
{
	const struct ui_retry *r = v->retry;
	char last[600];

	bool changed = false;
	for (size_t i = 0; i < r->ntries; i++)
		changed |= r->tries[i].fix != NULL;
	if (retry_outcome_fits(r->outcome) && !changed) {
		/* E8: no journal names a change that was not made */
		snprintf(buf, sz, "%s", r->text ? r->text : "");
		return UI_R_DONE;
	}
	if (retry_outcome_fits(r->outcome)) {
		snprintf(buf, sz, _("%s The job that fits is saved; the journal (%s.oomfix.md) lists "
				    "what each try changed."), r->text ? r->text : "",
			 v->s->job_path ? v->s->job_path : "");
		buf[text_tidy_spaces(buf, strlen(buf))] = '\0'; /* 「。 」 where two sentences join */
		return UI_R_DONE;
	}
	if (r->outcome == RETRY_OUT_ERROR) {
		ui_retry_last_error(r, last, sizeof last);
		snprintf(buf, sz, _("The retry could not go on: %s"),
			 r->text ? r->text : last[0] ? last : _("it ended without saying why"));
		return UI_R_ERROR;
	}
	snprintf(buf, sz, "%s", r->text ? r->text : retry_outcome_name(r->outcome));
	return UI_R_TODO;
}

/* Appends sep and text to the line `ln` (the last one of l) when they fit in `width` cells, else
 * wraps the text onto lines of its own indented by `indent`: a narrow terminal loses none of it. */
static void append_or_wrap(struct ui_lines *l, struct ui_line *ln, enum ui_role role,
			   const char *sep, const char *text, int width, int indent)
{
	if (text_width(ln->text, ln->len) + text_width(sep, strlen(sep)) +
		    text_width(text, strlen(text)) <= width) {
		if (*sep)
			ui_line_append(ln, role, sep);
		ui_line_append(ln, role, text);
	} else {
		ui_lines_wrap(l, role, text, width, indent);
	}
}

/* What the loop does, before its tries: how a try runs, one change then a run, where the
 * first run starts from, and when a run is stopped. */
static void intro_lines(const struct ui_env *v, struct ui_lines *l, int width)
{
	const struct ui_retry *r = v->retry;
	bool web = v->s->src && source_row(v->s->src);
	char buf[2048];

	ui_lines_add(l, UI_R_HEADING, _("Retry until the job fits"));
	if (web)
		snprintf(buf, sizeof buf, _("Each try queues %s in the web UI, as its start button does, "
					    "and follows the run of the UI's worker."),
			 source_label(v->s->src));
	else if (!r->started || v->retry_asking)
		snprintf(buf, sizeof buf, _("Each try runs the command typed below with /bin/sh, in "
					    "the folder oomfix was started from; its output goes to "
					    "%s.oomfix-runs/N.log, which the Log view follows."),
			 v->s->job_path ? v->s->job_path : "");
	else
		snprintf(buf, sizeof buf, _("Each try runs: %s"), r->cmd ? r->cmd : "");
	ui_lines_wrap(l, UI_R_NORMAL, buf, width, 1);
	snprintf(buf, sizeof buf,
		 _("A run that dies of GPU out-of-memory gets the first fix for that failure (one "
		   "that acts on the phase that failed), saved with the previous version kept and a "
		   "journal entry, and then the next run: one change, then a run, at most %d runs."),
		 r->max_tries ? r->max_tries : RETRY_DEFAULT_TRIES);
	ui_lines_wrap(l, UI_R_DIM, buf, width, 1);
	bool older = false;
	if (v->retry_asking && ui_session_retry_log(v->s, &older))
		ui_lines_wrap(l, UI_R_DIM, _("The log on screen already shows how the job as it is "
					     "fails: its fix is applied first, then the first run."),
			      width, 1);
	else if (v->retry_asking && older)
		ui_lines_wrap(l, UI_R_MARK, _("The log on screen is older than the last change saved "
					      "to the job, so it cannot show whether that change "
					      "helped: the first run is of the job as it is."),
			      width, 1);
	else if (v->retry_asking)
		ui_lines_wrap(l, UI_R_DIM, _("The first run is of the job as it is."), width, 1);
	if (!v->retry_asking) {
		if (r->probe > 0)
			snprintf(buf, sizeof buf, _("A run that gets %lld steps past the step the last "
						    "one failed at, and through a preview sampling round "
						    "during training, is stopped: it fits."), r->probe);
		else
			snprintf(buf, sizeof buf, "%s", _("Each run goes on to its end: the run that "
							  "finishes is the training run."));
		ui_lines_wrap(l, UI_R_DIM, buf, width, 1);
	}
	ui_lines_add(l, UI_R_NORMAL, "");
}

/* Try i of the list: its label, verdict or where it stands, its estimate, and the fix saved
 * after it with each change and the fix's lesson. */
static void try_lines(const struct ui_env *v, struct ui_lines *l, size_t i, int width)
{
	const struct ui_retry *r = v->retry;
	const struct ui_try *t = &r->tries[i];
	struct ui_line *ln;
	char buf[2048], label[128];

	if (t->n == 0)
		snprintf(label, sizeof label, "%s", _("the log you opened"));
	else
		snprintf(label, sizeof label, _("try %d"), t->n);
	/* padded in cells, so that translated labels line up too */
	int w = text_width(label, strlen(label));
	snprintf(buf, sizeof buf, " %s%*s", label, w < 8 ? 10 - w : 2, "");
	ln = ui_lines_add(l, UI_R_LABEL, buf);
	ln->selectable = true;
	ln->target = (long long)i;
	if (t->judged) {
		append_or_wrap(l, ln, t->oom ? UI_R_OOM : UI_R_VALUE, "",
			       t->summary ? t->summary : "", width, 11);
	} else if (is_last(v, i) && ui_retry_running(r)) {
		under_way(v, t, buf, sizeof buf);
		append_or_wrap(l, ln, UI_R_VALUE, "", buf, width, 11);
		if (t->waiting && !t->taken)
			ui_lines_wrap(l, UI_R_TODO, t->waiting, width, 11);
	} else if (is_last(v, i) && r->ended && r->outcome == RETRY_OUT_PROBE) {
		/* the probe stopped it: its end says at which step (E8) */
		ui_line_append(ln, UI_R_VALUE, _("passed the probe: the job fits"));
	} else {
		ui_line_append(ln, UI_R_DIM, _("stopped before its verdict"));
	}
	if (t->estimate && t->index > 0) { /* what the job it ran was expected to take */
		snprintf(buf, sizeof buf, _("Estimate: %s"), t->estimate);
		ui_lines_wrap(l, UI_R_DIM, buf, width, 11);
	}
	if (!t->fix)
		return;
	ln = ui_lines_addf(l, UI_R_NORMAL, "           → %s", t->fix);
	if (t->title)
		append_or_wrap(l, ln, UI_R_DIM, "  ", t->title, width, 13);
	/* wrapped, never cut: "path: old → new" ends with what matters */
	for (size_t k = 0; k < t->nchanges; k++)
		ui_lines_wrap(l, UI_R_CHANGED, t->changes[k], width, 13);
	if (t->note && t->note[0])
		ui_lines_wrap(l, UI_R_DIM, t->note, width, 13);
	if (t->lesson && t->lesson[0]) {
		snprintf(buf, sizeof buf, _("Lesson: %s"), t->lesson);
		ui_lines_wrap(l, UI_R_DIM, buf, width, 13);
	}
}

/* The view's lines; first[i] receives the line where try i starts. */
static void retry_lines(const struct ui_env *v, struct ui_lines *l, int width, long long *first)
{
	const struct ui_retry *r = v->retry;
	char buf[2048];

	intro_lines(v, l, width);
	/* Before a new loop starts, the tries of the last one are not its own. */
	for (size_t i = 0; i < r->ntries && !v->retry_asking; i++) {
		first[i] = (long long)l->n;
		try_lines(v, l, i, width);
	}
	ui_lines_add(l, UI_R_NORMAL, "");
	if (ui_retry_running(r)) {
		ui_lines_wrap(l, UI_R_DIM,
			      r->stopping ? _("Stopping: the run gets Ctrl-C first, then SIGTERM after "
					      "the grace period. r asks again to skip the wait.")
					  : _("r stops the retry (its run is stopped first). Enter shows "
					      "the selected try's log in the Log view; the job cannot be "
					      "edited while the retry changes it."),
			      width, 1);
	} else if (r->ended && !v->retry_asking) {
		enum ui_role role = ending(v, buf, sizeof buf);
		ui_lines_wrap(l, role, buf, width, 1);
		ui_lines_wrap(l, UI_R_DIM, _("Enter shows the selected try's log; r starts another "
					     "retry."), width, 1);
	}
}

static void retry_draw(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	struct ui_lines l = { 0 };
	long long first[v->retry->ntries + 1];
	if (!picked(v) && v->retry->ntries)
		v->pos->cursor = (long long)v->retry->ntries - 1;
	long long sel = v->retry_asking ? -1 : selected(v);

	retry_lines(v, &l, c->r.w - 2, first);
	long long top = v->pos->top;
	/* g, or k above the first try: the explanation at the top is read, no try is marked. */
	bool above = picked(v) && v->pos->cursor < 0;
	long long cur = above ? top : sel >= 0 ? first[sel] : -1;
	/* The list follows the newest try, and how the loop stands below it, until the user picks
	 * a try: the end is shown, or as much of it as keeps the newest try on screen. */
	if (!picked(v))
		top = (long long)l.n > c->r.h ? (long long)l.n - c->r.h : 0;
	ui_draw_lines(c->win, c->r, &l, cur, &top, sel >= 0 && !above);
	v->pos->top = top;
	if ((long long)l.n > c->r.h)
		snprintf(c->msg->scroll_info, sizeof c->msg->scroll_info, "%lld-%lld/%zu", top + 1,
			 top + c->r.h < (long long)l.n ? top + c->r.h : (long long)l.n, l.n);
	ui_lines_free(&l);
}

static enum ui_req retry_action(const struct ui_env *v, enum ui_act act)
{
	const struct ui_ctx *c = v->c;
	struct ui_pos *p = v->pos;
	long long n = (long long)v->retry->ntries;

	switch (act) {
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		if (!n)
			return UI_REQ_DONE;
		{
			struct retry_priv *rp = v->priv;
			rp->picked = true;
			rp->loop = v->retry->loop;
		}
		if (act == UI_A_TOP) { /* the top is the explanation, above the tries */
			p->cursor = -1;
			p->top = 0;
			return UI_REQ_DONE;
		}
		if ((act == UI_A_UP || act == UI_A_PGUP) && p->cursor <= 0) {
			long long by = act == UI_A_UP ? 1 : c->r.h > 1 ? c->r.h - 1 : 1;
			p->cursor = -1;
			p->top = p->top > by ? p->top - by : 0;
			return UI_REQ_DONE;
		}
		ui_pos_move(p, act, n, 3);
		return UI_REQ_DONE;
	case UI_A_SHOW_TRY: {
		long long i = selected(v);
		if (i < 0 || !v->retry->tries[i].log) {
			ui_status(c, false, "%s", _("No try yet."));
			return UI_REQ_DONE;
		}
		*v->arg = i;
		return UI_REQ_SHOW_TRY;
	}
	default:
		return UI_REQ_PASS;
	}
}

static bool retry_shown(const struct ui_env *v)
{
	return v->retry->started || v->retry_asking;
}

const struct ui_view_ops ui_view_retry = {
	.name = N_("Retry"), .keys = UI_CTX_RETRY, .priv_size = sizeof(struct retry_priv),
	.draw = retry_draw, .action = retry_action, .shown = retry_shown,
};
