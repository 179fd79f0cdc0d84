/* trail.h — the trail of tries of a job: a history of its runs, not a re-diagnosis.
 *
 * For each run (newest first): its log, numbered like the file (JOB.oomfix-runs/<n>.log for a job
 * file, logs/<n>_log.txt for a web UI job, whose current log.txt comes first), when the log was
 * last written, its verdict and the phase it failed in, and what was saved to the job after it
 * (from the change journal): the fix ids, the changes and when. A journal entry that names a run's
 * log (oomfix retry writes "its log: ...") belongs to that run; any other entry belongs to the
 * newest run whose log was written before it. Nothing here prints; `oomfix runs` and the UI's
 * trail show the same model.
 */
#ifndef OOMFIX_TRAIL_H
#define OOMFIX_TRAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "oomfix/err.h"
#include "oomfix/save.h"
#include "oomfix/source.h"

#define TRAIL_CURRENT (-1L) /* trail_run.number of a web UI job's current log.txt */

struct trail_run {
	char *log;                 /* the log's path */
	long number;               /* <n> of its file name, or TRAIL_CURRENT */
	time_t when;               /* the log's last write (0 when it cannot be stat'ed) */
	struct source_verdict v;   /* its verdict (v.first_fix is what the job would get now) */
	const struct save_journal_entry **after; /* saved after this run, oldest first */
	size_t nafter;
};

struct trail {
	struct trail_run *runs;    /* newest first */
	size_t n;
	const struct save_journal_entry **before; /* saved before the oldest run */
	size_t nbefore;
	struct save_journal_entry *journal; /* every entry of the journal (owned) */
	size_t njournal;
	char *where;               /* the folder the run logs are looked for in */
};

/* Builds the trail of the job `s`. Returns 0 or an ERR_ code (out of memory, an unreadable
 * journal); a log that cannot be read is a run with v.have_log = false. Free with trail_free. */
int trail_build(const struct source *s, struct trail *out, struct err *e);
void trail_free(struct trail *t);

/* The run's verdict in a few words, translated: "B: out of memory in training step 3",
 * "no OOM; the run finished", "unreadable". */
void trail_verdict_words(const struct trail_run *r, char *buf, size_t size);

/* What was saved after the run, in a few words: "batch_size", "gradient_checkpointing, then
 * batch_size", "manual edits", or "" when nothing was. */
void trail_fixes_words(const struct trail_run *r, char *buf, size_t size);

#endif
