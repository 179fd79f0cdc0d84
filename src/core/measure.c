/* measure.c — the store of what the user's runs measured (SPEC §12.2); see measure.h.
 *
 * The store is the user's own file, but it is read as untrusted all the same: a row whose key,
 * phase or size does not read back is skipped, never trusted. Opening waits at most
 * BUSY_MS for another oomfix writing it, so no command is held up by it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/i18n.h"
#include "oomfix/measure.h"
#include "oomfix/save.h"

#define BUSY_MS 200
#define KEY_MAX 1024

static char note[PATH_MAX + 256];
static bool noted;                   /* a problem was said already: say no other */

static struct {
	bool loaded;
	struct measurement *rows;
	size_t n;
} cache;

static void set_note(const char *fmt, const char *a, const char *b)
{
	if (noted)
		return;
	noted = true;
	snprintf(note, sizeof note, fmt, a, b ? b : "");
}

const char *measure_note(void)
{
	if (!note[0])
		return NULL;
	static char said[sizeof note];
	snprintf(said, sizeof said, "%s", note);
	note[0] = 0; /* once */
	return said;
}

const char *measure_store_path(char *buf, size_t sz)
{
	const char *env = getenv("OOMFIX_MEASUREMENTS");
	if (env && !strcmp(env, "off"))
		return NULL;
	if (env && env[0]) {
		snprintf(buf, sz, "%s", env);
		return buf;
	}
	char *dir = save_state_dir(); /* creates it (0700) when it can */
	if (!dir)
		return NULL;
	snprintf(buf, sz, "%s/measurements.db", dir);
	free(dir);
	return buf;
}

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS measurements ("
	" id INTEGER PRIMARY KEY, at INTEGER NOT NULL, arch TEXT NOT NULL, key TEXT NOT NULL,"
	" base TEXT NOT NULL, card INTEGER NOT NULL, phase TEXT NOT NULL, bytes INTEGER NOT NULL,"
	" kind TEXT NOT NULL, log TEXT NOT NULL DEFAULT '',"
	" UNIQUE (key, phase, kind, bytes, log));"
	"CREATE INDEX IF NOT EXISTS measurements_base ON measurements (base, phase);";

static bool damaged(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

/* A write that did not happen: busy (another oomfix holds the lock) or refused, said once. */
static void note_not_kept(const char *path, int ext, const char *why)
{
	if ((ext & 0xff) == SQLITE_BUSY || (ext & 0xff) == SQLITE_LOCKED)
		set_note(_("the measurement store %s is busy (another oomfix is writing it): "
			   "this run's measurement is not kept%s"), path, "");
	else
		set_note(_("cannot write the measurement store %s (%s): measurements are not "
			   "kept"), path, why);
}

/* A damaged store is moved aside (PATH.damaged-TIME) so that nothing in it is lost, and a new
 * one is started. */
static void set_aside(const char *path)
{
	char aside[PATH_MAX + 32];
	snprintf(aside, sizeof aside, "%s.damaged-%lld", path, (long long)time(NULL));
	if (rename(path, aside) == 0)
		set_note(_("the measurement store %s was damaged: it is kept as %s and a new one is "
			   "started"), path, aside);
	else
		set_note(_("the measurement store %s is damaged and cannot be moved aside (%s): "
			   "measurements are not kept"), path, strerror(errno));
}

/* Opens the store at path for writing (creating it, mode 0600) or for reading (NULL when it does
 * not exist). A damaged one is set aside and, for writing, started again. */
static sqlite3 *open_store(const char *path, bool write)
{
	struct stat st;
	if (!write && stat(path, &st) != 0)
		return NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		sqlite3 *db = NULL;
		int flags = write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
		mode_t old = umask(077);
		int rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
					 NULL);
		umask(old);
		if (rc == SQLITE_OK) {
			sqlite3_busy_timeout(db, BUSY_MS);
			char *msg = NULL;
			rc = write ? sqlite3_exec(db, schema, NULL, NULL, &msg)
				   : sqlite3_exec(db, "SELECT count(*) FROM measurements", NULL, NULL,
						  &msg);
			sqlite3_free(msg);
			if (rc == SQLITE_OK)
				return db;
		}
		int ext = db ? sqlite3_extended_errcode(db) : rc;
		const char *why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
		char whybuf[256];
		snprintf(whybuf, sizeof whybuf, "%s", why ? why : "?");
		sqlite3_close(db);
		if (damaged(ext) && attempt == 0) {
			set_aside(path);
			if (write)
				continue; /* a new store in its place */
			return NULL;
		}
		if (write || (ext & 0xff) == SQLITE_BUSY || (ext & 0xff) == SQLITE_LOCKED)
			note_not_kept(path, ext, whybuf);
		return NULL;
	}
	return NULL;
}

int measure_record(const struct est_input *in, int64_t card, enum est_phase phase, int64_t bytes,
		   enum measure_kind kind, const char *log)
{
	char path[PATH_MAX];
	if (!in || bytes <= 0 || bytes > EST_BYTES_MAX || !est_phase_name(phase) ||
	    !measure_store_path(path, sizeof path))
		return ERR_OK;
	char key[KEY_MAX], base[KEY_MAX];
	if (est_input_key(in, true, key, sizeof key) >= sizeof key ||
	    est_input_key(in, false, base, sizeof base) >= sizeof base)
		return ERR_DATA; /* a value too long to keep (it cannot come from a real job) */
	sqlite3 *db = open_store(path, true);
	if (!db)
		return ERR_IOERR;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db,
		"INSERT OR IGNORE INTO measurements (at, arch, key, base, card, phase, bytes, kind, log)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)time(NULL));
		sqlite3_bind_text(st, 2, in->arch, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, base, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 5, card > 0 ? card : 0);
		sqlite3_bind_text(st, 6, est_phase_name(phase), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 7, bytes);
		sqlite3_bind_text(st, 8, kind == MEASURE_PEAK ? "peak" : "lower", -1, SQLITE_STATIC);
		/* the log as a full path, so that a row names its run from anywhere */
		char *abs = log ? realpath(log, NULL) : NULL;
		sqlite3_bind_text(st, 9, abs ? abs : log ? log : "", -1, SQLITE_TRANSIENT);
		free(abs);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	if (rc != SQLITE_OK) {
		note_not_kept(path, sqlite3_extended_errcode(db), sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	cache.loaded = false; /* the next estimate reads it again */
	return rc == SQLITE_OK ? ERR_OK : ERR_IOERR;
}

bool measure_phase_of(const struct diag_result *v, enum est_phase *p)
{
	switch (v->phase) {
	case DIAG_P_MODEL_LOAD: *p = EST_MODEL_LOAD; return true;
	case DIAG_P_CACHING: *p = EST_CACHING; return true;
	case DIAG_P_BASELINE_SAMPLING: *p = EST_BASELINE_SAMPLE; return true;
	case DIAG_P_TRAINING: *p = EST_TRAINING; return true;
	case DIAG_P_SAMPLING: *p = EST_SAMPLING; return true;
	default: return false;
	}
}

int measure_record_diag(const struct job *j, const struct diag_result *v, const char *log)
{
	enum est_phase p;
	if (!j || !v || !v->oom || !v->memory.present || v->memory.job <= 0 ||
	    !measure_phase_of(v, &p))
		return ERR_OK;
	struct est_input in;
	est_input_of(j, &in);
	int64_t need = v->memory.job + (v->memory.requested > 0 ? v->memory.requested : 0);
	return measure_record(&in, v->memory.capacity > 0 ? v->memory.capacity : 0, p, need,
			      MEASURE_LOWER, log);
}

/* One row into m; false when any part of it does not read back. */
static bool read_row(sqlite3_stmt *st, struct measurement *m)
{
	memset(m, 0, sizeof *m);
	const unsigned char *key = sqlite3_column_text(st, 2), *phase = sqlite3_column_text(st, 4),
			    *kind = sqlite3_column_text(st, 6), *log = sqlite3_column_text(st, 7);
	m->id = sqlite3_column_int64(st, 0);
	m->at = (time_t)sqlite3_column_int64(st, 1);
	m->card = sqlite3_column_int64(st, 3);
	m->bytes = sqlite3_column_int64(st, 5);
	if (!key || !phase || !kind || !est_input_parse((const char *)key, &m->in) ||
	    !est_phase_parse((const char *)phase, &m->phase) || m->bytes <= 0 ||
	    m->bytes > EST_BYTES_MAX || m->card < 0 || m->card > EST_BYTES_MAX)
		return false;
	if (!strcmp((const char *)kind, "lower"))
		m->kind = MEASURE_LOWER;
	else if (!strcmp((const char *)kind, "peak"))
		m->kind = MEASURE_PEAK;
	else
		return false;
	snprintf(m->log, sizeof m->log, "%s", log ? (const char *)log : "");
	return true;
}

int measure_list(struct measurement **out, size_t *n, struct err *e)
{
	*out = NULL;
	*n = 0;
	char path[PATH_MAX];
	if (!measure_store_path(path, sizeof path))
		return ERR_OK;
	sqlite3 *db = open_store(path, false);
	if (!db)
		return ERR_OK;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db,
		"SELECT id, at, key, card, phase, bytes, kind, log FROM measurements"
		" ORDER BY at DESC, id DESC LIMIT 10000", -1, &st, NULL);
	size_t cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct measurement *g = realloc(*out, nc * sizeof *g);
			if (!g)
				break;
			*out = g;
			cap = nc;
		}
		if (read_row(st, &(*out)[*n]))
			(*n)++;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		if (damaged(sqlite3_extended_errcode(db)))
			set_note(_("the measurement store %s is damaged; it is set aside at the next "
				   "measurement%s"), path, "");
		err_set(e, ERR_IOERR, path, 0, 0, "%s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ERR_OK;
}

const struct measurement *measure_cached(size_t *n)
{
	if (!cache.loaded) {
		free(cache.rows);
		cache.rows = NULL;
		cache.n = 0;
		struct err e;
		err_clear(&e);
		measure_list(&cache.rows, &cache.n, &e);
		cache.loaded = true;
	}
	*n = cache.n;
	return cache.rows;
}
