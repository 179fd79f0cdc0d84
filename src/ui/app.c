/* app.c — the terminal UI's entry point: arguments, loading, terminal set-up, the one input loop
 * (keys, KEY_RESIZE, the --script reader), drawing each turn with werase + wnoutrefresh and one
 * doupdate, the emergency save on SIGHUP/SIGTERM, and the one die() path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/aitkdb.h"
#include "oomfix/i18n.h"
#include "oomfix/paths.h"
#include "oomfix/text.h"
#include "ui.h"

/* ---- emergency save -----------------------------------------------------------------------
 *
 * The handler may run at any moment, so it only reads these, written with the signals blocked.
 * save_emergency is async-signal-safe (open/write/fsync). endwin is not, so the handler restores
 * the terminal itself: the termios saved before curses started (tcsetattr is async-signal-safe)
 * and the terminal's own reset strings (rmcup, cnorm, sgr0, rmkx) taken from terminfo at start,
 * written with write(2). Then the signal is re-raised with its default action, so the exit
 * status says how the process ended.
 */
static struct {
	const char *volatile path;
	const char *volatile text;
	volatile size_t len;
	volatile sig_atomic_t dirty;
	volatile sig_atomic_t tty_ok;
	int tty_fd;
	struct termios tios;
	char reset[256];
	size_t reset_len;
} emerg;

static void on_fatal_signal(int sig)
{
	if (emerg.dirty && emerg.path && emerg.text)
		save_emergency(emerg.path, emerg.text, emerg.len);
	if (emerg.tty_ok) {
		ssize_t w = write(emerg.tty_fd, emerg.reset, emerg.reset_len);
		(void)w;
		tcsetattr(emerg.tty_fd, TCSANOW, &emerg.tios);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Ctrl-C is a request to quit, asked like q when there are unsaved edits; the loop takes it. A
 * UI that does not answer two more is stuck: the third ends it as SIGTERM would, saving first. */
static volatile sig_atomic_t interrupts;

static void on_interrupt(int sig)
{
	if (++interrupts >= 3)
		on_fatal_signal(sig);
}

static void emergency_track(const struct ui_session *s)
{
	sigset_t block, old;
	size_t len = 0;
	const char *text = ui_cur(s) ? doc_text(ui_cur(s), &len) : NULL;

	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	emerg.path = s->job_path;
	emerg.text = text;
	emerg.len = len;
	emerg.dirty = ui_dirty(s);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGINT);
	/* Installed before newterm, so ncurses leaves SIGINT and SIGTERM to us. */
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_interrupt; /* no SA_RESTART: the wait for a key returns at once */
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file-size limit must become EFBIG, not death */
}

/* Remembers how to put the terminal back without curses (for the signal handler). */
static void remember_reset(int fd)
{
	static const char *const caps[] = { "rmcup", "cnorm", "sgr0", "rmkx" };

	emerg.reset_len = 0;
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		char *s = tigetstr((char *)caps[i]);
		if (!s || s == (char *)-1)
			continue;
		size_t n = strlen(s);
		if (emerg.reset_len + n < sizeof emerg.reset) {
			memcpy(emerg.reset + emerg.reset_len, s, n);
			emerg.reset_len += n;
		}
	}
	emerg.tty_fd = fd;
}

/* ---- the one die() path ---------------------------------------------------------------------- */

static bool curses_on;

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
	va_list ap;

	if (curses_on) {
		endwin();
		curses_on = false;
	}
	fputs("oomfix: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* ---- status and helpers ------------------------------------------------------------------------ */

/* The context the views are given this turn: the content area, the page and the status line. */
static struct ui_ctx ctx_of(struct ui_app *a)
{
	int page = a->rows - 4;

	return (struct ui_ctx){ .win = stdscr, .r = { 1, 0, a->rows - 3, a->cols }, .rows = a->rows,
				.cols = a->cols, .page = page > 1 ? page : 1, .msg = &a->msg };
}

/* ---- drawing ------------------------------------------------------------------------------------ */

static unsigned current_ctx(const struct ui_app *a)
{
	switch (a->mode) {
	case UI_M_HELP: return UI_CTX_HELP | UI_CTX_SCROLL;
	case UI_M_WALK: return UI_CTX_WALK | UI_CTX_SCROLL;
	case UI_M_CONFIRM: return UI_CTX_CONFIRM;
	case UI_M_PROMPT: return UI_CTX_PROMPT;
	default: break;
	}
	return UI_CTX_VIEWS | ui_views[a->view]->keys;
}

static bool view_shown(const struct ui_app *a, enum ui_view v)
{
	return !ui_views[v]->shown || ui_views[v]->shown(a);
}

static void draw_tabs(struct ui_app *a)
{
	int x = 0;
	char buf[256];

	ui_fill(stdscr, 0, 0, a->cols, UI_R_TABBAR);
	/* When the names are too wide for the terminal (long translations), the bar starts at a
	 * later tab so that the current one is always on screen; "<" says some are left out. */
	bool mode_tab = a->mode == UI_M_WALK || a->mode == UI_M_HELP;
	const char *mode_name = a->mode == UI_M_WALK ? _("Walk-through") : _("Help");
	int first = 0, widths[UI_V_COUNT], active = mode_tab ? UI_V_COUNT - 1 : (int)a->view;
	for (int v = 0; v < UI_V_COUNT; v++) {
		const char *name = ui_view_name((enum ui_view)v);
		widths[v] = view_shown(a, (enum ui_view)v) ? text_width(name, strlen(name)) + 2 : 0;
	}
	for (;;) {
		int end = (first ? 1 : 0) + (mode_tab ? text_width(mode_name, strlen(mode_name)) + 2 : 0);
		for (int v = first; v <= active; v++)
			end += widths[v];
		if (end <= a->cols || first == active)
			break;
		first++;
	}
	for (int v = 0; v < UI_V_COUNT; v++)
		a->tab_x0[v] = a->tab_x1[v] = -1;
	if (first) {
		ui_put(stdscr, 0, 0, 1, UI_R_TABBAR, "<");
		x = 1;
	}
	for (int v = first; v < UI_V_COUNT; v++) {
		bool on = v == (int)a->view && a->mode != UI_M_WALK && a->mode != UI_M_HELP;
		if (!view_shown(a, (enum ui_view)v))
			continue;
		/* Brackets mark the current tab without colour. */
		snprintf(buf, sizeof buf, on ? "[%s]" : " %s ", ui_view_name((enum ui_view)v));
		a->tab_x0[v] = x;
		x += ui_put(stdscr, 0, x, a->cols - x, on ? UI_R_TAB_ACTIVE : UI_R_TABBAR, buf);
		a->tab_x1[v] = x;
	}
	if (mode_tab) {
		snprintf(buf, sizeof buf, "[%s]", mode_name);
		x += ui_put(stdscr, 0, x, a->cols - x, UI_R_TAB_ACTIVE, buf);
	}
	/* The file name and whether it has unsaved edits, at the right when there is room. */
	if (a->s.job_path) {
		/* A web UI job is called aitk:NAME, not by the name of its backup. */
		const char *base = source_row(a->s.src) ? NULL : strrchr(a->s.job_path, '/');
		const char *shown = source_row(a->s.src) ? source_label(a->s.src) : a->s.job_path;
		snprintf(buf, sizeof buf, "%s%s ", base ? base + 1 : shown,
			 ui_dirty(&a->s) ? _(" [+]") : "");
		int w = text_width(buf, strlen(buf));
		if (x + 1 + w <= a->cols)
			ui_put(stdscr, 0, a->cols - w, w, UI_R_TABBAR, buf);
	}
}

/* Actions that change or save the job, or replace it: the loop's while it runs. */
static bool retry_locks(enum ui_act act)
{
	switch (act) {
	case UI_A_APPLY_FIRST: case UI_A_UNDO: case UI_A_REDO: case UI_A_EDIT: case UI_A_TOGGLE:
	case UI_A_EDITOR: case UI_A_SAVE: case UI_A_WALK: case UI_A_PICK: case UI_A_OPEN_JOB:
	case UI_A_QUEUE_JOB:
		return true;
	default:
		return false;
	}
}

/* Actions that only work with a job file open: without one the footer does not offer them. */
static bool needs_job(const struct ui_app *a, enum ui_act act)
{
	if (a->s.job && !a->s.read_only)
		return false;
	switch (act) {
	case UI_A_APPLY_FIRST: case UI_A_UNDO: case UI_A_DIFF: case UI_A_SAVE: case UI_A_WALK:
	case UI_A_EDIT: case UI_A_TOGGLE: case UI_A_EDITOR: case UI_A_RETRY:
		return true;
	default:
		return false;
	}
}

/* The way to help and the way out are always in the footer; the others give way first. */
static bool pinned(enum ui_act act)
{
	return act == UI_A_HELP || act == UI_A_QUIT || act == UI_A_HELP_CLOSE ||
	       act == UI_A_WALK_QUIT;
}

static void draw_footer(struct ui_app *a)
{
	unsigned ctx = current_ctx(a);
	int y = a->rows - 1, n = 0, gap = 2;
	struct { char keys[64], word[128]; int w; bool pin, on; } e[32];

	ui_fill(stdscr, y, 0, a->cols, UI_R_FOOTER);
	bool locked = ui_retry_running(&a->retry);
	for (size_t i = 0; i < ui_nactions && n < 32; i++) {
		const struct ui_action *act = &ui_actions[i];
		if (!act->footer || !(act->ctx & ctx) || needs_job(a, act->act) ||
		    (locked && retry_locks(act->act)))
			continue;
		ui_action_keys(act, e[n].keys, sizeof e[n].keys);
		/* Only the first key in the footer: it is a hint, the help lists them all. */
		char *slash = strchr(e[n].keys, '/');
		if (slash && slash != e[n].keys)
			*slash = '\0';
		/* In Plan and Diff q goes back, and the footer says so. */
		bool back = act->act == UI_A_QUIT && a->mode == UI_M_NORMAL && ui_views[a->view]->sub;
		snprintf(e[n].word, sizeof e[n].word, " %s", back ? _("back") : _(act->footer));
		e[n].w = text_width(e[n].keys, strlen(e[n].keys)) +
			 text_width(e[n].word, strlen(e[n].word));
		e[n].pin = pinned(act->act);
		e[n].on = true;
		n++;
	}
	/* Fit: first closer together, then leave out the last entries that are not pinned. */
	for (;;) {
		int total = 1;
		for (int k = 0; k < n; k++)
			total += e[k].on ? e[k].w + gap : 0;
		if (total - gap <= a->cols)
			break;
		if (gap == 2) {
			gap = 1;
			continue;
		}
		int drop = -1;
		for (int k = n - 1; k >= 0 && drop < 0; k--)
			if (e[k].on && !e[k].pin)
				drop = k;
		if (drop < 0)
			break;
		e[drop].on = false;
	}
	int x = 1;
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < n; k++) {
			if (!e[k].on || e[k].pin != (pass == 1) || x >= a->cols)
				continue;
			x += ui_put(stdscr, y, x, a->cols - x, UI_R_FOOTER_KEY, e[k].keys);
			x += ui_put(stdscr, y, x, a->cols - x, UI_R_FOOTER, e[k].word);
			x += gap;
		}
}

static const char *question(const struct ui_app *a)
{
	switch (a->confirm_kind) {
	case UI_Q_SAVE: return _("Write these changes? y = save, n = not now");
	case UI_Q_OVERWRITE: return _("The file changed on disk since it was loaded. Overwrite it "
				      "anyway? y = overwrite, n = keep the disk version");
	case UI_Q_QUIT: return _("Quit with unsaved changes? s = save them and quit, y = quit "
				 "without saving, n = stay");
	case UI_Q_UNTRIED: return _("The last change has not been tried yet: run the job first. "
				    "Apply another change anyway? y = apply, n = not now");
	case UI_Q_RECOVER: return _("Recover the unsaved edits from the last session? y = load "
				    "them as unsaved changes, n = leave them");
	case UI_Q_LOG_JOB: return _("The log holds the job's settings as the trainer printed them. "
				    "Open them read-only, so the panels and the plan work? y = open, "
				    "n = log only");
	case UI_Q_RELOAD: return _("Reload it? y = reload (unsaved edits are re-applied where "
				   "they still apply), n = keep this version");
	case UI_Q_RETRY: return _("Retry until the job fits? y = yes, each run goes to its end; "
				  "p = yes, and stop a run once it is 20 steps past the last failure "
				  "and through a sampling round; n = no");
	case UI_Q_RETRY_STOP: return _("Stop the retry? Its run is stopped first (Ctrl-C, then "
				       "SIGTERM); the job stays as the last try left it. y = stop, "
				       "n = let it go on");
	case UI_Q_RETRY_QUIT: return _("A retry is running. Stop it and quit? y = stop its run and "
				       "quit once it has stopped, n = stay");
	case UI_Q_QUEUE: return _("Queue it again for the web UI's worker, as its start button "
				  "does? y = queue, n = leave it");
	}
	return "";
}

/* Draws a message word-wrapped over up to STATUS_MAX_LINES rows ending at row `last`, each row
 * filled in role; `lead` (e.g. "error: ") comes first and the lines after it are indented to
 * match. Returns the rows used. A long message is never cut: an error's end says why, and a
 * question's end says what n does. */
#define STATUS_MAX_LINES 4
static int draw_wrapped(struct ui_app *a, int last, enum ui_role role, const char *lead,
			const char *msg)
{
	size_t len = strlen(msg), off[STATUS_MAX_LINES], cut[STATUS_MAX_LINES];
	int n = 0, lw = lead ? text_width(lead, strlen(lead)) : 0, width = a->cols - 1 - lw;
	size_t p = 0;

	while (n < STATUS_MAX_LINES && (p < len || n == 0)) {
		size_t next = len;
		off[n] = p;
		cut[n] = p < len ? text_wrap_next(msg + p, len - p, width, &next) : 0;
		if (n == STATUS_MAX_LINES - 1)
			cut[n] = len - p; /* the last row takes the rest, clipped at the edge */
		p += next ? next : len - p;
		n++;
	}
	if (last - n + 1 < 1)
		n = last; /* never over the tab bar */
	for (int i = 0; i < n; i++) {
		int y = last - n + 1 + i;
		ui_fill(stdscr, y, 0, a->cols, role);
		if (i == 0 && lead)
			ui_put(stdscr, y, 1, lw, role, lead);
		ui_putn(stdscr, y, 1 + lw, width, role, msg + off[i], cut[i]);
	}
	return n;
}

/* The position in a scrolled screen, at the right of the status row when the message leaves
 * room for it: on the save screen it says there is more of the diff below the question. */
static void draw_scroll_info(struct ui_app *a, int y, int used)
{
	if (!a->msg.scroll_info[0])
		return;
	int w = text_width(a->msg.scroll_info, strlen(a->msg.scroll_info));
	if (used + 2 + w <= a->cols - 1)
		ui_put(stdscr, y, a->cols - w - 1, w, UI_R_DIM, a->msg.scroll_info);
}

static void draw_status(struct ui_app *a)
{
	int y = a->rows - 2;
	char buf[1200];

	ui_fill(stdscr, y, 0, a->cols, UI_R_STATUS);
	if (a->mode == UI_M_CONFIRM) {
		/* The recovery, reload and queue questions name their file or job (set as the status). */
		if ((a->confirm_kind == UI_Q_RECOVER || a->confirm_kind == UI_Q_RELOAD ||
		     a->confirm_kind == UI_Q_QUEUE) &&
		    a->msg.text[0])
			snprintf(buf, sizeof buf, "%s %s", a->msg.text, question(a));
		else
			snprintf(buf, sizeof buf, "%s", question(a));
		/* The question ends on the status row: the footer below keeps the y and n keys. */
		if (draw_wrapped(a, y, UI_R_DIALOG, NULL, buf) == 1)
			draw_scroll_info(a, y, 1 + text_width(buf, strlen(buf)));
		return;
	}
	if (a->mode == UI_M_PROMPT && a->prompt_kind != UI_P_FIELD) {
		int used = ui_put(stdscr, y, 0, a->cols, UI_R_DIALOG, a->prompt_label);
		used += ui_put_input(stdscr, y, used, a->cols - used, UI_R_DIALOG, a->prompt_buf,
				     a->prompt_len, a->prompt_cur);
		wmove(stdscr, y, used);
		return;
	}
	if (!a->msg.text[0] && a->s.diag_pending) {
		ui_put(stdscr, y, 1, a->cols - 1, UI_R_STATUS,
		       _("Diagnosing the log... (the keys work meanwhile)"));
	}
	if (!a->msg.text[0]) {
		draw_scroll_info(a, y, 0);
		return;
	}
	/* Messages can quote a file's text (an error's value): sanitise them too. */
	ui_for_terminal(buf, text_sanitize(a->msg.text, strlen(a->msg.text), buf, sizeof buf));
	enum ui_role role = a->msg.error ? UI_R_ERROR : UI_R_STATUS;
	const char *lead = a->msg.error ? _("error: ") : NULL;
	int lw = lead ? text_width(lead, strlen(lead)) : 0;
	size_t len = strlen(buf), next;
	if (text_wrap_next(buf, len, a->cols - 1 - lw, &next) >= len) {
		draw_wrapped(a, y, role, lead, buf);
		draw_scroll_info(a, y, 1 + lw + text_width(buf, len));
		return;
	}
	/* Two rows go on over the footer (until the next key), as the status row's neighbour;
	 * a longer message grows upwards over the bottom of the view instead. */
	size_t rest = len - next;
	bool two = text_wrap_next(buf + next, rest, a->cols - 1 - lw, &next) >= rest;
	draw_wrapped(a, two ? y + 1 : a->rows - 1, role, lead, buf);
}

static void draw_too_small(struct ui_app *a)
{
	char buf[128];
	const char *l1 = _("Terminal too small");

	snprintf(buf, sizeof buf, _("need %dx%d, have %dx%d"), UI_MIN_COLS, UI_MIN_ROWS, a->cols,
		 a->rows);
	int y = a->rows / 2 - 1;
	ui_put(stdscr, y > 0 ? y : 0, 1, a->cols - 1, UI_R_ERROR, l1);
	ui_put(stdscr, y + 1, 1, a->cols - 1, UI_R_NORMAL, buf);
	/* q does not quit over unsaved changes (there is no room to ask): say so, not "press q". */
	ui_put(stdscr, y + 2, 1, a->cols - 1, UI_R_DIM,
	       ui_dirty(&a->s) ? _("Unsaved changes: enlarge the window to save or quit.")
			       : _("Enlarge the window, or press q to quit."));
}

static void draw(struct ui_app *a)
{
	a->rows = LINES;
	a->cols = COLS;
	werase(stdscr);
	curs_set(0);
	a->msg.scroll_info[0] = '\0';
	if (a->cols < UI_MIN_COLS || a->rows < UI_MIN_ROWS) {
		draw_too_small(a);
	} else {
		struct ui_ctx c = ctx_of(a);
		draw_tabs(a);
		draw_footer(a);
		if (a->mode == UI_M_HELP)
			ui_help_draw(a, &c);
		else if (a->mode == UI_M_WALK)
			ui_walk_draw(a, &c);
		else if (a->mode == UI_M_CONFIRM &&
			 (a->confirm_kind == UI_Q_SAVE || a->confirm_kind == UI_Q_OVERWRITE))
			ui_save_draw(a, &c);
		else
			ui_views[a->view]->draw(a, &c);
		/* The prompt places the cursor last; draw_status must not move it afterwards. */
		int cy, cx;
		getyx(stdscr, cy, cx);
		draw_status(a);
		if (a->mode == UI_M_PROMPT) {
			if (a->prompt_kind == UI_P_FIELD)
				wmove(stdscr, cy, cx);
			curs_set(1);
		}
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/* ---- actions ------------------------------------------------------------------------------------ */

static bool same_stamp(const struct save_stamp *x, const struct save_stamp *y)
{
	return x->exists == y->exists && x->dev == y->dev && x->ino == y->ino &&
	       x->size == y->size && x->mtime_sec == y->mtime_sec && x->mtime_nsec == y->mtime_nsec;
}

/* When the job changed on disk (another program, another oomfix) and the user has not already
 * chosen to keep this version of it, asks whether to reload. True when it asked. */
static bool check_disk(struct ui_app *a, const struct ui_ctx *c)
{
	struct save_stamp now;

	if (!ui_session_changed_on_disk(&a->s, &now))
		return false;
	if (a->have_declined && same_stamp(&now, &a->declined))
		return false;
	a->declined = now; /* the version asked about */
	a->confirm_return = a->mode == UI_M_CONFIRM ? UI_M_NORMAL : a->mode;
	a->mode = UI_M_CONFIRM;
	a->confirm_kind = UI_Q_RELOAD;
	const char *base = strrchr(a->s.job_path, '/');
	ui_status(c, false, _("%s changed on disk."), base ? base + 1 : a->s.job_path);
	return true;
}

static void reload(struct ui_app *a, const struct ui_ctx *c)
{
	struct err e;
	size_t kept, lost;
	bool had = ui_dirty(&a->s);

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
	else
		ui_status(c, true, _("Reloaded the file from disk; %zu of your unsaved edits no longer "
				     "apply there and were dropped (%zu kept)."), lost, kept);
}

/* Asks to save (shows the save screen); from the walk-through or the `s` key. */
static void ask_save(struct ui_app *a, const struct ui_ctx *c, enum ui_mode back)
{
	if (!a->s.job_path) {
		ui_status(c, true, "%s", _("No job file is open: nothing to save."));
		return;
	}
	if (!ui_dirty(&a->s)) {
		ui_status(c, false, "%s", _("Nothing to save: no unsaved changes."));
		return;
	}
	/* A newer file on disk is offered first: saving would overwrite it. */
	if (check_disk(a, c))
		return;
	a->mode = UI_M_CONFIRM;
	a->confirm_kind = UI_Q_SAVE;
	a->confirm_return = back;
	a->save_pos = (struct ui_pos){ 0, 0 };
}

static void do_save(struct ui_app *a, unsigned flags)
{
	struct ui_ctx c = ctx_of(a);
	struct err e;
	int rc = ui_session_save(&a->s, flags, &e);

	a->mode = a->confirm_return == UI_M_WALK ? UI_M_NORMAL : a->confirm_return;
	if (rc == ERR_TEMPFAIL && !(flags & SAVE_FORCE) && !source_running(a->s.src)) {
		a->mode = UI_M_CONFIRM;
		a->confirm_kind = UI_Q_OVERWRITE;
		ui_status(&c, true, "%s", e.msg);
		return;
	}
	if (rc) {
		ui_status_err(&c, &e);
		a->quit_after_save = false;
		return;
	}
	if (e.code)
		ui_status(&c, true, _("Saved %s, but the journal could not be written: %s"),
			  a->s.job_path, e.msg);
	else
		ui_status(&c, false, _("Saved %s (previous version in %s~, journal in %s.oomfix.md)"),
			  a->s.job_path, a->s.job_path, a->s.job_path);
	if (a->quit_after_save && !ui_dirty(&a->s))
		a->quit = true;
}

static void apply_fix(struct ui_app *a, enum fix_id id, bool confirmed);
static void retry_begin(struct ui_app *a, long long probe);
static void retry_cancelled(struct ui_app *a, const char *why);

static char *recover_text;
static size_t recover_len;

static void answer(struct ui_app *a, bool yes)
{
	struct ui_ctx c = ctx_of(a);
	enum ui_confirm_kind k = a->confirm_kind;

	a->mode = a->confirm_return;
	switch (k) {
	case UI_Q_SAVE:
		if (yes)
			do_save(a, 0);
		else
			ui_status(&c, false, "%s", _("Not saved."));
		break;
	case UI_Q_OVERWRITE:
		if (yes)
			do_save(a, SAVE_FORCE);
		else
			ui_status(&c, false, "%s", _("Not saved: the file on disk was left as it is."));
		break;
	case UI_Q_QUIT:
		if (yes)
			a->quit = true;
		break;
	case UI_Q_UNTRIED:
		if (yes)
			apply_fix(a, a->pick_fix, true);
		else
			ui_status(&c, false, "%s", _("Nothing changed. Save (s), run the job, and open "
						    "its new log."));
		break;
	case UI_Q_LOG_JOB: {
		struct err e;
		if (!yes)
			break;
		if (ui_session_open_log_job(&a->s, false, &e))
			ui_status_err(&c, &e);
		else
			ui_status(&c, false, "%s", _("Opened the settings from the log, read-only: the "
						     "panels and the Plan show them; nothing can be "
						     "saved."));
		break;
	}
	case UI_Q_RELOAD:
		if (yes) {
			reload(a, &c);
		} else {
			a->have_declined = true;
			ui_status(&c, false, "%s", _("Kept this version; saving will ask before it "
						     "overwrites the file on disk."));
		}
		break;
	case UI_Q_RETRY:
		if (yes)
			retry_begin(a, 0);
		else
			retry_cancelled(a, _("No retry."));
		break;
	case UI_Q_RETRY_STOP:
		if (yes) {
			ui_retry_stop(&a->retry);
			ui_status(&c, false, "%s", _("Stopping the retry: its run is being stopped."));
		}
		break;
	case UI_Q_RETRY_QUIT:
		if (yes) {
			ui_retry_stop(&a->retry);
			a->quit_after_retry = true;
			ui_status(&c, false, "%s", _("Stopping the retry's run; oomfix quits once it has "
						    "stopped."));
		}
		break;
	case UI_Q_QUEUE:
		if (yes)
			ui_jobs_queue_selected(a, &c);
		else
			ui_status(&c, false, "%s", _("Not queued: the job was left as it is."));
		break;
	case UI_Q_RECOVER: {
		struct err e;
		if (!yes) {
			ui_status(&c, false, "%s", _("The recovery file was left where it is."));
		} else if (ui_session_replace_text(&a->s, recover_text, recover_len, &e)) {
			ui_status_err(&c, &e);
		} else {
			ui_status(&c, false, "%s", _("Recovered the edits as unsaved changes: d shows "
						    "them, s saves them."));
		}
		free(recover_text);
		recover_text = NULL;
		break;
	}
	}
}

/* Applies `id` (the first fix, or a step picked in the Plan view). One change, then a run: while
 * an applied change has not been tried, another one is only made after a yes (`confirmed`). */
static void apply_fix(struct ui_app *a, enum fix_id id, bool confirmed)
{
	struct ui_ctx c = ctx_of(a);
	struct err e;
	char note[512];
	bool changed;

	if (id == FIX_FRESH_WORKER) {
		ui_status(&c, false, "%s", _("Nothing to change in the YAML: start a fresh worker (see "
					    "Plan)."));
		return;
	}
	if (!confirmed && ui_session_diag_stale(&a->s)) {
		a->mode = UI_M_CONFIRM;
		a->confirm_kind = UI_Q_UNTRIED;
		a->confirm_return = UI_M_NORMAL;
		a->pick_fix = id;
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

static void apply_first_fix(struct ui_app *a)
{
	struct ui_ctx c = ctx_of(a);
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
	apply_fix(a, id, false);
}

/* ---- retry until the job fits (r) -------------------------------------------------------------
 *
 * The loop is `oomfix retry` run as a child (retry.c); here it is started after a question, its
 * tries are followed (each try's log is shown in the Log view as it is written, and the job is
 * reloaded after each fix the loop saves), and it is stopped. While it runs, the job is the
 * loop's: nothing that would change or save it is allowed here.
 */

#define RETRY_PROBE_STEPS 20

const char *ui_retry_from_log(const struct ui_app *a)
{
	const struct ui_session *s = &a->s;
	if (!s->log_path || !s->have_diag || s->diag_pending || !s->diag.oom || s->diag.survived ||
	    ui_session_diag_stale(s) || ui_dirty(s))
		return NULL;
	return s->log_path;
}

static void retry_cancelled(struct ui_app *a, const char *why)
{
	struct ui_ctx c = ctx_of(a);
	a->retry_asking = false;
	if (a->view == UI_V_RETRY && !a->retry.started)
		a->view = a->s.log ? UI_V_LOG : UI_V_TRAINING;
	ui_status(&c, false, "%s", why);
}

/* r: stop a loop that runs (asked first, in the Retry view), or set one up. */
static void retry_key(struct ui_app *a, const struct ui_ctx *c)
{
	if (ui_retry_running(&a->retry)) {
		if (a->view != UI_V_RETRY) {
			a->view = UI_V_RETRY;
			ui_status(c, false, "%s", _("The retry is running; r here stops it."));
			return;
		}
		a->mode = UI_M_CONFIRM;
		a->confirm_kind = UI_Q_RETRY_STOP;
		a->confirm_return = UI_M_NORMAL;
		return;
	}
	if (!a->s.job || a->s.read_only || a->s.job_bad || !a->s.src) {
		ui_status(c, true, "%s", _("No job file is open: the retry changes a job, so start "
					   "oomfix with JOB.yaml (or aitk:NAME)."));
		return;
	}
	if (ui_dirty(&a->s)) {
		ui_status(c, true, "%s", _("There are unsaved changes: save them (s) or undo them (u) "
					   "first; the retry saves the job itself after each run."));
		return;
	}
	if (source_running(a->s.src)) {
		ui_status(c, true, _("%s is running in the web UI: the retry starts the runs itself, "
				     "so stop it there (or let it end) first."), source_label(a->s.src));
		return;
	}
	a->retry_asking = true;
	a->view = UI_V_RETRY;
	a->pos[UI_V_RETRY] = (struct ui_pos){ 0, 0 };
	if (source_row(a->s.src)) { /* the web UI's worker runs it: nothing to type */
		a->mode = UI_M_CONFIRM;
		a->confirm_kind = UI_Q_RETRY;
		a->confirm_return = UI_M_NORMAL;
		return;
	}
	char *cmd = a->retry_cmd ? strdup(a->retry_cmd) : ui_retry_guess_command(a->s.job_path);
	a->mode = UI_M_PROMPT;
	a->prompt_kind = UI_P_RETRY;
	snprintf(a->prompt_label, sizeof a->prompt_label, "%s", _("Run the job with: "));
	snprintf(a->prompt_buf, sizeof a->prompt_buf, "%s", cmd ? cmd : "");
	a->prompt_len = a->prompt_cur = strlen(a->prompt_buf);
	free(cmd);
	ui_status(c, false, "%s", "");
}

/* The command was typed: ask before the first run. */
static void retry_cmd_done(struct ui_app *a)
{
	size_t k = 0;
	while (k < a->prompt_len && (a->prompt_buf[k] == ' ' || a->prompt_buf[k] == '\t'))
		k++;
	if (k == a->prompt_len) {
		retry_cancelled(a, _("No command: no retry."));
		return;
	}
	free(a->retry_cmd);
	a->retry_cmd = strndup(a->prompt_buf, a->prompt_len);
	a->mode = UI_M_CONFIRM;
	a->confirm_kind = UI_Q_RETRY;
	a->confirm_return = UI_M_NORMAL;
}

static void retry_begin(struct ui_app *a, long long probe)
{
	struct ui_ctx c = ctx_of(a);
	struct err e;
	const char *from = ui_retry_from_log(a);
	bool web = source_row(a->s.src) != NULL;
	const char *cmd = web ? NULL : a->retry_cmd;

	a->retry_asking = false;
	if (!web && !cmd) {
		retry_cancelled(a, _("No command: no retry."));
		return;
	}
	if (ui_retry_start(&a->retry, source_label(a->s.src), from, cmd, probe, UI_RETRY_MAX_TRIES,
			   &e)) {
		a->view = a->retry.started ? UI_V_RETRY : a->s.log ? UI_V_LOG : UI_V_TRAINING;
		ui_status_err(&c, &e);
		return;
	}
	if (cmd)
		ui_retry_remember_command(a->s.job_path, cmd);
	a->view = UI_V_RETRY;
	a->retry_picked = false;
	a->retry_log_due = -1;
	a->pos[UI_V_RETRY] = (struct ui_pos){ 0, 0 };
	ui_status(&c, false, "%s",
		  from ? _("Retry started from the log on screen: its fix first, then a run.")
		       : web ? _("Retry started: the job is queued in the web UI.")
			     : _("Retry started: the first run is of the job as it is."));
}

/* Shows try i's log in the Log view (later, when the log on screen is still being read). */
static bool show_try(struct ui_app *a, long long i, bool switch_view)
{
	struct ui_ctx c = ctx_of(a);
	struct err e;
	const struct ui_try *t = &a->retry.tries[i];

	if (!a->s.log_path || strcmp(a->s.log_path, t->log) != 0) {
		int rc = ui_session_set_log(&a->s, t->log, &e);
		if (rc == ERR_TEMPFAIL) {
			a->retry_log_due = i;
			return false;
		}
		if (rc) {
			ui_status_err(&c, &e);
			return false;
		}
		a->pos[UI_V_LOG] = (struct ui_pos){ 0, 0 };
		a->log_moved = false;
		a->follow_off = false;
		a->bell_done = false;
	}
	a->retry_log_due = -1;
	if (switch_view)
		a->view = UI_V_LOG;
	return true;
}

/* The loop saved the job: take the new text (no edits can be pending, they are refused). A job
 * file that did not change keeps its history; a web UI job's row is read again. */
static void retry_reload(struct ui_app *a)
{
	struct ui_ctx c = ctx_of(a);
	struct err e;
	struct save_stamp now;
	size_t kept, lost;
	if (!source_row(a->s.src) && !ui_session_changed_on_disk(&a->s, &now))
		return;
	if (ui_session_reload(&a->s, &kept, &lost, &e))
		ui_status_err(&c, &e);
	a->have_declined = false;
}

/* Takes what the loop did since the last turn; true when the screen changed. */
static bool retry_tick(struct ui_app *a)
{
	if (a->retry_log_due >= 0 && (size_t)a->retry_log_due < a->retry.ntries)
		show_try(a, a->retry_log_due, false);
	unsigned b = ui_retry_poll(&a->retry);
	if (!b)
		return false;
	struct ui_ctx c = ctx_of(a);
	const struct ui_retry *r = &a->retry;
	if (b & UI_RT_FIX) {
		retry_reload(a);
		for (size_t i = r->ntries; i-- > 0;)
			if (r->tries[i].fix) {
				ui_status(&c, false, _("%s → %s: saved; the next run tries it."),
					  r->tries[i].summary ? r->tries[i].summary : "",
					  r->tries[i].fix);
				break;
			}
	}
	if ((b & UI_RT_TRY) && r->ntries && r->tries[r->ntries - 1].n > 0)
		show_try(a, (long long)r->ntries - 1, false);
	if (b & UI_RT_END) {
		char buf[700];
		retry_reload(a);
		beep(); /* once, for the whole loop: the tries on the way do not ring */
		a->bell_done = true;
		ui_retry_last_error(r, buf, sizeof buf);
		if (r->text)
			ui_status(&c, !strcmp(r->outcome, "error"), _("Retry: %s"), r->text);
		else if (buf[0])
			ui_status(&c, true, _("Retry: %s"), buf);
		else
			ui_status(&c, true, _("Retry: it ended with status %d."), r->status);
		if (a->quit_after_retry)
			a->quit = true;
	}
	return true;
}

static void next_theme(struct ui_app *a)
{
	struct ui_ctx c = ctx_of(a);
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

/* The start of the UTF-8 character before byte p, and the end of the one at p. */
static size_t utf8_back(const char *s, size_t p)
{
	while (p > 0 && ((unsigned char)s[--p] & 0xC0) == 0x80)
		;
	return p;
}

static size_t utf8_fwd(const char *s, size_t len, size_t p)
{
	if (p < len)
		p++;
	while (p < len && ((unsigned char)s[p] & 0xC0) == 0x80)
		p++;
	return p;
}

/* The line editor: typing goes in at the cursor; the keys move and delete as in a shell. */
static void prompt_key(struct ui_app *a, const struct ui_ctx *c, enum ui_act act, int key)
{
	if (a->prompt_cur > a->prompt_len)
		a->prompt_cur = a->prompt_len;
	size_t p = a->prompt_cur;

	switch (act) {
	case UI_A_PROMPT_OK:
		a->mode = UI_M_NORMAL;
		if (a->prompt_kind == UI_P_RETRY) {
			retry_cmd_done(a);
			return;
		}
		/* The prompt was opened by the view on screen: the line is its to take. */
		if (ui_views[a->view]->prompt_done)
			ui_views[a->view]->prompt_done(a, c);
		return;
	case UI_A_PROMPT_CANCEL:
		a->mode = UI_M_NORMAL;
		if (a->prompt_kind == UI_P_RETRY)
			retry_cancelled(a, _("Cancelled."));
		else
			ui_status(c, false, "%s", _("Cancelled."));
		return;
	case UI_A_PROMPT_BS:
		/* Back over one whole UTF-8 character, before the cursor. */
		if (p > 0) {
			size_t q = utf8_back(a->prompt_buf, p);
			memmove(a->prompt_buf + q, a->prompt_buf + p, a->prompt_len - p + 1);
			a->prompt_len -= p - q;
			a->prompt_cur = q;
		}
		return;
	case UI_A_PROMPT_DEL:
		if (p < a->prompt_len) {
			size_t q = utf8_fwd(a->prompt_buf, a->prompt_len, p);
			memmove(a->prompt_buf + p, a->prompt_buf + q, a->prompt_len - q + 1);
			a->prompt_len -= q - p;
		}
		return;
	case UI_A_PROMPT_CLEAR: /* C-u: everything before the cursor, as in a shell */
		memmove(a->prompt_buf, a->prompt_buf + p, a->prompt_len - p + 1);
		a->prompt_len -= p;
		a->prompt_cur = 0;
		return;
	case UI_A_PROMPT_WORD: { /* C-w: the word before the cursor and the spaces after it */
		size_t q = p;
		while (q > 0 && a->prompt_buf[q - 1] == ' ')
			q--;
		while (q > 0 && a->prompt_buf[q - 1] != ' ')
			q--;
		memmove(a->prompt_buf + q, a->prompt_buf + p, a->prompt_len - p + 1);
		a->prompt_len -= p - q;
		a->prompt_cur = q;
		return;
	}
	case UI_A_PROMPT_LEFT:
		a->prompt_cur = utf8_back(a->prompt_buf, p);
		return;
	case UI_A_PROMPT_RIGHT:
		a->prompt_cur = utf8_fwd(a->prompt_buf, a->prompt_len, p);
		return;
	case UI_A_PROMPT_HOME:
		a->prompt_cur = 0;
		return;
	case UI_A_PROMPT_END:
		a->prompt_cur = a->prompt_len;
		return;
	default:
		break;
	}
	if (key >= 0x20 && key < 0x110000 && key != 0x7F && !(key >= 0x80 && key < 0xA0)) {
		char mb[8];
		mbstate_t st;
		memset(&st, 0, sizeof st);
		size_t n = wcrtomb(mb, (wchar_t)key, &st);
		if (n != (size_t)-1 && a->prompt_len + n < sizeof a->prompt_buf) {
			memmove(a->prompt_buf + p + n, a->prompt_buf + p, a->prompt_len - p + 1);
			memcpy(a->prompt_buf + p, mb, n);
			a->prompt_len += n;
			a->prompt_cur = p + n;
		}
	}
}

/* Carries out what a view or screen asked of the app. */
static bool take_verdict(struct ui_app *a, bool wait);
static void offer_recovery(struct ui_app *a);

/* Opens the job under the job list's cursor in place of the current one. */
static void open_job(struct ui_app *a, const struct ui_ctx *c)
{
	const char *name = ui_jobs_selected(a);
	if (!name)
		return;
	if (ui_dirty(&a->s)) {
		ui_status(c, true, "%s", _("There are unsaved changes: save them (s) or undo them (u) "
					  "before opening another job."));
		return;
	}
	char *arg = NULL;
	if (asprintf(&arg, "%s%s", SOURCE_AITK_PREFIX, name) < 0)
		return;
	struct ui_session ns, old;
	struct err e;
	if (ui_session_open(&ns, arg, NULL, &e)) {
		ui_status_err(c, &e);
		free(arg);
		return;
	}
	old = a->s;
	a->s = ns;
	emergency_track(&a->s);
	ui_session_close(&old);
	/* The views' caches belong to the job that was open. */
	for (int v = 0; v < UI_V_COUNT; v++)
		if (v != UI_V_JOBS && ui_views[v]->fini)
			ui_views[v]->fini(a);
	for (int v = 0; v < UI_V_COUNT; v++)
		if (v != UI_V_JOBS)
			a->pos[v] = (struct ui_pos){ 0, 0 };
	a->log_moved = false;
	a->view = a->s.log ? UI_V_LOG : UI_V_TRAINING;
	/* The tries of a loop on the job that was open are not this job's (none runs: opening
	 * another job is refused while one does). */
	ui_retry_free(&a->retry);
	free(a->retry_cmd);
	a->retry_cmd = NULL;
	ui_session_diag_start(&a->s);
	if (a->script)
		take_verdict(a, true);
	ui_status(c, false, _("Opened %s; J goes back to the job list."), arg);
	free(arg);
	offer_recovery(a);
}

static void do_request(struct ui_app *a, const struct ui_ctx *c, enum ui_req req)
{
	if (req == UI_REQ_SAVE)
		ask_save(a, c, UI_M_NORMAL);
	else if (req == UI_REQ_APPLY && !a->s.job)
		ui_status(c, true, "%s", _("No job file is open: start oomfix with JOB.yaml."));
	else if (req == UI_REQ_APPLY)
		apply_fix(a, a->pick_fix, false);
	else if (req == UI_REQ_OPEN_JOB)
		open_job(a, c);
	else if (req == UI_REQ_SHOW_TRY && !show_try(a, a->retry_show, true) && a->retry_log_due >= 0)
		ui_status(c, false, "%s", _("Still reading the log; the try's log comes next."));
	else if (req == UI_REQ_QUEUE_JOB) {
		a->mode = UI_M_CONFIRM;
		a->confirm_kind = UI_Q_QUEUE;
		a->confirm_return = UI_M_NORMAL;
	}
}

static void handle_view_key(struct ui_app *a, int key);

static void handle_key(struct ui_app *a, int key)
{
	enum ui_view before = a->view;

	handle_view_key(a, key);
	/* Entering a sub-view remembers where from, for Esc and q. */
	if (a->view != before && ui_views[a->view]->sub && !ui_views[before]->sub)
		a->back_view = before;
}

static void handle_view_key(struct ui_app *a, int key)
{
	unsigned ctx = current_ctx(a);
	enum ui_act act = ui_action_for(ctx, key);
	struct ui_ctx c = ctx_of(a);

	/* Digits go straight to a view (the table holds only '1', for the help). */
	if (act == UI_A_NONE && (ctx & UI_CTX_VIEWS) && key > '1' && key < '1' + UI_V_COUNT)
		act = UI_A_GOTO_VIEW;
	const struct ui_view_ops *view = ui_views[a->view];
	enum ui_req req;

	if (key == UI_FKEY(KEY_RESIZE))
		return; /* the next draw lays the screen out for the new size */
	if (a->cols < UI_MIN_COLS || a->rows < UI_MIN_ROWS) {
		/* Too small to show anything: only quitting and redrawing make sense. */
		if (act == UI_A_QUIT && !ui_dirty(&a->s))
			a->quit = true;
		return;
	}
	if (a->mode != UI_M_PROMPT && a->mode != UI_M_CONFIRM)
		a->msg.text[0] = '\0';
	/* The first key after the file changed on disk (the user was away, in another editor)
	 * gets the question instead of acting on a version that is no longer the file. */
	if ((a->mode == UI_M_NORMAL || a->mode == UI_M_HELP) && !ui_retry_running(&a->retry) &&
	    check_disk(a, &c))
		return;
	if (act == UI_A_REDRAW) {
		clearok(curscr, TRUE); /* the only full clear: the user asked for it */
		return;
	}
	switch (a->mode) {
	case UI_M_PROMPT:
		prompt_key(a, &c, act, key);
		return;
	case UI_M_CONFIRM:
		/* Quitting with edits: s saves first (the save screen, then quit once saved). */
		if (a->confirm_kind == UI_Q_QUIT && (key == 's' || key == 'S')) {
			a->mode = a->confirm_return;
			a->quit_after_save = true;
			ask_save(a, &c, UI_M_NORMAL);
			return;
		}
		if (a->confirm_kind == UI_Q_RETRY && (key == 'p' || key == 'P')) {
			a->mode = a->confirm_return;
			retry_begin(a, RETRY_PROBE_STEPS);
			return;
		}
		a->quit_after_save = a->quit_after_save && a->confirm_kind != UI_Q_QUIT &&
				     act != UI_A_NO;
		if (act == UI_A_YES || act == UI_A_NO)
			answer(a, act == UI_A_YES);
		else if (act != UI_A_NONE)
			ui_pos_move(&a->save_pos, act, 1LL << 40, c.page);
		return;
	case UI_M_HELP:
		if (act == UI_A_HELP_CLOSE)
			a->mode = UI_M_NORMAL;
		else if (act != UI_A_NONE)
			ui_pos_move(&a->help_pos, act, 1LL << 40, c.page);
		return;
	case UI_M_WALK:
		do_request(a, &c, ui_walk_action(a, &c, act));
		return;
	default:
		break;
	}
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
	if (ui_retry_running(&a->retry) && retry_locks(act)) {
		ui_status(&c, false, "%s", _("A retry is running and changes the job itself: wait for "
					    "it, or stop it with r in the Retry view."));
		return;
	}
	/* The view's own handling first (moves in a panel, search in the log, ...). */
	if (view->action && (req = view->action(a, &c, act)) != UI_REQ_PASS) {
		do_request(a, &c, req);
		return;
	}
	switch (act) {
	case UI_A_NEXT_VIEW:
		do
			a->view = (enum ui_view)((a->view + 1) % UI_V_COUNT);
		while (!view_shown(a, a->view));
		break;
	case UI_A_PREV_VIEW:
		do
			a->view = (enum ui_view)((a->view + UI_V_COUNT - 1) % UI_V_COUNT);
		while (!view_shown(a, a->view));
		break;
	case UI_A_JOBS:
		if (!a->jobs_on) {
			ui_status(&c, false, "%s", _("No web UI database is open: start oomfix with "
						     "--aitk DIR for the job list."));
			break;
		}
		ui_jobs_reload(); /* a save or a queue may have changed it */
		a->view = UI_V_JOBS;
		break;
	case UI_A_GOTO_VIEW:
		a->view = (enum ui_view)(key - '1');
		break;
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		/* Text views clamp when drawn, so any large bound works here. */
		ui_pos_move(&a->pos[a->view], act, 1LL << 40, c.page);
		break;
	case UI_A_APPLY_FIRST:
		apply_first_fix(a);
		break;
	case UI_A_UNDO:
		if (!ui_session_undo(&a->s))
			ui_status(&c, false, "%s", _("Nothing to undo."));
		else
			ui_status(&c, false, "%s", _("Undone. C-r redoes it."));
		break;
	case UI_A_REDO:
		if (!ui_session_redo(&a->s))
			ui_status(&c, false, "%s", _("Nothing to redo."));
		else
			ui_status(&c, false, "%s", _("Redone."));
		break;
	case UI_A_DIFF:
		a->view = UI_V_DIFF;
		break;
	case UI_A_SAVE:
		ask_save(a, &c, UI_M_NORMAL);
		break;
	case UI_A_WALK:
		do_request(a, &c, ui_walk_start(a, &c));
		break;
	case UI_A_THEME:
		next_theme(a);
		break;
	case UI_A_HELP:
		a->mode = UI_M_HELP;
		a->help_pos = (struct ui_pos){ 0, 0 };
		break;
	case UI_A_RETRY:
		retry_key(a, &c);
		break;
	case UI_A_QUIT:
		if (ui_retry_running(&a->retry)) {
			a->mode = UI_M_CONFIRM;
			a->confirm_kind = UI_Q_RETRY_QUIT;
			a->confirm_return = UI_M_NORMAL;
		} else if (ui_dirty(&a->s)) {
			a->mode = UI_M_CONFIRM;
			a->confirm_kind = UI_Q_QUIT;
			a->confirm_return = UI_M_NORMAL;
		} else {
			a->quit = true;
		}
		break;
	default:
		break;
	}
}

/* Ctrl-C: quit at once when nothing is unsaved, else ask as q does (save and quit, quit, stay). */
static void interrupted(struct ui_app *a)
{
	struct ui_ctx c = ctx_of(a);

	if (ui_retry_running(&a->retry)) {
		/* Asked once; a Ctrl-C while it stops skips the run's grace period. */
		if (a->quit_after_retry) {
			ui_retry_stop(&a->retry);
			return;
		}
		a->mode = UI_M_CONFIRM;
		a->confirm_kind = UI_Q_RETRY_QUIT;
		a->confirm_return = UI_M_NORMAL;
		ui_status(&c, false, "%s", _("Ctrl-C: a retry is running."));
		return;
	}
	if (!ui_dirty(&a->s)) {
		a->quit = true;
		return;
	}
	if (a->mode == UI_M_CONFIRM && a->confirm_kind == UI_Q_QUIT)
		return;
	a->mode = UI_M_CONFIRM;
	a->confirm_kind = UI_Q_QUIT;
	a->confirm_return = UI_M_NORMAL;
	ui_status(&c, false, "%s", _("Ctrl-C: there are unsaved changes."));
}

/* ---- the verdict arrives ------------------------------------------------------------------------ */

/* Opens the log at the line that decided the verdict, unless the user has moved already. */
static void place_log_cursor(struct ui_app *a)
{
	if (a->log_moved || !a->s.have_diag || a->s.diag.nevidence == 0)
		return;
	uint64_t ln = a->s.diag.evidence[0].line;
	a->pos[UI_V_LOG].cursor = ln ? (long long)ln - 1 : 0;
	a->pos[UI_V_LOG].top = a->pos[UI_V_LOG].cursor - 3;
	if (a->pos[UI_V_LOG].top < 0)
		a->pos[UI_V_LOG].top = 0;
}

/* Takes the worker's result when it is ready (or waits for it); true when the screen changed. */
static bool take_verdict(struct ui_app *a, bool wait)
{
	struct ui_ctx c = ctx_of(a);
	if (!ui_session_diag_poll(&a->s, wait))
		return false;
	if (a->s.diag_rc != ERR_OK)
		ui_status_err(&c, &a->s.diag_err);
	place_log_cursor(a);
	/* A log without its job: when the trainer's echo of the settings is in it, offer them. */
	struct err e;
	if (!a->s.job_path && !a->s.job && a->s.log && !a->log_job_asked &&
	    a->mode == UI_M_NORMAL && ui_session_open_log_job(&a->s, true, &e) == ERR_OK) {
		a->log_job_asked = true;
		a->mode = UI_M_CONFIRM;
		a->confirm_kind = UI_Q_LOG_JOB;
		a->confirm_return = UI_M_NORMAL;
	}
	return true;
}

/* ---- following a log that grows ------------------------------------------------------------------ */

#define FOLLOW_POLL_MS 250 /* how often the input loop looks at the log while it waits for a key */

/* A web UI job opened before its first run has no log: once the worker has started a run, its
 * log.txt is opened and read like any other (a stat per tick until then). */
static bool pick_up_first_log(struct ui_app *a)
{
	struct stat st;
	struct err e;
	const char *log = a->s.src ? source_log(a->s.src) : NULL;
	if (a->s.log_path || !a->s.job_status[0] || !log || stat(log, &st) != 0 ||
	    ui_session_set_log(&a->s, log, &e) != ERR_OK)
		return false;
	struct ui_ctx c = ctx_of(a);
	a->pos[UI_V_LOG] = (struct ui_pos){ 0, 0 };
	ui_status(&c, false, "%s", _("The job's run has started: its log is in the Log view."));
	return true;
}

/* Brings the diagnosis up to date with what the run appended; moves the Log view to the end when
 * it follows (the cursor was at the end, or never moved by hand); rings the bell once when an
 * OOM or the end of the run appears. True when the screen changed. */
static bool follow_tick(struct ui_app *a)
{
	struct ui_pos *p = &a->pos[UI_V_LOG];
	struct ui_ctx c = ctx_of(a);
	bool following = ui_log_following(a);
	bool was_oom = a->s.have_diag && a->s.diag.oom && !a->s.diag.survived;
	bool was_ended = a->s.have_diag && a->s.diag.run_ended;
	unsigned f = ui_session_follow(&a->s);
	bool status = ui_session_job_status(&a->s); /* a web UI job's status, at the same pace */

	status |= pick_up_first_log(a);
	if (!f)
		return status;
	if (f & UI_F_RESTARTED) {
		*p = (struct ui_pos){ 0, 0 };
		a->bell_done = false; /* a new run: its end rings again */
		was_oom = was_ended = false;
		ui_status(&c, false, "%s", _("The log was replaced or truncated: reading it again."));
	}
	if ((following || (!a->follow_off && (f & UI_F_RESTARTED))) && a->s.lines_known)
		p->cursor = a->s.log_lines ? (long long)a->s.log_lines - 1 : 0;
	/* During a retry each try's end is the loop's business: it rings once, at its own end. */
	if (!a->bell_done && !ui_retry_running(&a->retry) &&
	    ((a->s.diag.oom && !a->s.diag.survived && !was_oom) ||
	     (a->s.diag.run_ended && !was_ended))) {
		char buf[1024];
		a->bell_done = true;
		beep(); /* the bell, and nothing else: no flash, no other escape sequence */
		diag_sentence(&a->s.diag, buf, sizeof buf);
		ui_status(&c, false, "%s", buf);
	}
	return true;
}

/* How long the input loop may wait for a key: briefly while the worker reads, then at the follow
 * pace once there is a log to follow (never a busy loop), or for ever without one. */
static int input_timeout(const struct ui_app *a, bool more)
{
	if (a->s.diag_pending || ui_jobs_pending())
		return 30;
	if (a->s.live || a->s.job_status[0] || ui_retry_running(&a->retry))
		return more ? 0 : FOLLOW_POLL_MS;
	return -1;
}

/* ---- recovery of an emergency save ------------------------------------------------------------ */

static void offer_recovery(struct ui_app *a)
{
	struct ui_ctx c = ctx_of(a);
	struct stat js, ss;
	char *name;

	if (!a->s.job_path || !(name = save_emergency_name(a->s.job_path)))
		return;
	bool newer = false;
	if (stat(name, &ss) == 0 && source_row(a->s.src)) {
		/* A web UI job has no file: compare with the row's last change. */
		long long ms = (long long)ss.st_mtim.tv_sec * 1000 + ss.st_mtim.tv_nsec / 1000000;
		newer = ms > source_row(a->s.src)->updated_ms;
	} else if (stat(name, &ss) == 0 && stat(a->s.job_path, &js) == 0) {
		newer = ss.st_mtim.tv_sec > js.st_mtim.tv_sec ||
			(ss.st_mtim.tv_sec == js.st_mtim.tv_sec && ss.st_mtim.tv_nsec > js.st_mtim.tv_nsec);
	}
	if (newer) {
		FILE *fp = fopen(name, "rb");
		if (fp) {
			size_t cap = (size_t)ss.st_size + 1;
			recover_text = malloc(cap);
			recover_len = recover_text ? fread(recover_text, 1, cap - 1, fp) : 0;
			fclose(fp);
		}
		if (recover_text) {
			a->mode = UI_M_CONFIRM;
			a->confirm_kind = UI_Q_RECOVER;
			a->confirm_return = UI_M_NORMAL;
			ui_status(&c, false, _("Found %s, newer than the job."), name);
		}
	}
	free(name);
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

/* ---- input: the terminal or a script ------------------------------------------------------------ */

struct script {
	FILE *fp;
	const char *path;
	int lineno;
	char pending[1024];  /* the rest of a text: command being typed */
	size_t pend_off, pend_len;
	bool started;        /* a command was read: the implicit wait is behind us */
};

static int read_terminal_key(void)
{
	wint_t wc;
	int r = wget_wch(stdscr, &wc);

	if (r == ERR)
		return -1;
	if (r == KEY_CODE_YES)
		return UI_FKEY((int)wc);
	return (int)wc;
}

/* Returns the next key from the script, running the commands that are not keys (resize, dump,
 * sleep) on the way; 0 at the end. */
static int read_script_key(struct ui_app *a, struct script *sc)
{
	char line[1024];

	for (;;) {
		if (sc->pend_off < sc->pend_len) {
			wchar_t wc;
			mbstate_t st;
			memset(&st, 0, sizeof st);
			size_t n = mbrtowc(&wc, sc->pending + sc->pend_off, sc->pend_len - sc->pend_off,
					   &st);
			if (n == 0 || n == (size_t)-1 || n == (size_t)-2) {
				sc->pend_off++;
				continue;
			}
			sc->pend_off += n;
			return (int)wc;
		}
		if (!fgets(line, sizeof line, sc->fp))
			return 0;
		sc->lineno++;
		size_t len = strlen(line);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!strncmp(line, "text:", 5)) {
			snprintf(sc->pending, sizeof sc->pending, "%s", line + 5);
			sc->pend_off = 0;
			sc->pend_len = strlen(sc->pending);
			continue;
		}
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		len = strlen(p);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			p[--len] = '\0';
		if (!*p || *p == '#')
			continue;
		/* A script runs on the verdict, as a person would after a moment: it waits for the
		 * worker before its first command, so dumps never depend on timing. `async` as the
		 * first command skips that (to see the screen while the log is read); `wait` waits
		 * later. */
		bool first = !sc->started;
		sc->started = true;
		if (!strcmp(p, "async") && first)
			continue;
		if (first || !strcmp(p, "wait")) {
			if (take_verdict(a, true))
				draw(a);
			if (!strcmp(p, "wait"))
				continue;
		}
		if (!strncmp(p, "resize ", 7)) {
			int c, r;
			if (sscanf(p + 7, "%dx%d", &c, &r) != 2 || c < 1 || r < 1 || c > 1000 || r > 1000)
				die(ERR_USAGE, _("%s:%d: resize wants COLSxROWS"), sc->path, sc->lineno);
			resizeterm(r, c);
			return UI_FKEY(KEY_RESIZE);
		}
		if (!strncmp(p, "dump ", 5)) {
			if (ui_dump_screen(p + 5))
				die(ERR_CANTCREAT, _("%s:%d: cannot write %s: %s"), sc->path, sc->lineno,
				    p + 5, strerror(errno));
			continue;
		}
		if (!strcmp(p, "sleep") || !strncmp(p, "sleep ", 6)) {
			double s = p[5] ? strtod(p + 6, NULL) : 0.1;
			struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
			nanosleep(&ts, NULL);
			continue;
		}
		int key = ui_key_parse(p);
		if (!key)
			die(ERR_USAGE, _("%s:%d: unknown key or command '%s'"), sc->path, sc->lineno, p);
		return key;
	}
}

/* ---- start-up ------------------------------------------------------------------------------------- */

struct opts {
	const char *job, *log, *theme, *script;
	bool no_color;
	int cols, rows;
};

static bool looks_like_yaml(const char *p)
{
	size_t n = strlen(p);
	return (n > 5 && !strcmp(p + n - 5, ".yaml")) || (n > 4 && !strcmp(p + n - 4, ".yml")) ||
	       (n > 5 && !strcmp(p + n - 5, ".json")) || source_is_aitk_arg(p);
}

/* True when the file's first bytes read like a trainer job (a `job:` or `config:` line, or a
 * JSON object with "config"), so a job and a log given the other way round are told apart. */
static bool sniff_job(const char *path)
{
	char buf[8192];
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (!fp)
		return false;
	n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	if (memchr(buf, '\0', n))
		return false;
	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "job:", 4) || !strncmp(p, "config:", 7))
			return true;
	const char *b = buf + strspn(buf, " \t\r\n");
	return *b == '{' && strstr(b, "\"config\"") != NULL;
}

static void usage_die(const char *msg, const char *arg)
{
	fprintf(stderr, "oomfix: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "%s", _("usage: oomfix [JOB.yaml] [LOG] [--theme NAME] [--no-color] "
				"[--script FILE] [--size COLSxROWS]\n"));
	exit(ERR_USAGE);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	const char *pos[2] = { NULL, NULL };
	int npos = 0;
	bool only_pos = false;

	memset(o, 0, sizeof *o);
	o->cols = 80;
	o->rows = 24;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (only_pos || a[0] != '-' || !strcmp(a, "-")) {
			if (npos == 2)
				usage_die(_("too many files"), a);
			pos[npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (!strcmp(a, "--no-color") || !strcmp(a, "--no-colour")) {
			o->no_color = true;
			continue;
		}
		const char *names[] = { "--theme", "--script", "--size" };
		int which = -1;
		for (int k = 0; k < 3; k++) {
			size_t n = strlen(names[k]);
			if (!strncmp(a, names[k], n) && (a[n] == '\0' || a[n] == '=')) {
				which = k;
				if (a[n] == '=')
					val = a + n + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else
					usage_die(_("option needs a value"), a);
			}
		}
		if (which < 0)
			usage_die(_("unknown option"), a);
		if (which == 0)
			o->theme = val;
		else if (which == 1)
			o->script = val;
		else if (sscanf(val, "%dx%d", &o->cols, &o->rows) != 2 || o->cols < 1 || o->rows < 1 ||
			 o->cols > 1000 || o->rows > 1000)
			usage_die(_("--size wants COLSxROWS, e.g. 80x24"), val);
	}
	if (npos == 2) {
		o->job = pos[0];
		o->log = pos[1];
		/* The log first and the job second: say which order works rather than report the
		 * log's text as bad YAML. */
		if (!sniff_job(pos[0]) && !looks_like_yaml(pos[0]) && sniff_job(pos[1])) {
			fprintf(stderr, _("oomfix: '%s' looks like a training log and '%s' like the job: "
					  "the job comes first.\n  oomfix %s %s\n"),
				pos[0], pos[1], pos[1], pos[0]);
			exit(ERR_USAGE);
		}
	} else if (npos == 1) {
		/* One file: a job when it looks like YAML or reads like one, else a log. */
		if (looks_like_yaml(pos[0]) || sniff_job(pos[0]))
			o->job = pos[0];
		else
			o->log = pos[0];
	}
}

static bool no_color_env(void)
{
	const char *v = getenv("NO_COLOR");
	return v && *v; /* no-color.org: set and not empty */
}

/* The terminfo entries a release carries (share/terminfo), for a system that has none for TERM:
 * a fresh container image or a cluster node often lacks tmux-256color or even xterm. Empty when
 * there are none (a development build). */
static bool bundled_terminfo(char *dir, size_t dirsz)
{
	return paths_share_file("terminfo", dir, dirsz) ||
	       paths_share_file("oomfix/terminfo", dir, dirsz);
}

/* newterm with the system's terminfo, then with the bundled entries. TERMINFO is set only for
 * the second try and put back afterwards, so $EDITOR started from the UI sees the user's. */
static SCREEN *newterm_any(const char *type, FILE *out, FILE *in)
{
	char dir[4096];
	SCREEN *scr = newterm(type, out, in);

	if (scr || !bundled_terminfo(dir, sizeof dir))
		return scr;
	const char *old = getenv("TERMINFO");
	char *saved = old ? strdup(old) : NULL;
	setenv("TERMINFO", dir, 1);
	scr = newterm(type, out, in);
	if (saved) {
		setenv("TERMINFO", saved, 1);
		free(saved);
	} else {
		unsetenv("TERMINFO");
	}
	return scr;
}

/* The names of the bundled entries, space-separated and sorted, into buf (empty if none). */
static void bundled_names(char *buf, size_t bufsz)
{
	char dir[4096], sub[4096 + 260];
	char *names[64];
	size_t n = 0, w = 0;

	buf[0] = '\0';
	if (!bundled_terminfo(dir, sizeof dir))
		return;
	DIR *top = opendir(dir);
	struct dirent *d1, *d2;
	while (top && (d1 = readdir(top))) {
		if (d1->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", dir, d1->d_name);
		DIR *d = opendir(sub);
		while (d && (d2 = readdir(d)))
			if (d2->d_name[0] != '.' && n < sizeof names / sizeof names[0])
				names[n++] = strdup(d2->d_name);
		if (d)
			closedir(d);
	}
	if (top)
		closedir(top);
	for (size_t i = 1; i < n; i++) /* a handful of names: insertion sort */
		for (size_t j = i; j > 0 && names[j] && names[j - 1] &&
				   strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (names[i] && w + strlen(names[i]) + 2 < bufsz)
			w += (size_t)snprintf(buf + w, bufsz - w, "%s%s", w ? " " : "", names[i]);
		free(names[i]);
	}
}

static SCREEN *start_terminal(const struct opts *o, FILE **outp, FILE **inp)
{
	SCREEN *scr;

	if (o->script) {
		char c[16], r[16];
		/* Headless: render into /dev/null at a fixed size; the screen is read back from
		 * curscr by `dump`. */
		*outp = fopen("/dev/null", "w");
		*inp = fopen("/dev/null", "r");
		if (!*outp || !*inp)
			die(ERR_IOERR, "/dev/null: %s", strerror(errno));
		snprintf(c, sizeof c, "%d", o->cols);
		snprintf(r, sizeof r, "%d", o->rows);
		setenv("COLUMNS", c, 1);
		setenv("LINES", r, 1);
		use_env(TRUE);
		scr = newterm_any("xterm-256color", *outp, *inp);
		if (!scr)
			scr = newterm_any("vt100", *outp, *inp);
		if (!scr)
			die(ERR_SOFTWARE, "%s", _("cannot start curses for --script (no terminfo for "
						  "xterm-256color or vt100)"));
		return scr;
	}
	const char *term = getenv("TERM");
	if (!term || !*term || !strcmp(term, "dumb") || !strcmp(term, "unknown"))
		die(ERR_USAGE, _("the terminal UI needs a real terminal (TERM is '%s'). The subcommands "
				 "work anywhere: oomfix diagnose LOG, oomfix plan JOB, oomfix fix JOB "
				 "next (see oomfix --help)."), term ? term : "");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		die(ERR_USAGE, "%s", _("the terminal UI needs a terminal on standard input and output; "
				       "use the subcommands in scripts (oomfix --help)."));
	emerg.tty_fd = STDOUT_FILENO;
	if (tcgetattr(STDIN_FILENO, &emerg.tios) == 0)
		emerg.tty_ok = 0; /* set once curses is up and the reset strings are known */
	*outp = stdout;
	*inp = stdin;
	scr = newterm_any(NULL, stdout, stdin);
	if (!scr) {
		char known[1024];
		bundled_names(known, sizeof known);
		if (*known)
			die(ERR_USAGE, _("no terminfo entry for TERM '%s' on this system or in oomfix's own "
					 "set. oomfix knows: %s. Run it with one of them (e.g. "
					 "TERM=xterm-256color oomfix ...), or use the subcommands (oomfix "
					 "--help)."), term, known);
		die(ERR_USAGE, _("unknown terminal type '%s'; set TERM (e.g. xterm-256color) or use "
				 "the subcommands (oomfix --help)."), term);
	}
	return scr;
}

/* Loads the theme before curses; a problem becomes a status message, the default is used. */
static void load_theme(struct ui_app *a, const char *name)
{
	struct ui_ctx c = ctx_of(a);
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

int ui_main(int argc, char **argv)
{
	static struct ui_app app;
	struct ui_app *a = &app;
	struct opts o;
	struct err e;
	FILE *out = NULL, *in = NULL;
	struct script sc = { 0 };
	SCREEN *scr;

	parse_args(argc, argv, &o);
	if (o.script) {
		sc.path = o.script;
		sc.fp = strcmp(o.script, "-") ? fopen(o.script, "r") : stdin;
		if (!sc.fp)
			die(ERR_NOINPUT, "%s: %s", o.script, strerror(errno));
	}
	/* Load first: a file that cannot be edited is refused like an editor refuses it, before
	 * the terminal is touched. */
	ui_session_on_change(emergency_track);
	if (ui_session_open(&a->s, o.job, o.log, &e)) {
		/* A job that is not valid YAML or not a job does not keep its log from being read
		 * (SPEC §3.6): the log opens alone, and the job's error stays in sight. */
		struct err le;
		if (e.code != ERR_DATA || !o.log || ui_session_open(&a->s, NULL, o.log, &le)) {
			err_print(&e, stderr);
			return e.code ? e.code : ERR_SOFTWARE;
		}
		a->s.job_bad = true;
		a->s.job_err = e;
		a->log_job_asked = true; /* the log's echo of the settings is not the job they gave */
	}
	load_theme(a, o.theme);
	a->themes = ui_theme_names(&a->nthemes);
	/* Decided once: a terminal without UTF-8 (LANG=C in a container) gets ASCII stand-ins, and
	 * is told once how to get the full display. */
	ui_set_ascii(strcmp(nl_langinfo(CODESET), "UTF-8") != 0);
	if (ui_ascii() && !a->msg.text[0])
		snprintf(a->msg.text, sizeof a->msg.text, "%s",
			 _("The locale is not UTF-8, so the screen uses plain ASCII; a UTF-8 locale "
			   "(e.g. LANG=C.UTF-8) gives the full display."));
	a->script = o.script != NULL;
	a->retry_log_due = -1;
	a->view = a->s.log ? UI_V_LOG : UI_V_TRAINING;
	a->jobs_on = source_aitk_dir() || (o.job && source_is_aitk_arg(o.job));
	if (a->jobs_on && !o.job && !o.log)
		a->view = UI_V_JOBS;

	install_signals();
	scr = start_terminal(&o, &out, &in);
	set_term(scr);
	curses_on = true;
	if (!o.script) {
		remember_reset(STDOUT_FILENO);
		emerg.tty_ok = 1;
	}
	if (!getenv("ESCDELAY"))
		set_escdelay(50); /* a lone Esc must not feel dead over SSH */
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	if (!o.script) {
		/* Clicks and the wheel where the terminal sends them (Shift still selects text). */
		mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
		mouseinterval(0);
	}
	curs_set(0);
	ui_theme_init_colors(!o.no_color && !no_color_env());
	ui_theme_apply(&a->theme);
	emergency_track(&a->s);
	offer_recovery(a);

	/* The first screen comes at once; the log is read meanwhile (SPEC §8). */
	ui_session_diag_start(&a->s);
	draw(a);
	bool more = false;
	while (!a->quit) {
		/* While the worker reads, wake up now and then to take its verdict; then look at the
		 * log at the follow pace. While the last change waits for a run and the log is not
		 * followed, look for the run's new log now and then. */
		bool stale = ui_session_diag_stale(&a->s);
		if (!o.script) {
			int t = input_timeout(a, more);
			if (stale && !a->s.live && (t < 0 || t > 500))
				t = 500;
			wtimeout(stdscr, t);
		}
		int key = o.script ? read_script_key(a, &sc) : read_terminal_key();
		if (stale && !a->s.live && ui_session_log_newer(&a->s)) {
			struct ui_ctx c = ctx_of(a);
			ui_session_diag_start(&a->s);
			ui_status(&c, false, "%s", _("A newer log: reading it for the next change."));
			draw(a);
		}
		bool verdict = take_verdict(a, false);
		verdict |= ui_jobs_poll();
		if (interrupts) {
			interrupts = 0;
			interrupted(a);
			verdict = true; /* redraw */
		}
		if (key == 0)
			break; /* end of the script */
		if (key == UI_FKEY(KEY_MOUSE))
			handle_mouse(a);
		else if (key > 0)
			handle_key(a, key);
		bool tried = retry_tick(a);
		bool grew = follow_tick(a);
		more = grew && a->s.live && diag_state_pending(a->s.live);
		if (key > 0 || verdict || grew || tried)
			draw(a);
	}

	endwin();
	curses_on = false;
	emerg.tty_ok = 0;
	delscreen(scr);
	if (o.script) {
		fclose(out);
		fclose(in);
		if (sc.fp != stdin)
			fclose(sc.fp);
	}
	/* Nothing may point at the texts once they are freed. */
	emerg.dirty = 0;
	emerg.text = NULL;
	for (int v = 0; v < UI_V_COUNT; v++)
		if (ui_views[v]->fini)
			ui_views[v]->fini(a);
	/* A loop still running (the script ended): it stops its run without the grace period. */
	if (ui_retry_running(&a->retry)) {
		ui_retry_stop(&a->retry);
		ui_retry_stop(&a->retry);
	}
	ui_retry_free(&a->retry);
	free(a->retry_cmd);
	ui_session_close(&a->s);
	ui_theme_names_free(a->themes, a->nthemes);
	free(recover_text);
	return 0;
}
