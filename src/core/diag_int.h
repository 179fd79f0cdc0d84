/* diag_int.h — what the files of the diagnosis share (src/core only): the scan state and the
 * steps of one pass over a log, made in the order of the files:
 *
 *   diag_bar.c      progress bars: the timeline (phase, step) they move
 *   diag_scan.c     a segment of the log: markers, tracebacks, error lines, the fast lane
 *   diag.c          the verdict, and the entry points (a file, an index, a buffer)
 *   diag_json.c     the names and the JSON of a result
 *   diag_follow.c   following a log that grows
 */
#ifndef OOMFIX_DIAG_INT_H
#define OOMFIX_DIAG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oomfix/diag.h"
#include "oomfix/err.h"
#include "oomfix/logidx.h"
#include "oomfix/sig.h"

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
	bool stopped;               /* run.py's "Job stopped" or a KeyboardInterrupt: Ctrl-C */

	/* the fast lane: the training bar's description, once on_bar has taken it as that bar */
	char fast_name[128];
	size_t fast_len;
};

struct bar {
	const char *desc;
	size_t dlen;
	long long n, total;
	bool lrloss;
	const char *tail; /* text after the closing ']' (something printed over the bar) */
	size_t tlen;
	bool partial;     /* "%|" but no whole frame: a frame cut by text from another stream */
};

/* ---- small helpers ---- */

static inline void snap_set(struct snap *s, const struct logidx_seg *seg, const char *t, size_t n)
{
	s->set = true;
	s->line = seg->line;
	s->off = seg->line_off;
	s->len = n < sizeof s->text ? n : sizeof s->text;
	memcpy(s->text, t, s->len);
}

static inline bool starts(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n >= l && memcmp(s, lit, l) == 0;
}

static inline bool starts_ci(const char *s, size_t n, const char *lit)
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

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

static inline void rtrim(const char *s, size_t *n)
{
	while (*n > 0 && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
		(*n)--;
}

/* ---- made in one file, used in another ---- */

/* diag_bar.c. A number of a bar frame at *p (moved past it), -1 when there is none; a tqdm frame
 * ("desc:  5%|bar| 150/3000 [04:10<1:19:12,  1.67s/it, lr: ...]") into b; where text from the
 * other stream starts inside a half-written frame (0: nowhere); the phase a marker or a bar sets;
 * a frame taken (the timeline moved); a training bar's frame taken as the step. */
long long dg_parse_num(const char **p, const char *end);
bool dg_parse_bar(const char *s, size_t len, struct bar *b);
/* The end of a frame, r just after the bar's closing '|': "150/3000 [04:10<1:19:12, ...]" into
 * b's counts, tail and (when asked) lrloss; false when it is not there whole. */
bool dg_bar_counts(const char *r, const char *end, struct bar *b, bool lrloss);
size_t dg_glued_start(const char *s, size_t len);
void dg_set_phase(struct dstate *st, enum diag_phase p, const struct logidx_seg *seg,
		  const char *t, size_t n);
void dg_on_bar(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
	       const char *t, size_t n);
void dg_train_step(struct dstate *st, const struct logidx_seg *seg, const struct bar *b,
		   const char *t, size_t n);

/* diag_scan.c. One segment of the log (logidx_scan's callback: ctx is the struct dstate);
 * whether what was read so far is not text (SPEC §3.6), and the error that refuses it. */
int dg_on_seg(const struct logidx_seg *seg, void *ctx);
bool dg_not_text(const struct dstate *st);
int dg_refuse_binary(const struct dstate *st, const char *name, struct err *e);

/* diag.c. A fresh scan state for one log (NULL when out of memory or when the patterns do not
 * compile; then e says why), and its end; a result's first values; the verdict taken from the
 * state into st->out; where the run stands at the end of what was read. */
struct dstate *dg_dstate_new(const struct diag_job_info *job, struct diag_result *out,
			     const char *name, struct err *e);
void dg_dstate_free(struct dstate **pst);
void dg_result_init(struct diag_result *out);
void dg_verdict(struct dstate *st);
void dg_progress_now(const struct dstate *st, struct diag_result *r);

#endif
