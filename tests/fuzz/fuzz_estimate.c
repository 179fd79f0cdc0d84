/* fuzz_estimate.c — the pre-flight estimate of the fuzzed job (a YAML or JSON job file is a seed).
 *
 * What must hold for any input that reads as a job whose arch the table knows:
 *  - every phase that happens has 0 <= low <= bytes <= high <= EST_BYTES_MAX (a size from the
 *    file saturates: no NaN, infinity or overflow turned into a number), and the peak phase is
 *    the largest;
 *  - the verdict is monotone in the card: a job that fits a card fits one twice as large;
 *  - the training estimate never falls when the batch, the largest bucket, the clip length
 *    (video) or the LoRA rank doubles, and the caching estimate never falls with the bucket;
 *  - the input read as a measurement store's key (est_input_parse, what measure.c reads back
 *    from a store that may have been edited) either is refused or reads back to the same key,
 *    and a measurement of it applied to its estimate keeps every phase sane.
 *  - the input read as nvidia-smi's answers (estimate_parse_smi: the cards, then the processes,
 *    split at the first empty line; what the follow watch and the card choice read) gives at
 *    most EST_MAX_GPUS cards with sizes in range, each with at most EST_MAX_APPS processes whose
 *    bytes add up to apps_total.
 * The user's own store is never read here: OOMFIX_MEASUREMENTS=off.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/estimate.h"
#include "oomfix/job.h"
#include "oomfix/measure.h"

#include "fuzz.h"


static void check_sane(const struct estimate *e)
{
	int64_t top = -1;

	for (int p = 0; p < EST_NPHASES; p++) {
		const struct est_phase_est *ph = &e->phase[p];

		if (!ph->on)
			continue;
		FUZZ_CHECK(ph->low >= 0 && ph->low <= ph->bytes);
		FUZZ_CHECK(ph->bytes <= ph->high && ph->high <= EST_BYTES_MAX);
		FUZZ_CHECK(ph->points >= 0);
		if (ph->bytes > top)
			top = ph->bytes;
	}
	FUZZ_CHECK(top >= 0);
	FUZZ_CHECK(e->phase[e->peak].on && e->phase[e->peak].bytes == top);
	FUZZ_CHECK(e->weights >= 0 && e->adapter >= 0 && e->activations >= 0 && e->context >= 0);
}

static void check_cards(const struct estimate *e)
{
	static const int64_t gib = (int64_t)1 << 30;
	enum est_verdict last = EST_V_NO;

	for (int64_t card = 4 * gib; card <= 256 * gib; card *= 2) {
		enum est_phase at;
		enum est_verdict v = estimate_verdict(e, card, &at);

		FUZZ_CHECK(v == EST_V_FITS || v == EST_V_TIGHT || v == EST_V_NO);
		FUZZ_CHECK(at >= 0 && at < EST_NPHASES);
		FUZZ_CHECK(v <= last); /* FITS < TIGHT < NO: a larger card is never worse */
		last = v;
	}
}

static int64_t phase_bytes(const struct job *j, enum est_phase p)
{
	struct estimate e;

	FUZZ_CHECK(estimate_job(j, &e) == ERR_OK);
	FUZZ_CHECK(e.known);
	check_sane(&e);
	return e.phase[p].on ? e.phase[p].bytes : 0;
}

/* The same job with more of one thing; the struct and its datasets are copies, the document is
 * shared (read only). */
static void check_monotone(const struct job *j, const struct estimate *e)
{
	int64_t train = e->phase[EST_TRAINING].on ? e->phase[EST_TRAINING].bytes : 0;
	int64_t cache = e->phase[EST_CACHING].on ? e->phase[EST_CACHING].bytes : 0;
	struct job k = *j;
	struct job_dataset *ds = NULL;

	if (j->batch_size > 0 && j->batch_size < (1LL << 20)) {
		k.batch_size = j->batch_size * 2;
		FUZZ_CHECK(phase_bytes(&k, EST_TRAINING) >= train);
		k.batch_size = j->batch_size;
	}
	if (!j->ndatasets || !(ds = malloc(j->ndatasets * sizeof *ds)))
		return;
	k.datasets = ds;
	bool small = true;
	for (size_t i = 0; i < j->ndatasets; i++) {
		ds[i] = j->datasets[i];
		small &= ds[i].res_max < (1LL << 20) && ds[i].num_frames < (1LL << 20);
		for (size_t r = 0; r < ds[i].nres; r++)
			small &= ds[i].res[r] < (1LL << 20);
	}
	if (small) {
		for (size_t i = 0; i < j->ndatasets; i++) {
			for (size_t r = 0; r < ds[i].nres; r++)
				ds[i].res[r] = j->datasets[i].res[r] > 0 ? j->datasets[i].res[r] * 2 : 0;
			ds[i].res_max = j->datasets[i].res_max > 0 ? j->datasets[i].res_max * 2 : 0;
		}
		FUZZ_CHECK(phase_bytes(&k, EST_TRAINING) >= train);
		FUZZ_CHECK(phase_bytes(&k, EST_CACHING) >= cache);
		for (size_t i = 0; i < j->ndatasets; i++) {
			ds[i] = j->datasets[i];
			if (ds[i].num_frames > 0)
				ds[i].num_frames = ds[i].num_frames * 2;
		}
		FUZZ_CHECK(phase_bytes(&k, EST_TRAINING) >= train);
	}
	free(ds);
}

/* The rank doubled in the document itself (the estimate reads network.linear from it). */
static void check_rank(const struct doc *d, const struct job *j, const struct estimate *e)
{
	char path[256], value[32];
	const struct doc_node *n;
	struct doc *d2 = NULL;
	struct job *j2 = NULL;
	struct doc_edit ed;
	struct err er;
	long long rank;

	snprintf(path, sizeof path, "%s.network.linear", j->process_path);
	n = doc_deref(doc_get(d, path));
	if (!n || n->kind != DOC_SCALAR || !doc_as_long(n, &rank) || rank < 1 || rank > (1LL << 20))
		return;
	snprintf(value, sizeof value, "%lld", rank * 2);
	memset(&ed, 0, sizeof ed);
	ed.op = DOC_EDIT_SET;
	ed.path = path;
	ed.value = value;
	err_clear(&er);
	if (doc_apply(d, &ed, 1, &d2, &er) != ERR_OK)
		return;
	err_clear(&er);
	if (job_from_doc(d2, &j2, &er) == ERR_OK)
		FUZZ_CHECK(phase_bytes(j2, EST_TRAINING) >= e->phase[EST_TRAINING].bytes);
	job_free(&j2);
	doc_free(&d2);
}

/* The input as a store's key: refused, or read back to itself; its measurement kept sane. */
static void check_key(const uint8_t *data, size_t size)
{
	char key[1100], again[1100];
	if (size >= sizeof key)
		return;
	memcpy(key, data, size);
	key[size] = 0;
	struct est_input in;
	if (!est_input_parse(key, &in))
		return;
	est_input_key(&in, true, again, sizeof again);
	struct est_input back;
	FUZZ_CHECK(est_input_parse(again, &back));
	char third[1100];
	est_input_key(&back, true, third, sizeof third);
	FUZZ_CHECK(!strcmp(again, third));
	struct estimate e;
	if (estimate_input(&in, &e) != ERR_OK || !e.known)
		return;
	struct measurement m = { .in = in, .phase = EST_TRAINING, .bytes = (int64_t)size << 28,
				 .kind = size & 1 ? MEASURE_PEAK : MEASURE_LOWER };
	estimate_apply_measured(&e, &in, &m, 1);
	check_sane(&e);
}

static void check_smi(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 2);
	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = text[size + 1] = 0;
	char *apps = strstr(text, "\n\n");
	if (apps) {
		*apps = 0;
		apps += 2;
	}
	struct est_gpus g;
	struct err e;
	err_clear(&e);
	if (estimate_parse_smi(text, apps, &g, &e) == ERR_OK) {
		FUZZ_CHECK(g.n <= EST_MAX_GPUS);
		for (size_t c = 0; c < g.n; c++) {
			FUZZ_CHECK(g.gpu[c].total >= 0 && g.gpu[c].total <= EST_BYTES_MAX);
			FUZZ_CHECK(g.gpu[c].napps <= EST_MAX_APPS);
			int64_t sum = 0;
			for (size_t a = 0; a < g.gpu[c].napps; a++) {
				FUZZ_CHECK(g.gpu[c].app[a].bytes >= 0);
				sum += g.gpu[c].app[a].bytes;
			}
			FUZZ_CHECK(sum == g.gpu[c].apps_total);
		}
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doc *d = NULL;
	struct job *j = NULL;
	struct estimate e;
	struct err er;

	setenv("OOMFIX_MEASUREMENTS", "off", 1);
	check_key(data, size);
	check_smi(data, size);
	err_clear(&er);
	if (doc_load("fuzz.yaml", (const char *)data, size, &d, &er) != ERR_OK)
		return 0;
	err_clear(&er);
	if (job_from_doc(d, &j, &er) == ERR_OK && estimate_job(j, &e) == ERR_OK && e.known) {
		check_sane(&e);
		check_cards(&e);
		check_monotone(j, &e);
		check_rank(d, j, &e);
	}
	job_free(&j);
	doc_free(&d);
	return 0;
}
