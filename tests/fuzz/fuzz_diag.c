/* fuzz_diag.c — diag_buffer on arbitrary log bytes, without and with job information, and the
 * verdict written as JSON.
 *
 * The input is the log itself, so any log is a seed. The job information (the training bar's
 * name, the kind, whether the job is conservative) is taken from the input's first line.
 *
 * What must hold for any input: the verdict's enums and counts are within their ranges, every
 * evidence text is NUL-terminated within DIAG_MAX_TEXT and valid UTF-8 with no ESC, the byte
 * count does not exceed the input, and the JSON written from the verdict is valid UTF-8 with
 * no raw control characters.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/diag.h"
#include "oomfix/err.h"
#include "oomfix/json.h"
#include "oomfix/memacct.h"

#include "fuzz.h"

static void check_hit(const struct diag_hit *h)
{
	size_t n = strnlen(h->text, sizeof h->text);

	FUZZ_CHECK(n < sizeof h->text);
	FUZZ_CHECK(fuzz_utf8_valid((const unsigned char *)h->text, n));
	FUZZ_CHECK(memchr(h->text, 0x1B, n) == NULL);
}

static void check_json(const struct diag_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct json j;

	if (!fp)
		return;
	json_init(&j, fp, true);
	json_obj_begin(&j);
	diag_json_head(&j, r);
	diag_json_tail(&j, r);
	json_obj_end(&j);
	json_finish(&j);
	FUZZ_CHECK(fclose(fp) == 0);
	FUZZ_CHECK(buf != NULL && len > 0);
	FUZZ_CHECK(fuzz_utf8_valid((const unsigned char *)buf, len));
	for (size_t i = 0; i < len; i++)
		FUZZ_CHECK((unsigned char)buf[i] >= 0x20 || buf[i] == '\n');
	FUZZ_CHECK(buf[0] == '{' && buf[len - 1] == '\n');
	free(buf);
}

static void check_result(const struct diag_result *r, size_t size)
{
	FUZZ_CHECK((unsigned)r->timing < DIAG_T_COUNT);
	FUZZ_CHECK((unsigned)r->phase < DIAG_P_COUNT);
	FUZZ_CHECK((unsigned)r->other < DIAG_O_COUNT);
	FUZZ_CHECK(r->timing == DIAG_T_NONE || diag_timing_name(r->timing) != NULL);
	FUZZ_CHECK(r->phase == DIAG_P_NONE || diag_phase_name(r->phase) != NULL);
	FUZZ_CHECK(r->other == DIAG_O_NONE || diag_other_name(r->other) != NULL);
	FUZZ_CHECK(r->oom || r->timing == DIAG_T_NONE);
	FUZZ_CHECK(r->failed_step >= -1 && r->total_steps >= -1);
	FUZZ_CHECK(r->nsigs <= DIAG_MAX_SIGS);
	FUZZ_CHECK(r->nhints <= sizeof r->hints / sizeof r->hints[0]);
	FUZZ_CHECK(r->nevidence <= DIAG_MAX_EVIDENCE);
	FUZZ_CHECK(r->bytes <= size);
	FUZZ_CHECK(r->lines <= (uint64_t)size + 1);
	for (size_t i = 0; i < r->nsigs; i++) {
		FUZZ_CHECK(r->sigs[i].id != NULL);
		FUZZ_CHECK(r->sigs[i].offset <= size);
		check_hit(&r->sigs[i]);
	}
	for (size_t i = 0; i < r->nhints; i++)
		check_hit(&r->hints[i]);
	/* the memory account: the parts never overflow the card, counts are bytes or -1 */
	if (r->memory.present) {
		int64_t part[MEMACCT_NPARTS], sum = 0;
		FUZZ_CHECK(r->memory.nother <= MEMACCT_MAX_PROCS);
		FUZZ_CHECK(r->memory.unaccounted >= -1 && r->memory.capacity >= -1);
		if (memacct_parts(&r->memory, part)) {
			for (int k = 0; k < MEMACCT_NPARTS; k++) {
				FUZZ_CHECK(part[k] >= 0);
				sum += part[k];
			}
			FUZZ_CHECK(sum <= r->memory.capacity);
		}
	}
	for (size_t i = 0; i < r->nevidence; i++) {
		FUZZ_CHECK(r->evidence[i].offset <= size);
		check_hit(&r->evidence[i]);
	}
	check_json(r);
}

static void run(const uint8_t *data, size_t size, const struct diag_job_info *job)
{
	struct diag_result *r = malloc(sizeof *r);
	struct err e;
	int rc;

	if (!r)
		return;
	err_clear(&e);
	rc = diag_buffer((const char *)data, size, job, r, &e);
	if (rc == ERR_OK)
		check_result(r, size);
	else
		FUZZ_CHECK(e.code != ERR_OK && e.msg[0] != '\0');
	free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[64];
	size_t n = 0;
	struct diag_job_info job;
	unsigned char b = size ? data[size - 1] : 0;

	run(data, size, NULL);

	/* The first line (clipped) as the job's name: the training bar's description. */
	while (n < size && n < sizeof name - 1 && data[n] != '\n')
		n++;
	memcpy(name, data, n);
	name[n] = '\0';
	job.name = (b & 8) ? NULL : name;
	job.kind = b % 3;
	job.conservative = (int)((b >> 2) % 3) - 1;
	run(data, size, &job);
	return 0;
}
