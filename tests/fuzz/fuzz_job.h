/* fuzz_job.h — what the targets that end in a job share: reading every panel field of a job the
 * way the UI shows it, and checking that an error carries a message. Included by one target
 * each (static functions), like fuzz.h. */
#ifndef OOMFIX_FUZZ_JOB_H
#define OOMFIX_FUZZ_JOB_H

#include <stdbool.h>
#include <string.h>

#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/job.h"

#include "fuzz.h"

static inline bool err_has_message(const struct err *e)
{
	size_t n = strnlen(e->msg, sizeof e->msg);

	return e->code != ERR_OK && n > 0 && n < sizeof e->msg;
}

/* Every field of every panel, as displayed (small and large buffers) and its path, for the first
 * datasets; the job's derived answers. */
static inline void fuzz_read_fields(const struct job *j)
{
	for (size_t f = 0; f < job_nfields; f++) {
		size_t nds = j->ndatasets ? (j->ndatasets < 3 ? j->ndatasets : 3) : 1;

		for (size_t ds = 0; ds < nds; ds++) {
			char small[8], big[256];
			bool is_default;

			memset(small, 'A', sizeof small);
			if (job_field_value(j, &job_fields[f], ds, small, sizeof small, &is_default))
				FUZZ_CHECK(strnlen(small, sizeof small) < sizeof small);
			if (job_field_value(j, &job_fields[f], ds, big, sizeof big, &is_default))
				FUZZ_CHECK(strnlen(big, sizeof big) < sizeof big);
			memset(big, 'A', sizeof big);
			job_field_path(j, &job_fields[f], ds, big, sizeof big);
			FUZZ_CHECK(strnlen(big, sizeof big) < sizeof big);
		}
		(void)job_field_applies(j, &job_fields[f]);
	}
	(void)job_is_conservative(j);
	(void)job_max_bucket(j);
	(void)job_frame_step(j);
	(void)job_prompt_count(j, NULL);
	(void)job_kind_name(j->kind);
}

/* job_from_doc either refuses with a message and no job, or gives a job whose fields read. */
static inline void fuzz_read_job(const struct doc *d)
{
	struct job *j = NULL;
	struct err e;
	int rc;

	err_clear(&e);
	rc = job_from_doc(d, &j, &e);
	if (rc != ERR_OK) {
		FUZZ_CHECK(j == NULL);
		FUZZ_CHECK(err_has_message(&e));
		return;
	}
	FUZZ_CHECK(j != NULL);
	fuzz_read_fields(j);
	job_free(&j);
	FUZZ_CHECK(j == NULL);
}

#endif
