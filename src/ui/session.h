/* session.h — the job being edited: load, undo/redo history, apply a fix, save (session.c); the
 * log and its verdict, read by a worker thread and followed as it grows (session_log.c). */
#ifndef OOMFIX_UI_SESSION_H
#define OOMFIX_UI_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/job.h"
#include "oomfix/logidx.h"
#include "oomfix/plan.h"
#include "oomfix/save.h"
#include "oomfix/source.h"

/* ---- the session: the job being edited (session.c) --------------------------------------- */

struct ui_hist {
	struct doc *doc;
	enum fix_id fix;       /* the fix that made this version, FIX_NONE for a hand edit */
};

struct diag_worker; /* session_log.c */
struct gpuwatch;

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
	struct diag_worker *worker;     /* the thread reading the log, NULL when none */
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
	struct save_stamp log_stamp;    /* the log as the worker started reading it */
	bool read_only;                 /* the job was read from the log's echo: no edits, no saves */
	/* An earlier run's log is on screen (R): it is history, not the job as it is now. run_label
	 * names it in the header ("run 2, earlier"), run_note says what followed it; both "" for
	 * the current log. */
	char run_label[64];
	char run_note[512];
	bool log_from_runs;             /* no log was given: the newest run log was opened */
	char reload_dropped[256];       /* the unsaved steps the last reload left out, by name */
	struct gpuwatch *watch;         /* the growing log's run on the card (SPEC §12.2), or NULL */
	bool watch_done;                /* ... kept already for this run */
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
/* The job's half of closing (session.c): its history, source and typed views; the log's half and
 * the worker are ui_session_close's (session_log.c), which calls it. */
void ui_session_free_job(struct ui_session *s);

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

/* While the log grows (a run going on) and its job is known, asks nvidia-smi at most once a
 * second what the trainer holds (gpuwatch.h); each phase's peak is kept when the run ends, the
 * log is replaced or the session closes. Never waits; call it at the follower's pace. */
void ui_session_watch(struct ui_session *s);
/* Keeps the watched run's peaks now and stops watching (another log or job is opened). */
void ui_session_watch_end(struct ui_session *s);

/* For a web UI job: reads its status from the database (one indexed SELECT) into job_status.
 * True when it changed. False at once for a file job. */
bool ui_session_job_status(struct ui_session *s);

/* The current document (NULL without a job). */
struct doc *ui_session_cur(const struct ui_session *s);
/* True when the current text differs from the text loaded or saved. */
bool ui_session_dirty(const struct ui_session *s);

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

/* The log on screen is an earlier try of a retry (try_n, 0 for the log opened): history, with
 * the fix applied after it (may be NULL), shown instead of advice for the job now. */
void ui_session_mark_history(struct ui_session *s, int try_n, const char *fix);
/* The log on screen is an earlier run of the job's trail (R): its label in the header and the
 * note the diagnosis shows instead of advice. */
void ui_session_name_run(struct ui_session *s, const char *label, const char *note);

/* Saves the current text (flags: SAVE_FORCE or 0; a backup is always kept) and appends the
 * journal. ERR_TEMPFAIL when the file changed on disk. */
int ui_session_save(struct ui_session *s, unsigned flags, struct err *e);

/* Without a job file: opens the trainer's JSON echo of the settings in the log as a read-only
 * job, so the panels and the plan work from the log alone (just_look: only says whether it
 * could). ERR_DATA when the log holds none. */
int ui_session_open_log_job(struct ui_session *s, bool just_look, struct err *e);

/* True when the job file on disk is not the one loaded or last saved (*now: its stamp). */
bool ui_session_changed_on_disk(const struct ui_session *s, struct save_stamp *now);

/* Reloads the job from disk as the loaded text, with a fresh history. Unsaved edits are
 * re-applied to the new text step by step, each fix or hand edit whole or not at all: *kept
 * steps applied, *lost left out (named in reload_dropped). An unreadable file or one that is no job changes nothing (e says why). */
int ui_session_reload(struct ui_session *s, size_t *kept, size_t *lost, struct err *e);

/* Replaces the current text with `text` (from $EDITOR or a recovered save) as an unsaved edit. */
int ui_session_replace_text(struct ui_session *s, const char *text, size_t len, struct err *e);

/* The one decision (SPEC §3.4): plan_decide on the job as it is now, the log's verdict (none while
 * it is read or without a log) and whether a change made since that log has not been run yet
 * (ui_session_diag_stale). `words` (may be NULL) receives plan_decision_text: the sentence every
 * front end shows for it. `a`, the Plan view's Enter and the walk-through all ask this. */
struct plan_decision ui_session_decide(const struct ui_session *s, char *words, size_t sz);

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
 * the job as it is now has not answered yet (no change was made after it, here or saved by
 * another program — asked of the job's journal now, with the loop's own test); else NULL.
 * *older (may be NULL) is set when the log is refused only because a change saved to the job
 * is newer than it. */
const char *ui_session_retry_log(const struct ui_session *s, bool *older);

/* True when the log on disk is not the one the verdict was read from (it grew, was rewritten or
 * replaced): a run happened since. */
bool ui_session_log_newer(const struct ui_session *s);

/* Rebuilds job, plan and checklist after the current version changed. */
void ui_session_refresh(struct ui_session *s);

/* Calls fn after every change of the current version, so the signal handler's pointers to the
 * current text stay up to date (emergency.c) without the session knowing of it. */
void ui_session_on_change(void (*fn)(const struct ui_session *s));

#endif
