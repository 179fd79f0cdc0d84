/* display.c — the screen: the tab bar, the footer (from the action table), the status line with
 * its messages, questions and prompt, and the view or screen in between, drawn each turn with
 * werase + wnoutrefresh and one doupdate; and starting the terminal (the system's terminfo, then
 * the entries a release carries).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oomfix/i18n.h"
#include "oomfix/paths.h"
#include "oomfix/text.h"
#include "display.h"
#include "emergency.h"
#include "prompt.h"
#include "retry_ctl.h"
#include "screens.h"
#include "view_jobs.h"

/* ---- drawing ------------------------------------------------------------------------------------ */

unsigned ui_current_ctx(const struct ui_app *a)
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

bool ui_view_shown(struct ui_app *a, enum ui_view v)
{
	if (!ui_views[v]->shown)
		return true;
	struct ui_ctx c = ui_ctx_of(a);
	struct ui_env env = ui_env_of(a, v, &c);
	return ui_views[v]->shown(&env);
}

static void draw_tabs(struct ui_app *a)
{
	int x = 0;
	char buf[256], name[256] = "";

	ui_fill(stdscr, 0, 0, a->cols, UI_R_TABBAR);
	/* When the names are too wide for the terminal (long translations, 60 columns), the bar
	 * starts at a later tab so that the current one is always on screen; "<" says some are left
	 * out before it, ">" after it. Unsaved edits keep their "[+]" at the right even when the
	 * job's name gives way. */
	bool mode_tab = a->mode == UI_M_WALK || a->mode == UI_M_HELP;
	const char *mode_name = a->mode == UI_M_WALK ? _("Walk-through") : _("Help");
	int first = 0, widths[UI_V_COUNT], active = mode_tab ? UI_V_COUNT - 1 : (int)a->view;
	int all = mode_tab ? text_width(mode_name, strlen(mode_name)) + 2 : 0;
	for (int v = 0; v < UI_V_COUNT; v++) {
		const char *vn = ui_view_name((enum ui_view)v);
		widths[v] = ui_view_shown(a, (enum ui_view)v) ? text_width(vn, strlen(vn)) + 2 : 0;
		all += widths[v];
	}
	/* The file name and whether it has unsaved edits, at the right when there is room. */
	bool dirty = ui_session_dirty(&a->s);
	if (a->s.job_path) {
		/* A web UI job is called aitk:NAME, not by the name of its backup. */
		const char *base = source_row(a->s.src) ? NULL : strrchr(a->s.job_path, '/');
		const char *shown = source_row(a->s.src) ? source_label(a->s.src) : a->s.job_path;
		snprintf(name, sizeof name, "%s%s ", base ? base + 1 : shown, dirty ? _(" [+]") : "");
	}
	int nw = text_width(name, strlen(name));
	bool name_on = name[0] && all + 1 + nw <= a->cols;
	const char *plus = "[+]";
	int right = !name_on && dirty ? text_width(plus, strlen(plus)) + 1 : 0;
	int room = a->cols - right;
	for (;;) {
		int end = (first ? 1 : 0) + (mode_tab ? text_width(mode_name, strlen(mode_name)) + 2 : 0);
		for (int v = first; v <= active; v++)
			end += widths[v];
		if (end <= room - 1 || first == active)
			break;
		first++;
	}
	int rest = (first ? 1 : 0) + (mode_tab ? text_width(mode_name, strlen(mode_name)) + 2 : 0);
	for (int v = first; v < UI_V_COUNT; v++)
		rest += widths[v];
	bool cut = rest > room;
	if (cut)
		room--; /* the last cell says more tabs follow */
	for (int v = 0; v < UI_V_COUNT; v++)
		a->tab_x0[v] = a->tab_x1[v] = -1;
	if (first) {
		ui_put(stdscr, 0, 0, 1, UI_R_TABBAR, "<");
		x = 1;
	}
	for (int v = first; v < UI_V_COUNT && x < room; v++) {
		bool on = v == (int)a->view && a->mode != UI_M_WALK && a->mode != UI_M_HELP;
		if (!ui_view_shown(a, (enum ui_view)v))
			continue;
		/* Brackets mark the current tab without colour. */
		snprintf(buf, sizeof buf, on ? "[%s]" : " %s ", ui_view_name((enum ui_view)v));
		a->tab_x0[v] = x;
		x += ui_put(stdscr, 0, x, room - x, on ? UI_R_TAB_ACTIVE : UI_R_TABBAR, buf);
		a->tab_x1[v] = x;
	}
	if (mode_tab && x < room) {
		snprintf(buf, sizeof buf, "[%s]", mode_name);
		x += ui_put(stdscr, 0, x, room - x, UI_R_TAB_ACTIVE, buf);
	}
	if (cut)
		ui_put(stdscr, 0, room, 1, UI_R_TABBAR, ">");
	if (name_on)
		ui_put(stdscr, 0, a->cols - nw, nw, UI_R_TABBAR, name);
	else if (right)
		ui_put(stdscr, 0, a->cols - right + 1, right - 1, UI_R_TABBAR, plus);
}

/* Actions that only work with a job file open (Q: a web UI job): without one the footer does not
 * offer them. */
static bool needs_job(const struct ui_app *a, enum ui_act act)
{
	if (act == UI_A_QUEUE_JOB) /* a web UI job's, in its list or open */
		return a->view != UI_V_JOBS && !(a->s.src && source_row(a->s.src));
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
	unsigned ctx = ui_current_ctx(a);
	int y = a->rows - 1, n = 0, gap = 2;
	struct { char keys[64], word[128]; int w; bool pin, on; } e[32];

	ui_fill(stdscr, y, 0, a->cols, UI_R_FOOTER);
	bool locked = ui_retry_running(&a->retry);
	for (size_t i = 0; i < ui_nactions && n < 32; i++) {
		const struct ui_action *act = &ui_actions[i];
		if (!act->footer || !(act->ctx & ctx) || needs_job(a, act->act) ||
		    (locked && ui_retryctl_locks(act->act)) ||
		    (a->mode == UI_M_NORMAL && a->view == UI_V_JOBS && ui_jobs_refuses(act->act)))
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
		/* A question's other answers follow its n: the footer lists every key it takes. */
		for (int k = 0; act->act == UI_A_NO && a->ask && a->ask->keys && a->ask->keys[k] &&
				k < 4 && n < 32; k++) {
			snprintf(e[n].keys, sizeof e[n].keys, "%c", a->ask->keys[k]);
			snprintf(e[n].word, sizeof e[n].word, " %s",
				 a->ask->key_words[k] ? _(a->ask->key_words[k]) : "");
			e[n].w = 1 + text_width(e[n].word, strlen(e[n].word));
			e[n].pin = false;
			e[n].on = true;
			n++;
		}
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

/* Draws a message word-wrapped over up to STATUS_MAX_LINES rows ending at row `last`, each row
 * filled in role; `lead` (e.g. "error: ") comes first and the lines after it are indented to
 * match. Returns the rows used. A long message is never cut: an error's end says why, and a
 * question's end says what n does. */
#define STATUS_MAX_LINES 8
static int draw_wrapped(struct ui_app *a, int last, enum ui_role role, const char *lead,
			const char *msg)
{
	size_t len = strlen(msg), off[STATUS_MAX_LINES], cut[STATUS_MAX_LINES];
	int n = 0, lw = lead ? text_width(lead, strlen(lead)) : 0, width = a->cols - 1 - lw;
	size_t p = 0;

	while (n < STATUS_MAX_LINES && (p < len || n == 0)) {
		size_t next = len;
		off[n] = p;
		/* Prose, questions too: a question leads with sentences (a fix's title may hold
		 * ", "), and text_wrap_next already keeps "y = save" whole. */
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
	char buf[2400];

	ui_fill(stdscr, y, 0, a->cols, UI_R_STATUS);
	if (a->mode == UI_M_CONFIRM) {
		/* The recovery, reload and queue questions name their file or job (set as the status). */
		if (a->ask->named && a->msg.text[0])
			snprintf(buf, sizeof buf, "%s %s", a->msg.text, ui_question_text(a));
		else
			snprintf(buf, sizeof buf, "%s", ui_question_text(a));
		/* 「。 」 where the status and the question were joined */
		buf[text_tidy_spaces(buf, strlen(buf))] = '\0';
		/* The question ends on the status row: the footer below keeps the y and n keys. */
		if (draw_wrapped(a, y, UI_R_DIALOG, NULL, buf) == 1)
			draw_scroll_info(a, y, 1 + text_width(buf, strlen(buf)));
		return;
	}
	if (a->mode == UI_M_PROMPT && a->prompt.kind != UI_P_FIELD) {
		int used = ui_put(stdscr, y, 0, a->cols, UI_R_DIALOG, a->prompt.label);
		used += ui_put_input(stdscr, y, used, a->cols - used, UI_R_DIALOG, a->prompt.buf,
				     a->prompt.len, a->prompt.cur);
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
	       ui_session_dirty(&a->s) ? _("Unsaved changes: enlarge the window to save or quit.")
			       : _("Enlarge the window, or press q to quit."));
}

void ui_draw(struct ui_app *a)
{
	a->rows = LINES;
	a->cols = COLS;
	werase(stdscr);
	curs_set(0);
	a->msg.scroll_info[0] = '\0';
	if (a->cols < UI_MIN_COLS || a->rows < UI_MIN_ROWS) {
		draw_too_small(a);
	} else {
		struct ui_ctx c = ui_ctx_of(a);
		draw_tabs(a);
		draw_footer(a);
		if (a->mode == UI_M_HELP)
			ui_help_draw(a, &c);
		else if (a->mode == UI_M_WALK)
			ui_walk_draw(a, &c);
		else if (a->mode == UI_M_CONFIRM && a->ask->draw_behind)
			a->ask->draw_behind(a, &c);
		else {
			struct ui_env v = ui_env_of(a, a->view, &c);
			ui_views[a->view]->draw(&v);
		}
		/* The prompt places the cursor last; draw_status must not move it afterwards. */
		int cy, cx;
		getyx(stdscr, cy, cx);
		draw_status(a);
		if (a->mode == UI_M_PROMPT) {
			if (a->prompt.kind == UI_P_FIELD)
				wmove(stdscr, cy, cx);
			curs_set(1);
		}
	}
	wnoutrefresh(stdscr);
	doupdate();
}

bool ui_no_color_env(void)
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

SCREEN *ui_start_terminal(bool script, int cols, int rows, FILE **outp, FILE **inp)
{
	SCREEN *scr;

	if (script) {
		char c[16], r[16];
		/* Headless: render into /dev/null at a fixed size; the screen is read back from
		 * curscr by `dump`. */
		*outp = fopen("/dev/null", "w");
		*inp = fopen("/dev/null", "r");
		if (!*outp || !*inp)
			ui_die(ERR_IOERR, "/dev/null: %s", strerror(errno));
		snprintf(c, sizeof c, "%d", cols);
		snprintf(r, sizeof r, "%d", rows);
		setenv("COLUMNS", c, 1);
		setenv("LINES", r, 1);
		use_env(TRUE);
		scr = newterm_any("xterm-256color", *outp, *inp);
		if (!scr)
			scr = newterm_any("vt100", *outp, *inp);
		if (!scr)
			ui_die(ERR_SOFTWARE, "%s", _("cannot start curses for --script (no terminfo for "
						  "xterm-256color or vt100)"));
		return scr;
	}
	const char *term = getenv("TERM");
	if (!term || !*term || !strcmp(term, "dumb") || !strcmp(term, "unknown"))
		ui_die(ERR_USAGE, _("the terminal UI needs a real terminal (TERM is '%s'). The subcommands "
				 "work anywhere: oomfix diagnose LOG, oomfix plan JOB, oomfix fix JOB "
				 "next (see oomfix --help)."), term ? term : "");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		ui_die(ERR_USAGE, "%s", _("the terminal UI needs a terminal on standard input and output; "
				       "use the subcommands in scripts (oomfix --help)."));
	ui_emergency_tty(STDIN_FILENO, STDOUT_FILENO);
	*outp = stdout;
	*inp = stdin;
	scr = newterm_any(NULL, stdout, stdin);
	if (!scr) {
		char known[1024];
		bundled_names(known, sizeof known);
		if (*known)
			ui_die(ERR_USAGE, _("no terminfo entry for TERM '%s' on this system or in oomfix's own "
					 "set. oomfix knows: %s. Run it with one of them (e.g. "
					 "TERM=xterm-256color oomfix ...), or use the subcommands (oomfix "
					 "--help)."), term, known);
		ui_die(ERR_USAGE, _("unknown terminal type '%s'; set TERM (e.g. xterm-256color) or use "
				 "the subcommands (oomfix --help)."), term);
	}
	return scr;
}

