/* actions.c — what the keys do to the job: apply a fix (one change, then a run), save (the save
 * screen, a newer file on disk offered first), reload, quit, and the next theme; with the
 * questions each of them asks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "actions.h"
#include "screens.h"
#include "prompt.h"
#include "emergency.h"
#include "retry_ctl.h"

static void reload(struct ui_app *a, const struct ui_ctx *c);

static void answer_reload(struct ui_app *a, const struct ui_ctx *c, int key)
{
	if (key == 'y') {
		reload(a, c);
		return;
	}
	a->have_declined = true;
	ui_status(c, false, "%s", _("Kept this version; saving will ask before it overwrites the "
				   "file on disk."));
}

static const struct ui_question ask_reload = {
	.text = N_("Reload it? y = reload (unsaved edits are re-applied where they still apply), n = "
		   "keep this version"),
	.answer = answer_reload,
	.named = true,
};

/* When the job changed on disk (another program, another oomfix) and the user has not already
 * chosen to keep this version of it, asks whether to reload. True when it asked. */
bool ui_check_disk(struct ui_app *a, const struct ui_ctx *c)
{
	struct save_stamp now;

	if (!ui_session_changed_on_disk(&a->s, &now))
		return false;
	if (a->have_declined && save_stamp_same(&now, &a->declined))
		return false;
	a->declined = now; /* the version asked about */
	ui_ask(a, &ask_reload, a->mode == UI_M_CONFIRM ? UI_M_NORMAL : a->mode);
	const char *base = strrchr(a->s.job_path, '/');
	/* a web UI job is its database row, not the job_config.json its backup is named after */
	ui_status(c, false, _("%s changed on disk."), source_row(a->s.src) ? source_label(a->s.src)
					     : base ? base + 1 : a->s.job_path);
	return true;
}

static void reload(struct ui_app *a, const struct ui_ctx *c)
{
	struct err e;
	size_t kept, lost;
	bool had = ui_session_dirty(&a->s);

	if (ui_session_reload(&a->s, &kept, &lost, &e)) {
		/* Not asked again for the same file (it may be gone, or half written). */
		a->have_declined = true;
		ui_status_err(c, &e);
		return;
	}
	a->have_declined = false;
	if (!had)
		ui_status(c, false, "%s", _("Reloaded the file from disk."));
	else if (!lost)
		ui_status(c, false, "%s", _("Reloaded the file from disk; your unsaved edits are "
					    "re-applied (d shows them)."));
	else if (a->s.reload_dropped[0])
		ui_status(c, false, _("Reloaded the file from disk; dropped whole, as they no longer apply "
				     "there: %s (%zu of your unsaved changes kept; d shows them)."),
			  a->s.reload_dropped, kept);
	else
		ui_status(c, false, _("Reloaded the file from disk; %zu of your unsaved edits no longer "
				     "apply there and were dropped (%zu kept)."), lost, kept);
}

static void do_save(struct ui_app *a, unsigned flags);

static void answer_save(struct ui_app *a, const struct ui_ctx *c, int key)
{
	if (key == 'y')
		do_save(a, 0);
	else
		ui_status(c, false, "%s", _("Not saved."));
}

static const struct ui_question ask_save = {
	.text = N_("Write these changes? y = save, n = not now"),
	.answer = answer_save,
	.draw_behind = ui_save_draw,
};

static void answer_overwrite(struct ui_app *a, const struct ui_ctx *c, int key)
{
	if (key == 'y')
		do_save(a, SAVE_FORCE);
	else
		ui_status(c, false, "%s", _("Not saved: the file on disk was left as it is."));
}

static const struct ui_question ask_overwrite = {
	.text = N_("The file changed on disk since it was loaded. Overwrite it anyway? y = "
		   "overwrite, n = keep the disk version"),
	.answer = answer_overwrite,
	.draw_behind = ui_save_draw,
};

/* Asks to save (shows the save screen); from the walk-through or the `s` key. */
void ui_ask_save(struct ui_app *a, const struct ui_ctx *c, enum ui_mode back)
{
	if (!a->s.job_path) {
		ui_status(c, true, "%s", _("No job file is open: nothing to save."));
		return;
	}
	if (!ui_session_dirty(&a->s)) {
		ui_status(c, false, "%s", _("Nothing to save: no unsaved changes."));
		return;
	}
	if (!strcmp(a->s.job_status, "running")) { /* before the save screen, not after its y */
		a->quit_after_save = false;
		ui_status(c, false, "%s", _("It is running in the web UI: it cannot be saved until it "
					   "stops."));
		return;
	}
	/* A newer file on disk is offered first: saving would overwrite it. */
	if (ui_check_disk(a, c))
		return;
	a->save_pos = (struct ui_pos){ 0, 0 };
	ui_ask(a, &ask_save, back);
}

static void do_save(struct ui_app *a, unsigned flags)
{
	struct ui_ctx c = ui_ctx_of(a);
	struct err e;
	int rc = ui_session_save(&a->s, flags, &e);

	a->mode = a->ask_return == UI_M_WALK ? UI_M_NORMAL : a->ask_return;
	if (rc == ERR_TEMPFAIL && !(flags & SAVE_FORCE) && !source_running(a->s.src)) {
		ui_ask(a, &ask_overwrite, a->ask_return);
		ui_status(&c, true, "%s", e.msg);
		return;
	}
	if (rc) {
		ui_status_err(&c, &e);
		a->quit_after_save = a->open_after_save = false;
		return;
	}
	/* Where it really went: a web UI job's save is a row of its database, and what comes next
	 * there is queueing it (J, Q) or a retry. */
	char *said = source_saved_message_short(a->s.src, !e.code);
	if (e.code)
		ui_status(&c, true, "%s: %s", said ? said : "", e.msg);
	else
		ui_status(&c, false, "%s", said ? said : "");
	free(said);
	if (a->quit_after_save && !ui_session_dirty(&a->s)) {
		a->quit = true;
		/* the screen goes: one line on the terminal says where the save went */
		char *full = source_saved_message(a->s.src, !e.code);
		snprintf(a->said_on_quit, sizeof a->said_on_quit, "%s", full ? full : "");
		free(full);
	} else if (a->open_after_save && !ui_session_dirty(&a->s)) {
		/* E7: saved; the app opens the job that was asked for next */
	} else if (source_row(a->s.src)) { /* what comes next for a web UI job, first */
		char where[sizeof a->msg.text];
		snprintf(where, sizeof where, "%s", a->msg.text);
		ui_status(&c, a->msg.error, "%s %s", _("Next: Q queues it for the web UI's worker, or "
							"r retries until it fits."), where);
	}
}

static void answer_pick(struct ui_app *a, const struct ui_ctx *c, int key)
{
	if (key == 'y')
		ui_apply_fix(a, a->pick_fix, true);
	else if (ui_session_diag_stale(&a->s))
		ui_status(c, false, "%s", _("Nothing changed. Save (s), run the job, and open its new "
					   "log."));
	else
		ui_status(c, false, "%s", _("Nothing changed."));
}

/* The decision's words lead it (the status); the walk-through asks the same with its own answer. */
static const struct ui_question ask_pick = {
	.text = N_("Apply the picked change anyway? y = apply, n = not now"),
	.answer = answer_pick,
	.named = true,
};

/* a while the last change has not run: the fix the decision names once it has. */
static const struct ui_question ask_next = {
	.text = N_("Apply the next change anyway? y = apply, n = not now"),
	.answer = answer_pick,
	.named = true,
};

bool ui_pick_asks(const struct ui_app *a, enum fix_id id, char *lead, size_t sz)
{
	char words[768];
	struct plan_decision d = ui_session_decide(&a->s, words, sizeof words);
	bool helps = plan_fix_helps(id, a->s.plan.phase, a->s.plan.kind);

	if (d.what == PLAN_NEXT_APPLY && helps)
		return false;
	int n = snprintf(lead, sz, "%s", words);
	if (!helps && n > 0 && (size_t)n < sz)
		snprintf(lead + n, sz - (size_t)n, _(" %s does not act on the phase that failed."),
			 _(fix_defs[id].title));
	return true;
}

/* Applies `id` now; `said` (or NULL) is the decision's sentence when it named this fix. */
static void apply_now(struct ui_app *a, enum fix_id id, const char *said)
{
	struct ui_ctx c = ui_ctx_of(a);
	struct err e;
	char note[512], done[512];
	bool changed;

	if (ui_session_apply_fix(&a->s, id, &changed, note, sizeof note, &e)) {
		ui_status_err(&c, &e);
		return;
	}
	if (!changed)
		snprintf(done, sizeof done, _("Nothing to change for: %s"), _(fix_defs[id].title));
	else if (said && !a->s.log_path) {
		ui_status(&c, false, _("No log to choose by, so a applied the next step of the rollback "
				       "plan: %s. d diff, u undo, s save; with the failed run's log the "
				       "fix would follow from when it ran out of memory."),
			  _(fix_defs[id].title));
		return;
	} else if (said && a->s.have_diag && a->s.diag.oom)
		snprintf(done, sizeof done, _("Applied. Save (s) and run the job again: the next change "
					      "comes from the new log. %s"), note);
	else if (said)
		snprintf(done, sizeof done, _("Applied. d diff, u undo, s save. %s"), note);
	else if (a->s.have_diag && a->s.diag.oom)
		snprintf(done, sizeof done, _("Applied: %s. Save (s) and run the job again: the next "
					      "change comes from the new log. %s%s"),
			 _(fix_defs[id].title),
			 plan_fix_helps(id, a->s.diag.phase, a->s.plan.kind)
				 ? "" : _("(It does not act on the phase that failed.) "), note);
	else
		snprintf(done, sizeof done, _("Applied: %s. d diff, u undo, s save. %s"),
			 _(fix_defs[id].title), note);
	ui_status(&c, false, "%s%s%s", said ? said : "", said ? " " : "", done);
}

/* Applies `id` (a step picked in the Plan view, or the answer to its question). It asks
 * plan_decide first: a pick is made at once only where the decision would apply a fix and the
 * step acts on the phase that failed; otherwise the decision's words are shown and a yes is
 * needed (`confirmed`) — one change, then a run. */
void ui_apply_fix(struct ui_app *a, enum fix_id id, bool confirmed)
{
	struct ui_ctx c = ui_ctx_of(a);
	char words[768], lead[1024];

	if (id == FIX_FRESH_WORKER) {
		ui_status(&c, false, "%s", _("Nothing to change in the YAML: start a fresh worker (see "
					    "Plan)."));
		return;
	}
	if (!confirmed && ui_pick_asks(a, id, lead, sizeof lead)) {
		a->pick_fix = id;
		ui_ask(a, &ask_pick, UI_M_NORMAL);
		ui_status(&c, false, "%s", lead);
		return;
	}
	struct plan_decision d = ui_session_decide(&a->s, words, sizeof words);
	apply_now(a, id, d.what == PLAN_NEXT_APPLY && d.fix == id ? words : NULL);
}

/* a: what the one decision says (SPEC §3.4), in its words: its fix is applied; while the last
 * change has not been run, the fix it would name next is only applied after a yes; every other
 * answer changes nothing. */
void ui_apply_first_fix(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);
	char words[768];

	if (!a->s.job) {
		ui_status(&c, true, "%s", _("No job file is open: start oomfix with JOB.yaml."));
		return;
	}
	if (a->s.diag_pending) {
		/* The first change depends on when the job ran out of memory: guessing it from the
		 * plan alone could apply a different fix than the one the verdict will name. */
		ui_status(&c, false, "%s", _("Still reading the log; a works once the verdict is "
					    "shown."));
		return;
	}
	struct plan_decision d = ui_session_decide(&a->s, words, sizeof words);
	if (d.what == PLAN_NEXT_APPLY) {
		apply_now(a, d.fix, words);
		return;
	}
	if (d.what == PLAN_NEXT_UNTRIED) {
		/* what the decision would name once that change has run */
		struct plan_decision later = plan_decide(&a->s.plan, &a->s.diag, false);
		if (later.what == PLAN_NEXT_APPLY) {
			a->pick_fix = later.fix;
			ui_ask(a, &ask_next, UI_M_NORMAL);
		}
	}
	ui_status(&c, false, "%s", words);
}

void ui_next_theme(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);
	size_t cur = 0;
	struct err e;
	struct ui_theme t;

	if (!a->themes || a->nthemes == 0)
		return;
	for (size_t i = 0; i < a->nthemes; i++)
		if (!strcmp(a->themes[i], a->theme.name))
			cur = i;
	const char *name = a->themes[(cur + 1) % a->nthemes];
	if (ui_theme_load(name, &t, &e)) {
		ui_status_err(&c, &e);
		return;
	}
	snprintf(t.name, sizeof t.name, "%s", name);
	a->theme = t;
	ui_theme_apply(&a->theme);
	ui_status(&c, false, ui_theme_color_on() ? _("Theme: %s")
						: _("Theme: %s (no colour: attributes only)"),
		  name);
}


static void answer_quit(struct ui_app *a, const struct ui_ctx *c, int key)
{
	a->quit_after_save = false;
	if (key == 's') { /* save first (the save screen), then quit once saved */
		a->quit_after_save = true;
		ui_ask_save(a, c, UI_M_NORMAL);
	} else if (key == 'y') {
		ui_recovery_dropped();
		a->quit = true;
	}
}

static const struct ui_question ask_quit = {
	.text = N_("Quit? s = save them and quit, y = quit without saving, n = stay"),
	.keys = "s",
	.key_words = { N_("save+quit") },
	.answer = answer_quit,
	.named = true,
};

void ui_quit(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);
	if (ui_retry_running(&a->retry)) {
		ui_retryctl_ask_quit(a);
	} else if (ui_session_dirty(&a->s)) {
		ui_ask(a, &ask_quit, UI_M_NORMAL);
		/* the question names the job that holds them (E7) */
		ui_status(&c, false, _("%s has unsaved changes."), source_label(a->s.src));
	} else {
		a->quit = true;
	}
}

/* Ctrl-C: quit at once when nothing is unsaved, else ask as q does (save and quit, quit, stay). */
void ui_interrupted(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);

	if (ui_retry_running(&a->retry)) {
		/* Asked once; a Ctrl-C while it stops skips the run's grace period. */
		if (a->quit_after_retry) {
			ui_retry_stop(&a->retry);
			return;
		}
		ui_retryctl_ask_quit(a);
		ui_status(&c, false, "%s", _("Ctrl-C: a retry is running."));
		return;
	}
	if (!ui_session_dirty(&a->s)) {
		a->quit = true;
		return;
	}
	if (ui_asking(a, &ask_quit))
		return;
	ui_ask(a, &ask_quit, UI_M_NORMAL);
	ui_status(&c, false, _("Ctrl-C: %s has unsaved changes."), source_label(a->s.src));
}
