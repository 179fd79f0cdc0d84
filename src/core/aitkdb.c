/* aitkdb.c — see aitkdb.h. */
#include "oomfix/aitkdb.h"
#include "oomfix/buf.h"
#include "oomfix/i18n.h"
#include "oomfix/text.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct aitk_db {
	sqlite3 *h;
	char *root, *path, *training;
	/* Which optional columns of Job this database has (older UIs lack some). */
	bool has_status, has_info, has_step, has_total, has_updated, has_id, has_gpu, has_qpos,
		has_stop, has_rtq, has_pid;
};

/* A statement run once by run_stmt: what it binds, in this order, and what reads its row. */
struct rowstate;
struct stmt_args {
	const char *first;          /* a text, when not NULL */
	const struct rowstate *now; /* when given: the time of this change, in the form of the
				     * row's updated_at (bind_now) */
	const char *last;           /* a text, when not NULL: most often the job's name */
	int (*row)(sqlite3_stmt *st, void *arg, struct err *e); /* reads the row, if one comes */
	void *arg;
	bool found;                 /* set by run_stmt: a row came */
};
static int run_stmt(struct aitk_db *db, const char *sql, struct stmt_args *a, struct err *e);

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *r = malloc(la + lb + 2);
	if (r) {
		memcpy(r, a, la);
		r[la] = '/';
		memcpy(r + la + 1, b, lb + 1);
		if (la && a[la - 1] == '/')
			memmove(r + la, r + la + 1, lb + 1);
	}
	return r;
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* For a folder without the database (E23): the nearest folder that has one, above it (the user
 * gave a folder inside ai-toolkit, its output/ say) or right inside it (the folder that holds
 * ai-toolkit); *below tells which. NULL when none. */
static char *nearest_with_db(const char *dir, bool *below)
{
	char *abs = realpath(dir, NULL);
	if (!abs)
		return NULL;
	*below = false;
	char here[PATH_MAX];
	snprintf(here, sizeof here, "%s", abs);
	for (char *slash; (slash = strrchr(here, '/')) && strcmp(here, "/");) {
		if (slash == here)
			slash[1] = '\0';
		else
			*slash = '\0';
		char *p = join(here, AITKDB_FILE);
		bool ok = p && is_file(p);
		free(p);
		if (ok) {
			free(abs);
			return strdup(here);
		}
	}
	/* One level down, the first by name (readdir's order is the file system's). */
	char *best = NULL;
	DIR *dp = opendir(abs);
	struct dirent *de;
	for (int n = 0; dp && (de = readdir(dp)) && n < 4096; n++) {
		if (de->d_name[0] == '.' || (best && strcmp(de->d_name, strrchr(best, '/') + 1) >= 0))
			continue;
		char *sub = join(abs, de->d_name), *p = sub ? join(sub, AITKDB_FILE) : NULL;
		if (p && is_file(p)) {
			free(best);
			best = sub;
			sub = NULL;
		}
		free(p);
		free(sub);
	}
	if (dp)
		closedir(dp);
	free(abs);
	*below = best != NULL;
	return best;
}

int aitkdb_find(const char *dir, char **root, struct err *e)
{
	*root = NULL;
	if (dir) {
		char *p = join(dir, AITKDB_FILE);
		if (!p)
			return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		bool ok = is_file(p);
		free(p);
		if (!ok) {
			bool below = false;
			char *near = nearest_with_db(dir, &below);
			int rc;
			if (near && below)
				rc = err_set(e, ERR_NOINPUT, dir, 0, 0,
					     _("no %s in this folder; a folder inside it has one: "
					       "--aitk %s"),
					     AITKDB_FILE, near);
			else if (near)
				rc = err_set(e, ERR_NOINPUT, dir, 0, 0,
					     _("no %s in this folder; a folder above it has one: "
					       "--aitk %s"),
					     AITKDB_FILE, near);
			else
				rc = err_set(e, ERR_NOINPUT, dir, 0, 0,
					     _("no %s in this folder, nor in a folder above it or right "
					       "inside it: is it the ai-toolkit folder?"),
					     AITKDB_FILE);
			free(near);
			return rc;
		}
		/* Absolute, so the log paths shown and written in journals mean the same from anywhere. */
		*root = realpath(dir, NULL);
		if (!*root)
			*root = strdup(dir);
		return *root ? ERR_OK : err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	}
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return err_set(e, ERR_NOINPUT, NULL, 0, 0, _("cannot read the working directory: %s"),
			       strerror(errno));
	char here[PATH_MAX];
	snprintf(here, sizeof here, "%s", cwd);
	for (;;) {
		char *p = join(here, AITKDB_FILE);
		if (!p)
			return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		bool ok = is_file(p);
		free(p);
		if (ok) {
			*root = strdup(here);
			return *root ? ERR_OK
				     : err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		}
		char *slash = strrchr(here, '/');
		if (!slash || !strcmp(here, "/"))
			break;
		if (slash == here)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return err_set(e, ERR_NOINPUT, NULL, 0, 0,
		       _("no %s in %s or any folder above it; give the ai-toolkit folder with --aitk DIR"),
		       AITKDB_FILE, cwd);
}

static int busy_ms(void)
{
	/* A test hook: the lock test cannot wait half a minute. */
	const char *s = getenv("OOMFIX_DB_BUSY_MS");
	if (s && *s) {
		long v = strtol(s, NULL, 10);
		if (v > 0 && v < INT_MAX)
			return (int)v;
	}
	return AITKDB_BUSY_MS;
}

/* A job name as an error message may show it: quotes stay, a newline or an escape sequence
 * becomes visible text (^J, ^[) instead of driving the terminal. */
static const char *shown(const char *name, char *buf, size_t size)
{
	text_visible(name ? name : "", name ? strlen(name) : 0, buf, size);
	return buf;
}

/* The same in a buffer that lives as long as the full expression it is written in. */
#define SHOWN(name) shown((name), (char[256]){ 0 }, 256)

static int db_error(struct aitk_db *db, int rc, struct err *e)
{
	int ext = rc;
	rc &= 0xff; /* extended codes are on */
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return err_set(e, ERR_TEMPFAIL, db->path, 0, 0,
			       _("the database stayed locked by another program for %d s; nothing was "
				 "written, try again"), (busy_ms() + 999) / 1000);
	if (rc == SQLITE_NOTADB)
		return err_set(e, ERR_DATA, db->path, 0, 0, "%s", _("not an SQLite database"));
	if (rc == SQLITE_CORRUPT)
		return err_set(e, ERR_DATA, db->path, 0, 0,
			       _("the database is damaged (%s); nothing was written. Check it with "
				 "sqlite3 DB 'PRAGMA integrity_check' and restore it from a copy"),
			       sqlite3_errmsg(db->h));
	if (rc == SQLITE_FULL)
		return err_set(e, ERR_IOERR, db->path, 0, 0, "%s",
			       _("the disk is full; nothing was written"));
	if (rc == SQLITE_IOERR && (ext == SQLITE_IOERR_SHMOPEN || ext == SQLITE_IOERR_SHMSIZE))
		rc = SQLITE_CANTOPEN; /* the -shm beside it cannot be made: a folder matter */
	if (rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN || rc == SQLITE_PERM)
		return err_set(e, ERR_CANTCREAT, db->path, 0, 0,
			       _("cannot write the database: %s (the file and its folder must be "
				 "writable: a WAL database keeps its -wal and -shm files beside it)"),
			       sqlite3_errmsg(db->h));
	return err_set(e, ERR_IOERR, db->path, 0, 0, _("database error: %s"), sqlite3_errmsg(db->h));
}

int aitkdb_about_job(const char *db_path, const char *name, struct err *e, int rc)
{
	char who[256], quoted[300], msg[sizeof e->msg];
	if (rc == ERR_OK || !e || !name)
		return rc;
	shown(name, who, sizeof who);
	snprintf(quoted, sizeof quoted, "'%s'", who);
	bool at_db = !strcmp(e->file, db_path);
	if (at_db && strstr(e->msg, quoted))
		return rc; /* says both already */
	if (!at_db && e->file[0])
		snprintf(msg, sizeof msg, _("job '%s': %s: %s"), who, e->file, e->msg);
	else
		snprintf(msg, sizeof msg, _("job '%s': %s"), who, e->msg);
	snprintf(e->msg, sizeof e->msg, "%s", msg);
	snprintf(e->file, sizeof e->file, "%s", db_path);
	e->line = e->col = 0;
	return rc;
}

static int about(struct aitk_db *db, const char *name, struct err *e, int rc)
{
	return aitkdb_about_job(db->path, name, e, rc);
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? strdup((const char *)t) : NULL;
}

/* Reads the Settings value for `key`; NULL when absent, empty or there is no Settings table. */
static int text_row(sqlite3_stmt *st, void *v, struct err *e)
{
	(void)e;
	*(char **)v = col_text(st, 0);
	return ERR_OK;
}

static char *setting(struct aitk_db *db, const char *key)
{
	char *v = NULL;
	struct err ignored;
	struct stmt_args a = { .last = key, .row = text_row, .arg = &v };
	(void)run_stmt(db, "SELECT value FROM Settings WHERE key = ?", &a, &ignored);
	if (v && !*v) {
		free(v);
		v = NULL;
	}
	return v;
}

int aitkdb_open(const char *root, struct aitk_db **out, struct err *e)
{
	*out = NULL;
	struct aitk_db *db = calloc(1, sizeof *db);
	if (!db || !(db->root = strdup(root)) || !(db->path = join(root, AITKDB_FILE))) {
		if (db)
			free(db->root);
		free(db);
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	}
	int rc = sqlite3_open_v2(db->path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		rc = err_set(e, ERR_NOINPUT, db->path, 0, 0, _("cannot open the database: %s"),
			     db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
		aitkdb_close(&db);
		return rc;
	}
	sqlite3_busy_timeout(db->h, busy_ms());
	sqlite3_extended_result_codes(db->h, 1);

	sqlite3_stmt *st = NULL;
	rc = sqlite3_prepare_v2(db->h, "SELECT name FROM pragma_table_info('Job')", -1, &st, NULL);
	bool has_name = false, has_config = false;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);
		rc = SQLITE_OK;
		if (!c)
			continue;
		has_name |= !strcmp(c, "name");
		has_config |= !strcmp(c, "job_config");
		db->has_status |= !strcmp(c, "status");
		db->has_info |= !strcmp(c, "info");
		db->has_step |= !strcmp(c, "step");
		db->has_total |= !strcmp(c, "total_steps");
		db->has_updated |= !strcmp(c, "updated_at");
		db->has_id |= !strcmp(c, "id");
		db->has_gpu |= !strcmp(c, "gpu_ids");
		db->has_qpos |= !strcmp(c, "queue_position");
		db->has_stop |= !strcmp(c, "stop");
		db->has_rtq |= !strcmp(c, "return_to_queue");
		db->has_pid |= !strcmp(c, "pid");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rc = db_error(db, rc, e);
		aitkdb_close(&db);
		return rc;
	}
	if (!has_name || !has_config) {
		rc = err_set(e, ERR_DATA, db->path, 0, 0, "%s",
			     !has_name && !has_config
				     ? _("no Job table: this is not the AI Toolkit web UI's database")
				     : _("the Job table has no name or job_config column"));
		aitkdb_close(&db);
		return rc;
	}
	char *tf = setting(db, "TRAINING_FOLDER");
	db->training = tf ? tf : join(root, "output");
	if (!db->training) {
		aitkdb_close(&db);
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	}
	*out = db;
	return ERR_OK;
}

void aitkdb_close(struct aitk_db **db)
{
	if (!db || !*db)
		return;
	if ((*db)->h)
		sqlite3_close((*db)->h);
	free((*db)->root);
	free((*db)->path);
	free((*db)->training);
	free(*db);
	*db = NULL;
}

const char *aitkdb_path(const struct aitk_db *db)
{
	return db->path;
}

const char *aitkdb_training_folder(const struct aitk_db *db)
{
	return db->training;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian), no time zone involved. */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

/* "YYYY-MM-DD HH:MM:SS[.fff]" or with 'T', optional 'Z' (the text forms a DATETIME column may
 * hold) → milliseconds since the epoch; -1 when it is something else. */
static long long parse_datetime(const char *s)
{
	int y, mo, d, h, mi, sec, n = 0;
	if (!s || sscanf(s, "%4d-%2d-%2d%*1[ T]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
		return -1;
	long long ms = 0;
	if (s[n] == '.') {
		int k = 0;
		for (n++; isdigit((unsigned char)s[n]); n++, k++)
			if (k < 3)
				ms = ms * 10 + (s[n] - '0');
		for (; k < 3; k++)
			ms *= 10;
	}
	return ((days_from_civil(y, (unsigned)mo, (unsigned)d) * 24 + h) * 60 + mi) * 60000LL +
	       sec * 1000LL + ms;
}

void aitkdb_iso8601(long long ms, char *buf, size_t size)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* The SELECT list for a row, with NULL where this database lacks a column. */
static void select_sql(const struct aitk_db *db, char *buf, size_t size, const char *where)
{
	snprintf(buf, size,
		 "SELECT %s, name, %s, %s, job_config, %s, %s, %s, %s, %s FROM Job%s",
		 db->has_id ? "id" : "NULL", db->has_status ? "status" : "NULL",
		 db->has_info ? "info" : "NULL", db->has_gpu ? "gpu_ids" : "NULL",
		 db->has_step ? "step" : "NULL", db->has_total ? "total_steps" : "NULL",
		 db->has_updated ? "typeof(updated_at)" : "NULL",
		 db->has_updated ? "updated_at" : "NULL", where);
}

static int read_row(sqlite3_stmt *st, struct aitk_job *j)
{
	memset(j, 0, sizeof *j);
	j->id = col_text(st, 0);
	j->name = col_text(st, 1);
	j->status = col_text(st, 2);
	j->info = col_text(st, 3);
	j->job_config = col_text(st, 4);
	j->gpu_ids = col_text(st, 5);
	j->step = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
	j->total_steps = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
	const char *ty = (const char *)sqlite3_column_text(st, 8);
	if (ty && (!strcmp(ty, "integer") || !strcmp(ty, "real")))
		j->updated_ms = sqlite3_column_int64(st, 9);
	else if (ty && !strcmp(ty, "text"))
		j->updated_ms = parse_datetime((const char *)sqlite3_column_text(st, 9));
	else
		j->updated_ms = -1;
	if (!j->name)
		j->name = strdup("");
	if (!j->name)
		return ERR_SOFTWARE;
	return ERR_OK;
}

void aitkdb_job_clear(struct aitk_job *j)
{
	if (!j)
		return;
	free(j->id);
	free(j->name);
	free(j->status);
	free(j->info);
	free(j->job_config);
	free(j->gpu_ids);
	memset(j, 0, sizeof *j);
}

void aitkdb_rows_free(struct aitk_job *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		aitkdb_job_clear(&rows[i]);
	free(rows);
}

int aitkdb_list(struct aitk_db *db, struct aitk_job **rows, size_t *n, struct err *e)
{
	*rows = NULL;
	*n = 0;
	char sql[512];
	select_sql(db, sql, sizeof sql, " ORDER BY rowid");
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc)
		return db_error(db, rc, e);
	struct aitk_job *v = NULL;
	size_t cnt = 0, cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!ARRAY_GROW(v, cnt + 1, cap) || read_row(st, &v[cnt]) != ERR_OK) {
			sqlite3_finalize(st);
			aitkdb_rows_free(v, cnt);
			return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		}
		cnt++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		aitkdb_rows_free(v, cnt);
		return db_error(db, rc, e);
	}
	*rows = v;
	*n = cnt;
	return ERR_OK;
}

/* Edit distance, bounded to short names (only used to suggest names). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 200 || lb > 200)
		return SIZE_MAX;
	size_t row[201];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t sub = prev + (tolower((unsigned char)a[i - 1]) !=
					     tolower((unsigned char)b[j - 1]));
			size_t m = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
			row[j] = m < sub ? m : sub;
			prev = cur;
		}
	}
	return row[lb];
}

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	if (!n)
		return false;
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return true;
	return false;
}

static int no_such_job(struct aitk_db *db, const char *name, struct err *e)
{
	struct aitk_job *rows;
	size_t n;
	char close[600] = "";
	size_t used = 0, found = 0;
	if (aitkdb_list(db, &rows, &n, e) == ERR_OK) {
		size_t lim = strlen(name) / 3 > 2 ? strlen(name) / 3 : 2;
		for (size_t i = 0; i < n && found < 5; i++) {
			if (distance(name, rows[i].name) <= lim || contains_ci(rows[i].name, name) ||
			    contains_ci(name, rows[i].name)) {
				char cn[128];
				int w = snprintf(close + used, sizeof close - used, "%s'%s'",
						 found ? ", " : "", shown(rows[i].name, cn, sizeof cn));
				if (w < 0 || (size_t)w >= sizeof close - used)
					break;
				used += (size_t)w;
				found++;
			}
		}
		aitkdb_rows_free(rows, n);
	}
	char who[256];
	shown(name, who, sizeof who);
	if (found)
		return err_set(e, ERR_NOINPUT, db->path, 0, 0,
			       _("no job named '%s'; close names: %s"), who, close);
	return err_set(e, ERR_NOINPUT, db->path, 0, 0,
		       _("no job named '%s' (oomfix jobs lists them)"), who);
}

static int job_row(sqlite3_stmt *st, void *out, struct err *e)
{
	return read_row(st, out) == ERR_OK
		       ? ERR_OK
		       : err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
}

static int get_row(struct aitk_db *db, const char *name, struct aitk_job *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	char sql[512];
	select_sql(db, sql, sizeof sql, " WHERE name = ?");
	struct stmt_args a = { .last = name, .row = job_row, .arg = out };
	int rc = run_stmt(db, sql, &a, e);
	return rc || a.found ? rc : no_such_job(db, name, e);
}

int aitkdb_get(struct aitk_db *db, const char *name, struct aitk_job *out, struct err *e)
{
	return about(db, name, e, get_row(db, name, out, e));
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void rollback(struct aitk_db *db)
{
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

/* Binds "now" for updated_at in the form the row holds: integer milliseconds (what the UI's ORM
 * writes) unless the row holds text, then the same text layout. */
static void bind_now(sqlite3_stmt *st, int i, const char *type, const char *old)
{
	long long ms = now_ms();
	if (type && !strcmp(type, "text") && old && parse_datetime(old) >= 0) {
		char buf[40];
		time_t t = (time_t)(ms / 1000);
		struct tm tm;
		gmtime_r(&t, &tm);
		bool iso = strchr(old, 'T') != NULL, frac = strchr(old, '.') != NULL;
		const char *zone = strchr(old, 'Z') ? "Z" : strstr(old, "+00:00") ? "+00:00" : "";
		int w = snprintf(buf, sizeof buf, "%04d-%02d-%02d%c%02d:%02d:%02d", tm.tm_year + 1900,
				 tm.tm_mon + 1, tm.tm_mday, iso ? 'T' : ' ', tm.tm_hour, tm.tm_min,
				 tm.tm_sec);
		if (frac && w > 0)
			w += snprintf(buf + w, sizeof buf - (size_t)w, ".%03d", (int)(ms % 1000));
		if (w > 0)
			snprintf(buf + w, sizeof buf - (size_t)w, "%s", zone);
		sqlite3_bind_text(st, i, buf, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_int64(st, i, ms);
	}
}

/* Inside a transaction: the row's status, job_config and updated_at form. */
struct rowstate {
	char *status, *config, *utype, *utext;
	bool found;
};

/* Prepares sql, binds a's values, steps once and finalizes. A row, if one comes, is handed to
 * a->row (when given) and its result returned; otherwise ERR_OK when the statement ran, or the
 * database's error. */
static int run_stmt(struct aitk_db *db, const char *sql, struct stmt_args *a, struct err *e)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc)
		return db_error(db, rc, e);
	int k = 1, out = ERR_OK;
	if (a->first)
		sqlite3_bind_text(st, k++, a->first, -1, SQLITE_STATIC);
	if (a->now)
		bind_now(st, k++, a->now->utype, a->now->utext);
	if (a->last)
		sqlite3_bind_text(st, k, a->last, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	a->found = rc == SQLITE_ROW;
	if (a->found) {
		out = a->row ? a->row(st, a->arg, e) : ERR_OK;
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return rc != SQLITE_DONE ? db_error(db, rc, e) : out;
}

static void rowstate_free(struct rowstate *r)
{
	free(r->status);
	free(r->config);
	free(r->utype);
	free(r->utext);
	memset(r, 0, sizeof *r);
}

static int state_row(sqlite3_stmt *st, void *arg, struct err *e)
{
	struct rowstate *r = arg;
	(void)e;
	r->found = true;
	r->status = col_text(st, 0);
	r->config = col_text(st, 1);
	r->utype = col_text(st, 2);
	r->utext = col_text(st, 3);
	return ERR_OK;
}

static int read_state(struct aitk_db *db, const char *name, struct rowstate *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT %s, job_config, %s, %s FROM Job WHERE name = ?",
		 db->has_status ? "status" : "NULL",
		 db->has_updated ? "typeof(updated_at)" : "NULL",
		 db->has_updated ? "updated_at" : "NULL");
	struct stmt_args a = { .last = name, .row = state_row, .arg = r };
	int rc = run_stmt(db, sql, &a, e);
	if (rc)
		return rc;
	if (!r->found)
		return err_set(e, ERR_NOINPUT, db->path, 0, 0,
			       _("the job '%s' is no longer in the database"), SHOWN(name));
	return ERR_OK;
}

static int begin(struct aitk_db *db, struct err *e)
{
	int rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	return rc ? db_error(db, rc, e) : ERR_OK;
}

static int commit(struct aitk_db *db, struct err *e)
{
	int rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
	if (rc) {
		int r = db_error(db, rc, e);
		rollback(db);
		return r;
	}
	return ERR_OK;
}

int aitkdb_refuse_running(struct aitk_db *db, const char *name, struct err *e)
{
	return err_set(e, ERR_TEMPFAIL, db->path, 0, 0,
		       _("the job '%s' is running: stop it first (in the web UI), then try again"),
		       SHOWN(name));
}

/* Opens the write transaction on a job that is not running (SPEC §10: an outside writer never
 * writes under a running trainer) and reads its row into *r. On failure the transaction is
 * rolled back and nothing is left to free. */
static int begin_idle(struct aitk_db *db, const char *name, struct rowstate *r, struct err *e)
{
	int rc = begin(db, e);
	if (rc)
		return rc;
	if ((rc = read_state(db, name, r, e)) == ERR_OK && r->status &&
	    !strcmp(r->status, "running"))
		rc = aitkdb_refuse_running(db, name, e);
	if (rc) {
		rowstate_free(r);
		rollback(db);
	}
	return rc;
}

static int save_config(struct aitk_db *db, const char *name, const char *loaded,
		       const char *config, bool force, aitkdb_before_write before, void *arg, struct err *e)
{
	struct rowstate r;
	int rc = begin_idle(db, name, &r, e);
	if (rc)
		return rc;
	if (!force && loaded && (!r.config || strcmp(r.config, loaded))) {
		rc = err_set(e, ERR_TEMPFAIL, db->path, 0, 0,
			     _("the job '%s' was changed in the database since it was read; read it "
			       "again, or use --force to overwrite it"), SHOWN(name));
		goto fail;
	}
	/* A file SQLite could only open read-only (its mode, or root's read-only mount): refused
	 * before the backup beside the log is replaced by a save that cannot happen. */
	if (sqlite3_db_readonly(db->h, "main") == 1) {
		rc = err_set(e, ERR_CANTCREAT, db->path, 0, 0, "%s",
			     _("cannot write the database: the file is read-only; nothing was written"));
		goto fail;
	}
	if (before && (rc = before(arg, r.config ? r.config : "", e)) != ERR_OK)
		goto fail;
	char sql[128];
	snprintf(sql, sizeof sql, "UPDATE Job SET job_config = ?%s WHERE name = ?",
		 db->has_updated ? ", updated_at = ?" : "");
	struct stmt_args a = { .first = config, .now = db->has_updated ? &r : NULL, .last = name };
	if ((rc = run_stmt(db, sql, &a, e)) != ERR_OK)
		goto fail;
	rowstate_free(&r);
	return commit(db, e);
fail:
	rowstate_free(&r);
	rollback(db);
	return rc;
}

int aitkdb_save_config(struct aitk_db *db, const char *name, const char *loaded, const char *config,
		       bool force, aitkdb_before_write before, void *arg, struct err *e)
{
	return about(db, name, e, save_config(db, name, loaded, config, force, before, arg, e));
}

/* Runs sql with the job's name bound; a row it returns is not read. */
static int exec_named(struct aitk_db *db, const char *sql, const char *name, struct err *e)
{
	struct stmt_args a = { .last = name };
	return run_stmt(db, sql, &a, e);
}

static bool table_exists(struct aitk_db *db, const char *t)
{
	struct err ignored;
	struct stmt_args a = { .last = t };
	(void)run_stmt(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", &a, &ignored);
	return a.found;
}

static int queue_job(struct aitk_db *db, const char *name, char **was, struct err *e)
{
	if (was)
		*was = NULL;
	if (!db->has_status)
		return err_set(e, ERR_DATA, db->path, 0, 0, "%s",
			       _("the Job table has no status column: this UI cannot queue jobs"));
	struct rowstate r;
	int rc = begin_idle(db, name, &r, e);
	if (rc)
		return rc;
	/* Queued already: queueing again would move it behind the jobs queued after it (the start
	 * button is not even offered for a queued job), so nothing is written at all. */
	if (aitkdb_was_queued(r.status)) {
		rollback(db);
		goto out;
	}
	if (db->has_qpos &&
	    (rc = exec_named(db, "UPDATE Job SET queue_position = (SELECT COALESCE(MAX(queue_position), 0) "
				 "+ 1000 FROM Job) WHERE name = ?", name, e)))
		goto fail;
	char sql[256];
	snprintf(sql, sizeof sql,
		 "UPDATE Job SET status = 'queued'%s%s%s%s WHERE name = ?",
		 db->has_stop ? ", stop = 0" : "", db->has_rtq ? ", return_to_queue = 0" : "",
		 db->has_info ? ", info = 'Job queued'" : "", db->has_updated ? ", updated_at = ?" : "");
	struct stmt_args a = { .now = db->has_updated ? &r : NULL, .last = name };
	if ((rc = run_stmt(db, sql, &a, e)) != ERR_OK)
		goto fail;
	/* The start button also starts the GPU's queue, creating it when it is missing. */
	if (db->has_gpu && table_exists(db, "Queue")) {
		if ((rc = exec_named(db, "INSERT INTO Queue (gpu_ids, is_running) SELECT j.gpu_ids, 1 "
				     "FROM Job j WHERE j.name = ? AND NOT EXISTS (SELECT 1 FROM Queue "
				     "q WHERE q.gpu_ids = j.gpu_ids)", name, e)) ||
		    (rc = exec_named(db, "UPDATE Queue SET is_running = 1 WHERE gpu_ids = "
				     "(SELECT gpu_ids FROM Job WHERE name = ?)", name, e)))
			goto fail;
	}
	if ((rc = commit(db, e)) != ERR_OK) {
		rowstate_free(&r);
		return rc;
	}
out:
	if (was) {
		*was = r.status;
		r.status = NULL;
	}
	rowstate_free(&r);
	return ERR_OK;
fail:
	rowstate_free(&r);
	rollback(db);
	return rc;
}

int aitkdb_queue(struct aitk_db *db, const char *name, char **was, struct err *e)
{
	return about(db, name, e, queue_job(db, name, was, e));
}

bool aitkdb_was_queued(const char *was)
{
	return was && !strcmp(was, "queued");
}

static int status_row(sqlite3_stmt *st, void *arg, struct err *e)
{
	struct aitk_status *out = arg;
	(void)e;
	const char *s = (const char *)sqlite3_column_text(st, 0);
	snprintf(out->status, sizeof out->status, "%s", s ? s : "");
	if (sqlite3_column_type(st, 1) != SQLITE_NULL)
		out->step = sqlite3_column_int64(st, 1);
	if (sqlite3_column_type(st, 2) != SQLITE_NULL)
		out->total_steps = sqlite3_column_int64(st, 2);
	if (sqlite3_column_type(st, 3) != SQLITE_NULL)
		out->pid = sqlite3_column_int64(st, 3);
	const char *i = (const char *)sqlite3_column_text(st, 4);
	snprintf(out->info, sizeof out->info, "%s", i ? i : "");
	size_t il = strlen(out->info);
	if (il == sizeof out->info - 1) { /* cut short: not inside a UTF-8 character */
		size_t st0 = il;
		while (st0 && ((unsigned char)out->info[st0 - 1] & 0xc0) == 0x80)
			st0--;
		unsigned char lead = st0 ? (unsigned char)out->info[st0 - 1] : 0;
		size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
		if (st0 && il - (st0 - 1) < want)
			out->info[st0 - 1] = 0;
	}
	out->found = true;
	return ERR_OK;
}

static int read_status(struct aitk_db *db, const char *name, struct aitk_status *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	out->step = out->total_steps = out->pid = -1;
	/* One SELECT through the unique index on name, in autocommit: no transaction is left open,
	 * so the trainer's BEGIN IMMEDIATE never waits for a follower. */
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT %s, %s, %s, %s, %s FROM Job WHERE name = ?",
		 db->has_status ? "status" : "NULL", db->has_step ? "step" : "NULL",
		 db->has_total ? "total_steps" : "NULL", db->has_pid ? "pid" : "NULL",
		 db->has_info ? "info" : "NULL");
	struct stmt_args a = { .last = name, .row = status_row, .arg = out };
	int rc = run_stmt(db, sql, &a, e);
	if (rc)
		return rc;
	if (!out->found)
		return err_set(e, ERR_NOINPUT, db->path, 0, 0,
			       _("the job '%s' is no longer in the database"), SHOWN(name));
	return ERR_OK;
}

int aitkdb_status(struct aitk_db *db, const char *name, struct aitk_status *out, struct err *e)
{
	return about(db, name, e, read_status(db, name, out, e));
}

static int request_stop(struct aitk_db *db, const char *name, bool *asked, struct err *e)
{
	*asked = false;
	if (!db->has_stop || !db->has_status)
		return err_set(e, ERR_DATA, db->path, 0, 0, "%s",
			       _("the Job table has no stop column: this UI cannot stop jobs"));
	int rc = begin(db, e);
	if (rc)
		return rc;
	/* What the UI's stop button writes (ui/src/app/api/jobs/[jobID]/stop/route.ts); the
	 * trainer reads the flag at the end of every step and before loading, sampling and saving. */
	char sql[160];
	snprintf(sql, sizeof sql, "UPDATE Job SET stop = 1%s WHERE name = ? AND status = 'running'",
		 db->has_info ? ", info = 'Stopping job...'" : "");
	if ((rc = exec_named(db, sql, name, e)) != ERR_OK) {
		rollback(db);
		return rc;
	}
	*asked = sqlite3_changes(db->h) > 0;
	return commit(db, e);
}

int aitkdb_request_stop(struct aitk_db *db, const char *name, bool *asked, struct err *e)
{
	return about(db, name, e, request_stop(db, name, asked, e));
}

static int status_rank(const char *s)
{
	static const char *const order[] = { "error", "stopped", "running", "queued", "completed" };
	for (int i = 0; s && i < 5; i++)
		if (!strcmp(s, order[i]))
			return i;
	return 5;
}

static int cmp_failed_first(const void *pa, const void *pb)
{
	const struct aitk_job *a = pa, *b = pb;
	int ra = status_rank(a->status), rb = status_rank(b->status);
	if (ra != rb)
		return ra - rb;
	if (a->updated_ms != b->updated_ms)
		return a->updated_ms > b->updated_ms ? -1 : 1;
	return strcmp(a->name, b->name);
}

void aitkdb_sort_failed_first(struct aitk_job *rows, size_t n)
{
	if (n > 1)
		qsort(rows, n, sizeof *rows, cmp_failed_first);
}
