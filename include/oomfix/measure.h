/* measure.h — what the user's own runs measured, kept for the next estimate (SPEC §12.2).
 *
 * Every OOM message says how much the job held and how much more it asked for: a measured lower
 * bound of the phase it failed in, on this card, with this trainer. Each one is kept as a row of
 * a small SQLite store (measurements.db in $XDG_STATE_HOME/oomfix/, else ~/.local/state/oomfix/;
 * $OOMFIX_MEASUREMENTS names another file, or "off"), keyed by the job's est_input. Writing never
 * blocks or fails the command: a store that is damaged is set aside and started again, one that
 * is locked or cannot be written loses that row; either is said once (measure_note).
 */
#ifndef OOMFIX_MEASURE_H
#define OOMFIX_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "oomfix/diag.h"
#include "oomfix/err.h"
#include "oomfix/estimate.h"
#include "oomfix/job.h"

enum measure_kind { MEASURE_LOWER, MEASURE_PEAK };

struct measurement {
	long long id;
	time_t at;
	struct est_input in;     /* the job's settings when it ran */
	int64_t card;            /* the card's capacity (bytes), 0 when not known */
	enum est_phase phase;
	int64_t bytes;
	enum measure_kind kind;  /* lower: it needed at least bytes (an OOM); peak: it held bytes */
	char log[512];           /* the run's log, as given */
};

/* The store's file into buf; NULL when measurements are off or no folder is known. */
const char *measure_store_path(char *buf, size_t sz);

/* Keeps one measurement. Never fails the caller: ERR_OK, or a code with the problem kept for
 * measure_note. A row already kept (same settings, phase, kind, bytes and log) is not doubled. */
int measure_record(const struct est_input *in, int64_t card, enum est_phase phase, int64_t bytes,
		   enum measure_kind kind, const char *log);

/* The measurement an OOM diagnosis gives for job j (held + requested, in the phase it failed
 * in), kept; nothing when the log has no such numbers or its phase is not known. */
int measure_record_diag(const struct job *j, const struct diag_result *v, const char *log);

/* Every valid row, newest first (malloc'd; rows the program cannot read are skipped). */
int measure_list(struct measurement **out, size_t *n, struct err *e);

/* The rows as this process last read them, for the estimate (read once, again after a
 * record); NULL with *n = 0 when there are none. Owned by the module. */
const struct measurement *measure_cached(size_t *n);

/* What went wrong with the store, once per process (NULL when nothing, or already said). */
const char *measure_note(void);

/* The phase of the estimate an OOM diagnosis failed in; false when it is not one. */
bool measure_phase_of(const struct diag_result *v, enum est_phase *p);

#endif
