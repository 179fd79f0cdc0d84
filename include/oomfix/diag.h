/* diag.h — from a trainer log (and the job, when given) to a verdict: did the job run out of
 * GPU memory, when (timing), in which phase, at which step, and what else killed it if not.
 *
 * The plan and the first fix are computed by plan.h from this verdict and the job; diag knows
 * nothing of YAML edits.
 */
#ifndef OOMFIX_DIAG_H
#define OOMFIX_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oomfix/err.h"
#include "oomfix/memacct.h"

enum diag_timing {
	DIAG_T_NONE = 0,        /* no OOM */
	DIAG_T_BEFORE_TRAINING, /* A */
	DIAG_T_FIRST_STEPS,     /* B */
	DIAG_T_SAMPLING,        /* C */
	DIAG_T_INTERMITTENT,    /* D */
	DIAG_T_ENVIRONMENT,     /* E */
	DIAG_T_COUNT
};

enum diag_phase {
	DIAG_P_NONE = 0, DIAG_P_MODEL_LOAD, DIAG_P_CACHING, DIAG_P_BASELINE_SAMPLING,
	DIAG_P_TRAINING, DIAG_P_SAMPLING, DIAG_P_SAVING, DIAG_P_COUNT
};

enum diag_other {
	DIAG_O_NONE = 0, DIAG_O_HOST_OOM, DIAG_O_MISSING_FILE, DIAG_O_HF_AUTH, DIAG_O_CONFIG_ERROR,
	DIAG_O_PYTHON_ERROR, DIAG_O_COUNT
};

/* Why an OOM's timing is null: the log shows no phase; it shows training but no step; or a skip
 * banner was the last word (no later step, no error: whether the run went on is not shown). */
enum diag_unknown { DIAG_U_NONE = 0, DIAG_U_NO_PHASE, DIAG_U_NO_STEP, DIAG_U_SKIP_OUTCOME };

/* What diag needs from the job (filled by the caller from struct job; all optional). */
struct diag_job_info {
	const char *name;   /* config.name: the training bar's description; NULL = unknown */
	int kind;           /* enum job_kind: 0 unknown, 1 image, 2 video */
	int conservative;   /* 1 yes, 0 no, -1 unknown (no job) */
};

#define DIAG_MAX_TEXT 400 /* evidence text is clipped to this many bytes */

/* One matched line. `line` is the 1-based physical line; text is ANSI-stripped, the \r segment
 * that matched, clipped, valid UTF-8 (invalid bytes replaced). */
struct diag_hit {
	const char *id;     /* signature id (SPEC §3.1), or NULL for plain evidence */
	uint64_t line;
	uint64_t offset;    /* byte offset of the physical line in the log */
	unsigned count;     /* how many times this id occurred as real error output */
	char value[64];     /* what the signature keeps: a size, the skip number K, "pid size" */
	char text[DIAG_MAX_TEXT + 1];
};

#define DIAG_MAX_SIGS 16
#define DIAG_MAX_EVIDENCE 12

struct diag_result {
	bool oom;
	enum diag_timing timing;
	enum diag_phase phase;
	long long failed_step;   /* -1 = null */
	long long total_steps;   /* -1 = unknown */
	int model_kind;          /* as diag_job_info.kind (0 = unknown → JSON null) */
	enum diag_other other;
	struct diag_hit sigs[DIAG_MAX_SIGS];   /* one entry per signature id, counted */
	size_t nsigs;
	struct diag_hit hints[8];              /* other_process, host_oom, fragmentation, ... */
	size_t nhints;
	struct diag_hit evidence[DIAG_MAX_EVIDENCE]; /* the lines that decided the verdict */
	size_t nevidence;
	uint64_t lines;          /* physical lines read */
	uint64_t bytes;          /* bytes read */
	bool truncated;          /* the log changed size while read, or a limit was hit */
	unsigned long warnings;  /* lines skipped because a pattern hit a PCRE2 limit */
	bool survived;           /* OOMs happened and the run lived through them: SPEC §3.3's three
				  * conditions (the trainer's catch-and-continue message, a later
				  * step after it, no fatal error after that) */
	enum diag_unknown unknown; /* why timing is null for an OOM (DIAG_U_NONE otherwise) */
	bool skip_crashed;       /* the run died right after a skip banner of an error that is not
				  * about memory (the skipped batch's missing loss): the skip was the
				  * failure, and the error its consequence */
	bool fitted_alone;       /* E because the job would have fitted alone (SPEC §3.6), the
				  * quarter/half rule not holding: the processes are memory.other[] */
	struct memacct memory;   /* the numbers of the OOM message (memory.present: there were some) */
	bool run_ended;          /* the trainer printed its end-of-run summary ("Result:") */
	bool stopped;            /* the run was stopped before its end (Ctrl-C: run.py's "Job
				  * stopped", or a KeyboardInterrupt), by a person, a hang-up or a
				  * retry's probe */
	/* Where the run stands at the end of the log (a run being followed): */
	enum diag_phase now_phase; /* the last phase marker or bar */
	long long now_step;      /* steps completed by the last training-bar frame, -1 = none */
	char now_rate[24];       /* that frame's speed as the bar prints it ("1.67s/it"), or "" */
};

struct logidx;
struct json;

/* Diagnoses the log at `path` ("-" = stdin; pipes and FIFOs are read as a stream).
 * job may be NULL. Returns ERR_OK, ERR_NOINPUT or ERR_IOERR. */
int diag_file(const char *path, const struct diag_job_info *job, struct diag_result *out,
	      struct err *e);

/* A log that is not text (an executable, an image: NUL bytes or invalid UTF-8 in most of its
 * first DIAG_SNIFF_BYTES) is refused by diag_file, diag_buffer and diag_logidx with ERR_DATA and
 * a message saying so. */
#define DIAG_SNIFF_BYTES (64u * 1024)

/* Same over a buffer in memory (tests, fuzzing). */
int diag_buffer(const char *buf, size_t len, const struct diag_job_info *job,
		struct diag_result *out, struct err *e);

/* Same over a log already opened with logidx_open (the UI keeps it for browsing). Scans from
 * the start; a stream can be diagnosed once. */
int diag_logidx(struct logidx *li, const struct diag_job_info *job, struct diag_result *out,
		struct err *e);

/* ---- following a log that grows ----
 *
 * A diagnosis kept open: bytes appended to the log are scanned from where the last call stopped
 * (the timeline, the signatures and the line count resume), so bringing it up to date costs the
 * appended bytes, not a rescan. The verdict after any number of pieces is the one diag_buffer
 * gives on the bytes fed so far, wherever they were cut (mid-line, mid-frame). */
struct diag_state;

enum diag_follow {
	DIAG_FOLLOW_SAME,       /* nothing new */
	DIAG_FOLLOW_GREW,       /* new bytes were read */
	DIAG_FOLLOW_RESTARTED,  /* the log was truncated or replaced: read again from the start */
};

/* A diagnosis of an empty log; job (copied) may be NULL. Free with diag_state_free. */
int diag_state_new(const struct diag_job_info *job, struct diag_state **out, struct err *e);
void diag_state_free(struct diag_state **ds);

/* Scans len more bytes of the log. ERR_OK. */
int diag_state_feed(struct diag_state *ds, const char *buf, size_t len, struct err *e);

/* Forgets everything fed: the log starts again. */
int diag_state_reset(struct diag_state *ds, struct err *e);

/* The verdict on the bytes fed so far, as if the log ended there (the state is not changed:
 * more bytes can still be fed). */
int diag_state_result(struct diag_state *ds, struct diag_result *out, struct err *e);

uint64_t diag_state_offset(const struct diag_state *ds); /* bytes fed */

/* Brings the diagnosis of the regular file at `path` up to date: reads what was appended since
 * the last call (at most `max` bytes when max > 0; call again for the rest). A file that is
 * shorter than what was read, or another file now at that path (the web UI moves log.txt aside
 * when a job restarts), is read again from the start. A path that has disappeared after it was
 * read keeps the last result. *what says which happened. ERR_OK, ERR_NOINPUT, ERR_IOERR. */
int diag_state_follow(struct diag_state *ds, const char *path, uint64_t max,
		      enum diag_follow *what, struct err *e);

/* While following, also builds the line index of `li` (opened on the same file, not yet read)
 * from the bytes read, so that no second pass is needed to count the lines. NULL stops it. */
void diag_state_index_into(struct diag_state *ds, struct logidx *li);

/* True when the followed file holds bytes not read yet (a follow call stopped at `max`). */
bool diag_state_pending(const struct diag_state *ds);

/* Tests: turns the fast lane for the training bar's frames off (or on again), so that a test
 * can show it gives the verdicts of the ordinary path. Not for threads: set it before diagnosing. */
void diag_fast_lane(bool on);

/* Write the verdict's members into an open JSON object, in SPEC §3.5 order, around the plan's
 * members written by the caller: head = oom .. model_kind, tail = other_failure, evidence. */
void diag_json_head(struct json *j, const struct diag_result *r);
void diag_json_tail(struct json *j, const struct diag_result *r);

/* The verdict as one translated sentence for a person ("It ran out of GPU memory in training
 * step 6, ..."), the same in the report and the UI. */
void diag_sentence(const struct diag_result *r, char *buf, size_t sz);

/* Writes the "memory" member (SPEC §3.6): the account of the card, or null. */
void diag_json_memory(struct json *j, const struct diag_result *r);

/* Writes "timing": the timing's name (null for DIAG_T_NONE), and with `letter` also
 * "timing_letter": "A".."E" (or null) — for outputs that show the letter to people. */
void diag_json_timing(struct json *j, enum diag_timing t, bool letter);

/* True when the OOM happened but the log does not show in which phase or step (no marker, no
 * frame, no bar): the verdict says so instead of guessing. */
bool diag_when_unknown(const struct diag_result *r);

/* The name of a part of the memory account ("this job", "other processes", ...), translated. */
const char *diag_memory_part_label(int part);

/* The advice the memory numbers give, as translated sentences (empty when none): the
 * fragmentation hint (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, an environment setting,
 * never a job edit) and the per-process limit. */
void diag_memory_advice(const struct diag_result *r, char *buf, size_t sz);

/* True when no OOM was found but a failure that often means the card was full was (cuDNN's
 * CUDNN_STATUS_NOT_ENOUGH_MEMORY, cuBLAS not initialised at load or in step 1, an AOTInductor
 * allocation call that failed). */
bool diag_memory_suspected(const struct diag_result *r);

/* True when the result carries the hint `id` ("other_process", "host_oom", "cudnn_no_memory"). */
bool diag_has_hint(const struct diag_result *r, const char *id);

/* A phase in words ("loading the model", "training"), translated. */
const char *diag_phase_label(enum diag_phase p);

/* One tqdm frame as the diagnosis reads it ("desc:  5%|bar| 150/3000 [04:10<1:19:12, ...]"):
 * desc points into s (not NUL-terminated), n is the count of completed items. `lrloss` is set
 * when the frame carries "lr:" or "loss:" (the training bar). Returns false when s holds no whole
 * frame. For readers of a live run (oomfix retry's probe). */
struct diag_bar {
	const char *desc;
	size_t dlen;
	long long n, total;
	bool lrloss;
};
bool diag_parse_bar(const char *s, size_t len, struct diag_bar *out);

/* True when a bar description is a sampling bar ("Generating Samples", "Generating Images"). */
bool diag_is_sampling_bar(const char *desc, size_t len);

/* The timing vocabulary (SPEC §3.3, §3.6 "One vocabulary"): one row per timing, indexed by enum
 * diag_timing (row DIAG_T_NONE: letter 0, name NULL). Every output names a timing from here: JSON
 * by `name` ("first_steps", never the letter; add "timing_letter" as its own field where the
 * letter is shown), people by the translated `words`, the guide's table by `cause` and `change`
 * (whole sentences for reports) or `when_brief`, `cause_brief` and `change_brief` (a panel's
 * columns). The texts are N_() marks: translate them with _() where shown, or use the accessors
 * below. */
struct diag_timing_def {
	enum diag_timing id;
	char letter;              /* 'A'..'E' */
	const char *name;         /* "before_training" */
	const char *words;        /* N_("before training") */
	const char *cause;        /* N_(one sentence: the likely cause) */
	const char *change;       /* N_(one sentence: the first change) */
	const char *when_brief;   /* N_("A before training"): the letter and when, a column's cell */
	const char *cause_brief;  /* N_(a few words) */
	const char *change_brief; /* N_(a few words) */
};
extern const struct diag_timing_def diag_timings[DIAG_T_COUNT];

const char *diag_timing_name(enum diag_timing t); /* "before_training", ... or NULL */
char diag_timing_letter(enum diag_timing t);      /* 'A'..'E', 0 for DIAG_T_NONE or out of range */
const char *diag_timing_words(enum diag_timing t); /* translated "first steps"; "" for none */
const char *diag_phase_name(enum diag_phase p);   /* "model_load", ... or NULL */
const char *diag_unknown_name(enum diag_unknown u); /* "no_phase", "no_step", "skip_outcome", NULL */
const char *diag_other_name(enum diag_other o);   /* "host_oom", ... or NULL */

#endif
