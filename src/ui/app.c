/* app.c — the terminal UI's entry point and its one loop: load, start the terminal, then each turn
 * take a key (terminal or --script), dispatch it (the view's own action first, then the app's),
 * look at the background work (the log's worker, the job list's, the retry's child, the log
 * growing) and draw. Everything else is a module: display.c (the screen), input.c (keys),
 * prompt.c (questions and the line editor), actions.c (what keys do to the job), follow.c,
 * retry_ctl.c, job_switch.c, emergency.c (signals and die) and args.c.
 */
#include <errno.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oomfix/aitkdb.h"
#include "oomfix/i18n.h"
#include "actions.h"
#include "args.h"
#include "display.h"
#include "emergency.h"
#include "follow.h"
#include "input.h"
#include "job_switch.h"
#include "prompt.h"
#include "retry_ctl.h"
#include "screens.h"
#include "view_diag.h"
#include "view_jobs.h"

/* Carries out what a view or screen asked of the app. */
static void do_request(struct ui_app *a, const struct ui_ctx *c, enum ui_req req)
{
	if (req == UI_REQ_SAVE)
		ui_ask_save(a, c, UI_M_NORMAL);
	else if (req == UI_REQ_APPLY && !a->s.job)
		ui_status(c, true, "%s", _("No job file is open: start oomfix with JOB.yaml."));
	else if (req == UI_REQ_APPLY)
		ui_apply_fix(a, (enum fix_id)a->req_arg, false);
	else if (req == UI_REQ_OPEN_JOB)
		ui_open_selected_job(a, c);
	else if (req == UI_REQ_SHOW_TRY && !ui_retryctl_show_try(a, a->req_arg, true) &&
		 a->retry_log_due >= 0)
		ui_status(c, false, "%s", _("Still reading the log; the try's log comes next."));
}

/* A key in a mode that is not the views' (a prompt, a question, the help, the walk-through);
 * false in the normal mode. */
static bool mode_key(struct ui_app *a, const struct ui_ctx *c, enum ui_act act, int key)
{
	switch (a->mode) {
	case UI_M_PROMPT:
		/* A line the view on screen asked for is its to take. */
		if (ui_prompt_key(a, c, act, key) && ui_views[a->view]->prompt_done) {
			struct ui_env v = ui_env_of(a, a->view, c);
			ui_views[a->view]->prompt_done(&v);
		}
		return true;
	case UI_M_CONFIRM:
		ui_question_key(a, c, act, key);
		return true;
	case UI_M_HELP:
		if (act == UI_A_HELP_CLOSE)
			a->mode = UI_M_NORMAL;
		else if (act != UI_A_NONE)
			ui_pos_move(&a->help_pos, act, UI_POS_END, c->page);
		return true;
	case UI_M_WALK:
		do_request(a, c, ui_walk_action(a, c, act));
		return true;
	default:
		return false;
	}
}

/* The app's own handling of an action, once the view has passed it on. */
static void app_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act, int key)
{
	switch (act) {
	case UI_A_NEXT_VIEW:
		do
			a->view = (enum ui_view)((a->view + 1) % UI_V_COUNT);
		while (!ui_view_shown(a, a->view));
		break;
	case UI_A_PREV_VIEW:
		do
			a->view = (enum ui_view)((a->view + UI_V_COUNT - 1) % UI_V_COUNT);
		while (!ui_view_shown(a, a->view));
		break;
	case UI_A_JOBS:
		if (!a->jobs_on) {
			ui_status(c, false, "%s", _("No web UI database is open: start oomfix with "
						     "--aitk DIR for the job list."));
			break;
		}
		{
			struct ui_env jobs = ui_env_of(a, UI_V_JOBS, c);
			ui_jobs_reload(&jobs); /* a save or a queue may have changed it */
		}
		a->view = UI_V_JOBS;
		break;
	case UI_A_GOTO_VIEW:
		/* The job list's digit is J: refused the same way without a web UI database. */
		if (key - '1' == UI_V_JOBS)
			app_action(a, c, UI_A_JOBS, key);
		else if (ui_view_shown(a, (enum ui_view)(key - '1')))
			a->view = (enum ui_view)(key - '1');
		break;
	case UI_A_QUEUE_JOB: {
		/* Q in the job's own views: the same question as in the list, about the open job. */
		const struct aitk_job *row = a->s.src ? source_row(a->s.src) : NULL;
		struct ui_env jobs = ui_env_of(a, UI_V_JOBS, c);
		if (row && row->name)
			ui_jobs_ask_queue(&jobs, row->name, a->s.job_status);
		else
			ui_status(c, false, "%s", _("Q queues a web UI job (aitk:NAME) for its worker; "
						     "this job is a file."));
		break;
	}
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		/* Text views clamp when drawn, so any large bound works here. */
		ui_pos_move(&a->pos[a->view], act, UI_POS_END, c->page);
		break;
	case UI_A_APPLY_FIRST:
		ui_apply_first_fix(a);
		break;
	case UI_A_UNDO:
		if (!ui_session_undo(&a->s))
			ui_status(c, false, "%s", _("Nothing to undo."));
		else
			ui_status(c, false, "%s", _("Undone. C-r redoes it."));
		break;
	case UI_A_REDO:
		if (!ui_session_redo(&a->s))
			ui_status(c, false, "%s", _("Nothing to redo."));
		else
			ui_status(c, false, "%s", _("Redone."));
		break;
	case UI_A_DIFF:
		a->view = UI_V_DIFF;
		break;
	case UI_A_SAVE:
		ui_ask_save(a, c, UI_M_NORMAL);
		break;
	case UI_A_WALK:
		do_request(a, c, ui_walk_start(a, c));
		break;
	case UI_A_THEME:
		ui_next_theme(a);
		break;
	case UI_A_HELP:
		a->mode = UI_M_HELP;
		a->help_pos = (struct ui_pos){ 0, 0 };
		break;
	case UI_A_RETRY:
		ui_retryctl_key(a, c);
		break;
	case UI_A_QUIT:
		ui_quit(a);
		break;
	default:
		break;
	}
}

static void handle_view_key(struct ui_app *a, int key);

static void handle_key(struct ui_app *a, int key)
{
	enum ui_view before = a->view;

	handle_view_key(a, key);
	/* E7: the switch question's s saved the changes: now the job that was asked for */
	if (a->open_after_save && a->mode == UI_M_NORMAL && !ui_session_dirty(&a->s)) {
		struct ui_ctx c = ui_ctx_of(a);
		char saved[300];
		snprintf(saved, sizeof saved, "%s", source_label(a->s.src));
		a->open_after_save = false;
		ui_open_job(a, &c, a->switch_to);
		if (!a->msg.error) { /* the save is said beside the opening, by the job's name */
			char opened[sizeof a->msg.text];
			snprintf(opened, sizeof opened, "%s", a->msg.text);
			ui_status(&c, false, _("Saved %s. %s"), saved, opened);
		}
	}
	/* Entering a sub-view remembers where from, for Esc and q. */
	if (a->view != before && ui_views[a->view]->sub && !ui_views[before]->sub)
		a->back_view = before;
}

static void handle_view_key(struct ui_app *a, int key)
{
	unsigned ctx = ui_current_ctx(a);
	enum ui_act act = ui_action_for(ctx, key);
	struct ui_ctx c = ui_ctx_of(a);

	/* Digits go straight to a view (the table holds only '1', for the help). */
	if (act == UI_A_NONE && (ctx & UI_CTX_VIEWS) && key > '1' && key < '1' + UI_V_COUNT)
		act = UI_A_GOTO_VIEW;
	const struct ui_view_ops *view = ui_views[a->view];
	enum ui_req req;

	if (key == UI_FKEY(KEY_RESIZE))
		return; /* the next draw lays the screen out for the new size */
	if (a->cols < UI_MIN_COLS || a->rows < UI_MIN_ROWS) {
		/* Too small to show anything: only quitting and redrawing make sense. */
		if (act == UI_A_QUIT && !ui_session_dirty(&a->s))
			a->quit = true;
		return;
	}
	if (a->mode != UI_M_PROMPT && a->mode != UI_M_CONFIRM)
		a->msg.text[0] = '\0';
	/* The first key after the file changed on disk (the user was away, in another editor)
	 * gets the question instead of acting on a version that is no longer the file. */
	if ((a->mode == UI_M_NORMAL || a->mode == UI_M_HELP) && !ui_retry_running(&a->retry) &&
	    ui_check_disk(a, &c))
		return;
	if (act == UI_A_REDRAW) {
		clearok(curscr, TRUE); /* the only full clear: the user asked for it */
		return;
	}
	if (mode_key(a, &c, act, key))
		return;
	if (ui_views[a->view]->sub && (key == 27 || act == UI_A_QUIT)) {
		a->view = ui_views[a->back_view]->sub ? UI_V_TRAINING : a->back_view;
		return;
	}
	if (act == UI_A_NONE) {
		char k[16];
		snprintf(k, sizeof k, "%s", ui_key_name(key));
		ui_status(&c, false, _("%s: no action here; ? lists the keys"), k);
		return;
	}
	if (ui_retry_running(&a->retry) && ui_retryctl_locks(act)) {
		ui_status(&c, false, "%s", _("A retry is running and changes the job itself: wait for "
					    "it, or stop it with r in the Retry view."));
		return;
	}
	/* The view's own handling first (moves in a panel, search in the log, ...). */
	struct ui_env v = ui_env_of(a, a->view, &c);
	if (view->action && (req = view->action(&v, act)) != UI_REQ_PASS) {
		do_request(a, &c, req);
		return;
	}
	app_action(a, &c, act, key);
}

/* How long the input loop may wait for a key: briefly while the worker reads, then at the follow
 * pace once there is a log to follow (never a busy loop), or for ever without one. */
static int input_timeout(struct ui_app *a, bool more)
{
	if (a->s.diag_pending || ui_views_busy(a))
		return 30;
	/* the web UI's job list, shown, reads its jobs' status again now and then (E1) */
	if (a->s.live || a->s.job_status[0] || ui_retry_running(&a->retry) ||
	    (a->jobs_on && a->view == UI_V_JOBS))
		return more ? 0 : UI_FOLLOW_POLL_MS;
	return -1;
}

/* ---- the mouse, where the terminal sends it ---------------------------------------------------- */

/* The wheel scrolls whatever is on screen (three lines), a click on a tab opens it, a click on a
 * panel's row selects it. Everything stays reachable from the keyboard. */
static void handle_mouse(struct ui_app *a)
{
	MEVENT ev;

	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
		int k = (ev.bstate & BUTTON4_PRESSED) ? UI_FKEY(KEY_UP) : UI_FKEY(KEY_DOWN);
		for (int i = 0; i < 3; i++)
			handle_key(a, k);
		return;
	}
	if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) || a->mode != UI_M_NORMAL)
		return;
	if (ev.y == 0) {
		for (int v = 0; v < UI_V_COUNT; v++)
			if (ev.x >= a->tab_x0[v] && ev.x < a->tab_x1[v]) {
				enum ui_view before = a->view;
				a->view = (enum ui_view)v;
				if (a->view != before && ui_views[a->view]->sub && !ui_views[before]->sub)
					a->back_view = before;
				a->msg.text[0] = '\0';
			}
		return;
	}
	/* A field panel's rows start under its title row (content row 1). */
	if (ui_views[a->view]->keys & UI_CTX_FIELDS && ev.y >= 2 && ev.y < a->rows - 2) {
		struct ui_pos *p = &a->pos[a->view];
		p->cursor = p->top + (ev.y - 2);
		a->msg.text[0] = '\0';
	}
}
/* Loads the theme before curses; a problem becomes a status message, the default is used. */
static void load_theme(struct ui_app *a, const char *name)
{
	struct ui_ctx c = ui_ctx_of(a);
	struct err e;

	ui_theme_default(&a->theme);
	if (!name)
		return;
	if (ui_theme_load(name, &a->theme, &e)) {
		ui_status_err(&c, &e);
		ui_theme_default(&a->theme);
		return;
	}
	if (!strchr(name, '/'))
		snprintf(a->theme.name, sizeof a->theme.name, "%s", name);
}

/* Starts the terminal (curses, keys, mouse, colours) and the emergency save's hold on it. */
static SCREEN *start_screen(struct ui_app *a, const struct ui_opts *o, FILE **out, FILE **in)
{
	ui_signals_install();
	SCREEN *scr = ui_start_terminal(o->script != NULL, o->cols, o->rows, out, in);
	set_term(scr);
	ui_emergency_curses(true, !o->script);
	if (!getenv("ESCDELAY"))
		set_escdelay(50); /* a lone Esc must not feel dead over SSH */
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	if (!o->script) {
		/* Clicks and the wheel where the terminal sends them (Shift still selects text). */
		mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
		mouseinterval(0);
	}
	curs_set(0);
	ui_theme_init_colors(!o->no_color && !ui_no_color_env());
	ui_theme_apply(&a->theme);
	ui_emergency_track(&a->s);
	ui_offer_recovery(a);
	return scr;
}

/* The one loop: a key, the background work, a draw when something changed. */
static void run_loop(struct ui_app *a, bool script, struct ui_script *sc)
{
	bool more = false;
	while (!a->quit) {
		/* While the worker reads, wake up now and then to take its verdict; then look at the
		 * log at the follow pace. While the last change waits for a run and the log is not
		 * followed, look for the run's new log now and then. */
		bool stale = ui_session_diag_stale(&a->s);
		if (!script) {
			int t = input_timeout(a, more);
			if (stale && !a->s.live && (t < 0 || t > 500))
				t = 500;
			wtimeout(stdscr, t);
		}
		int key = script ? ui_read_script_key(a, sc) : ui_read_terminal_key();
		if (stale && !a->s.live && ui_session_log_newer(&a->s)) {
			struct ui_ctx c = ui_ctx_of(a);
			ui_session_diag_start(&a->s);
			ui_status(&c, false, "%s", _("A newer log: reading it for the next change."));
			ui_draw(a);
		}
		bool verdict = ui_take_verdict(a, false);
		verdict |= ui_views_tick(a);
		if (ui_interrupts_take()) {
			ui_interrupted(a);
			verdict = true; /* redraw */
		}
		if (key == 0)
			break; /* end of the script */
		if (key == UI_FKEY(KEY_MOUSE))
			handle_mouse(a);
		else if (key > 0)
			handle_key(a, key);
		bool tried = ui_retryctl_tick(a);
		bool grew = ui_follow_tick(a);
		more = grew && a->s.live && diag_state_pending(a->s.live);
		if (key > 0 || verdict || grew || tried)
			ui_draw(a);
	}
}

int ui_main(int argc, char **argv)
{
	static struct ui_app app;
	struct ui_app *a = &app;
	struct ui_opts o;
	struct err e;
	FILE *out = NULL, *in = NULL;
	struct ui_script sc = { 0 };
	SCREEN *scr;

	ui_parse_args(argc, argv, &o);
	if (o.script) {
		sc.path = o.script;
		sc.fp = strcmp(o.script, "-") ? fopen(o.script, "r") : stdin;
		if (!sc.fp)
			ui_die(ERR_NOINPUT, "%s: %s", o.script, strerror(errno));
	}
	/* Load first: a file that cannot be edited is refused like an editor refuses it, before
	 * the terminal is touched. */
	ui_session_on_change(ui_emergency_track);
	if (ui_session_open(&a->s, o.job, o.log, &e)) {
		/* A job that is not valid YAML or not a job does not keep its log from being read
		 * (SPEC §3.6): the log opens alone, and the job's error stays in sight. */
		struct err le;
		if (e.code != ERR_DATA || !o.log || ui_session_open(&a->s, NULL, o.log, &le)) {
			err_print(&e, stderr);
			return e.code ? e.code : ERR_SOFTWARE;
		}
		ui_session_job_failed(&a->s, &e);
		a->log_job_asked = true; /* the log's echo of the settings is not the job they gave */
	}
	ui_views_start(a);
	load_theme(a, o.theme);
	a->themes = ui_theme_names(&a->nthemes);
	/* Decided once: a terminal without UTF-8 (LANG=C in a container) gets ASCII stand-ins, and
	 * is told once how to get the full display. */
	ui_set_ascii(strcmp(nl_langinfo(CODESET), "UTF-8") != 0);
	if (ui_ascii() && !a->msg.text[0])
		snprintf(a->msg.text, sizeof a->msg.text, "%s",
			 _("The locale is not UTF-8, so the screen uses plain ASCII; a UTF-8 locale "
			   "(e.g. LANG=C.UTF-8) gives the full display."));
	if (a->s.log_from_runs && !a->msg.text[0])
		snprintf(a->msg.text, sizeof a->msg.text,
			 _("No log was given: opened the newest run log, %s (R shows the earlier "
			   "runs)."), a->s.log_path);
	a->script = o.script != NULL;
	a->retry_log_due = -1;
	a->view = a->s.log ? UI_V_LOG : UI_V_TRAINING;
	a->jobs_on = source_aitk_dir() || (o.job && source_is_aitk_arg(o.job));
	if (a->jobs_on && !o.job && !o.log)
		a->view = UI_V_JOBS;

	scr = start_screen(a, &o, &out, &in);
	if (*ui_running_note(a) && !a->msg.text[0])
		snprintf(a->msg.text, sizeof a->msg.text, "%s", ui_running_note(a));

	/* The first screen comes at once; the log is read meanwhile (SPEC §8). */
	ui_session_diag_start(&a->s);
	ui_fit_start(o.vram); /* nvidia-smi, when asked, meanwhile too */
	a->vram_arg = o.vram_arg;
	ui_draw(a);
	run_loop(a, o.script != NULL, &sc);

	endwin();
	ui_emergency_curses(false, false);
	delscreen(scr);
	if (a->said_on_quit[0]) /* friction (review 4): the save is confirmed after the screen */
		fprintf(stderr, "oomfix: %s\n", a->said_on_quit);
	if (o.script) {
		fclose(out);
		fclose(in);
		if (sc.fp != stdin)
			fclose(sc.fp);
	}
	/* Nothing may point at the texts once they are freed. */
	ui_emergency_forget();
	ui_views_end(a);
	ui_search_free(&a->search);
	/* A loop still running (the script ended): it stops its run without the grace period. */
	if (ui_retry_running(&a->retry)) {
		ui_retry_stop(&a->retry);
		ui_retry_stop(&a->retry);
	}
	ui_retry_free(&a->retry);
	free(a->retry_cmd);
	ui_session_close(&a->s);
	ui_theme_names_free(a->themes, a->nthemes);
	ui_recovery_free();
	return 0;
}
