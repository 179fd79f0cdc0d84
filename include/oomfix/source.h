/* source.h — where a job lives: a file, or a row of the AI Toolkit web UI's database.
 *
 * Every command and the UI go through this one interface and never ask which kind they hold:
 * load the text, notice a change made by someone else since it was loaded, save safely (the
 * previous version kept, the change journal appended), and find the job's log.
 *
 * A job argument "aitk:NAME" names the job NAME in the database of the folder given with
 * source_set_aitk_dir (the CLI's --aitk DIR), or else of the nearest folder at or above the
 * working directory that holds aitk_db.db. Anything else is a file path.
 *
 * For a database job the previous version, the journal and the emergency save live in the job's
 * run folder, beside its log: <TRAINING_FOLDER>/<name>/job_config.json~ (and .oomfix.md,
 * .oomfix-save after "job_config.json").
 */
#ifndef OOMFIX_SOURCE_H
#define OOMFIX_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "oomfix/diag.h"
#include "oomfix/err.h"

#define SOURCE_AITK_PREFIX "aitk:"

struct source;
struct aitk_job;

/* Sets the folder "aitk:" names are looked up in (NULL: search from the working directory).
 * The string is copied. */
void source_set_aitk_dir(const char *dir);
const char *source_aitk_dir(void);

/* True when `arg` names a database job ("aitk:NAME"). */
bool source_is_aitk_arg(const char *arg);

/* True when the file's first bytes read like a trainer job (a `job:` or `config:` line, or a JSON
 * object with "config"), so a job and a log given the other way round are told apart. */
bool source_sniff_job(const char *path);

/* Opens and reads the job named by `arg`. For a database job the job_config must be JSON
 * (ERR_DATA with the column of the first error otherwise). *out is freed with source_free. */
int source_open(const char *arg, struct source **out, struct err *e);
void source_free(struct source **s);

/* The text as loaded (or as last saved); owned by the source. */
const char *source_text(const struct source *s, size_t *len);

/* How the job is called in messages and diff headers: the path, or "aitk:NAME". */
const char *source_label(const struct source *s);

/* The path its backup, journal and emergency save are named after: the file itself, or
 * <run folder>/job_config.json for a database job. Owned by the source. */
const char *source_path(const struct source *s);

/* The job's current log (<run folder>/log.txt) for a database job, NULL for a file. */
const char *source_log(const struct source *s);

/* The run folder of a database job (NULL for a file); it may not exist yet. */
const char *source_run_dir(const struct source *s);

/* The database row as loaded (NULL for a file). */
const struct aitk_job *source_row(const struct source *s);
/* The GPU a web UI job was given (its gpu_ids "0", "1,2"): the first index, or -1 (a file job,
 * or none given). Every front end picks its card by it (SPEC §12.2, one card). */
int source_gpu(const struct source *s);

/* The file as loaded or last saved, to notice a change on disk (NULL for a database job, whose
 * changes source_changed reads from its row). Owned by the source. */
struct save_stamp;
const struct save_stamp *source_stamp(const struct source *s);

/* True when the job text is JSON (a database job, or a .json file). */
bool source_is_json(const struct source *s);

/* Checks whether someone else changed the job since it was loaded or last saved: *changed is
 * set; `why` (may be NULL) gets a sentence. For a database job a status of running counts too. */
int source_changed(struct source *s, bool *changed, char *why, size_t whysize, struct err *e);

/* For a web UI job: its status, step and info now, read with one indexed SELECT (cheap enough
 * for a follower's pace; no transaction is held). False for a file job or when it cannot be read. */
struct aitk_status;
bool source_status(struct source *s, struct aitk_status *out);

/* True when the job is a web UI job whose status is now running (read from the database). */
bool source_running(struct source *s);
/* ERR_OK when the job may be saved now; for a web UI job that runs, the refusal a save would give
 * (75, naming the database and the job), so a command can refuse before it says anything else. */
int source_refuse_running(struct source *s, struct err *e);

enum { SOURCE_FORCE = 1 << 0 }; /* overwrite even when it changed since it was loaded */

/* Saves `text` as the job: a file through save_file (FILE~ kept), a database job in one
 * transaction (refused while running; job_config checked against what was loaded; the text must
 * be JSON and keep config.name, sqlite_db_path and training_folder; the previous job_config is
 * written to the backup file first). ERR_TEMPFAIL when it changed since it was loaded (unless
 * SOURCE_FORCE) or the job is running or the database stayed locked. On success the source holds
 * the new text. Nothing is written on failure. */
int source_save(struct source *s, const char *text, size_t len, unsigned flags, struct err *e);

/* The backup (previous version) path and the journal path: malloc'd, the caller frees. */
char *source_backup_name(const struct source *s);
char *source_journal_name(const struct source *s);

/* Appends a journal entry (see save_journal); the journal's title names the job by its label. */
int source_journal(const struct source *s, const char *const *fixes, size_t nfixes,
		   const char *const *changes, size_t nchanges, struct err *e);
/* The same with a line of context (see save_journal_note). */
int source_journal_note(const struct source *s, const char *note, const char *const *fixes,
			size_t nfixes, const char *const *changes, size_t nchanges, struct err *e);

/* Where a save of the job goes, for people (translated, malloc'd): the file's path, or "the web
 * UI database DB (job 'NAME')". For "Save %s: these changes will be written". */
char *source_where(const struct source *s);

/* The sentence that reports a save (translated, malloc'd, no newline): where it went, and the
 * previous version and the change journal by their real paths ("Saved job.yaml (previous version
 * in job.yaml~, change journal in job.yaml.oomfix.md)"; for a web UI job "Saved into the web UI
 * database DB (job 'NAME'); previous version in ..., change journal in ..."). With
 * journal_ok false it says the journal could not be written instead. */
char *source_saved_message(const struct source *s, bool journal_ok);

/* The same, for a screen's status rows (E15): a saved web UI job's previous version and journal
 * are named by their file names, beside its log, so that the whole sentence fits a few rows (a
 * journal that could not be written keeps its path); a job file's are as in
 * source_saved_message. */
char *source_saved_message_short(const struct source *s, bool journal_ok);

/* One change, then a run (SPEC §3.4): true when the journal holds a change saved after `log` was
 * last written, so the log cannot show whether that change helped. *when receives the change's
 * time (may be NULL). False when there is no journal or the log cannot be stat'ed. */
bool source_log_untried(const struct source *s, const char *log, time_t *when);
/* The same for the job whose backup and journal are named after `path` (source_path), without
 * opening it (the job list), with the fix ids of that change into fixes ("" for hand edits). */
bool source_path_untried(const char *path, const char *log, time_t *when, char *fixes,
			 size_t size);

/* Reads the previous version (the backup) into *text (malloc'd, caller frees). ERR_NOINPUT when
 * there is none. */
int source_read_backup(const struct source *s, char **text, size_t *len, struct err *e);

/* A unified diff of two versions of a job for people: when both texts are JSON, of their
 * indented renderings (json_indent), so a one-line config gives a readable diff. Malloc'd. */
char *source_diff(const char *label, const char *old, size_t oldlen, const char *new_,
		  size_t newlen, int context);

/* The logs of a web UI job's runs, newest first: the current log.txt (when it exists), then
 * logs/<n>_log.txt by descending n (the UI moves the previous log there at each start): the trail
 * of tries. *paths is a malloc'd array of malloc'd strings; free with source_runs_free. A file
 * job has none (0). */
size_t source_runs(const struct source *s, char ***paths);
void source_runs_free(char **paths, size_t n);

/* The verdict of a job's log in one line's worth: for the job list. */
struct source_verdict {
	bool have_log;         /* the log exists and was read */
	bool oom;              /* it shows a GPU out-of-memory */
	char timing;           /* 'A'..'E' (diag_timing_letter), or 0 when there is no OOM */
	enum diag_timing when; /* the same timing (DIAG_T_NONE: no OOM, or the log does not show when) */
	const char *first_fix; /* the first fix's id (static), or NULL */
	int phase;             /* enum diag_phase of the OOM (0 when none or unknown) */
	long long failed_step; /* the training step it failed at, -1 = not shown */
	bool finished;         /* the trainer printed its end-of-run summary (its run ended, an OOM
				* or an error too) */
	bool stopped;          /* stopped before its end: Ctrl-C, a hang-up, a retry's probe */
	long long last_step;   /* the last training step its bar showed, -1 = none */
	int next;              /* enum plan_next: the one decision's answer (with a log) */
};

/* Diagnoses `log` with the job text (JSON or YAML; `label` names it in errors) and fills *out.
 * A log that does not exist is not an error (have_log = false). */
int source_verdict_of(const char *label, const char *text, size_t len, const char *log,
		      struct source_verdict *out, struct err *e);

#endif
