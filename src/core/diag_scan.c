/* diag_scan.c — one segment of the log at a time: markers, tracebacks, error lines grouped into
 * events, whether it is text at all, and the fast lane for a training bar's frames. */
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
	k = dg_parse_num(&p, t + n);
	if (k < 0 || !starts(p, (size_t)(t + n - p), " loss: "))
		return false;
	memset(&b, 0, sizeof b);
	b.n = k;
	b.total = -1; /* not said */
	dg_train_step(st, seg, &b, t, n);
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
		dg_set_phase(st, DIAG_P_MODEL_LOAD, seg, t, n);
	} else if (starts(t, n, "Caching latents") || starts(t, n, "Caching text_embeddings") ||
		   starts(t, n, "Caching text embeddings") ||
		   starts(t, n, "Caching embeddings and unloading text encoder") ||
		   starts(t, n, "-  Preprocessing") || starts(t, n, "Dataset: ")) {
		dg_set_phase(st, DIAG_P_CACHING, seg, t, n);
	} else if (starts(t, n, "Generating baseline samples before training") ||
		   starts(t, n, "Generating first sample")) {
		dg_set_phase(st, DIAG_P_BASELINE_SAMPLING, seg, t, n);
	} else if (starts(t, n, "Sampling at step ")) {
		dg_set_phase(st, DIAG_P_SAMPLING, seg, t, n);
	} else if (starts_ci(t, n, "Generating samples") || starts_ci(t, n, "Generating sample images") ||
		   starts(t, n, "Exception saving sample") || starts_ci(t, n, "Rendering preview") ||
		   starts_ci(t, n, "Generating preview")) {
		/* other trainers' sample rounds (the Dreambooth extension, ...) */
		dg_set_phase(st, st->train_started ? DIAG_P_SAMPLING : DIAG_P_BASELINE_SAMPLING, seg, t, n);
	} else if (starts(t, n, "Saving at step ")) {
		const char *p = t + 15;
		st->save_step = dg_parse_num(&p, t + n);
		dg_set_phase(st, DIAG_P_SAVING, seg, t, n);
	} else if (starts(t, n, "Saved checkpoint")) {
		if (st->phase != DIAG_P_SAVING)
			dg_set_phase(st, DIAG_P_SAVING, seg, t, n);
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
	/* validation (run_validation, validation_step) goes with training: see dg_on_bar */
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
	if (dg_parse_num(&q, t + n) < 0)
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
	/* run.py after a KeyboardInterrupt (run.py:133-141): stopped, not finished, not failed */
	if (lead == 0 && ((n == 11 && !memcmp(t, "Job stopped", 11)) ||
			  (starts(t, n, "KeyboardInterrupt") &&
			   (n == 17 || t[17] == ':' || t[17] == ' '))))
		st->stopped = true;
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

bool dg_not_text(const struct dstate *st)
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
		return dg_not_text(st);
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
		return dg_not_text(st);
	}
	return false;
}

int dg_refuse_binary(const struct dstate *st, const char *name, struct err *e)
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
 * Most of a training log is frames of one tqdm bar joined by '\r'. Once dg_on_bar has taken a
 * frame whose description is the run's name as the training bar, the next frames that start with
 * "NAME:" are parsed here with the name already known, instead of searching for the bar and
 * trying every kind of bar. The result is what dg_parse_bar and dg_on_bar would give: the name holds
 * no '%' (so the first "%|" is this frame's), it starts and ends with no blank (so it is the
 * whole description), and whatever dg_on_bar checks before the training bar depends only on the
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
	const char *end = t + n, *r, *q;
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
	if (!dg_bar_counts(r + 1, end, &b, false)) /* lr and loss: not read for the named bar */
		return false;
	b.desc = t;
	b.dlen = k;
	st->saw_name_bar = true; /* as is_training_desc says of the named bar */
	dg_train_step(st, seg, &b, t, (size_t)(b.tail - t));
	if (b.tlen)
		on_text(st, seg, b.tail, b.tlen, false);
	return true;
}

int dg_on_seg(const struct logidx_seg *seg, void *ctx)
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
	if (!st->in_echo && dg_parse_bar(t, n, &b)) {
		dg_on_bar(st, seg, &b, t, (size_t)(b.tail - t));
		if (b.tlen)
			on_text(st, seg, b.tail, b.tlen, false);
		return 0;
	}
	if (!st->in_echo && b.partial) {
		size_t k = dg_glued_start(t, n);
		if (k) { /* the cut frame moves nothing: the last whole one holds the step */
			on_text(st, seg, t + k, n - k, false);
			return 0;
		}
	}
	on_text(st, seg, t, n, seg->seg == 0);
	return 0;
}
