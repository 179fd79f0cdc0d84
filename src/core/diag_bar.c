/* diag_bar.c — progress bars (tqdm frames): what they say of the phase and the step. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/diag.h"
#include "oomfix/i18n.h"
#include "oomfix/json.h"
#include "oomfix/logidx.h"
#include "oomfix/save.h"
#include "oomfix/sig.h"
#include "oomfix/text.h"
#include "diag_int.h"

/* ---- progress bars ---- */

long long dg_parse_num(const char **p, const char *end)
{
	long long v = 0;
	const char *q = *p;
	if (q >= end || !is_digit(*q))
		return -1;
	while (q < end && is_digit(*q)) {
		if (v < 100000000000LL)
			v = v * 10 + (*q - '0');
		q++;
	}
	*p = q;
	return v;
}

/* Recognises a tqdm frame: "desc:  5%|bar| 150/3000 [04:10<1:19:12,  1.67s/it, lr: ...]". */
bool dg_parse_bar(const char *s, size_t len, struct bar *b)
{
	const char *end = s + len, *pp, *q, *r;

	b->partial = false;
	pp = memmem(s, len, "%|", 2);
	if (!pp)
		return false;
	b->partial = true; /* until the whole frame is seen */
	q = pp;
	while (q > s && is_digit(q[-1]))
		q--;
	if (q == pp)
		return false;
	while (q > s && q[-1] == ' ')
		q--;
	b->desc = s;
	b->dlen = (size_t)(q - s);
	if (b->dlen && s[b->dlen - 1] == ':')
		b->dlen--;
	while (b->dlen && (s[0] == ' ')) { /* leading blanks */
		s++;
		b->desc = s;
		b->dlen--;
	}
	rtrim(b->desc, &b->dlen);
	r = memchr(pp + 2, '|', (size_t)(end - (pp + 2)));
	if (!r)
		return false;
	return dg_bar_counts(r + 1, end, b, true);
}

bool dg_bar_counts(const char *r, const char *end, struct bar *b, bool lrloss)
{
	const char *close;

	while (r < end && *r == ' ')
		r++;
	b->n = dg_parse_num(&r, end);
	if (b->n < 0 || r >= end || *r != '/')
		return false;
	r++;
	b->total = dg_parse_num(&r, end);
	while (r < end && *r == ' ')
		r++;
	if (r >= end || *r != '[')
		return false;
	close = memchr(r, ']', (size_t)(end - r));
	if (!close)
		return false;
	b->lrloss = lrloss && (memmem(r, (size_t)(close - r), "loss:", 5) != NULL ||
			       memmem(r, (size_t)(close - r), "lr:", 3) != NULL);
	b->tail = close + 1;
	b->tlen = (size_t)(end - b->tail);
	b->partial = false;
	return true;
}

/* Text from the other stream that landed inside a bar frame the bar had half written
 * ("name:  45%|####  | 90Traceback (most recent call last):"): where it starts, or 0. Only
 * cut frames reach this, so whole frames cost nothing more. */
size_t dg_glued_start(const char *s, size_t len)
{
	static const char *const heads[] = {
		"Traceback (most recent call last)", "Error running job: ",
		"torch.OutOfMemoryError: ", "torch.cuda.OutOfMemoryError: ", "RuntimeError: ",
	};
	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
		const char *h = memmem(s, len, heads[i], strlen(heads[i]));
		if (h && h > s)
			return (size_t)(h - s);
	}
	return 0;
}

/* Bars that are not the training bar, by the start of their description. */
static const char *const other_bars[] = {
	"Generating", "Caching", "Loading", "Attaching", "Quantiz", "Fetching", "Downloading",
	"Preprocessing", "Map", "Resolving", "Encoding", "Computing", "Saving", "Processing",
	"Merging", "Moving", "Unloading", "Converting", "Validat",
};

static bool is_sampling_desc(const char *d, size_t n)
{
	return starts_ci(d, n, "Generating Samples") || starts_ci(d, n, "Generating Images");
}

static bool is_training_desc(struct dstate *st, const struct bar *b)
{
	if (b->dlen == 0)
		return false;
	if (st->namelen && b->dlen == st->namelen && !memcmp(b->desc, st->name, st->namelen)) {
		st->saw_name_bar = true;
		return true;
	}
	for (size_t i = 0; i < sizeof other_bars / sizeof other_bars[0]; i++)
		if (starts_ci(b->desc, b->dlen, other_bars[i]))
			return false;
	if (b->lrloss)
		return true;
	/* The banner names the training bar exactly, so another labelled bar (a download, a
	 * dataset map) is not it. Without the banner, the job's name may be stale (renamed after
	 * the run): an unknown labelled bar is the training bar until the named one shows up. */
	if (st->name_from_banner)
		return false;
	return !st->saw_name_bar;
}

void dg_set_phase(struct dstate *st, enum diag_phase p, const struct logidx_seg *seg,
		      const char *t, size_t n)
{
	if (st->phase == p && p != DIAG_P_SAVING)
		return;
	st->phase = p;
	snap_set(&st->marker, seg, t, n);
}

/* Training progress to a frame showing n completed steps. A caught OOM (the trainer said it went
 * on) is survived once a step later than the failing one shows; an uncaught one never is: a
 * frame after a traceback is stdout interleaved with stderr, not progress (SPEC §3.3). */
static void progress(struct dstate *st, long long n)
{
	st->nring = 0;
	st->ring_next = 0;
	st->in_error_block = false;
	st->save_step = -1;
	st->fatal_seen = false; /* an error the run went on after did not end it */
	st->death = 0;
	if (st->oom.valid && !st->oom.survived && n > st->oom.fail_step) {
		if (st->oom.caught)
			st->oom.survived = true;
		else
			st->oom.after_progress = true;
	}
	if (st->skip_open && n > st->skip_step)
		st->skip_open = false; /* a later step: the run lived through the skip */
}

static void training_frame(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
			   const char *t, size_t n);

void dg_on_bar(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
		   const char *t, size_t n)
{
	if (is_sampling_desc(b->desc, b->dlen)) {
		dg_set_phase(st, st->train_started ? DIAG_P_SAMPLING : DIAG_P_BASELINE_SAMPLING, seg, t, n);
		return;
	}
	if (starts_ci(b->desc, b->dlen, "Caching")) {
		dg_set_phase(st, DIAG_P_CACHING, seg, t, n);
		return;
	}
	if (starts_ci(b->desc, b->dlen, "Loading checkpoint shards") ||
	    starts_ci(b->desc, b->dlen, "Attaching quantization")) {
		dg_set_phase(st, DIAG_P_MODEL_LOAD, seg, t, n);
		return;
	}
	/* A validation pass is a forward pass at the training sizes between two steps. SPEC §3.2
	 * has no phase for it and it is not sampling, so it ends a sampling phase and counts as
	 * training: the step is the one after the bar's N, by the training rule. */
	if (starts_ci(b->desc, b->dlen, "Validat")) {
		if (st->train_started && st->phase != DIAG_P_TRAINING)
			dg_set_phase(st, DIAG_P_TRAINING, seg, t, n);
		return;
	}
	if (!is_training_desc(st, b))
		return; /* unlabelled inner bars (quantizing blocks, sampler steps) move nothing */
	training_frame(st, seg, b, t, n);
}

/* A frame of the training bar moves the step (dg_on_bar above decided it is that bar). */
static void training_frame(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
			   const char *t, size_t n)
{
	/* the fast lane may take the next frames of this bar (see fast_frame) */
	if (st->namelen && b->dlen == st->namelen && !memcmp(b->desc, st->name, st->namelen)) {
		memcpy(st->fast_name, st->name, st->namelen);
		st->fast_len = st->namelen;
	}
	dg_train_step(st, seg, b, t, n);
}

void dg_train_step(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
		       const char *t, size_t n)
{
	st->train_started = true;
	if (b->n > st->bar_n)
		progress(st, b->n);
	st->bar_n = b->n;
	if (b->n > st->bar_max)
		st->bar_max = b->n;
	if (b->total > 0)
		st->bar_total = b->total;
	snap_set(&st->bar, seg, t, n);
	if (st->phase != DIAG_P_TRAINING) {
		st->phase = DIAG_P_TRAINING;
		st->marker = st->bar;
	}
}

bool diag_parse_bar(const char *s, size_t len, struct diag_bar *out)
{
	struct bar b;
	if (!dg_parse_bar(s, len, &b))
		return false;
	*out = (struct diag_bar){ .desc = b.desc, .dlen = b.dlen, .n = b.n, .total = b.total,
				  .lrloss = b.lrloss };
	return true;
}

bool diag_is_sampling_bar(const char *desc, size_t len)
{
	return is_sampling_desc(desc, len);
}
