/* actions.c — what the keys do to the job: apply a fix (one change, then a run), save (the save
 * screen, a newer file on disk offered first), reload, quit, and the next theme; with the
 * questions each of them asks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "actions.h"
#include "prompt.h"
#include "retry_ctl.h"

static bool same_stamp(const struct save_stamp *x, const struct save_stamp *y)
{
	return x->exists == y->exists && x->dev == y->dev && x->ino == y->ino &&
	       x->size == y->size && x->mtime_sec == y->mtime_sec && x->mtime_nsec == y->mtime_nsec;
}

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
	if (a->have_declined && same_stamp(&now, &a->declined))
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
		ui_status(c, true, _("Reloaded the file from disk; dropped whole, as they no longer apply "
				     "there: %s (%zu of your unsaved changes kept; d shows them)."),
			  a->s.reload_dropped, kept);
	else
		ui_status(c, true, _("Reloaded the file from disk; %zu of your unsaved edits no longer "
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
		a->quit_after_save = false;
		return;
	}
	/* Where it really went: a web UI job's save is a row of its database, and what comes next
	 * there is queueing it (J, Q) or a retry. */
	char *said = source_saved_message(a->s.src, !e.code);
	if (e.code)
		ui_status(&c, true, "%s: %s", said ? said : "", e.msg);
	else if (source_row(a->s.src))
		ui_status(&c, false, _("%s. Next: J then Q to queue, or r to retry."),
			  said ? said : "");
	else
		ui_status(&c, false, "%s", said ? said : "");
	free(said);
	if (a->quit_after_save && !ui_session_dirty(&a->s))
		a->quit = true;
}

static void answer_untried(struct ui_app *a, const struct ui_ctx *c, int key)
{
	if (key == 'y')
		ui_apply_fix(a, a->pick_fix, true);
	else
		ui_status(c, false, "%s", _("Nothing changed. Save (s), run the job, and open its new "
					   "log."));
}

static const struct ui_question ask_untried = {
	.text = N_("The last change has not been tried yet: run the job first. Apply another change "
		   "anyway? y = apply, n = not now"),
	.answer = answer_untried,
};

/* Applies `id` (the first fix, or a step picked in the Plan view). One change, then a run: while
 * an applied change has not been tried, another one is only made after a yes (`confirmed`). */
void ui_apply_fix(struct ui_app *a, enum fix_id id, bool confirmed)
{
	struct ui_ctx c = ui_ctx_of(a);
	struct err e;
	char note[512];
	bool changed;

	if (id == FIX_FRESH_WORKER) {
		ui_status(&c, false, "%s", _("Nothing to change in the YAML: start a fresh worker (see "
					    "Plan)."));
		return;
	}
	if (!confirmed && ui_session_diag_stale(&a->s)) {
		a->pick_fix = id;
		ui_ask(a, &ask_untried, UI_M_NORMAL);
		ui_status(&c, false, _("Next: %s."), _(fix_defs[id].title));
		return;
	}
	if (ui_session_apply_fix(&a->s, id, &changed, note, sizeof note, &e)) {
		ui_status_err(&c, &e);
		return;
	}
	if (!changed)
		ui_status(&c, false, _("Nothing to change for: %s"), _(fix_defs[id].title));
	else if (a->s.have_diag && a->s.diag.oom)
		ui_status(&c, false, _("Applied: %s. Save (s) and run the job again: the next change "
				       "comes from the new log. %s%s"), _(fix_defs[id].title),
			  plan_fix_helps(id, a->s.diag.phase, a->s.plan.kind)
				  ? "" : _("(It does not act on the phase that failed.) "), note);
	else
		ui_status(&c, false, _("Applied: %s. d diff, u undo, s save. %s"),
			  _(fix_defs[id].title), note);
}

void ui_apply_first_fix(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);
	enum fix_id id;

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
	if (a->s.have_diag && !a->s.diag.oom) {
		/* The fixes trade speed or quality for GPU memory; the log says memory was not the
		 * problem, so none is "recommended". w still lets the user apply one deliberately. */
		ui_status(&c, false, "%s", _("The log shows no GPU out-of-memory error, so there is no "
					    "memory fix to apply: see the Diagnosis for the cause. w "
					    "walks the memory fixes anyway."));
		return;
	}
	id = ui_session_next_fix(&a->s);
	if (id == FIX_NONE && ui_session_diag_stale(&a->s)) {
		/* What the plan says is left is about the old log: the new run will tell. */
		ui_status(&c, false, "%s", _("The last change has not been tried yet: save, run the "
					    "job, and open its new log."));
		return;
	}
	if (id == FIX_NONE && a->s.plan.exhausted) {
		char buf[512];
		plan_exhausted_text(&a->s.plan, a->s.job, buf, sizeof buf);
		ui_status(&c, false, "%s", buf);
		return;
	}
	if (id == FIX_NONE) {
		ui_status(&c, false, "%s", _("Every step of the plan is already done."));
		return;
	}
	size_t pos = a->s.pos;
	ui_apply_fix(a, id, false);
	if (!a->s.log_path && a->s.pos != pos)
		ui_status(&c, false, _("No log to choose by, so a applied the next step of the rollback "
				       "plan: %s. d diff, u undo, s save; with the failed run's log the "
				       "fix would follow from when it ran out of memory."),
			  _(fix_defs[id].title));
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
		a->quit = true;
	}
}

static const struct ui_question ask_quit = {
	.text = N_("Quit with unsaved changes? s = save them and quit, y = quit without saving, n = "
		   "stay"),
	.keys = "s",
	.answer = answer_quit,
};

void ui_quit(struct ui_app *a)
{
	if (ui_retry_running(&a->retry))
		ui_retryctl_ask_quit(a);
	else if (ui_session_dirty(&a->s))
		ui_ask(a, &ask_quit, UI_M_NORMAL);
	else
		a->quit = true;
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
	ui_status(&c, false, "%s", _("Ctrl-C: there are unsaved changes."));
}
