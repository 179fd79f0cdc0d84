/* diag.c — see diag.h. One pass over the log's `\r` segments keeps a small state machine:
 * the config echo and traceback source lines are context, not output; progress bars move the
 * timeline (phase, step); error lines are matched against the signatures and grouped into
 * events, so that a message printed twice ("Error running job:" and the traceback) counts once.
 * Memory does not depend on the size of the log. */
#include "oomfix/diag.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/i18n.h"
#include "oomfix/json.h"
#include "oomfix/logidx.h"
#include "oomfix/save.h"
#include "oomfix/sig.h"
#include "oomfix/text.h"

#define MSG_KEY 120   /* bytes of a message compared to recognise the same event */
#define EV_RING 8     /* distinct error events remembered since the last training step */

/* A copy of a log line kept as evidence (raw bytes; sanitised when the result is built). */
struct snap {
	bool set;
	uint64_t line, off;
	size_t len;
	char text[DIAG_MAX_TEXT];
};

struct event {
	char msg[MSG_KEY];
	size_t len;
	uint32_t counted; /* signature ids already counted for this event */
};

/* A GPU OOM (not a skip banner) and the timeline at that moment. */
struct oom_event {
	bool valid, survived, tb_done;
	bool caught;                /* the trainer's own catch-and-continue message told it */
	bool after_progress;        /* an uncaught one, and a later step's frame followed: fatal
				     * all the same (stderr and stdout interleave), but a later OOM
				     * is a new failure, not a repeat of this one */
	long long fail_step;        /* the failing step (as failed_step), -1 unknown */
	enum diag_phase phase;      /* from the markers */
	enum diag_phase tb_phase;   /* from its traceback's frames (DIAG_P_NONE if none) */
	bool train_started;
	long long bar_n, save_step;
	struct snap marker, bar, msg, frame;
	struct memacct mem;         /* the numbers its message gave */
};

struct dstate {
	const struct diag_job_info *job;
	struct diag_result *out;
	struct sig_matcher *sm;
	char *scratch;
	size_t scratch_cap;

	char name[128];
	size_t namelen;
	bool name_from_job, saw_name_bar;
	bool name_from_banner;      /* "# Running job:" gave the exact training-bar description */

	bool in_echo;
	bool in_yaml;               /* a job file printed by a wrapper (cat job.yaml) */
	bool in_tb;
	enum diag_phase tb_phase;   /* outermost frame of the current traceback that names a phase */
	struct snap tb_frame;
	enum diag_phase tb_word;    /* innermost frame of a trainer's own code whose words name a
				     * phase (other trainers, SPEC §3.6), when no table frame does */
	struct snap tb_word_frame;
	bool tb_generic;            /* an own frame is a forward or backward pass (training, when
				     * nothing more specific is named) */
	struct snap tb_generic_frame;
	bool tb_config;             /* a frame of the current traceback is in config code */
	bool in_error_block;        /* after "Error running job:" or a traceback, until a step */

	enum diag_phase phase;
	struct snap marker;
	bool train_started;
	long long bar_n, bar_total, save_step;
	struct snap bar;

	struct event ring[EV_RING];
	unsigned nring, ring_next;

	unsigned count[SIG_COUNT];
	struct snap sig_snap[SIG_COUNT];
	char sig_cap[SIG_COUNT][sizeof ((struct sig_match *)0)->cap]; /* what each signature kept */

	struct oom_event oom;       /* the last GPU OOM */
	struct snap skip[3];        /* the last skip banners */
	unsigned nskip;
	long long skip_step;        /* step of the last skip banner (1-based) */
	bool skip_open;             /* no later step has followed the last skip banner yet */
	bool skip_crash;            /* and an error ended the run right after it */
	struct snap skip_fatal;     /* that error's first line */
	long long bar_max;          /* the largest step count any training-bar frame showed */
	bool line_caught;           /* the line being matched is a catch-and-continue message */

	bool fatal_seen;            /* an uncaught error ended (or is ending) the run */
	struct snap fatal;          /* its first line */
	uint32_t death;             /* non-OOM death signatures seen in error output */
	char exc_class[64];         /* class of the last exception line */
	struct snap host;

	unsigned mem_follow;        /* lines after an OOM message that may still hold its numbers */
	bool cublas_ni_late;        /* CUBLAS_STATUS_NOT_INITIALIZED came after step 1 */
	uint64_t sniff_seen, sniff_bad; /* bytes of the first DIAG_SNIFF_BYTES, and how many are not text */
	bool sniff_done, utf16;
	bool run_ended;             /* run.py's "Result:" summary: the run is over */

	/* the fast lane: the training bar's description, once on_bar has taken it as that bar */
	char fast_name[128];
	size_t fast_len;
};

/* ---- small helpers ---- */

static void snap_set(struct snap *s, const struct logidx_seg *seg, const char *t, size_t n)
{
	s->set = true;
	s->line = seg->line;
	s->off = seg->line_off;
	s->len = n < sizeof s->text ? n : sizeof s->text;
	memcpy(s->text, t, s->len);
}

static bool starts(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n >= l && memcmp(s, lit, l) == 0;
}

static bool starts_ci(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	if (n < l)
		return false;
	for (size_t i = 0; i < l; i++) {
		char a = s[i], b = lit[i];
		if (a >= 'A' && a <= 'Z')
			a = (char)(a + 32);
		if (b >= 'A' && b <= 'Z')
			b = (char)(b + 32);
		if (a != b)
			return false;
	}
	return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void rtrim(const char *s, size_t *n)
{
	while (*n > 0 && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
		(*n)--;
}

/* ---- progress bars ---- */

struct bar {
	const char *desc;
	size_t dlen;
	long long n, total;
	bool lrloss;
	const char *tail; /* text after the closing ']' (something printed over the bar) */
	size_t tlen;
	bool partial;     /* "%|" but no whole frame: a frame cut by text from another stream */
};

static long long parse_num(const char **p, const char *end)
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
static bool parse_bar(const char *s, size_t len, struct bar *b)
{
	const char *end = s + len, *pp, *q, *r, *close;

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
	r++;
	while (r < end && *r == ' ')
		r++;
	b->n = parse_num(&r, end);
	if (b->n < 0 || r >= end || *r != '/')
		return false;
	r++;
	b->total = parse_num(&r, end);
	while (r < end && *r == ' ')
		r++;
	if (r >= end || *r != '[')
		return false;
	close = memchr(r, ']', (size_t)(end - r));
	if (!close)
		return false;
	b->lrloss = memmem(r, (size_t)(close - r), "loss:", 5) != NULL ||
		    memmem(r, (size_t)(close - r), "lr:", 3) != NULL;
	b->tail = close + 1;
	b->tlen = (size_t)(end - b->tail);
	b->partial = false;
	return true;
}

/* Text from the other stream that landed inside a bar frame the bar had half written
 * ("name:  45%|####  | 90Traceback (most recent call last):"): where it starts, or 0. Only
 * cut frames reach this, so whole frames cost nothing more. */
static size_t glued_start(const char *s, size_t len)
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

static void set_phase(struct dstate *st, enum diag_phase p, const struct logidx_seg *seg,
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
static void train_step(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
		       const char *t, size_t n);

static void on_bar(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
		   const char *t, size_t n)
{
	if (is_sampling_desc(b->desc, b->dlen)) {
		set_phase(st, st->train_started ? DIAG_P_SAMPLING : DIAG_P_BASELINE_SAMPLING, seg, t, n);
		return;
	}
	if (starts_ci(b->desc, b->dlen, "Caching")) {
		set_phase(st, DIAG_P_CACHING, seg, t, n);
		return;
	}
	if (starts_ci(b->desc, b->dlen, "Loading checkpoint shards") ||
	    starts_ci(b->desc, b->dlen, "Attaching quantization")) {
		set_phase(st, DIAG_P_MODEL_LOAD, seg, t, n);
		return;
	}
	/* A validation pass is a forward pass at the training sizes between two steps. SPEC §3.2
	 * has no phase for it and it is not sampling, so it ends a sampling phase and counts as
	 * training: the step is the one after the bar's N, by the training rule. */
	if (starts_ci(b->desc, b->dlen, "Validat")) {
		if (st->train_started && st->phase != DIAG_P_TRAINING)
			set_phase(st, DIAG_P_TRAINING, seg, t, n);
		return;
	}
	if (!is_training_desc(st, b))
		return; /* unlabelled inner bars (quantizing blocks, sampler steps) move nothing */
	training_frame(st, seg, b, t, n);
}

/* A frame of the training bar moves the step (on_bar above decided it is that bar). */
static void training_frame(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
			   const char *t, size_t n)
{
	/* the fast lane may take the next frames of this bar (see fast_frame) */
	if (st->namelen && b->dlen == st->namelen && !memcmp(b->desc, st->name, st->namelen)) {
		memcpy(st->fast_name, st->name, st->namelen);
		st->fast_len = st->namelen;
	}
	train_step(st, seg, b, t, n);
}

static void train_step(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
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

/* ---- markers, tracebacks ---- */

/* DeepSpeed's pipeline engine (diffusion-pipe) reports each finished step as a line, not a bar:
 * "steps: 10 loss: 0.0654 iter time (s): 4.123 samples/sec: 1.940". It moves the timeline as
 * a training-bar frame with N = 10 would. */
static bool step_line(struct dstate *st, const struct logidx_seg *seg, const char *t, size_t n)
{
	const char *p = t + 7;
	long long k;
	struct bar b;

	if (!starts(t, n, "steps: "))
		return false;
	k = parse_num(&p, t + n);
	if (k < 0 || !starts(p, (size_t)(t + n - p), " loss: "))
		return false;
	memset(&b, 0, sizeof b);
	b.n = k;
	b.total = -1; /* not said */
	train_step(st, seg, &b, t, n);
	return true;
}

/* A line of a `rich` logger (kohya sd-scripts, musubi-tuner) ends with its source location,
 * "... train_util.py:3744": it is another trainer talking, so AI Toolkit's markers do not
 * apply ("Loading settings from ..." is not a model load). */
static bool rich_location(const char *t, size_t n)
{
	size_t i = n;

	while (i > 0 && is_digit(t[i - 1]))
		i--;
	if (i == n || i < 5 || t[i - 1] != ':' || memcmp(t + i - 4, ".py", 3))
		return false;
	i -= 4;
	while (i > 0 && t[i - 1] != ' ')
		i--;
	return i > 1 && t[i - 1] == ' ' && t[i - 2] == ' ';
}

static void on_marker(struct dstate *st, const struct logidx_seg *seg, const char *t, size_t n)
{
	if (t[0] == 's' && step_line(st, seg, t, n))
		return;
	if (rich_location(t, n))
		return;
	/* ComfyUI's "Loading 1 new model" is not a trainer loading its model */
	if (n > 8 && is_digit(t[8]) && starts(t, n, "Loading "))
		return;
	if (starts(t, n, "Loading ") || starts(t, n, "Quantizing ") ||
	    starts(t, n, "- quantizing ") || starts(t, n, "Making pipe") ||
	    starts(t, n, "Preparing Model") || starts(t, n, "Moving transformer")) {
		set_phase(st, DIAG_P_MODEL_LOAD, seg, t, n);
	} else if (starts(t, n, "Caching latents") || starts(t, n, "Caching text_embeddings") ||
		   starts(t, n, "Caching text embeddings") ||
		   starts(t, n, "Caching embeddings and unloading text encoder") ||
		   starts(t, n, "-  Preprocessing") || starts(t, n, "Dataset: ")) {
		set_phase(st, DIAG_P_CACHING, seg, t, n);
	} else if (starts(t, n, "Generating baseline samples before training") ||
		   starts(t, n, "Generating first sample")) {
		set_phase(st, DIAG_P_BASELINE_SAMPLING, seg, t, n);
	} else if (starts(t, n, "Sampling at step ")) {
		set_phase(st, DIAG_P_SAMPLING, seg, t, n);
	} else if (starts_ci(t, n, "Generating samples") || starts_ci(t, n, "Generating sample images") ||
		   starts(t, n, "Exception saving sample") || starts_ci(t, n, "Rendering preview") ||
		   starts_ci(t, n, "Generating preview")) {
		/* other trainers' sample rounds (the Dreambooth extension, ...) */
		set_phase(st, st->train_started ? DIAG_P_SAMPLING : DIAG_P_BASELINE_SAMPLING, seg, t, n);
	} else if (starts(t, n, "Saving at step ")) {
		const char *p = t + 15;
		st->save_step = parse_num(&p, t + n);
		set_phase(st, DIAG_P_SAVING, seg, t, n);
	} else if (starts(t, n, "Saved checkpoint")) {
		if (st->phase != DIAG_P_SAVING)
			set_phase(st, DIAG_P_SAVING, seg, t, n);
	}
}

/* Functions of other trainers whose name says the phase: kohya sd-scripts and musubi-tuner
 * (load_target_model, cache_latents above, sample_images, call_unet / call_dit,
 * process_batch), DeepSpeed's pipeline engine under diffusion-pipe (train_batch), and
 * autograd's backward, which only a training step runs. A generic `train` is not one: kohya's
 * train() also loads the model and caches latents. */
static enum diag_phase other_trainer_frame(const char *fn, size_t n)
{
	static const struct { const char *fn; enum diag_phase p; } t[] = {
		{ "load_target_model", DIAG_P_MODEL_LOAD }, { "load_models", DIAG_P_MODEL_LOAD },
		{ "load_transformer", DIAG_P_MODEL_LOAD }, { "load_dit_model", DIAG_P_MODEL_LOAD },
		{ "cache_text_encoder_outputs", DIAG_P_CACHING }, { "encode_latents", DIAG_P_CACHING },
		{ "sample_images", DIAG_P_SAMPLING }, { "sample_image_inference", DIAG_P_SAMPLING },
		{ "call_unet", DIAG_P_TRAINING }, { "call_dit", DIAG_P_TRAINING },
		{ "process_batch", DIAG_P_TRAINING }, { "train_batch", DIAG_P_TRAINING },
		{ "_exec_forward_pass", DIAG_P_TRAINING }, { "_exec_backward_pass", DIAG_P_TRAINING },
		{ "backward", DIAG_P_TRAINING }, { "_engine_run_backward", DIAG_P_TRAINING },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (n == strlen(t[i].fn) && !memcmp(fn, t[i].fn, n))
			return t[i].p;
	return DIAG_P_NONE;
}

/* The phase a traceback frame's function belongs to. */
static enum diag_phase frame_phase(const char *fn, size_t n)
{
	if ((n == 10 && !memcmp(fn, "load_model", 10)) || starts(fn, n, "quantize"))
		return DIAG_P_MODEL_LOAD;
	if (starts(fn, n, "cache_latents") || starts(fn, n, "cache_text_embeddings") ||
	    (n == 13 && !memcmp(fn, "encode_images", 13)))
		return DIAG_P_CACHING;
	if ((n == 6 && !memcmp(fn, "sample", 6)) || (n == 15 && !memcmp(fn, "generate_images", 15)))
		return DIAG_P_SAMPLING;
	if (n == 4 && !memcmp(fn, "save", 4))
		return DIAG_P_SAVING;
	/* validation (run_validation, validation_step) goes with training: see on_bar */
	if ((n == 15 && !memcmp(fn, "hook_train_loop", 15)) ||
	    starts(fn, n, "train_single_accumulation") || starts(fn, n, "run_validation") ||
	    starts(fn, n, "validation_step"))
		return DIAG_P_TRAINING;
	return other_trainer_frame(fn, n);
}

static bool has_ci(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	for (size_t i = 0; i + l <= n; i++)
		if (starts_ci(s + i, n - i, lit))
			return true;
	return false;
}

/* The phase the words of a function or file name of a trainer's own code say (SPEC §3.6 "Phase
 * evidence"): load/quantize/prepare before training; cache, or encode, of latents or text
 * outside the loop; sample/preview/validation/generate; a train step. The checks go in that
 * order, so load_t5_text_encoder is a load and cache_text_encoder_outputs a cache. A forward or
 * backward pass only sets *generic: it runs in sampling and caching too. */
static enum diag_phase word_phase(const char *s, size_t n, bool *generic)
{
	if (has_ci(s, n, "load") || has_ci(s, n, "quantiz") || has_ci(s, n, "prepare"))
		return DIAG_P_MODEL_LOAD;
	if (has_ci(s, n, "cache"))
		return DIAG_P_CACHING;
	if (has_ci(s, n, "sample") || has_ci(s, n, "preview") || has_ci(s, n, "validat") ||
	    has_ci(s, n, "generat"))
		return DIAG_P_SAMPLING;
	if (has_ci(s, n, "encode"))
		return DIAG_P_CACHING;
	if (has_ci(s, n, "train_step") || has_ci(s, n, "training_step") ||
	    has_ci(s, n, "train_one_step"))
		return DIAG_P_TRAINING;
	if (has_ci(s, n, "forward") || has_ci(s, n, "backward"))
		*generic = true;
	return DIAG_P_NONE;
}

/* A frame's file is a library's, not the trainer's own code: an installed package, the
 * standard library, Python's frozen modules. */
static bool library_file(const char *path, size_t n)
{
	return memmem(path, n, "site-packages", 13) || memmem(path, n, "dist-packages", 13) ||
	       memmem(path, n, "/lib/python", 11) || memmem(path, n, "\\Lib\\", 5) ||
	       memmem(path, n, "<frozen", 7) || memmem(path, n, "/torch/", 7);
}

/* The words of an own frame ("File \"<path>\", line N, in <fn>"): the function's, else the
 * file's base name. The innermost frame that names a phase wins (it is the last one read). */
static void frame_words(struct dstate *st, const struct logidx_seg *seg, const char *t, size_t n,
			const char *in)
{
	const char *path = t + 6, *q = memchr(path, '"', (size_t)(in - path)), *base;
	enum diag_phase ph;
	bool generic = false;

	if (!q || library_file(path, (size_t)(q - path)))
		return;
	for (base = q; base > path && base[-1] != '/' && base[-1] != '\\'; base--)
		;
	ph = word_phase(in, (size_t)(t + n - in), &generic);
	if (ph == DIAG_P_NONE && !generic)
		ph = word_phase(base, (size_t)(q - base), &generic);
	if (ph != DIAG_P_NONE) {
		st->tb_word = ph;
		snap_set(&st->tb_word_frame, seg, t, n);
	} else if (generic) {
		st->tb_generic = true;
		snap_set(&st->tb_generic_frame, seg, t, n);
	}
}

static void on_frame(struct dstate *st, const struct logidx_seg *seg, const char *t, size_t n)
{
	const char *in = NULL, *p = t;
	enum diag_phase ph;

	/* File "path", line N, in func */
	while ((p = memmem(p, (size_t)(t + n - p), ", in ", 5)) != NULL) {
		in = p + 5;
		p = in;
	}
	if (memmem(t, n, "config", 6))
		st->tb_config = true;
	if (!in)
		return;
	/* ComfyUI's own `sample` (its KSampler) or `load_model` are not AI Toolkit's phases: in
	 * its files only the names of other trainers' table count */
	if (memmem(t, (size_t)(in - t), "comfy", 5) || memmem(t, (size_t)(in - t), "Comfy", 5))
		ph = other_trainer_frame(in, (size_t)(t + n - in));
	else
		ph = frame_phase(in, (size_t)(t + n - in));
	if (ph != DIAG_P_NONE && st->tb_phase == DIAG_P_NONE) { /* the outermost one decides */
		st->tb_phase = ph;
		snap_set(&st->tb_frame, seg, t, n);
	} else if (ph == DIAG_P_NONE && !memmem(t, (size_t)(in - t), "comfy", 5) &&
		   !memmem(t, (size_t)(in - t), "Comfy", 5)) {
		frame_words(st, seg, t, n, in);
	}
}

/* The traceback's exception line has been handled: give its frames to the OOM it belongs to. */
static void close_traceback(struct dstate *st)
{
	st->in_tb = false;
	/* no frame of the tables: the words of the trainer's own innermost frames (SPEC §3.6) */
	if (st->tb_phase == DIAG_P_NONE && st->tb_word != DIAG_P_NONE) {
		st->tb_phase = st->tb_word;
		st->tb_frame = st->tb_word_frame;
	} else if (st->tb_phase == DIAG_P_NONE && st->tb_generic) {
		st->tb_phase = DIAG_P_TRAINING;
		st->tb_frame = st->tb_generic_frame;
	}
	if (st->oom.valid && !st->oom.survived && !st->oom.tb_done && st->tb_phase != DIAG_P_NONE) {
		st->oom.tb_phase = st->tb_phase;
		st->oom.frame = st->tb_frame;
		st->oom.tb_done = true;
	}
	if (st->tb_config && !strcmp(st->exc_class, "ValueError"))
		st->death |= SIG_BIT(SIG_CONFIG_ERROR);
}

static struct event *find_event(struct dstate *st, const char *msg, size_t len)
{
	size_t k = len < MSG_KEY ? len : MSG_KEY;
	struct event *ev;

	for (unsigned i = 0; i < st->nring; i++) {
		ev = &st->ring[i];
		if (ev->len == k && !memcmp(ev->msg, msg, k))
			return ev;
	}
	ev = &st->ring[st->ring_next];
	st->ring_next = (st->ring_next + 1) % EV_RING;
	if (st->nring < EV_RING)
		st->nring++;
	memcpy(ev->msg, msg, k);
	ev->len = k;
	ev->counted = 0;
	return ev;
}

/* The class name of an exception line ("torch.OutOfMemoryError: ..."), or 0 if it is not one. */
static size_t exception_class(const char *t, size_t n, const char **msg, size_t *mlen)
{
	size_t i = 0;

	while (i < n && (t[i] == '_' || t[i] == '.' || (t[i] >= 'a' && t[i] <= 'z') ||
			 (t[i] >= 'A' && t[i] <= 'Z') || is_digit(t[i])))
		i++;
	if (i < 5 || !(i >= 5 && (!memcmp(t + i - 5, "Error", 5) ||
				  (i >= 9 && !memcmp(t + i - 9, "Exception", 9)))))
		return 0;
	if (i < n && t[i] != ':')
		return 0;
	*msg = t + i + (i < n ? 1 : 0);
	*mlen = n - (size_t)(*msg - t);
	while (*mlen && **msg == ' ') {
		(*msg)++;
		(*mlen)--;
	}
	return i;
}

/* A YAML line echoed into the log ("  batch_size: 1  # comment"): its comment is not output. */
static size_t cut_yaml_comment(const char *t, size_t n)
{
	size_t i = 0;
	const char *h;

	if (i + 1 < n && t[i] == '-' && t[i + 1] == ' ')
		i += 2;
	if (i >= n || !((t[i] >= 'a' && t[i] <= 'z') || t[i] == '_'))
		return n;
	while (i < n && ((t[i] >= 'a' && t[i] <= 'z') || is_digit(t[i]) || t[i] == '_'))
		i++;
	if (i >= n || t[i] != ':' || (i + 1 < n && t[i + 1] != ' '))
		return n;
	for (h = t + i; (h = memchr(h, '#', (size_t)(t + n - h))) != NULL; h++)
		if (h[-1] == ' ' || h[-1] == '\t')
			return (size_t)(h - t);
	return n;
}


/* "key:" or "key: value" with a lower-case snake_case key, as job files are written. */
static bool is_yaml_key(const char *t, size_t n)
{
	size_t i = 0;

	if (n == 0 || !((t[0] >= 'a' && t[0] <= 'z') || t[0] == '_'))
		return false;
	while (i < n && ((t[i] >= 'a' && t[i] <= 'z') || is_digit(t[i]) || t[i] == '_'))
		i++;
	return i < n && t[i] == ':' && (i + 1 == n || t[i + 1] == ' ');
}

/* A Python warning ("x.py:412: UserWarning: ...", "WARNING: ...", "WARNING:root:..."): a
 * library saying what it coped with, not the error that ended the run. */
static bool is_warning_line(const char *t, size_t n)
{
	const char *w;

	if (starts_ci(t, n, "warning:"))
		return true;
	w = memmem(t, n, "Warning: ", 9);
	if (!w)
		return false;
	while (w > t && ((w[-1] >= 'A' && w[-1] <= 'Z') || (w[-1] >= 'a' && w[-1] <= 'z')))
		w--; /* UserWarning, FutureWarning, ... */
	return w == t || (w - t >= 2 && w[-1] == ' ' && w[-2] == ':');
}

/* Trainer messages that print a user's path or name ("Dataset: <folder>", "Saved checkpoint
 * to <file>"): a folder called "CUDA out of memory tests" is not an error. */
static bool is_path_message(const char *t, size_t n)
{
	static const char *const msgs[] = {
		"Dataset: ", "Bucket sizes for ", "Caching latents for ", "Caching text_embeddings for ",
		"Saved checkpoint to ", "Saved optimizer to ", "Removing old save: ", "Saving at step ",
		"Using SQLite database at ", "Job ID: ", "Found step ", "Loading ", "Running job: ",
	};
	for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++)
		if (starts(t, n, msgs[i]))
			return true;
	return false;
}

/* An RFC 3339 / ISO 8601 date and time ("2025-06-02T10:14:03.123456789Z", "2025-06-02
 * 10:14:03,123"); its length, or 0. */
static size_t timestamp_len(const char *t, size_t n)
{
	static const char shape[] = "dddd-dd-dd?dd:dd:dd";
	size_t i;

	if (n < sizeof shape - 1)
		return 0;
	for (i = 0; i < sizeof shape - 1; i++) {
		char c = shape[i];
		if (c == 'd' ? !is_digit(t[i]) : c == '?' ? (t[i] != 'T' && t[i] != ' ') : t[i] != c)
			return 0;
	}
	if (i < n && (t[i] == '.' || t[i] == ',')) {
		i++;
		while (i < n && is_digit(t[i]))
			i++;
	}
	if (i < n && t[i] == 'Z') {
		i++;
	} else if (i + 3 <= n && (t[i] == '+' || t[i] == '-') && is_digit(t[i + 1]) &&
		   is_digit(t[i + 2])) {
		i += 3;
		if (i < n && t[i] == ':')
			i++;
		while (i < n && is_digit(t[i]))
			i++;
	}
	return i;
}

/* One prefix a capture tool puts before the trainer's own text, or 0: a timestamp (docker
 * and kubectl --timestamps, logging), torchrun's "[rank0]: ", docker compose's "svc-1  | ".
 * Its one separating blank is part of it, so indentation after it still counts. */
/* A log level a logger or wrapper puts before the message: "[INFO] ", "[WARNING] ", or rich's
 * padded "INFO     " (kohya's scripts). Its length with the blanks after it, or 0. */
static size_t level_prefix(const char *t, size_t n)
{
	static const char *const lv[] = { "INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL" };
	bool br = t[0] == '[';

	/* Python logging's "%(asctime)s - %(levelname)s - %(message)s", after its timestamp */
	if (t[0] == '-' && n > 2 && t[1] == ' ') {
		for (size_t i = 0; i < sizeof lv / sizeof lv[0]; i++) {
			size_t l = strlen(lv[i]);
			if (starts(t + 2, n - 2, lv[i]) && starts(t + 2 + l, n - 2 - l, " - "))
				return 2 + l + 3;
		}
		return 0;
	}
	for (size_t i = 0; i < sizeof lv / sizeof lv[0]; i++) {
		size_t l = strlen(lv[i]), k = br ? 1 : 0;
		if (!starts(t + k, n - k, lv[i]))
			continue;
		k += l;
		if (br) {
			if (k + 1 >= n || t[k] != ']' || t[k + 1] != ' ')
				return 0;
			return k + 2;
		}
		if (k + 2 > n || t[k] != ' ' || t[k + 1] != ' ')
			return 0; /* rich pads the level to 8 cells: two blanks at least */
		while (k < n && t[k] == ' ')
			k++;
		return k;
	}
	return 0;
}

/* A time in brackets other than ISO ("[08:14:03] ", "[12/01/2026 08:14:03 PM] "): digits and
 * the punctuation of dates and times only, with at least one ':'. Its length, or 0. */
static size_t clock_prefix(const char *t, size_t n)
{
	size_t i = 1;
	bool colon = false;

	while (i < n && i < 40 && (is_digit(t[i]) || t[i] == ':' || t[i] == '/' || t[i] == '.' ||
				   t[i] == ',' || t[i] == '-' || t[i] == ' ' || t[i] == 'A' ||
				   t[i] == 'P' || t[i] == 'M')) {
		colon |= t[i] == ':';
		i++;
	}
	return colon && i + 1 < n && t[i] == ']' && t[i + 1] == ' ' && is_digit(t[1]) ? i + 2 : 0;
}

static size_t one_prefix(const char *t, size_t n)
{
	size_t i = 0, k;

	if (n == 0)
		return 0;
	/* a line quoted from an issue or a chat ("> "); a bare ">" is an empty quoted line */
	if (t[0] == '>')
		return n > 1 && t[1] == ' ' ? 2 : 1;
	if ((k = level_prefix(t, n)) > 0)
		return k;
	if (is_digit(t[0])) {
		k = timestamp_len(t, n);
		return k && k < n && t[k] == ' ' ? k + 1 : 0;
	}
	if (t[0] == '[') {
		if (starts(t, n, "[rank")) {
			for (i = 5; i < n && is_digit(t[i]); i++)
				;
			if (i > 5 && i + 1 < n && t[i] == ']' && t[i + 1] == ':')
				return i + 2 < n && t[i + 2] == ' ' ? i + 3 : i + 2;
			return 0;
		}
		k = timestamp_len(t + 1, n - 1);
		if (k && k + 2 < n && t[k + 1] == ']' && t[k + 2] == ' ')
			return k + 3;
		return clock_prefix(t, n);
	}
	while (i < n && ((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
			 is_digit(t[i]) || t[i] == '_' || t[i] == '-' || t[i] == '.'))
		i++;
	if (i == 0 || i >= n || t[i] != ' ')
		return 0;
	while (i < n && t[i] == ' ')
		i++;
	return i + 1 < n && t[i] == '|' && t[i + 1] == ' ' ? i + 2 : 0;
}

static size_t line_prefix(const char *t, size_t n)
{
	size_t all = 0, k;

	/* compose adds its own before docker's timestamp: at most a few, never a loop */
	for (int i = 0; i < 3 && (k = one_prefix(t + all, n - all)) > 0; i++)
		all += k;
	return all;
}

/* ---- the text of a segment that is not a progress bar ---- */

static void count_hit(struct dstate *st, const struct logidx_seg *seg, const struct sig_match *h,
		      struct event *ev, const char *t, size_t n)
{
	enum sig_id id = h->id;

	if (ev->counted & SIG_BIT(id))
		return;
	ev->counted |= SIG_BIT(id);
	st->count[id]++;
	snap_set(&st->sig_snap[id], seg, t, n);
	memcpy(st->sig_cap[id], h->cap, sizeof st->sig_cap[id]);
	if (id == SIG_OOM_SKIP) {
		st->skip[st->nskip % 3] = st->sig_snap[id];
		st->nskip++;
		st->skip_step = st->bar_n >= 0 ? st->bar_n + 1 : -1;
		st->skip_open = true;
		st->skip_crash = false;
		return;
	}
	if (id == SIG_HOST_OOM) {
		st->host = st->sig_snap[id];
		return;
	}
	if (id == SIG_CUBLAS_NOT_INIT)
		st->cublas_ni_late = st->train_started && st->bar_n >= 1;
	if (sig_defs[id].cls != SIG_CLASS_OOM)
		return;
	/* the first OOM line of a failure is where it happened; the rest repeat it */
	if (st->oom.valid && !st->oom.survived && !st->oom.after_progress)
		return;
	memset(&st->oom, 0, sizeof st->oom);
	st->oom.valid = true;
	st->oom.phase = st->phase;
	st->oom.caught = st->line_caught;
	/* "Preview 2/4 failed (OutOfMemoryError)": the message names the phase */
	if (st->line_caught && (has_ci(t, n, "sample") || has_ci(t, n, "preview") ||
				has_ci(t, n, "validat") || has_ci(t, n, "generat")))
		st->oom.phase = st->train_started ? DIAG_P_SAMPLING : DIAG_P_BASELINE_SAMPLING;
	st->oom.fail_step = st->bar_n < 0 ? -1 : st->oom.phase == DIAG_P_SAMPLING ? st->bar_n
										      : st->bar_n + 1;
	st->oom.train_started = st->train_started;
	st->oom.bar_n = st->bar_n;
	st->oom.save_step = st->save_step;
	st->oom.marker = st->marker;
	st->oom.bar = st->bar;
	snap_set(&st->oom.msg, seg, t, n);
	memacct_init(&st->oom.mem);
	memacct_parse(&st->oom.mem, t, n);
	st->mem_follow = 8; /* the per-process-fraction message puts its numbers on the next lines */
}

/* A line soon after the OOM message: the rest of its numbers, when the message spans lines. */
static void mem_more(struct dstate *st, const char *t, size_t n)
{
	st->mem_follow--;
	if (st->oom.valid && !st->oom.survived)
		memacct_parse(&st->oom.mem, t, n);
}

/* "Running 1 job" (run.py): a new run starts. */
static bool is_run_start(const char *t, size_t n)
{
	const char *p = t + 8, *q;

	if (!starts(t, n, "Running "))
		return false;
	q = p;
	if (parse_num(&q, t + n) < 0)
		return false;
	return starts(q, (size_t)(t + n - q), " job");
}

static void reset_run(struct dstate *st)
{
	const struct diag_job_info *job = st->job;
	struct diag_result *out = st->out;
	struct sig_matcher *sm = st->sm;
	char *scratch = st->scratch;
	size_t cap = st->scratch_cap;
	char name[sizeof st->name];
	size_t namelen = st->namelen;
	bool from_job = st->name_from_job;
	uint64_t sseen = st->sniff_seen, sbad = st->sniff_bad;
	bool sdone = st->sniff_done, utf16 = st->utf16;

	memcpy(name, st->name, sizeof name);
	memset(st, 0, sizeof *st);
	st->sniff_seen = sseen; /* the sniff is about the file, not the run */
	st->sniff_bad = sbad;
	st->sniff_done = sdone;
	st->utf16 = utf16;
	st->job = job;
	st->out = out;
	st->sm = sm;
	st->scratch = scratch;
	st->scratch_cap = cap;
	if (from_job) {
		memcpy(st->name, name, sizeof name);
		st->namelen = namelen;
		st->name_from_job = true;
	}
	st->bar_n = st->bar_total = st->save_step = st->skip_step = st->bar_max = -1;
}

/* The trainer's JSON echo of the config: "{" alone, indented lines, "}" alone. True when the
 * line is part of it. */
static bool in_echo(struct dstate *st, const char *t, size_t n, size_t lead, bool line_start)
{
	if (st->in_echo) {
		if (line_start && lead == 0 && n > 0 && t[0] != '}' && t[0] != ']') {
			st->in_echo = false; /* not JSON any more: the echo was cut short */
			return false;
		}
		if (line_start && lead == 0 && n == 1 && t[0] == '}')
			st->in_echo = false;
		return true;
	}
	if (line_start && lead == 0 && n == 1 && t[0] == '{') {
		st->in_echo = true;
		return true;
	}
	return false;
}

/* A job file printed by a wrapper: "job: extension" / "config:" and what is indented under them
 * is configuration (prompts, comments), until a line that is not YAML. True when the line is
 * part of it. */
static bool in_yaml(struct dstate *st, const char *t, size_t n, size_t lead, bool line_start)
{
	if (line_start && st->in_yaml) {
		if (lead > 0 || is_yaml_key(t, n) || starts(t, n, "- ") || starts(t, n, "---"))
			return true;
		if (t[0] != '#')
			st->in_yaml = false;
		return false;
	}
	if (line_start && lead == 0 && (starts(t, n, "job: ") || starts(t, n, "config:")) &&
	    is_yaml_key(t, n)) {
		st->in_yaml = true;
		return true;
	}
	return false;
}

/* The lines that say where the scan is: a new run, run.py's summary, a traceback's start, its
 * frames and source lines, the words between chained tracebacks. True when the line is one. */
static bool on_structure(struct dstate *st, const struct logidx_seg *seg, const char *t,
			 size_t n, size_t lead)
{
	if (lead == 0 && is_run_start(t, n)) {
		reset_run(st); /* a log appended to by a retry: the last run is the one to judge */
		return true;
	}
	if (lead == 0 && n == 7 && !memcmp(t, "Result:", 7)) {
		st->run_ended = true; /* run.py's summary, after the last job ended or failed */
		return true;
	}
	if (starts(t, n, "Traceback (most recent call last)") ||
	    starts(t, n, "Original Traceback (most recent call last)")) {
		st->in_tb = true;
		st->in_error_block = true;
		st->tb_phase = st->tb_word = DIAG_P_NONE;
		st->tb_generic = false;
		st->tb_config = false;
		return true;
	}
	if (st->in_tb) {
		if (starts(t, n, "File \"")) {
			on_frame(st, seg, t, n);
			return true;
		}
		if (lead > 0)
			return true; /* source lines, carets, "[Previous line repeated ...]" */
	}
	return starts(t, n, "During handling of the above exception") ||
	       starts(t, n, "The above exception was the direct cause");
}

/* A '#' line (*comment): the banner names the job, and only the skip banner may match. Any
 * other line: its phase marker, and a YAML comment cut off (*n). Returns the signatures to look
 * for. */
static uint32_t on_comment_or_marker(struct dstate *st, const struct logidx_seg *seg,
				     const char *t, size_t *n, bool *comment)
{
	if (t[0] != '#') {
		on_marker(st, seg, t, *n);
		*n = cut_yaml_comment(t, *n);
		return SIG_ALL;
	}
	*comment = true;
	/* the banner is what this run printed: it wins over a job file renamed since */
	if (starts(t, *n, "# Running job: ") && *n - 15 > 0 && *n - 15 < sizeof st->name) {
		memcpy(st->name, t + 15, *n - 15);
		st->namelen = *n - 15;
		st->name_from_banner = true;
		st->saw_name_bar = false;
	}
	return SIG_BIT(SIG_OOM_SKIP); /* the skip banner is the only real '#' line */
}

/* What a line says of an error: "Error running job: " or ComfyUI's line (ejr), or a Python
 * exception line (exc); msg and mlen, the message part. */
struct line_error {
	const char *msg;
	size_t mlen;
	bool ejr, exc;
};

static void read_error(struct dstate *st, const struct logidx_seg *seg, const char *t, size_t n,
		       size_t lead, bool comment, struct line_error *le)
{
	size_t cls;

	*le = (struct line_error){ .msg = t, .mlen = n };
	if (starts(t, n, "Error running job: ")) {
		le->ejr = true;
		le->msg = t + 19;
		le->mlen = n - 19;
	} else if (starts(t, n, "!!! Exception during processing !!! ")) {
		/* ComfyUI's own line before the traceback: the same failure, told first */
		le->ejr = true;
		le->msg = t + 36;
		le->mlen = n - 36;
	} else if (lead == 0 && !comment && (cls = exception_class(t, n, &le->msg, &le->mlen)) > 0) {
		le->exc = true;
		snprintf(st->exc_class, sizeof st->exc_class, "%.*s", (int)cls, t);
		if (st->in_tb) /* a traceback's exception line is where its failure is told */
			st->in_error_block = true;
	} else {
		le->msg = t;
		le->mlen = n;
	}
	if (!le->ejr && !le->exc)
		return;
	st->in_error_block = true;
	if (le->ejr || !st->fatal_seen) /* the first line that tells this failure */
		snap_set(&st->fatal, seg, t, n);
	st->fatal_seen = true;
	if (st->skip_open && !st->skip_crash) { /* the run died right after a skip */
		st->skip_crash = true;
		snap_set(&st->skip_fatal, seg, t, n);
	}
	st->death |= SIG_BIT(SIG_PYTHON_ERROR);
}

/* The signatures of `mask` the line matches, counted (a death signature only in an error). */
static void match_line(struct dstate *st, const struct logidx_seg *seg, const char *t, size_t n,
		       uint32_t mask, const struct line_error *le)
{
	struct sig_match hits[SIG_COUNT];
	size_t nh = sig_match(st->sm, t, n, mask, hits, SIG_COUNT);
	/* checked only on a match, so ordinary lines pay nothing for them */
	if (nh && !le->ejr && !le->exc && (is_warning_line(t, n) || is_path_message(t, n)))
		nh = 0;
	struct event *ev = nh ? find_event(st, le->msg, le->mlen) : NULL;
	st->line_caught = false;
	for (size_t i = 0; i < nh; i++)
		st->line_caught |= hits[i].id == SIG_CAUGHT_OOM;
	for (size_t i = 0; i < nh; i++) {
		if (sig_defs[hits[i].id].cls == SIG_CLASS_DEATH) {
			if (le->ejr || le->exc || st->in_error_block)
				st->death |= SIG_BIT(hits[i].id);
			continue;
		}
		count_hit(st, seg, &hits[i], ev, t, n);
	}
}

static void on_text(struct dstate *st, const struct logidx_seg *seg, const char *t, size_t n,
		    bool line_start)
{
	size_t lead = 0;
	bool comment = false;
	struct line_error le;

	while (lead < n && (t[lead] == ' ' || t[lead] == '\t'))
		lead++;
	t += lead;
	n -= lead;
	rtrim(t, &n);
	if (in_echo(st, t, n, lead, line_start) || n == 0)
		return;
	if (st->mem_follow)
		mem_more(st, t, n);
	if (in_yaml(st, t, n, lead, line_start) || on_structure(st, seg, t, n, lead))
		return;
	uint32_t mask = on_comment_or_marker(st, seg, t, &n, &comment);
	read_error(st, seg, t, n, lead, comment, &le);
	if (sig_prefilter(t, n))
		match_line(st, seg, t, n, mask, &le);
	if (le.exc && st->in_tb)
		close_traceback(st);
	else if (le.exc && st->tb_config && !strcmp(st->exc_class, "ValueError"))
		st->death |= SIG_BIT(SIG_CONFIG_ERROR);
}

/* ---- is it text at all? (SPEC §3.6 "Other inputs") ---- */

static bool not_text(const struct dstate *st)
{
	/* a log has next to none; an image or an archive about half, an executable three in four */
	return st->sniff_seen && st->sniff_bad * 10 >= st->sniff_seen * 3;
}

/* Counts, in the first DIAG_SNIFF_BYTES, the bytes no text log has: NUL and other controls a
 * terminal would not draw, and invalid UTF-8. Returns true once it knows the log is not text. */
static bool sniff(struct dstate *st, const struct logidx_seg *seg)
{
	const unsigned char *u = (const unsigned char *)seg->p;
	size_t n = seg->len, i = 0;

	if (seg->off >= DIAG_SNIFF_BYTES) {
		st->sniff_done = true;
		return not_text(st);
	}
	if (seg->off + n > DIAG_SNIFF_BYTES)
		n = DIAG_SNIFF_BYTES - (size_t)seg->off;
	if (seg->off == 0 && n >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
		st->utf16 = true;
	while (i < n) {
		uint32_t cp;
		size_t k;
		if (u[i] < 0x80) {
			if (u[i] < 0x20 && u[i] != '\t' && u[i] != 0x1B && u[i] != '\b' && u[i] != '\f' &&
			    u[i] != '\v')
				st->sniff_bad++;
			i++;
		} else if ((k = text_utf8_decode(u + i, n - i, &cp)) == 0) {
			st->sniff_bad++;
			i++;
		} else {
			i += k;
		}
	}
	st->sniff_seen += n;
	if (seg->off + seg->len >= DIAG_SNIFF_BYTES) {
		st->sniff_done = true;
		return not_text(st);
	}
	return false;
}

static int refuse_binary(const struct dstate *st, const char *name, struct err *e)
{
	unsigned pct = (unsigned)(st->sniff_bad * 100 / st->sniff_seen);

	if (st->utf16)
		return err_set(e, ERR_DATA, name, 0, 0,
			       _("this log is UTF-16 text (as a Windows redirect writes it); convert it "
				 "first, e.g. iconv -f UTF-16 -t UTF-8"));
	return err_set(e, ERR_DATA, name, 0, 0,
		       _("this is not a text log: %u%% of its first 64 KiB are NUL bytes, control "
			 "characters or invalid UTF-8"), pct);
}

/* ---- the fast lane ----
 *
 * Most of a training log is frames of one tqdm bar joined by '\r'. Once on_bar has taken a
 * frame whose description is the run's name as the training bar, the next frames that start with
 * "NAME:" are parsed here with the name already known, instead of searching for the bar and
 * trying every kind of bar. The result is what parse_bar and on_bar would give: the name holds
 * no '%' (so the first "%|" is this frame's), it starts and ends with no blank (so it is the
 * whole description), and whatever on_bar checks before the training bar depends only on the
 * description, which was already taken as the training bar once. Anything unusual (escape
 * codes, a frame cut short, the first segment of a line where a capture prefix may sit) goes
 * the ordinary way. */
static bool fast_lane_on = true;

void diag_fast_lane(bool on)
{
	fast_lane_on = on;
}

static bool fast_frame(struct dstate *st, const struct logidx_seg *seg, const char *t, size_t n)
{
	const char *end = t + n, *r, *q, *close;
	size_t k = st->fast_len;
	struct bar b;

	if (!fast_lane_on || k == 0 || seg->seg == 0 || st->in_echo || n <= k + 4 || t[k] != ':' ||
	    k != st->namelen || memcmp(t, st->name, k) != 0 || memcmp(st->name, st->fast_name, k) != 0)
		return false;
	if (memchr(st->name, '%', k) || st->name[0] == ' ' || st->name[k - 1] == ' ' ||
	    st->name[k - 1] == '\t' || st->name[k - 1] == ':')
		return false;
	q = t + k + 1;
	while (q < end && *q == ' ')
		q++;
	r = q;
	while (r < end && is_digit(*r))
		r++;
	if (r == q || end - r < 2 || r[0] != '%' || r[1] != '|')
		return false;
	if (memchr(t, 0x1B, n))
		return false;
	r = memchr(r + 2, '|', (size_t)(end - (r + 2)));
	if (!r)
		return false;
	r++;
	while (r < end && *r == ' ')
		r++;
	b.n = parse_num(&r, end);
	if (b.n < 0 || r >= end || *r != '/')
		return false;
	r++;
	b.total = parse_num(&r, end);
	while (r < end && *r == ' ')
		r++;
	if (r >= end || *r != '[')
		return false;
	close = memchr(r, ']', (size_t)(end - r));
	if (!close)
		return false;
	b.desc = t;
	b.dlen = k;
	b.lrloss = false; /* not read for the named bar */
	b.tail = close + 1;
	b.tlen = (size_t)(end - b.tail);
	b.partial = false;
	st->saw_name_bar = true; /* as is_training_desc says of the named bar */
	train_step(st, seg, &b, t, (size_t)(b.tail - t));
	if (b.tlen)
		on_text(st, seg, b.tail, b.tlen, false);
	return true;
}

static int on_seg(const struct logidx_seg *seg, void *ctx)
{
	struct dstate *st = ctx;
	const char *t = seg->p;
	size_t n = seg->len;
	struct bar b;

	if (!st->sniff_done && sniff(st, seg))
		return ERR_DATA;
	if (n == 0)
		return 0;
	if (fast_frame(st, seg, t, n))
		return 0;
	if (memchr(t, 0x1B, n)) {
		memcpy(st->scratch, t, n < st->scratch_cap ? n : st->scratch_cap);
		n = text_strip_ansi(st->scratch, n < st->scratch_cap ? n : st->scratch_cap);
		t = st->scratch;
	}
	if (seg->seg == 0) { /* a capture tool's prefix sits only at the start of a physical line */
		size_t k = line_prefix(t, n);
		t += k;
		n -= k;
		if (n == 0)
			return 0;
	}
	if (!st->in_echo && parse_bar(t, n, &b)) {
		on_bar(st, seg, &b, t, (size_t)(b.tail - t));
		if (b.tlen)
			on_text(st, seg, b.tail, b.tlen, false);
		return 0;
	}
	if (!st->in_echo && b.partial) {
		size_t k = glued_start(t, n);
		if (k) { /* the cut frame moves nothing: the last whole one holds the step */
			on_text(st, seg, t + k, n - k, false);
			return 0;
		}
	}
	on_text(st, seg, t, n, seg->seg == 0);
	return 0;
}

/* ---- the verdict ---- */

static void put_hit(struct diag_hit *h, const char *id, const struct snap *s, unsigned count,
		    const char *value)
{
	memset(h, 0, sizeof *h);
	h->id = id;
	snprintf(h->value, sizeof h->value, "%s", value ? value : "");
	h->line = s->line;
	h->offset = s->off;
	h->count = count;
	text_sanitize(s->text, s->len, h->text, sizeof h->text);
}

static void add_evidence(struct diag_result *r, const struct snap *s)
{
	size_t i;

	if (!s->set || r->nevidence >= DIAG_MAX_EVIDENCE)
		return;
	for (i = 0; i < r->nevidence; i++) /* a line can hold a bar frame and a message */
		if (r->evidence[i].line == s->line &&
		    !memcmp(r->evidence[i].text, s->text, s->len < 16 ? s->len : 16))
			return;
	/* keep them in line order */
	i = r->nevidence;
	while (i > 0 && r->evidence[i - 1].line > s->line) {
		r->evidence[i] = r->evidence[i - 1];
		i--;
	}
	put_hit(&r->evidence[i], NULL, s, 0, NULL);
	r->nevidence++;
}

static bool before_training(enum diag_phase p)
{
	return p == DIAG_P_MODEL_LOAD || p == DIAG_P_CACHING || p == DIAG_P_BASELINE_SAMPLING;
}

static void add_hint(struct diag_result *r, const char *id, const struct snap *s,
		     const char *value)
{
	if (r->nhints < sizeof r->hints / sizeof r->hints[0] && s->set)
		put_hit(&r->hints[r->nhints++], id, s, 1, value);
}

/* The numbers of the last OOM message, and the hints they give (SPEC §3.6). */
static void memory_account(struct dstate *st, struct diag_result *r)
{
	struct memacct *m = &r->memory;
	char v[64];

	memacct_init(m);
	if (!st->oom.valid || !st->oom.mem.present)
		return;
	*m = st->oom.mem;
	memacct_finish(m);
	/* the only process listed was this job itself (a container hides its pid): not a hint
	 * that another process held the card */
	if (m->this_pid >= 0 && m->nother == 0 && st->sig_snap[SIG_OTHER_PROCESS].line == st->oom.msg.line) {
		for (size_t i = 0; i < r->nhints; i++)
			if (!strcmp(r->hints[i].id, "other_process")) {
				memmove(&r->hints[i], &r->hints[i + 1], (r->nhints - i - 1) * sizeof r->hints[0]);
				r->nhints--;
				break;
			}
	}
	if (memacct_fragmented(m)) {
		memacct_format(m->pytorch_reserved_unallocated, v, sizeof v);
		add_hint(r, "fragmentation", &st->oom.msg, v);
	}
	if (m->limit >= 0) {
		memacct_format(m->limit, v, sizeof v);
		add_hint(r, "memory_fraction", &st->oom.msg, v);
	}
}

/* What a fatal error that is not a GPU OOM was, from the signatures seen in error output. */
static enum diag_other death_cause(const struct dstate *st)
{
	if (st->death & SIG_BIT(SIG_MISSING_FILE))
		return DIAG_O_MISSING_FILE;
	if (st->death & SIG_BIT(SIG_HF_AUTH))
		return DIAG_O_HF_AUTH;
	if (st->death & SIG_BIT(SIG_CONFIG_ERROR))
		return DIAG_O_CONFIG_ERROR;
	return DIAG_O_PYTHON_ERROR;
}

/* The signatures and hints counted, into r->sigs and r->hints; true when one of them is an
 * OOM. */
static bool collect_hits(const struct dstate *st, struct diag_result *r)
{
	bool any_oom = false;

	for (int i = 0; i < SIG_COUNT; i++) {
		if (!st->count[i])
			continue;
		/* cuBLAS failing to start later in a run is not about memory (SPEC §3.6) */
		if (i == SIG_CUBLAS_NOT_INIT && st->cublas_ni_late)
			continue;
		if (sig_defs[i].cls == SIG_CLASS_OOM)
			any_oom = true;
		if (sig_defs[i].cls == SIG_CLASS_HINT) {
			if (r->nhints < sizeof r->hints / sizeof r->hints[0])
				put_hit(&r->hints[r->nhints++], sig_defs[i].name, &st->sig_snap[i],
					st->count[i], st->sig_cap[i]);
		} else if (r->nsigs < DIAG_MAX_SIGS) {
			put_hit(&r->sigs[r->nsigs++], sig_defs[i].name, &st->sig_snap[i], st->count[i],
				st->sig_cap[i]);
		}
	}
	return any_oom;
}

/* The phase the OOM that ended the run happened in (r->phase), and its step (r->failed_step). */
static enum diag_phase oom_phase(const struct dstate *st, struct diag_result *r)
{
	const struct oom_event *o = &st->oom;
	enum diag_phase p = o->phase;
	if (o->tb_phase == DIAG_P_SAMPLING)
		p = o->train_started ? DIAG_P_SAMPLING : DIAG_P_BASELINE_SAMPLING;
	else if (o->tb_phase != DIAG_P_NONE)
		p = o->tb_phase;
	if (p == DIAG_P_SAMPLING && !o->train_started)
		p = DIAG_P_BASELINE_SAMPLING;
	r->phase = p;
	if (p == DIAG_P_TRAINING && o->bar_n >= 0)
		r->failed_step = o->bar_n + 1;
	else if (p == DIAG_P_TRAINING && st->train_started && st->bar_max == 0)
		r->failed_step = 1; /* the only training bar never left 0: step 1 (SPEC §3.3) */
	else if (p == DIAG_P_SAMPLING && o->bar_n >= 0)
		r->failed_step = o->bar_n;
	else if (p == DIAG_P_SAVING)
		r->failed_step = o->save_step >= 0 ? o->save_step : o->bar_n;
	return p;
}

/* An OOM that ended the run: when (the timing, SPEC §3.3), and the lines that show it. */
static void verdict_died(struct dstate *st, struct diag_result *r)
{
	const struct diag_job_info *job = st->job;
	const struct oom_event *o = &st->oom;
	enum diag_phase p = oom_phase(st, r);
	bool before = before_training(p);
	bool step1 = p == DIAG_P_TRAINING && r->failed_step == 1;

	/* the quarter/half rule's sentence says it when it holds; otherwise the job would have
	 * fitted alone, and the processes in its way are named */
	r->fitted_alone = !memacct_environment(&r->memory) && memacct_fits_alone(&r->memory);

	if (memacct_environment(&r->memory) || r->fitted_alone) {
		/* the numbers show the card held by others: whatever the phase (SPEC §3.6) */
		r->timing = DIAG_T_ENVIRONMENT;
	} else if (job && job->conservative == 1 && (before || step1) &&
	    (st->count[SIG_ZERO_BYTES_FREE] || st->count[SIG_CUBLAS_ALLOC_FAILED])) {
		r->timing = DIAG_T_ENVIRONMENT;
		add_evidence(r, &st->sig_snap[st->count[SIG_CUBLAS_ALLOC_FAILED]
					      ? SIG_CUBLAS_ALLOC_FAILED : SIG_ZERO_BYTES_FREE]);
		if (st->count[SIG_OTHER_PROCESS])
			add_evidence(r, &st->sig_snap[SIG_OTHER_PROCESS]);
	} else if (before) {
		r->timing = DIAG_T_BEFORE_TRAINING;
		r->failed_step = -1;
	} else if (p == DIAG_P_NONE || (p == DIAG_P_TRAINING && r->failed_step < 0)) {
		/* no marker, frame or bar shows when (or which step): say so, never guess */
		r->timing = DIAG_T_NONE;
		r->unknown = p == DIAG_P_NONE ? DIAG_U_NO_PHASE : DIAG_U_NO_STEP;
	} else if (p == DIAG_P_SAMPLING) {
		r->timing = DIAG_T_SAMPLING;
	} else if (r->failed_step <= 10) {
		r->timing = DIAG_T_FIRST_STEPS;
	} else {
		r->timing = DIAG_T_INTERMITTENT;
	}
	if (before)
		r->failed_step = -1;
	if (p != DIAG_P_TRAINING)
		add_evidence(r, &o->marker);
	add_evidence(r, &o->bar);
	add_evidence(r, &o->msg);
	add_evidence(r, &o->frame);
	if (st->fatal_seen)
		add_evidence(r, &st->fatal);
	for (unsigned i = 0; i < 3 && i < st->nskip; i++)
		add_evidence(r, &st->skip[i]);
}

/* No step after the last skip banner: it was not survived (SPEC §3.3). */
static void verdict_skip_open(struct dstate *st, struct diag_result *r)
{
	r->phase = DIAG_P_TRAINING;
	r->failed_step = st->skip_step;
	if (!st->skip_crash) {
		/* the log ends there: whether the run went on is not shown */
		r->timing = DIAG_T_NONE;
		r->unknown = DIAG_U_SKIP_OUTCOME;
	} else {
		/* it died at once, of the skipped batch: the skip was the failure */
		r->skip_crashed = true;
		r->timing = st->skip_step < 0	? DIAG_T_NONE
			    : st->skip_step <= 10 ? DIAG_T_FIRST_STEPS
						  : DIAG_T_INTERMITTENT;
		if (st->skip_step < 0)
			r->unknown = DIAG_U_NO_STEP;
	}
	add_evidence(r, &st->bar);
	for (unsigned i = 0; i < 3 && i < st->nskip; i++)
		add_evidence(r, &st->skip[i]);
	if (st->skip_crash)
		add_evidence(r, &st->skip_fatal);
}

/* OOMs the trainer caught and went on after, to a later step: survived, unless an error ended
 * the run after that (then only what is known is said). */
static void verdict_caught(struct dstate *st, struct diag_result *r)
{
	bool caught_sample = !st->nskip && st->oom.valid && st->oom.caught &&
			     (st->oom.phase == DIAG_P_SAMPLING ||
			      st->oom.phase == DIAG_P_BASELINE_SAMPLING);
	r->timing = caught_sample ? DIAG_T_SAMPLING : DIAG_T_INTERMITTENT;
	r->phase = caught_sample ? DIAG_P_SAMPLING : DIAG_P_TRAINING;
	r->survived = !st->fatal_seen;
	r->failed_step = st->nskip ? st->skip_step : st->oom.fail_step;
	for (unsigned i = 0; i < 3 && i < st->nskip; i++)
		add_evidence(r, &st->skip[i]);
	if (st->oom.valid)
		add_evidence(r, &st->oom.msg);
	add_evidence(r, &st->bar);
	if (st->fatal_seen) {
		r->other = death_cause(st);
		add_evidence(r, &st->fatal);
	}
}

/* No OOM: the host ran out of RAM, or what the run died of. */
static void verdict_no_oom(struct dstate *st, struct diag_result *r)
{
	r->timing = DIAG_T_NONE;
	r->phase = DIAG_P_NONE;
	if (st->count[SIG_HOST_OOM]) {
		r->other = DIAG_O_HOST_OOM;
		add_evidence(r, &st->host);
	} else if (st->fatal_seen) {
		r->other = death_cause(st);
		add_evidence(r, &st->fatal);
	}
	add_evidence(r, &st->bar);
}

static void verdict(struct dstate *st)
{
	struct diag_result *r = st->out;
	const struct diag_job_info *job = st->job;
	bool any_oom = collect_hits(st, r);

	r->oom = any_oom;
	memory_account(st, r);
	r->total_steps = st->bar_total > 0 ? st->bar_total : -1;
	r->failed_step = -1;
	r->model_kind = job ? job->kind : 0;
	if (any_oom && st->oom.valid && !st->oom.survived)
		verdict_died(st, r);
	else if (any_oom && st->nskip && st->skip_open)
		verdict_skip_open(st, r);
	else if (any_oom)
		verdict_caught(st, r);
	else
		verdict_no_oom(st, r);
}

/* Where the run stands at the end of what was read: the live header of a followed log. */
static void progress_now(const struct dstate *st, struct diag_result *r)
{
	const char *t = st->bar.text, *end = t + st->bar.len, *p, *q;

	r->run_ended = st->run_ended;
	r->now_phase = st->phase;
	r->now_step = st->train_started ? st->bar_n : -1;
	r->now_rate[0] = '\0';
	if (!st->bar.set)
		return;
	/* "[04:10<1:19:12,  1.67s/it, lr: ...]": the field after the times */
	p = memchr(t, '[', st->bar.len);
	p = p ? memchr(p, ',', (size_t)(end - p)) : NULL;
	if (!p)
		return;
	for (p++; p < end && *p == ' '; p++)
		;
	for (q = p; q < end && *q != ',' && *q != ']' && *q != ' '; q++)
		;
	if (q - p >= 4 && (size_t)(q - p) < sizeof r->now_rate &&
	    (!memcmp(q - 4, "s/it", 4) || !memcmp(q - 4, "it/s", 4)))
		snprintf(r->now_rate, sizeof r->now_rate, "%.*s", (int)(q - p), p);
}

/* A fresh scan state for one log. NULL when out of memory or when the patterns do not compile
 * (then e says why). Free with dstate_free. */
static struct dstate *dstate_new(const struct diag_job_info *job, struct diag_result *out,
				 const char *name, struct err *e)
{
	struct dstate *st = calloc(1, sizeof *st);

	if (!st) {
		err_set(e, ERR_SOFTWARE, name, 0, 0, _("out of memory"));
		return NULL;
	}
	st->job = job;
	st->out = out;
	st->bar_n = st->bar_total = st->save_step = st->skip_step = st->bar_max = -1;
	st->scratch_cap = LOGIDX_SEG_CAP;
	st->scratch = malloc(st->scratch_cap);
	if (job && job->name && *job->name) {
		size_t l = strlen(job->name);
		st->namelen = l < sizeof st->name ? l : sizeof st->name;
		memcpy(st->name, job->name, st->namelen);
		st->name_from_job = true;
	}
	if (!st->scratch) {
		err_set(e, ERR_SOFTWARE, name, 0, 0, _("out of memory"));
		free(st);
		return NULL;
	}
	if (sig_matcher_new(&st->sm, e) != ERR_OK) {
		free(st->scratch);
		free(st);
		return NULL;
	}
	return st;
}

static void dstate_free(struct dstate **pst)
{
	if (!*pst)
		return;
	sig_matcher_free(&(*pst)->sm);
	free((*pst)->scratch);
	free(*pst);
	*pst = NULL;
}

static void result_init(struct diag_result *out)
{
	memset(out, 0, sizeof *out);
	out->failed_step = -1;
	out->total_steps = -1;
}

static int run(struct logidx *li, const struct diag_job_info *job, struct diag_result *out,
	       struct err *e)
{
	struct dstate *st;
	int rc;

	result_init(out);
	st = dstate_new(job, out, logidx_name(li), e);
	if (!st)
		return e && e->code ? e->code : ERR_SOFTWARE;
	rc = logidx_scan(li, on_seg, st, e);
	if ((rc == ERR_OK || rc == ERR_DATA) && not_text(st)) {
		result_init(out);
		rc = refuse_binary(st, logidx_name(li), e);
	}
	if (rc == ERR_OK) {
		uint64_t lines = 0;
		verdict(st);
		progress_now(st, out);
		logidx_count_lines(li, &lines, NULL);
		out->lines = lines;
		out->bytes = logidx_size(li);
		out->truncated = logidx_truncated(li);
		out->warnings = sig_warnings(st->sm);
	}
	dstate_free(&st);
	return rc;
}

int diag_logidx(struct logidx *li, const struct diag_job_info *job, struct diag_result *out,
		struct err *e)
{
	return run(li, job, out, e);
}

int diag_file(const char *path, const struct diag_job_info *job, struct diag_result *out,
	      struct err *e)
{
	struct logidx *li;
	int rc = logidx_open(path, &li, e);

	if (rc) {
		memset(out, 0, sizeof *out);
		out->failed_step = out->total_steps = -1;
		return rc;
	}
	rc = run(li, job, out, e);
	logidx_close(&li);
	return rc;
}

int diag_buffer(const char *buf, size_t len, const struct diag_job_info *job,
		struct diag_result *out, struct err *e)
{
	struct logidx *li;
	int rc = logidx_open_buffer("(buffer)", buf, len, &li, e);

	if (rc)
		return rc;
	rc = run(li, job, out, e);
	logidx_close(&li);
	return rc;
}

static const char *const phase_names[DIAG_P_COUNT] = {
	NULL, "model_load", "caching", "baseline_sampling", "training", "sampling", "saving",
};
static const char *const other_names[DIAG_O_COUNT] = {
	NULL, "host_oom", "missing_file", "hf_auth", "config_error", "python_error",
};

const char *diag_unknown_name(enum diag_unknown u)
{
	static const char *const names[] = { NULL, "no_phase", "no_step", "skip_outcome" };
	return (unsigned)u < sizeof names / sizeof names[0] ? names[u] : NULL;
}

const char *diag_phase_name(enum diag_phase p)
{
	return (unsigned)p < DIAG_P_COUNT ? phase_names[p] : NULL;
}

const char *diag_other_name(enum diag_other o)
{
	return (unsigned)o < DIAG_O_COUNT ? other_names[o] : NULL;
}

static void json_hits(struct json *j, const struct diag_hit *h, size_t n, bool with_id)
{
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_obj_begin(j);
		if (with_id) {
			json_key(j, "id");
			json_str(j, h[i].id);
		}
		json_key(j, "line");
		json_int(j, (long long)h[i].line);
		json_key(j, "text");
		json_str(j, h[i].text);
		if (with_id) {
			json_key(j, "count");
			json_int(j, h[i].count);
			if (h[i].value[0]) { /* the size, skip number or "pid size" it kept */
				json_key(j, "value");
				json_str(j, h[i].value);
			}
		}
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_opt_int(struct json *j, long long v)
{
	if (v < 0)
		json_null(j);
	else
		json_int(j, v);
}

/* The processes the message listed besides this job: [{"pid": n, "bytes": n}, ...]. */
static void json_procs(struct json *j, const struct memacct *m)
{
	json_arr_begin(j);
	for (size_t i = 0; i < m->nother; i++) {
		json_obj_begin(j);
		json_key(j, "pid");
		json_int(j, m->other[i].pid);
		json_key(j, "bytes");
		json_int(j, m->other[i].bytes);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void diag_json_head(struct json *j, const struct diag_result *r)
{
	json_key(j, "oom");
	json_bool(j, r->oom);
	diag_json_timing(j, r->timing, false);
	json_key(j, "phase");
	json_str(j, diag_phase_name(r->phase));
	json_key(j, "failed_step");
	json_opt_int(j, r->failed_step);
	json_key(j, "total_steps");
	json_opt_int(j, r->total_steps);
	json_key(j, "survived");
	json_bool(j, r->survived);
	json_key(j, "timing_unknown");
	json_str(j, diag_unknown_name(r->unknown));
	json_key(j, "skip_crashed");
	json_bool(j, r->skip_crashed);
	json_key(j, "signatures");
	json_hits(j, r->sigs, r->nsigs, true);
	json_key(j, "hints");
	json_hits(j, r->hints, r->nhints, true);
	diag_json_memory(j, r);
	json_key(j, "fitted_alone"); /* the processes that held the card (E, SPEC §3.6), or null */
	if (r->fitted_alone)
		json_procs(j, &r->memory);
	else
		json_null(j);
	json_key(j, "model_kind");
	json_str(j, r->model_kind == 1 ? "image" : r->model_kind == 2 ? "video" : NULL);
}

void diag_json_timing(struct json *j, enum diag_timing t, bool letter)
{
	char l[2] = { diag_timing_letter(t), 0 };

	json_key(j, "timing");
	json_str(j, diag_timing_name(t));
	if (letter) {
		json_key(j, "timing_letter");
		json_str(j, l[0] ? l : NULL);
	}
}

/* The "memory" object's keys in their order (SPEC §3.6; the last three are not in its list, but
 * said by the message when present): each a count of `struct memacct`, null when not said, or
 * the listed processes. */
enum mem_kind { MEM_I64, MEM_LL, MEM_PROCS };
static const struct mem_key {
	const char *key;
	size_t off;
	enum mem_kind kind;
} mem_keys[] = {
	{ "capacity", offsetof(struct memacct, capacity), MEM_I64 },
	{ "free", offsetof(struct memacct, free), MEM_I64 },
	{ "requested", offsetof(struct memacct, requested), MEM_I64 },
	{ "this_process", offsetof(struct memacct, this_process), MEM_I64 },
	{ "other_processes", 0, MEM_PROCS },
	{ "pytorch_allocated", offsetof(struct memacct, pytorch_allocated), MEM_I64 },
	{ "pytorch_reserved_unallocated", offsetof(struct memacct, pytorch_reserved_unallocated),
	  MEM_I64 },
	{ "unaccounted", offsetof(struct memacct, unaccounted), MEM_I64 },
	{ "this_pid", offsetof(struct memacct, this_pid), MEM_LL },
	{ "private_pools", offsetof(struct memacct, private_pools), MEM_I64 },
	{ "limit", offsetof(struct memacct, limit), MEM_I64 },
};

void diag_json_memory(struct json *j, const struct diag_result *r)
{
	const struct memacct *m = &r->memory;

	json_key(j, "memory");
	if (!m->present) {
		json_null(j);
		return;
	}
	json_obj_begin(j);
	for (size_t i = 0; i < sizeof mem_keys / sizeof mem_keys[0]; i++) {
		const struct mem_key *k = &mem_keys[i];
		const char *field = (const char *)m + k->off;
		json_key(j, k->key);
		if (k->kind == MEM_PROCS)
			json_procs(j, m);
		else if (k->kind == MEM_LL)
			json_opt_int(j, *(const long long *)(const void *)field);
		else
			json_opt_int(j, *(const int64_t *)(const void *)field);
	}
	json_obj_end(j);
}

bool diag_when_unknown(const struct diag_result *r)
{
	return r->oom && r->timing == DIAG_T_NONE;
}

void diag_json_tail(struct json *j, const struct diag_result *r)
{
	json_key(j, "other_failure");
	json_str(j, diag_other_name(r->other));
	json_key(j, "evidence");
	json_hits(j, r->evidence, r->nevidence, false);
}

/* ---- following a growing log ----
 *
 * The scan state lives on between calls: the bytes appended since the last call are scanned and
 * the verdict is taken as if the log ended there, on a copy of the state that also receives the
 * unfinished last segment (a frame still being drawn), so the next bytes can continue it. */

struct diag_state {
	struct diag_job_info job;  /* a copy: job.name points at jobname */
	char *jobname;
	bool has_job;
	struct dstate *st;
	struct logidx_scanner *sc;
	struct diag_result scratch_out;
	/* the file followed by diag_state_follow */
	int fd;
	struct save_stamp file;    /* which file fd is (its device and inode) */
	char *buf;
	struct logidx *index;      /* also indexes what it reads into this log index, or NULL */
	char head[64];             /* the file's first bytes, to notice it was rewritten in place */
	size_t headlen;
};

/* True when the followed file no longer starts with the bytes read first: it was truncated and
 * written again (`> log.txt` of a new run) and has already grown past what was read. */
static bool head_changed(struct diag_state *ds)
{
	char now[sizeof ds->head];
	ssize_t r;

	if (ds->headlen == 0)
		return false;
	do
		r = pread(ds->fd, now, ds->headlen, 0);
	while (r < 0 && errno == EINTR);
	return r != (ssize_t)ds->headlen || memcmp(now, ds->head, ds->headlen) != 0;
}

#define FOLLOW_READ (64u * 1024)

static int state_start(struct diag_state *ds, struct err *e)
{
	ds->headlen = 0;
	dstate_free(&ds->st);
	logidx_scanner_free(&ds->sc);
	ds->st = dstate_new(ds->has_job ? &ds->job : NULL, &ds->scratch_out, NULL, e);
	if (!ds->st)
		return e && e->code ? e->code : ERR_SOFTWARE;
	if (logidx_scanner_new(LOGIDX_SEG_CAP, &ds->sc) != ERR_OK)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
	return ERR_OK;
}

int diag_state_new(const struct diag_job_info *job, struct diag_state **out, struct err *e)
{
	struct diag_state *ds = calloc(1, sizeof *ds);
	int rc;

	*out = NULL;
	if (!ds)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
	ds->fd = -1;
	if (job) {
		ds->job = *job;
		ds->has_job = true;
		if (job->name) {
			ds->jobname = strdup(job->name);
			if (!ds->jobname) {
				free(ds);
				return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
			}
		}
		ds->job.name = ds->jobname;
	}
	rc = state_start(ds, e);
	if (rc) {
		diag_state_free(&ds);
		return rc;
	}
	*out = ds;
	return ERR_OK;
}

void diag_state_free(struct diag_state **pds)
{
	struct diag_state *ds;

	if (!pds || !*pds)
		return;
	ds = *pds;
	dstate_free(&ds->st);
	logidx_scanner_free(&ds->sc);
	if (ds->fd >= 0)
		close(ds->fd);
	free(ds->buf);
	free(ds->jobname);
	free(ds);
	*pds = NULL;
}

int diag_state_reset(struct diag_state *ds, struct err *e)
{
	return state_start(ds, e);
}

int diag_state_feed(struct diag_state *ds, const char *buf, size_t len, struct err *e)
{
	int rc = logidx_scanner_feed(ds->sc, buf, len, on_seg, ds->st);

	if (rc == ERR_DATA && not_text(ds->st)) /* the sniff of the first 64 KiB said no */
		return refuse_binary(ds->st, NULL, e);
	return rc;
}

uint64_t diag_state_offset(const struct diag_state *ds)
{
	return logidx_scanner_offset(ds->sc);
}

int diag_state_result(struct diag_state *ds, struct diag_result *out, struct err *e)
{
	struct dstate *c = malloc(sizeof *c);

	result_init(out);
	if (!c)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
	*c = *ds->st; /* shares the matcher and the scratch buffer, which hold nothing between calls */
	c->out = out;
	logidx_scanner_tail(ds->sc, on_seg, c);
	if (not_text(c)) { /* a short log that is not text: refused as a whole file would be */
		int rc = refuse_binary(c, NULL, e);
		free(c);
		return rc;
	}
	verdict(c);
	progress_now(c, out);
	out->lines = logidx_scanner_lines(ds->sc);
	out->bytes = logidx_scanner_offset(ds->sc);
	out->warnings = sig_warnings(ds->st->sm);
	free(c);
	return ERR_OK;
}

int diag_state_follow(struct diag_state *ds, const char *path, uint64_t max,
		      enum diag_follow *what, struct err *e)
{
	struct stat ps;
	bool restarted = false;
	uint64_t fed, got = 0;

	*what = DIAG_FOLLOW_SAME;
	if (stat(path, &ps) != 0) {
		/* moved aside (a restart) and not written again yet: keep what we have */
		if (errno == ENOENT && ds->fd >= 0)
			return ERR_OK;
		return err_set(e, ERR_NOINPUT, path, 0, 0, _("cannot open the log: %s"),
			       strerror(errno));
	}
	if (!S_ISREG(ps.st_mode))
		return err_set(e, ERR_NOINPUT, path, 0, 0,
			       _("only a regular file can be followed as it grows"));
	struct save_stamp now;
	save_stamp_of_stat(&ps, &now);
	if (ds->fd >= 0 && (!save_stamp_same_file(&now, &ds->file) ||
			    (uint64_t)ps.st_size < diag_state_offset(ds) || head_changed(ds))) {
		/* another file, or this one truncated: read it again from the start */
		close(ds->fd);
		ds->fd = -1;
		restarted = true;
		if (state_start(ds, e) != ERR_OK)
			return e && e->code ? e->code : ERR_SOFTWARE;
	}
	if (ds->fd < 0) {
		ds->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (ds->fd < 0 || save_stamp_fd(ds->fd, &ds->file) != 0) {
			int en = errno;
			if (ds->fd >= 0)
				close(ds->fd);
			ds->fd = -1;
			return err_set(e, ERR_NOINPUT, path, 0, 0, _("cannot open the log: %s"),
				       strerror(en));
		}
		ps.st_size = ds->file.size;
		if (diag_state_offset(ds) > 0) { /* reopened after a failure: start over */
			restarted = true;
			if (state_start(ds, e) != ERR_OK)
				return e && e->code ? e->code : ERR_SOFTWARE;
		}
	}
	if (!ds->buf && !(ds->buf = malloc(FOLLOW_READ)))
		return err_set(e, ERR_SOFTWARE, path, 0, 0, _("out of memory"));
	fed = diag_state_offset(ds);
	while (fed < (uint64_t)ps.st_size && (max == 0 || got < max)) {
		size_t want = FOLLOW_READ;
		ssize_t r;
		if (want > (uint64_t)ps.st_size - fed)
			want = (size_t)((uint64_t)ps.st_size - fed);
		if (max && want > max - got)
			want = (size_t)(max - got);
		r = pread(ds->fd, ds->buf, want, (off_t)fed);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set(e, ERR_IOERR, path, 0, 0, _("read error: %s"), strerror(errno));
		if (r == 0)
			break; /* shrank under us: the next call starts over */
		diag_state_feed(ds, ds->buf, (size_t)r, e);
		if (fed < sizeof ds->head) { /* remember how the file starts */
			size_t k = sizeof ds->head - (size_t)fed;
			if (k > (size_t)r)
				k = (size_t)r;
			memcpy(ds->head + fed, ds->buf, k);
			ds->headlen = (size_t)fed + k;
		}
		if (ds->index)
			logidx_index_bytes(ds->index, fed, ds->buf, (size_t)r);
		fed += (uint64_t)r;
		got += (uint64_t)r;
	}
	*what = restarted ? DIAG_FOLLOW_RESTARTED : got ? DIAG_FOLLOW_GREW : DIAG_FOLLOW_SAME;
	return ERR_OK;
}

void diag_state_index_into(struct diag_state *ds, struct logidx *li)
{
	ds->index = li;
}

bool diag_state_pending(const struct diag_state *ds)
{
	struct stat fs;

	return ds->fd >= 0 && fstat(ds->fd, &fs) == 0 && (uint64_t)fs.st_size > diag_state_offset(ds);
}

bool diag_parse_bar(const char *s, size_t len, struct diag_bar *out)
{
	struct bar b;
	if (!parse_bar(s, len, &b))
		return false;
	*out = (struct diag_bar){ .desc = b.desc, .dlen = b.dlen, .n = b.n, .total = b.total,
				  .lrloss = b.lrloss };
	return true;
}

bool diag_is_sampling_bar(const char *desc, size_t len)
{
	return is_sampling_desc(desc, len);
}
