/* fuzz_fix.c — every fix applied to the fuzzed job (a YAML or JSON job file is a seed).
 *
 * For each fix the job admits (fix_status), the edits of fix_edits go through doc_apply. What
 * must hold for any input:
 *  - fix_edits refuses only with a message; doc_apply either fails with a message and no
 *    document, or gives a text that loads again and is still a job;
 *  - the result holds the intended value: every plain scalar an edit sets reads back at its path,
 *    and a switch reads back on in the job (gradient checkpointing, sampling off, low VRAM and
 *    quantization where the arch has them); a step never raises the largest bucket;
 *  - a switch or a clamp applied twice changes nothing: on the fixed job it is done and its edits
 *    are empty.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/job.h"
#include "oomfix/plan.h"

#include "fuzz.h"
#include "fuzz_job.h"

static bool is_plain(const char *v)
{
	return v && *v && !strpbrk(v, "[]{}\"'#:,&*!|>%@` \t\n");
}

static bool idempotent(enum fix_id id)
{
	return id == FIX_GRADIENT_CHECKPOINTING || id == FIX_DISABLE_SAMPLING || id == FIX_LOW_VRAM ||
	       id == FIX_BATCH_SIZE || id == FIX_LIGHTER_SAMPLING;
}

/* The fixed job: what the fix meant to change reads back. */
static void check_value(enum fix_id id, const struct job *j, const struct job *j2)
{
	switch (id) {
	case FIX_GRADIENT_CHECKPOINTING:
		FUZZ_CHECK(j2->gradient_checkpointing);
		break;
	case FIX_DISABLE_SAMPLING:
		FUZZ_CHECK(j2->disable_sampling);
		break;
	case FIX_LOW_VRAM:
		if (j2->arch_has_low_vram)
			FUZZ_CHECK(j2->low_vram);
		if (j2->arch_has_quantize)
			FUZZ_CHECK(j2->quantize);
		break;
	case FIX_DROP_LARGEST_BUCKET:
		FUZZ_CHECK(job_max_bucket(j2) <= job_max_bucket(j));
		break;
	default:
		break;
	}
}

static void apply_fix(const struct doc *d, const struct job *j, enum fix_id id, bool keep)
{
	struct fix_edit_list l, l2;
	struct doc *out = NULL, *again = NULL;
	struct job *j2 = NULL;
	struct err e;
	const char *text;
	size_t len;
	int rc;

	err_clear(&e);
	rc = fix_edits(j, id, keep, &l, &e);
	if (rc != ERR_OK) {
		FUZZ_CHECK(err_has_message(&e));
		FUZZ_CHECK(l.n == 0);
		return;
	}
	FUZZ_CHECK(strnlen(l.note, sizeof l.note) < sizeof l.note);
	if (id == FIX_FRESH_WORKER)
		FUZZ_CHECK(l.n == 0);
	if (l.n == 0) {
		fix_edits_free(&l);
		return;
	}
	err_clear(&e);
	rc = doc_apply(d, l.edits, l.n, &out, &e);
	if (rc != ERR_OK) {
		FUZZ_CHECK(out == NULL);
		FUZZ_CHECK(err_has_message(&e));
		fix_edits_free(&l);
		return;
	}
	text = doc_text(out, &len);
	err_clear(&e);
	FUZZ_CHECK(doc_load("fixed", text, len, &again, &e) == ERR_OK);
	for (size_t i = 0; i < l.n; i++) {
		const struct doc_node *n;

		if (l.edits[i].op != DOC_EDIT_SET || !is_plain(l.edits[i].value))
			continue;
		n = doc_deref(doc_get(again, l.edits[i].path));
		FUZZ_CHECK(n && n->kind == DOC_SCALAR && strcmp(n->value, l.edits[i].value) == 0);
	}
	err_clear(&e);
	rc = job_from_doc(again, &j2, &e);
	if (rc != ERR_OK)
		fprintf(stderr, "%s: the fixed job does not read: %s\n", fix_name(id), e.msg);
	FUZZ_CHECK(rc == ERR_OK);
	fuzz_read_fields(j2);
	check_value(id, j, j2);
	if (idempotent(id)) {
		FUZZ_CHECK(fix_status(j2, id, NULL, 0) != FIX_TODO);
		err_clear(&e);
		if (fix_edits(j2, id, keep, &l2, &e) == ERR_OK) {
			if (l2.n) {
				struct doc *twice = NULL;

				/* edits may remain only when they change no byte */
				err_clear(&e);
				FUZZ_CHECK(doc_apply(again, l2.edits, l2.n, &twice, &e) == ERR_OK);
				{
					size_t tl;
					const char *tt = doc_text(twice, &tl);

					FUZZ_CHECK(tl == len && memcmp(tt, text, len) == 0);
				}
				doc_free(&twice);
			}
			fix_edits_free(&l2);
		}
	}
	job_free(&j2);
	doc_free(&again);
	doc_free(&out);
	fix_edits_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doc *d = NULL;
	struct job *j = NULL;
	struct err e;
	bool keep = size && (data[size - 1] & 1);

	err_clear(&e);
	if (doc_load("fuzz", (const char *)data, size, &d, &e) != ERR_OK)
		return 0;
	err_clear(&e);
	if (job_from_doc(d, &j, &e) != ERR_OK) {
		FUZZ_CHECK(err_has_message(&e));
		doc_free(&d);
		return 0;
	}
	for (int id = 0; id < FIX_COUNT; id++) {
		char reason[256];
		enum fix_status st = fix_status(j, (enum fix_id)id, reason, sizeof reason);

		FUZZ_CHECK(st == FIX_NOT_APPLICABLE || st == FIX_TODO || st == FIX_DONE);
		FUZZ_CHECK(strnlen(reason, sizeof reason) < sizeof reason);
		apply_fix(d, j, (enum fix_id)id, keep);
	}
	job_free(&j);
	doc_free(&d);
	return 0;
}
