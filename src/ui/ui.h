/* ui.h — the terminal UI's private interface (src/ui only).
 *
 *   ui_main.h    the entry point, the one thing the rest of the program sees
 *   app.c        ui_main and the one loop: read a key, dispatch it, tick the background work, draw
 *   display.c    the screen: tabs, footer, status line, the view or screen between (display.h)
 *   input.c      keys from the terminal or a --script file (input.h)
 *   prompt.c     questions (ui_ask) and the status-line editor (prompt.h)
 *   actions.c    what keys do to the job: apply a fix, save, reload, quit, theme (actions.h)
 *   follow.c     the verdict arriving and the log followed as it grows (follow.h)
 *   retry_ctl.c  the retry (r) as the UI drives it; retry.c runs the child (retry_ctl.h)
 *   job_switch.c opening another job of the web UI's list (job_switch.h)
 *   emergency.c  signals, the emergency save, die(), recovering a save (emergency.h)
 *   args.c       the UI's command line (args.h)
 *   view_table.c the view table (tab order)
 *   views.c      the context given to views, the status line
 *   session.c    the job being edited: load, undo/redo history, apply a fix, save
 *   keys.c       the action table (dispatch, help screen, footer) and key names
 *   theme.c      colour roles, theme files, the compiled-in default
 *   draw.c       drawing helpers measured in cells, chrome, screen dumps
 *   lines.c      a list of display lines (text + role segments) shared by the text views
 *   view_*.c     one file per view (its ops are a row of UI_VIEWS)
 *   walk.c       the walk-through
 *   search.c     the '/' search shared by the text views
 *
 * Nothing here re-implements the model: values, fixes, plans, diffs and saving come from
 * include/oomfix/.
 */
#ifndef OOMFIX_UI_H
#define OOMFIX_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <curses.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/job.h"
#include "oomfix/logidx.h"
#include "oomfix/plan.h"
#include "oomfix/save.h"
#include "oomfix/source.h"
#include "ui_main.h"

/* ---- colour roles (theme.c) ---------------------------------------------------------------- */

#define UI_ROLES(X) \
	X(NORMAL, "normal") X(TABBAR, "tabbar") X(TAB_ACTIVE, "tab-active") \
	X(STATUS, "status") X(ERROR, "error") X(FOOTER, "footer") X(FOOTER_KEY, "footer-key") \
	X(CURSOR, "cursor") X(HEADING, "heading") X(LABEL, "label") X(VALUE, "value") \
	X(DEFAULT, "default") X(CHANGED, "changed") X(DIM, "dim") X(OOM, "oom") \
	X(EVIDENCE, "evidence") X(MATCH, "match") X(DIFF_ADD, "diff-add") X(DIFF_DEL, "diff-del") \
	X(DIFF_HUNK, "diff-hunk") X(DIFF_HEAD, "diff-header") X(YAML_KEY, "yaml-key") \
	X(YAML_VALUE, "yaml-value") X(YAML_COMMENT, "yaml-comment") X(EDITED, "edited") \
	X(DONE, "done") X(TODO, "todo") X(NA, "na") X(MARK, "mark") X(DIALOG, "dialog")

#define UI_ROLE_ENUM(id, name) UI_R_##id,
enum ui_role { UI_ROLES(UI_ROLE_ENUM) UI_R_COUNT };
#undef UI_ROLE_ENUM

struct ui_style {
	short fg, bg;     /* colour numbers; -1 = the terminal's default */
	attr_t attrs;     /* attributes used with colour */
	attr_t mono;      /* attributes used without colour: meaning must survive on their own */
};

struct ui_theme {
	char name[64];
	struct ui_style role[UI_R_COUNT];
};

/* The compiled-in default theme (default-dark). */
void ui_theme_default(struct ui_theme *t);

/* Parses a theme file. On error fills e (file:line:col) and leaves *t as the default. */
int ui_theme_load_file(const char *path, struct ui_theme *t, struct err *e);

/* Finds NAME (a path when it contains '/') in the user, installed and source theme dirs and
 * loads it. ERR_NOINPUT when not found. */
int ui_theme_load(const char *name, struct ui_theme *t, struct err *e);

/* The theme names available (sorted, default-dark first); caller frees with ui_theme_names_free. */
char **ui_theme_names(size_t *n);
void ui_theme_names_free(char **names, size_t n);

/* Decides colour once (has_colors, --no-color, NO_COLOR) and installs the theme's pairs. */
void ui_theme_init_colors(bool allow_color);
void ui_theme_apply(const struct ui_theme *t);
bool ui_theme_color_on(void);

/* The attributes (colour pair included) to draw `role` with under the applied theme. */
attr_t ui_attr(enum ui_role role);

/* ---- views, contexts and actions (keys.c) ------------------------------------------------- */

/* The views, in tab order: one row each, naming the view's ops (defined in its own file,
 * tig-style). Adding a view is one row here and one file. */
#define UI_VIEWS(X) \
	X(TRAINING, ui_view_training) X(DATASETS, ui_view_datasets) X(SAMPLE, ui_view_sample) \
	X(MODEL, ui_view_model) X(ADVANCED, ui_view_advanced) X(LOG, ui_view_log) \
	X(PLAN, ui_view_plan) X(DIFF, ui_view_diff) X(JOBS, ui_view_jobs) X(RETRY, ui_view_retry)

#define UI_VIEW_ENUM(id, ops) UI_V_##id,
enum ui_view { UI_VIEWS(UI_VIEW_ENUM) UI_V_COUNT };
#undef UI_VIEW_ENUM

const char *ui_view_name(enum ui_view v); /* translated tab label (views.c) */

/* Where an action applies (bit mask). */
enum {
	UI_CTX_VIEWS = 1u << 0,    /* every view, normal mode */
	UI_CTX_FIELDS = 1u << 1,   /* Training, Datasets, Sample, Model */
	UI_CTX_ADVANCED = 1u << 2,
	UI_CTX_LOG = 1u << 3,
	UI_CTX_SCROLL = 1u << 4,   /* anything that scrolls: views, help, walk-through, save screen */
	UI_CTX_WALK = 1u << 5,
	UI_CTX_CONFIRM = 1u << 6,  /* a yes/no question */
	UI_CTX_PROMPT = 1u << 7,   /* a line of text being typed */
	UI_CTX_HELP = 1u << 8,
	UI_CTX_PLAN = 1u << 9,     /* the Plan view's list of steps */
	UI_CTX_JOBS = 1u << 10,    /* the web UI's job list */
	UI_CTX_TEXT = 1u << 11,    /* text screens searched with / (Plan, Diff, Advanced) */
	UI_CTX_RETRY = 1u << 12,   /* the Retry view's list of tries */
};

#define UI_ACTIONS(X) \
	X(NEXT_VIEW) X(PREV_VIEW) X(UP) X(DOWN) X(PGUP) X(PGDN) X(TOP) X(BOTTOM) \
	X(APPLY_FIRST) X(UNDO) X(REDO) X(DIFF) X(SAVE) X(WALK) X(THEME) X(HELP) X(REDRAW) X(QUIT) \
	X(EDIT) X(TOGGLE) X(EDITOR) X(SEARCH) X(SEARCH_NEXT) X(SEARCH_PREV) X(FOCUS_DIAG) \
	X(FOCUS_LOG) X(JUMP) X(NEXT_EVIDENCE) X(WALK_APPLY) X(WALK_SKIP) X(WALK_BACK) \
	X(WALK_MORE) X(WALK_QUIT) X(YES) X(NO) X(PROMPT_OK) X(PROMPT_CANCEL) X(PROMPT_BS) \
	X(PROMPT_CLEAR) X(HELP_CLOSE) X(FOLLOW) X(PICK) X(JOBS) X(OPEN_JOB) X(QUEUE_JOB) \
	X(NEXT_RUN) X(SCROLL_LEFT) X(SCROLL_RIGHT) X(WRAP) X(GOTO_VIEW) X(PROMPT_LEFT) \
	X(PROMPT_RIGHT) X(PROMPT_HOME) X(PROMPT_END) X(PROMPT_WORD) X(PROMPT_DEL) X(PREV_EVIDENCE) \
	X(RETRY) X(SHOW_TRY)

#define UI_ACT_ENUM(id) UI_A_##id,
enum ui_act { UI_A_NONE = 0, UI_ACTIONS(UI_ACT_ENUM) UI_A_COUNT };
#undef UI_ACT_ENUM

/* Keys: a character is its code point; a curses function key is UI_FKEY(KEY_x). */
#define UI_FKEY(k) ((k) | 0x1000000)
#define UI_CTRL(c) ((c) & 0x1f)
#define UI_MAX_KEYS 4

struct ui_action {
	enum ui_act act;
	unsigned ctx;
	int keys[UI_MAX_KEYS]; /* 0-terminated */
	const char *help;      /* N_(): the help screen's sentence */
	const char *footer;    /* N_(): the footer's word, or NULL */
};

extern const struct ui_action ui_actions[];
extern const size_t ui_nactions;

/* The action bound to `key` in contexts `ctx` (UI_A_NONE when none). */
enum ui_act ui_action_for(unsigned ctx, int key);

/* The display/script name of a key ("Tab", "C-r", "a"); static or thread-unsafe storage. */
const char *ui_key_name(int key);
/* Parses a key name; returns 0 when unknown. */
int ui_key_parse(const char *name);

/* The keys of an action as shown in help and footer ("j/Down"), into buf. */
void ui_action_keys(const struct ui_action *a, char *buf, size_t bufsz);

/* ---- the session: the job being edited (session.c) --------------------------------------- */

struct ui_hist {
	struct doc *doc;
	enum fix_id fix;       /* the fix that made this version, FIX_NONE for a hand edit */
};

struct ui_session {
	char *job_path;                 /* NULL when no job was given; for a web UI job the path
					 * its backup, journal and emergency save are named after */
	struct source *src;             /* where the job lives: a file or a web UI database row */
	char *log_path;                 /* NULL when no log was given */
	struct ui_hist *hist;           /* hist[pos] is the current version */
	size_t nhist, pos, cap;
	struct doc *base;               /* the text last loaded or saved: "unsaved" is relative to it */
	size_t base_pos;                /* hist index of base's version, (size_t)-1 once undone past
					 * it and edited; the journal lists the fixes after it */
	struct job *job, *base_job;     /* typed views of hist[pos] and base (NULL without a job) */
	bool have_diag;
	struct diag_result diag;
	struct plan plan;
	struct checklist check;
	struct logidx *log;
	uint64_t log_lines;
	bool lines_known;               /* log_lines is the real count (the worker has counted) */
	bool diag_pending;              /* the worker is still reading the log */
	int diag_rc;                    /* the worker's result once it is done (ERR_OK or an error) */
	struct err diag_err;
	struct diag_state *live;        /* the diagnosis kept open to follow the log as it grows */
	bool growing;                   /* the log grew (or was replaced) while it was open */
	char job_status[16];            /* a web UI job's status in its database, "" for a file */
	/* One change, then a run (SPEC §3.4): the version the verdict was made for, and the log as
	 * it was when it was read, to see when a newer log exists. */
	size_t verdict_pos;
	bool untried_saved;             /* the journal holds a change saved after the log */
	bool job_bad;                   /* the job given could not be loaded: job_err says why, and
					 * only its log is open */
	struct err job_err;
	bool log_stamped;
	long long log_size, log_mtime_sec, log_mtime_nsec;
	bool read_only;                 /* the job was read from the log's echo: no edits, no saves */
};

/* What following the log found (ui_session_follow). */
enum {
	UI_F_GREW = 1u << 0,       /* new lines */
	UI_F_RESTARTED = 1u << 1,  /* truncated or replaced: read again from the start */
	UI_F_VERDICT = 1u << 2,    /* the verdict changed (plan and checklist rebuilt) */
	UI_F_MORE = 1u << 3,       /* more bytes are waiting: call again soon */
};

/* Loads the job and opens the log for browsing; the log is not read yet (see below). */
int ui_session_open(struct ui_session *s, const char *job_path, const char *log_path,
		    struct err *e);
/* Frees the session. A worker still reading the log is left to finish on its own (its data is
 * its own), so quitting never waits for it. */
void ui_session_close(struct ui_session *s);

/* Starts diagnosing the log and counting its lines in a worker thread, so the first screen does
 * not wait for a large log (SPEC §8). The worker opens its own log index and touches nothing of
 * the session. Without threads it runs here and now. */
void ui_session_diag_start(struct ui_session *s);
/* Takes the worker's result when it is done (wait: block until it is): the verdict, the line
 * count, and the worker's fully indexed log, which replaces the view's. Returns true when it
 * changed the session (the plan and checklist are rebuilt). */
bool ui_session_diag_poll(struct ui_session *s, bool wait);

/* Brings the diagnosis and the line count up to date with what was appended to the log since
 * the last call (at most a few MiB per call), reading only the new bytes; a log truncated or
 * replaced is read again from the start. Returns UI_F_* bits (0: nothing new). Cheap when
 * nothing changed (one stat). */
unsigned ui_session_follow(struct ui_session *s);

/* For a web UI job: reads its status from the database (one indexed SELECT) into job_status.
 * True when it changed. False at once for a file job. */
bool ui_session_job_status(struct ui_session *s);

/* The current document (NULL without a job). */
struct doc *ui_cur(const struct ui_session *s);
/* True when the current text differs from the text loaded or saved. */
bool ui_dirty(const struct ui_session *s);

/* Makes `d` (owned from now on) the current version, dropping any redo. fix says why. */
void ui_session_push(struct ui_session *s, struct doc *d, enum fix_id fix);
bool ui_session_undo(struct ui_session *s);
bool ui_session_redo(struct ui_session *s);

/* Applies a fix once to the current doc and pushes the result. Returns ERR_OK with *changed
 * false when there was nothing to change; note receives the fix's remark. */
int ui_session_apply_fix(struct ui_session *s, enum fix_id id, bool *changed, char *note,
			 size_t notesz, struct err *e);

/* What the fix would do to the current doc: a malloc'd unified diff ("" when nothing). */
char *ui_session_fix_diff(const struct ui_session *s, enum fix_id id, struct err *e);

/* Applies edits to the current doc and pushes the result; *changed is false when the text stayed
 * the same (nothing is pushed). An edit that leaves no readable job is refused (e says why). */
int ui_session_edit(struct ui_session *s, const struct doc_edit *ed, size_t n, bool *changed,
		    struct err *e);

/* The unified diff of unsaved edits (base → current); malloc'd, "" when none. */
char *ui_session_diff(const struct ui_session *s, int context);

/* Shows another log in place of the current one (an earlier run of a web UI job) and starts
 * diagnosing it. ERR_TEMPFAIL while the current log is still being read. */
int ui_session_set_log(struct ui_session *s, const char *log_path, struct err *e);

/* Saves the current text (flags: SAVE_FORCE or 0; a backup is always kept) and appends the
 * journal. ERR_TEMPFAIL when the file changed on disk. */
int ui_session_save(struct ui_session *s, unsigned flags, struct err *e);

/* Without a job file: opens the trainer's JSON echo of the settings in the log as a read-only
 * job, so the panels and the plan work from the log alone (just_look: only says whether it
 * could). ERR_DATA when the log holds none. */
int ui_session_open_log_job(struct ui_session *s, bool just_look, struct err *e);

/* True when the job file on disk is not the one loaded or last saved (*now: its stamp). */
bool ui_session_changed_on_disk(const struct ui_session *s, struct save_stamp *now);

/* Reloads the job from disk as the loaded text, with a fresh history. Unsaved edits are kept as
 * a diff re-applied to the new text where their lines are still there: *kept hunks applied,
 * *lost left out. An unreadable file or one that is no job changes nothing (e says why). */
int ui_session_reload(struct ui_session *s, size_t *kept, size_t *lost, struct err *e);

/* Replaces the current text with `text` (from $EDITOR or a recovered save) as an unsaved edit. */
int ui_session_replace_text(struct ui_session *s, const char *text, size_t len, struct err *e);

/* The fix the `a` key applies: with an OOM verdict the plan's first fix (FIX_NONE when nothing
 * that acts on the failing phase is left), else the first plan step not done. */
enum fix_id ui_session_next_fix(const struct ui_session *s);

/* True when a fix was applied after the log was read (and not undone): the verdict is about a
 * job that no longer exists, so the next fix must come from the next run's log, not be stacked
 * on one that has not been tried. */
bool ui_session_diag_stale(const struct ui_session *s);

/* The job given could not be loaded (e says why): only its log is open (SPEC §3.6). */
void ui_session_job_failed(struct ui_session *s, const struct err *e);

/* Counts the log's lines again when it grew since it was indexed (a job still running); true
 * when it did. */
bool ui_session_recount(struct ui_session *s);

/* The log a retry can start from: the one on screen, when its verdict is an out-of-memory that
 * the job as it is now has not answered yet (no change was made after it); else NULL. */
const char *ui_session_retry_log(const struct ui_session *s);

/* True when the log on disk is not the one the verdict was read from (it grew, was rewritten or
 * replaced): a run happened since. */
bool ui_session_log_newer(const struct ui_session *s);

/* Rebuilds job, plan and checklist after the current version changed. */
void ui_session_refresh(struct ui_session *s);

/* Calls fn after every change of the current version, so the signal handler's pointers to the
 * current text stay up to date (app.c) without the session knowing of it. */
void ui_session_on_change(void (*fn)(const struct ui_session *s));

/* ---- the retry loop run from the UI (retry.c) ---------------------------------------------- */

/* One try of the loop, as its events told it. */
struct ui_try {
	int n;                      /* the number of its log (N.log); 0: the log the loop started from */
	int index;                  /* 1 for the first run of this loop, 0 for the log started from */
	char *log;                  /* its log, as the retry named it (relative to the working dir) */
	char *taken;                /* a web UI job: the status the worker gave it; NULL while queued */
	char *waiting;              /* ... still queued after a while: what the worker needs */
	bool judged;                /* its verdict came */
	bool oom;
	char timing[4];             /* "A".."E", "" when no OOM */
	char *summary;              /* the verdict in a few words */
	char *fix, *title, *note, *lesson; /* the fix applied after it (fix NULL when none) */
	char **changes;             /* "path: old → new" */
	size_t nchanges;
};

struct ui_retry {
	pid_t pid;                  /* the `oomfix retry` process, 0 when none runs */
	int ev_fd, err_fd;          /* its events and what it prints for people; -1 once at their end */
	bool started;               /* a loop was started in this session: the Retry tab is shown */
	bool stopping;              /* the user asked it to stop */
	char *cmd;                  /* the shell command of a file job, NULL for a web UI job */
	long long probe;
	int max_tries;
	struct ui_try *tries;
	size_t ntries;
	bool ended;                 /* the end event came, or the process is gone */
	int status;                 /* its exit status */
	char outcome[16];           /* fits, probe, not_oom, worker, exhausted, max_tries, interrupted,
				     * stopped, error */
	char *text;                 /* the end in a sentence (NULL: see ui_retry_last_error) */
	char *line;                 /* an event line still being read */
	size_t len, cap;
	char err[2048];             /* the tail of what it printed for people */
	size_t errlen;
};

/* What ui_retry_poll saw. */
enum {
	UI_RT_TRY = 1u << 0,        /* a try started: its log is the last try's */
	UI_RT_FIX = 1u << 1,        /* a fix was saved: the job changed on disk */
	UI_RT_END = 1u << 2,        /* the process is gone (ended and outcome are set) */
	UI_RT_CHANGED = 1u << 3,    /* anything new to draw */
};

/* Starts `oomfix retry --events 3` for JOB (a path or aitk:NAME) as a child: with `log` it starts
 * from that failed run (--log), `cmd` is the shell command of a file job (NULL for a web UI job),
 * probe 0 for none. The results of an earlier loop are forgotten. */
int ui_retry_start(struct ui_retry *r, const char *job, const char *log, const char *cmd,
		   long long probe, int max_tries, struct err *e);
/* Reads what the child wrote since the last call, without waiting; reaps it when it is gone.
 * Returns UI_RT_* bits. */
unsigned ui_retry_poll(struct ui_retry *r);
bool ui_retry_running(const struct ui_retry *r);
/* Asks the loop to stop (SIGINT): it stops its run first; asking again skips the grace period. */
void ui_retry_stop(struct ui_retry *r);
/* The last line the retry printed for people (its error, when it ended without an outcome). */
void ui_retry_last_error(const struct ui_retry *r, char *buf, size_t sz);
/* Frees what the loop's results hold (the process must be gone). */
void ui_retry_free(struct ui_retry *r);
/* The shell command last used for this job file, or a guess (`cd TOOLKIT && python run.py JOB`
 * when run.py is found in or above the job's folder); malloc'd. */
char *ui_retry_guess_command(const char *job_path);
/* Keeps `cmd` for the next time (JOB.oomfix-runs/command, replaced whole). */
void ui_retry_remember_command(const char *job_path, const char *cmd);

/* ---- display lines (lines.c) -------------------------------------------------------------- */

#define UI_LINE_SEGS 6
struct ui_line {
	char *text;                 /* UTF-8, terminal-safe (sanitised) */
	size_t len;
	struct { size_t off; enum ui_role role; } seg[UI_LINE_SEGS]; /* role from off to next seg */
	int nseg;
	enum ui_role gutter_role;   /* the one-cell mark at the left */
	char gutter;                /* 0: no gutter column; else the mark (' ' for none) */
	int indent;                 /* cells of indentation for continuation lines */
	long long target;           /* a jump target (log line) or a row tag; -1 none */
	bool selectable;
};

struct ui_lines {
	struct ui_line *v;
	size_t n, cap;
};

/* Without a UTF-8 locale the terminal shows only ASCII: set once at start-up (app.c). */
void ui_set_ascii(bool on);
bool ui_ascii(void);
/* Makes sanitised text what the terminal can show, in place (ASCII stand-ins without UTF-8:
 * text_ascii); s must have room for the terminating NUL. Returns the new length. */
size_t ui_for_terminal(char *s, size_t len);

void ui_lines_clear(struct ui_lines *l);
void ui_lines_free(struct ui_lines *l);
/* Appends a line (the text is sanitised and copied); returns it for more segments. */
struct ui_line *ui_lines_add(struct ui_lines *l, enum ui_role role, const char *text);
struct ui_line *ui_lines_addf(struct ui_lines *l, enum ui_role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds a segment starting at byte `off` of the line's text. */
void ui_line_seg(struct ui_line *ln, size_t off, enum ui_role role);
/* Appends text to the last line with a role of its own. */
void ui_line_append(struct ui_line *ln, enum ui_role role, const char *text);
/* Word-wraps a paragraph into lines of at most `width` cells, each indented by `indent`. */
void ui_lines_wrap(struct ui_lines *l, enum ui_role role, const char *text, int width, int indent);
/* Adds a unified diff, one line per diff line, coloured by role. */
void ui_lines_diff(struct ui_lines *l, const char *diff);

/* ---- drawing (draw.c) --------------------------------------------------------------------- */

struct ui_rect { int y, x, h, w; };

/* Writes trusted UTF-8 at (y, x), at most `cells` cells; returns cells used. */
int ui_put(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s);
int ui_putn(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s, size_t len);
/* Draws text being typed in a field of `cells` cells, scrolled so that the cursor (byte `cur`)
 * is visible, a '<' when its start is out of view. Returns the cell the cursor is in. */
int ui_put_input(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s, size_t len,
		 size_t cur);
/* Fills `cells` cells with spaces in role. */
void ui_fill(WINDOW *w, int y, int x, int cells, enum ui_role role);
/* Draws one display line in a row of the rect; `cursor` draws it as the selection. */
void ui_draw_line(WINDOW *w, int y, int x, int width, const struct ui_line *ln, bool cursor);
/* Draws a list of lines with a cursor row, keeping it visible (adjusts *top). */
void ui_draw_lines(WINDOW *w, struct ui_rect r, const struct ui_lines *l, long long cursor,
		   long long *top, bool show_cursor);

/* Writes the screen as plain text (one line per row, trailing spaces trimmed) to path. */
int ui_dump_screen(const char *path);

/* ---- what a view is given: the context (views.c) ----------------------------------------- */

/* A position in a list or text screen: the cursor row and the first row shown. */
struct ui_pos { long long cursor, top; };

/* "As far as it goes": a bound for moves in a list whose length is not known here, and a
 * position past any end (a screen clamps it to its last row when it draws). */
#define UI_POS_END (1LL << 40)

/* The one status line: a message, and the position in a scrolled screen shown at its right. */
struct ui_msg {
	char text[512];
	bool error;
	char scroll_info[64];       /* "1-21/86" of a scrolled text screen */
};

/* What a view receives each turn, as a value: where it draws and the status line it talks to.
 * No view calls back into app.c; what it wants of the app it returns as a request. */
struct ui_ctx {
	WINDOW *win;
	struct ui_rect r;           /* the content area: between the tab bar and the status line */
	int rows, cols;             /* the whole screen */
	int page;                   /* the rows a page key moves */
	struct ui_msg *msg;
};

/* A view's answer to an action (tig's "request"): not its own, handled, or a request the app
 * carries out. */
enum ui_req { UI_REQ_PASS = 0, UI_REQ_DONE, UI_REQ_SAVE,
	      UI_REQ_APPLY,   /* apply the fix in ui_app.pick_fix, asking first when the last change
			       * has not been tried */
	      UI_REQ_OPEN_JOB, /* open the job selected in the job list */
	      UI_REQ_SHOW_TRY /* show the log of the try in ui_app.retry_show */ };

struct ui_app;
/* The context given to the views this turn: the content area, the page and the status line. */
struct ui_ctx ui_ctx_of(struct ui_app *a);

/* Sets the one-line status message (printf format; already translated). */
void ui_status(const struct ui_ctx *c, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Shows an err as file:line:col: message in the status line. */
void ui_status_err(const struct ui_ctx *c, const struct err *e);

/* Scrolling for list-like views: moves p within [0, n). */
void ui_pos_move(struct ui_pos *p, enum ui_act act, long long n, int page);

/* ---- the application state (app.c) ------------------------------------------------------- */

enum ui_mode { UI_M_NORMAL, UI_M_HELP, UI_M_WALK, UI_M_PROMPT, UI_M_CONFIRM };

/* The prompt in a field's row, the search's, or a line asked for by ui_prompt_start. */
enum ui_prompt_kind { UI_P_FIELD, UI_P_SEARCH, UI_P_LINE };
struct ui_question; /* prompt.h */

/* One row of a field panel. */
struct ui_frow {
	const struct job_field *f;  /* NULL for a heading or a bucket row */
	size_t ds;
	int bucket;                 /* resolution bucket value for a bucket toggle, 0 otherwise */
	bool heading;
	const char *text;           /* heading text (translated) */
};

struct ui_app {
	struct ui_session s;
	enum ui_view view;
	enum ui_mode mode;
	struct ui_pos pos[UI_V_COUNT];
	bool log_focus_diag;        /* the Log view's diagnosis panel has the keys */

	/* text prompt */
	enum ui_prompt_kind prompt_kind;
	char prompt_label[128];
	char prompt_buf[512];
	size_t prompt_len;
	size_t prompt_cur;          /* the cursor, a byte offset in prompt_buf (a start sets it) */
	const struct job_field *prompt_field;
	size_t prompt_ds;
	/* who takes the line (ui_prompt_start); NULL: the view on screen, its prompt_done */
	void (*prompt_done)(struct ui_app *a, const struct ui_ctx *c, bool ok);

	/* question (prompt.h: ui_ask) */
	const struct ui_question *ask;
	enum ui_mode ask_return;
	struct ui_pos save_pos;     /* scrolling of the save screen's diff */
	struct save_stamp declined; /* the disk version the user chose not to reload */
	bool have_declined;
	enum ui_view back_view;     /* where Esc or q in a sub-view returns to */
	int tab_x0[UI_V_COUNT], tab_x1[UI_V_COUNT]; /* the tabs' columns as drawn, for the mouse */
	bool quit_after_save;       /* the quit question's s: quit once the save succeeded */
	bool log_job_asked;         /* the offer to open the log's echo of the job was made */

	/* help */
	struct ui_pos help_pos;

	/* the Plan view's list: pos[UI_V_PLAN].cursor is the selected step, .top the first line
	 * shown; until the user moves, the selection follows the marked step */
	bool plan_picked;
	bool plan_follow;           /* scroll so the selected step is visible */
	enum fix_id pick_fix;       /* the fix of a UI_REQ_APPLY or of the untried-change question */

	/* walk-through */
	size_t walk_step;
	bool walk_more;
	struct ui_pos walk_pos;

	/* log search */
	void *re;                   /* pcre2_code_8 * */
	void *md;                   /* pcre2_match_data_8 * */
	char search[256];

	/* theme */
	struct ui_theme theme;
	char **themes;
	size_t nthemes;

	struct ui_msg msg;          /* the status line */
	bool quit;
	bool script;
	bool log_moved;             /* the user moved in the log before the verdict came */
	bool jobs_on;               /* a web UI database is in use: the Jobs tab is shown */
	int rows, cols;
	bool follow_off;            /* F: the Log view does not follow the log as it grows */
	bool bell_done;             /* the bell rang for this run's OOM or end */

	/* the retry loop (r): the child and its tries, and the questions before it starts */
	struct ui_retry retry;
	bool retry_asking;          /* r was pressed: the command or the question is being asked */
	char *retry_cmd;            /* the command typed for a file job */
	bool retry_picked;          /* the user moved in the list: it no longer follows the newest */
	long long retry_show;       /* the try of a UI_REQ_SHOW_TRY */
	long long retry_log_due;    /* a try whose log is to be shown once the log is read, or -1 */
	bool quit_after_retry;      /* quit once the stopped loop has ended */
};

/* Minimum usable terminal. */
#define UI_MIN_COLS 60
#define UI_MIN_ROWS 20

/* ---- the views (one file each; the table in views.c) ------------------------------------- */

/* One view's operations, in the style of tig's view ops. Only draw and name are required. */
struct ui_view_ops {
	const char *name;           /* N_(): the tab label */
	unsigned keys;              /* the view's own key contexts (UI_CTX_*), beside UI_CTX_VIEWS */
	bool sub;                   /* looked at on the way (Plan, Diff): Esc and q go back to the
				     * view the user came from, and never quit */
	/* Draws the view into c->r. */
	void (*draw)(struct ui_app *a, const struct ui_ctx *c);
	/* The view's own handling of an action, first: UI_REQ_PASS leaves it to the app. */
	enum ui_req (*action)(struct ui_app *a, const struct ui_ctx *c, enum ui_act act);
	/* A line typed at the view's prompt was confirmed (a->prompt_buf). */
	void (*prompt_done)(struct ui_app *a, const struct ui_ctx *c);
	/* Frees what the view keeps between turns, at exit. */
	void (*fini)(struct ui_app *a);
	/* Whether the view has a tab now (NULL: always). */
	bool (*shown)(const struct ui_app *a);
};

#define UI_VIEW_DECL(id, ops) extern const struct ui_view_ops ops;
UI_VIEWS(UI_VIEW_DECL)
#undef UI_VIEW_DECL

/* The views in tab order, indexed by enum ui_view. */
extern const struct ui_view_ops *const ui_views[UI_V_COUNT];

/* The field panels' rows (view_fields.c); v is one of the four field views. */
size_t ui_fields_rows(struct ui_app *a, enum ui_view v, struct ui_frow *rows, size_t max);

/* The job list (view_jobs.c): whether its worker is still reading logs, whether verdicts came
 * since the last call (redraw then), the job under the cursor (NULL when none), and a reload of
 * the list on its next draw. */
bool ui_jobs_pending(void);
bool ui_jobs_poll(void);
const char *ui_jobs_selected(struct ui_app *a);
void ui_jobs_reload(void);

/* The sentence shown while the job given could not be loaded (views.c): where and why, and what
 * to do. */
void ui_job_error_text(const struct ui_session *s, char *buf, size_t size);

#define UI_RETRY_MAX_TRIES 6

/* Builds the diagnosis panel's lines (view_log.c; also used by tests through the dumps). */
void ui_diag_lines(struct ui_app *a, struct ui_lines *l, int width);
/* The memory account of the OOM message as a stacked bar with its legend (membar.c); adds
 * nothing when the message gave no numbers. */
void ui_membar_lines(struct ui_lines *l, const struct diag_result *d, int width);

/* The search (search.c). ui_search_start opens the '/' prompt; ui_search_compile compiles what
 * was typed into a->re (false, with the reason in the status line, when it is not a pattern);
 * ui_search_lines finds the pattern in display lines from *line (the next after it, the one
 * before it when backward, or *line itself when `here`), wrapping around, moves *line there and
 * says "Match i of n". ui_search_free frees the pattern at exit. */
void ui_search_start(struct ui_app *a, const struct ui_ctx *c);
bool ui_search_compile(struct ui_app *a, const struct ui_ctx *c);
bool ui_search_lines(struct ui_app *a, const struct ui_ctx *c, const struct ui_lines *l,
		     long long *line, bool backward, bool here);
void ui_search_free(struct ui_app *a);

/* The screens that are modes rather than tabs. */
enum ui_req ui_walk_start(struct ui_app *a, const struct ui_ctx *c);
void ui_walk_draw(struct ui_app *a, const struct ui_ctx *c);
enum ui_req ui_walk_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act);
void ui_help_draw(struct ui_app *a, const struct ui_ctx *c);
void ui_save_draw(struct ui_app *a, const struct ui_ctx *c);

/* Draws a list of display lines scrolled as a text screen (the top line is the position), and
 * says the position in the status line when it does not all fit (view_plan.c). */
void ui_draw_scrolled(const struct ui_ctx *c, struct ui_lines *l, struct ui_pos *p);

#endif
