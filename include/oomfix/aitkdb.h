/* aitkdb.h — the AI Toolkit web UI's SQLite database (`aitk_db.db`): list its jobs, read one,
 * write a job's config back and queue a job, behaving as the UI and the trainer expect of an
 * outside writer (aitk-reference §f, SPEC §10).
 *
 * Every write is one BEGIN IMMEDIATE transaction with a busy timeout of 30 s, refused while the
 * job is running; `updated_at` is written in the representation the row already holds; `name`,
 * `id` and the other columns the UI and the trainer own are never touched.
 */
#ifndef OOMFIX_AITKDB_H
#define OOMFIX_AITKDB_H

#include <stdbool.h>
#include <stddef.h>

#include "oomfix/err.h"

#define AITKDB_FILE "aitk_db.db"
#define AITKDB_BUSY_MS 30000 /* the trainer's own sqlite3 timeout */

/* One row of the Job table. Columns an older database lacks read as NULL / -1. */
struct aitk_job {
	char *id, *name, *status, *info, *job_config, *gpu_ids;
	long long step;        /* -1 when unknown */
	long long total_steps; /* -1 when NULL or unknown */
	long long updated_ms;  /* milliseconds since the epoch, -1 when unknown */
};

struct aitk_db;

/* Finds the folder holding aitk_db.db: `dir` itself when given (ERR_NOINPUT when it holds none),
 * else the working directory or the nearest folder above it. *root is malloc'd (caller frees).
 * The error says where it looked. */
int aitkdb_find(const char *dir, char **root, struct err *e);

/* Opens ROOT/aitk_db.db (never creates it) and checks it is an SQLite database with a Job table
 * holding at least `name` and `job_config`. *out is freed with aitkdb_close. */
int aitkdb_open(const char *root, struct aitk_db **out, struct err *e);
void aitkdb_close(struct aitk_db **db);

/* The database file's path and the folder runs are written to (Settings TRAINING_FOLDER, or
 * ROOT/output when it is unset or empty). Owned by the db. */
const char *aitkdb_path(const struct aitk_db *db);
const char *aitkdb_training_folder(const struct aitk_db *db);

/* All jobs, in the table's order. *rows is freed with aitkdb_rows_free. */
int aitkdb_list(struct aitk_db *db, struct aitk_job **rows, size_t *n, struct err *e);
void aitkdb_rows_free(struct aitk_job *rows, size_t n);

/* Orders rows for a person looking for the job that just died: failed (error) first, then
 * stopped, running (the one being watched), queued, completed, others; newest change first
 * within each. */
void aitkdb_sort_failed_first(struct aitk_job *rows, size_t n);

/* The job NAME. ERR_NOINPUT when there is none (the message lists close names). The row's
 * strings are freed with aitkdb_job_clear. */
int aitkdb_get(struct aitk_db *db, const char *name, struct aitk_job *out, struct err *e);
void aitkdb_job_clear(struct aitk_job *j);

/* Called inside the save transaction, after every check and before the row is written; a
 * non-zero return (with e set) rolls the save back. `current` is the job_config in the database. */
typedef int (*aitkdb_before_write)(void *arg, const char *current, struct err *e);

/* Replaces job NAME's job_config with `config` and sets updated_at to now, in one BEGIN IMMEDIATE
 * transaction. Refused with ERR_TEMPFAIL when the job is running, or (unless `force`) when its
 * job_config is no longer `loaded`. `before` (may be NULL) runs once the checks have passed, so
 * the previous version can be kept first. Nothing is written on any failure. */
int aitkdb_save_config(struct aitk_db *db, const char *name, const char *loaded, const char *config,
		       bool force, aitkdb_before_write before, void *arg, struct err *e);

/* Queues job NAME as the web UI's start button does: queue_position after every other job,
 * status 'queued', stop and return_to_queue cleared, info "Job queued", the GPU queue created
 * if missing and set running. Refused with ERR_TEMPFAIL for a running job. *was (may be NULL)
 * gets the status before (malloc'd, caller frees; NULL when the column was NULL).
 * A job already queued is left exactly as it is — nothing is written, not even updated_at, so it
 * keeps its place in the queue — and the call still succeeds: *was is then "queued", which is
 * how a caller tells "already queued" from "queued now" (aitkdb_was_queued). */
int aitkdb_queue(struct aitk_db *db, const char *name, char **was, struct err *e);

/* True when the status aitkdb_queue reported in *was means the job was queued already and the
 * call wrote nothing. */
bool aitkdb_was_queued(const char *was);

/* The part of a job's row that changes while it runs: what following a run polls. */
struct aitk_status {
	bool found;
	char status[16];             /* "" when the column is missing or NULL */
	long long step, total_steps; /* -1 when unknown */
	long long pid;               /* the trainer's pid as the worker recorded it, -1 when none */
	char info[256];              /* the start of `info` */
};

/* Reads job NAME's status, step, total, pid and info with one indexed SELECT in autocommit (no
 * transaction is held: cheap enough to call at a follower's pace). ERR_NOINPUT when the job is
 * gone. */
int aitkdb_status(struct aitk_db *db, const char *name, struct aitk_status *out, struct err *e);

/* Asks a running job to stop as the web UI's stop button does: `stop` = 1 and info "Stopping
 * job..." in one BEGIN IMMEDIATE transaction, only while its status is running (*asked tells
 * whether it was). The trainer polls the flag and writes status 'stopped' itself. */
int aitkdb_request_stop(struct aitk_db *db, const char *name, bool *asked, struct err *e);

/* Makes a failed call's error (rc, when not ERR_OK) name both the database and the job NAME:
 * the error's file becomes db_path and its message starts "job 'NAME': " (and keeps the file it
 * named, such as a backup that could not be written) unless it names the job already. The name
 * is shown with its controls made visible. Returns rc. The calls above that take a job name do
 * this themselves. */
int aitkdb_about_job(const char *db_path, const char *name, struct err *e, int rc);

/* The error for a job that is running (75): nothing is written under a running trainer. Names
 * the database and the job, its controls made visible, as every refusal does. */
int aitkdb_refuse_running(struct aitk_db *db, const char *name, struct err *e);

/* "2026-08-21T13:31:02.123Z" for milliseconds since the epoch (UTC), into buf. */
void aitkdb_iso8601(long long ms, char *buf, size_t size);

#endif
