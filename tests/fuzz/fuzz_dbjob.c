/* fuzz_dbjob.c — a job read from the web UI's database: the input is the `job_config` text of a
 * row in a real aitk_db.db (made once, in a temporary folder, with the UI's Job table), opened
 * as `aitk:fuzz` through source_open as every command opens it, then loaded as a document, read
 * as a job with every panel field shown, and rendered indented as the diff shows it.
 *
 * What must hold for any input: source_open refuses with a message naming the job (text that is
 * not JSON or not an object, at its line and column) or gives exactly the stored text; then as fuzz_doc's job part
 * (a refusal has a message, every displayed value fits its buffer); the diff of the text against
 * itself is empty. The same bytes as a change journal beside a job are read back as entries or
 * refused with a message (save_journal_entries).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/json.h"
#include "oomfix/save.h"
#include "oomfix/source.h"

#include "fuzz.h"
#include "fuzz_job.h"

static char root[256], dbpath[300];
static sqlite3 *db;
static sqlite3_stmt *upd;

static void cleanup(void)
{
	static const char *const tails[] = { "", "-wal", "-shm", "-journal" };
	char p[320];

	sqlite3_finalize(upd);
	sqlite3_close(db);
	for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
		snprintf(p, sizeof p, "%s%s", dbpath, tails[i]);
		unlink(p);
	}
	snprintf(p, sizeof p, "%s/fuzz.yaml.oomfix.md", root);
	unlink(p);
	rmdir(root);
}

/* The UI's Job and Settings tables (tests/aitk/uidb.py has the full schema), one job. */
static bool setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof root, "%s/oomfix-fuzz-dbjob-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		return false;
	snprintf(dbpath, sizeof dbpath, "%s/aitk_db.db", root);
	atexit(cleanup);
	if (sqlite3_open(dbpath, &db) != SQLITE_OK)
		return false;
	if (sqlite3_exec(db,
		"PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
		"CREATE TABLE \"Settings\" (\"id\" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,"
		" \"key\" TEXT NOT NULL, \"value\" TEXT NOT NULL);"
		"CREATE TABLE \"Job\" (\"id\" TEXT NOT NULL PRIMARY KEY, \"name\" TEXT NOT NULL,"
		" \"gpu_ids\" TEXT NOT NULL, \"job_config\" TEXT NOT NULL,"
		" \"created_at\" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,"
		" \"updated_at\" DATETIME NOT NULL, \"status\" TEXT NOT NULL DEFAULT 'stopped',"
		" \"stop\" BOOLEAN NOT NULL DEFAULT false,"
		" \"return_to_queue\" BOOLEAN NOT NULL DEFAULT false,"
		" \"step\" INTEGER NOT NULL DEFAULT 0, \"total_steps\" INTEGER,"
		" \"info\" TEXT NOT NULL DEFAULT '', \"speed_string\" TEXT NOT NULL DEFAULT '',"
		" \"queue_position\" INTEGER NOT NULL DEFAULT 0, \"pid\" INTEGER,"
		" \"job_type\" TEXT NOT NULL DEFAULT 'train', \"job_ref\" TEXT,"
		" \"save_now\" BOOLEAN NOT NULL DEFAULT false,"
		" \"sample_now\" BOOLEAN NOT NULL DEFAULT false);"
		"CREATE UNIQUE INDEX \"Job_name_key\" ON \"Job\"(\"name\");"
		"INSERT INTO Job (id, name, gpu_ids, job_config, updated_at, status)"
		" VALUES ('1', 'fuzz', '0', '{}', 1755782400000, 'error');",
		NULL, NULL, NULL) != SQLITE_OK)
		return false;
	return sqlite3_prepare_v2(db, "UPDATE Job SET job_config = ? WHERE name = 'fuzz'", -1, &upd,
				  NULL) == SQLITE_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct source *s = NULL;
	struct doc *d = NULL;
	struct err e;
	const char *text;
	size_t len, stored;
	int rc;

	if (!ready)
		ready = setup() ? 1 : -1;
	FUZZ_CHECK(ready == 1);

	/* The same bytes as a change journal (a file beside the job a user may edit): read back
	 * as entries, or refused with a message, every fix and change of an entry a string. */
	{
		char job[300], jr[320];
		struct save_journal_entry *en = NULL;
		size_t nen = 0;
		snprintf(job, sizeof job, "%s/fuzz.yaml", root);
		snprintf(jr, sizeof jr, "%s.oomfix.md", job);
		FILE *f = fopen(jr, "wb");
		FUZZ_CHECK(f != NULL);
		FUZZ_CHECK(fwrite(data, 1, size, f) == size);
		FUZZ_CHECK(fclose(f) == 0);
		err_clear(&e);
		rc = save_journal_entries(job, &en, &nen, &e);
		if (rc != ERR_OK)
			FUZZ_CHECK(err_has_message(&e) && en == NULL);
		for (size_t i = 0; i < nen; i++) {
			for (size_t k = 0; k < en[i].nfixes; k++)
				FUZZ_CHECK(en[i].fixes[k] != NULL);
			for (size_t k = 0; k < en[i].nchanges; k++)
				FUZZ_CHECK(en[i].changes[k] != NULL);
		}
		save_journal_entries_free(en, nen);
	}
	sqlite3_reset(upd);
	FUZZ_CHECK(sqlite3_bind_text(upd, 1, (const char *)data, (int)size, SQLITE_TRANSIENT) ==
		   SQLITE_OK);
	FUZZ_CHECK(sqlite3_step(upd) == SQLITE_DONE);
	stored = strnlen((const char *)data, size); /* the row's text as C reads it: up to a NUL */

	source_set_aitk_dir(root);
	err_clear(&e);
	rc = source_open("aitk:fuzz", &s, &e);
	if (rc != ERR_OK) {
		FUZZ_CHECK(s == NULL);
		FUZZ_CHECK(rc == ERR_DATA);
		FUZZ_CHECK(err_has_message(&e));
		FUZZ_CHECK(strcmp(e.file, "aitk:fuzz") == 0);
		/* not JSON, or JSON that is not an object */
		size_t k = 0;
		while (k < stored && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' ||
				      data[k] == '\r'))
			k++;
		FUZZ_CHECK(!json_check((const char *)data, stored, NULL) || k == stored ||
			   data[k] != '{');
		return 0;
	}
	text = source_text(s, &len);
	FUZZ_CHECK(len == stored && memcmp(text, data, len) == 0);
	FUZZ_CHECK(json_check(text, len, NULL));
	FUZZ_CHECK(source_is_json(s));
	err_clear(&e);
	rc = doc_load(source_label(s), text, len, &d, &e);
	if (rc != ERR_OK) {
		FUZZ_CHECK(err_has_message(&e));
	} else {
		fuzz_read_job(d);
		doc_free(&d);
	}
	{
		char *diff = source_diff(source_label(s), text, len, text, len, 3);

		FUZZ_CHECK(diff == NULL || diff[0] == '\0');
		free(diff);
	}
	source_free(&s);
	return 0;
}
