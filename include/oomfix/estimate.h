/* estimate.h — before the run: each phase's GPU memory from the job alone, and whether it fits
 * the card (SPEC §12).
 *
 * The weights are arithmetic from a per-arch table (data/arch-memory.tsv: parameter counts, what
 * the loader holds on the GPU at its worst moment, with and without low_vram). Activations, the
 * LoRA with its optimizer state, sampling and the VAE are coefficients per arch family, calibrated
 * by scripts/calibrate.py on data/fit-points.tsv; both tables are compiled in
 * (src/core/estimate_table.h, written by that script).
 *
 * Pure functions but estimate_query_gpus (estimate_gpu.c, which runs nvidia-smi): no I/O, no
 * allocation in estimate_job (it reads the job's doc), so the UI can call it on every edit; one
 * estimate takes about ten microseconds.
 */
#ifndef OOMFIX_ESTIMATE_H
#define OOMFIX_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oomfix/err.h"
#include "oomfix/job.h"
#include "oomfix/plan.h"

/* The phases in the order the trainer runs them: the baseline sample comes before step 1 (unless
 * train.skip_first_sample), the periodic samples between steps. */
enum est_phase {
	EST_MODEL_LOAD, EST_CACHING, EST_BASELINE_SAMPLE, EST_TRAINING, EST_SAMPLING, EST_NPHASES
};

/* How much stands behind a phase's number: calibrated on enough points of its family and inside
 * their settings; rough (few or no points for that part, or nominal parameter counts);
 * extrapolated (settings far outside the points: a bucket or a clip longer than any of them). */
enum est_basis { EST_CALIBRATED, EST_ROUGH, EST_EXTRAPOLATED, EST_MEASURED };

enum est_verdict { EST_V_UNKNOWN = 0, EST_V_FITS, EST_V_TIGHT, EST_V_NO };

/* The largest estimate (2^60 bytes): values past it saturate there. */
#define EST_BYTES_MAX ((int64_t)1 << 60)

/* What a phase's number is made of (bytes), so that a user, a test and a review can see why a
 * phase is the size it is. Their sum is the phase's bytes. */
struct est_terms {
	int64_t weights;        /* the denoiser's weights on the GPU (quantized or not) */
	int64_t encoders;       /* text encoder(s) and VAE where they stay on the GPU */
	int64_t adapter;        /* the LoRA, its gradients and its optimizer state */
	int64_t activations;    /* what the step keeps for backward, or a sample's working set */
	int64_t vae;            /* the VAE encode or decode at its size */
	int64_t overhead;       /* the CUDA context, the allocator's rounding and workspace */
	int64_t measured;       /* what a measurement of the user's run adds to the model's parts
				 * (negative: it is under them); 0 when none */
};

/* The terms as one list, in this order, for whatever shows them: their JSON ids ("weights",
 * "encoders", "adapter", "activations", "vae", "overhead", "measured") and values. */
#define EST_NTERMS 7
const char *est_term_id(int i);
void est_terms_list(const struct est_terms *t, int64_t v[EST_NTERMS]);

struct est_phase_est {
	bool on;                /* the phase happens (sampling off → false) */
	int64_t bytes;          /* the estimate */
	int64_t low, high;      /* the band: what the estimate's error out of sample has been */
	int points;             /* measured points behind the band */
	enum est_basis basis;
	struct est_terms terms;
};

/* Remarks on what the number leaves out (bits of estimate.notes). */
enum {
	EST_NOTE_ARA = 1u << 0,          /* an accuracy recovery adapter: weights are a lower bound */
	EST_NOTE_FULL_FT = 1u << 1,      /* no network: a full fine-tune, rough */
	EST_NOTE_NOMINAL = 1u << 2,      /* the arch's parameter counts are nominal */
	EST_NOTE_QTYPE = 1u << 3,        /* a qtype the table does not know: 1 byte per weight assumed */
	EST_NOTE_OFFLOAD = 1u << 4,      /* layer offloading: weights mostly in host RAM */
};

/* A measurement of the user's own run that a phase uses (SPEC §12.2, measure.h). */
struct est_measured {
	bool on;
	bool same;              /* the same settings; else nearby (the model's difference added) */
	bool lower;             /* an OOM: it needed at least `bytes`; else a peak it held */
	int64_t bytes;          /* what the run measured */
	int64_t adjusted;       /* carried to these settings */
	int64_t card;           /* its card (bytes), 0 when not known */
	long long at;           /* when (seconds since the epoch) */
	int rows;               /* measurements of this phase at these or nearby settings */
	char differs[96];       /* how its settings differ ("batch 2, 1024 px"), "" when the same */
};

struct estimate {
	bool known;                       /* the arch has a row; false: no number at all */
	char arch[64];                    /* the job's arch */
	const char *row;                  /* the row used ("wan21 1.3b"), static; NULL when unknown */
	const char *family;               /* "flux", "qwen", ... static; NULL when unknown */
	bool counted;                     /* the activations are the arch's own counted ones */
	const char *sim;                  /* the counted arch they come from (a sibling's when
					   * !counted), static */
	struct est_phase_est phase[EST_NPHASES];
	enum est_phase peak;              /* the phase with the largest estimate */
	/* The training peak's parts (bytes), for reports. */
	int64_t weights, adapter, activations, context;
	double counted_gib;               /* the training step's activations as counted (GiB),
					   * before the fitted constants */
	unsigned notes;                   /* EST_NOTE_* */
	struct est_measured measured[EST_NPHASES];
};

/* The job's settings that the estimate reads, read from the job once (est_input_of). The one seam
 * of the model: the C model, scripts/calibrate.py (which builds the same record from each public
 * data point) and the tests all go through it, and the measurement store keeps it with each
 * measurement. Strings are copied, so an input outlives its job. */
struct est_input {
	char arch[64];          /* the job's effective arch (job.c) */
	char variant[16];       /* "-", or the row the model name chooses ("1.3b", "flex") */
	bool quantize;          /* model.quantize */
	char qtype[64];         /* model.qtype ("qfloat8"; an accuracy-recovery adapter after '|') */
	bool quantize_te;       /* model.quantize_te */
	char qtype_te[64];      /* model.qtype_te */
	bool low_vram;          /* model.low_vram, where the arch honours it */
	bool offload;           /* model.layer_offloading, where the arch honours it */
	double offload_tr, offload_te; /* the shares offloaded (0..1) */
	bool assistant;         /* model.assistant_lora_path: an adapter merged in at load */
	double res;             /* the largest bucket's side (pixels) */
	long long frames;       /* the longest clip (1 for images) */
	long long batch;        /* the largest batch */
	bool gc;                /* train.gradient_checkpointing */
	double rank;            /* network.linear; 0: no network (a full fine-tune) */
	char optimizer[32];     /* train.optimizer */
	bool adapter_attn;      /* the adapter is on the attention's projections only */
	bool adapter_bf16;      /* ... and kept in bf16 (other trainers; AI Toolkit keeps fp32) */
	bool te_gpu;            /* the text encoder stays on the GPU while training */
	bool cache_latents;     /* every dataset caches its latents */
	bool control;           /* a control image per sample (its tokens join the sequence) */
	bool sampling;          /* samples are drawn during training */
	bool baseline;          /* ... and once before step 1 */
	double sample_w, sample_h, sample_frames;
	bool guidance;          /* sample.guidance_scale > 1: classifier-free guidance doubles it */
};

/* Reads the input from job j. */
void est_input_of(const struct job *j, struct est_input *in);

/* Estimates every phase of the input. Returns ERR_OK; out->known is false when the arch has no
 * row (then nothing else is set). */
/* The input as text ("arch=flux;variant=-;quantize=1;..."), every field, or without the sizes a
 * nearby run may differ in (res, frames, batch, rank, the sample's) when !shape; returns the
 * length it needs. est_input_parse reads it back: false when a field is missing or bad. */
size_t est_input_key(const struct est_input *in, bool shape, char *buf, size_t sz);
bool est_input_parse(const char *key, struct est_input *in);

int estimate_input(const struct est_input *in, struct estimate *out);

/* est_input_of, then estimate_input. */
/* The estimate of job j: its est_input through the model, corrected by the measurements the
 * user's runs left in the store (measure.h) — what every front end shows. */
int estimate_job(const struct job *j, struct estimate *out);

struct measurement;
/* Corrects e (the model's estimate of `in`) by the measurements m[0..n): for each phase the
 * nearest with the same settings but sizes; the same settings win, nearby ones carry the
 * model's difference; an OOM's lower bound raises the band's floor. */
void estimate_apply_measured(struct estimate *e, const struct est_input *in,
			     const struct measurement *m, size_t n);

/* "training: at least 21.3 GiB measured (an OOM, batch 2, 1024 px)": what phase p takes from a
 * run, for reports; "" when it takes nothing. */
void estimate_measured_words(const struct estimate *e, enum est_phase p, char *buf, size_t sz);

/* The verdict on a card of `card` bytes (SPEC §12): fits (every phase's band top is under it),
 * tight (a band straddles it), no (a phase's band bottom is over it). *at (may be NULL) receives
 * the phase that decides: the peak phase when it fits, else the first phase that does not fit.
 * EST_V_UNKNOWN when the estimate is not known or card <= 0. */
enum est_verdict estimate_verdict(const struct estimate *e, int64_t card, enum est_phase *at);

const char *est_phase_name(enum est_phase p);    /* "model_load", ... (static, stable ids) */
const char *est_phase_label(enum est_phase p);   /* translated */
const char *est_basis_name(enum est_basis b);    /* "calibrated", "rough", "extrapolated" */
const char *est_verdict_name(enum est_verdict v); /* "fits", "tight", "no"; NULL when unknown */
/* The other way, for a reader of these names (the retry's events): false / EST_V_UNKNOWN for a
 * name that is none of them, NULL included. */
bool est_phase_parse(const char *name, enum est_phase *p);
enum est_verdict est_verdict_parse(const char *name);

/* "21.3 GiB" (one decimal). */
void estimate_gib(int64_t bytes, char *buf, size_t sz);

/* The verdict in a few words (translated): "fits", "tight at sampling", "will not fit at model
 * load"; "" when unknown. */
void estimate_verdict_words(enum est_verdict v, enum est_phase at, char *buf, size_t sz);

/* The estimate in one line, for the UI's fit line, its diff screen and each retry try
 * (translated): "peak 21.3 GiB at training, 23.6 GiB card: fits"; without a card (card <= 0)
 * "peak 21.3 GiB at training (--vram gives a verdict)"; an arch without a table row "no estimate
 * for arch 'x' (no memory table)". *verdict and *at (may be NULL) get the verdict. */
void estimate_line(const struct estimate *e, int64_t card, char *buf, size_t sz,
		   enum est_verdict *verdict, enum est_phase *at);
/* The same sentence from its parts (the peak, the card, the verdict at phase `at`), for a reader
 * that has only those: the UI's retry view, from the loop's events. */
/* "training 26.8 GiB = 11.3 weights + ... + 0.5 context and rounding": a phase's terms. */
void estimate_terms_words(const struct estimate *e, enum est_phase p, char *buf, size_t sz);
void estimate_peak_words(int64_t peak_bytes, enum est_phase peak, int64_t card,
			 enum est_verdict v, enum est_phase at, char *buf, size_t sz);

/* The card. `arg` is --vram's value: a bare number is the size a card is sold as (24 → what
 * PyTorch reports for a 24 GB card); a number with a unit (GiB, GB, MiB) is taken as is.
 * *bytes gets the capacity; *table_gib (may be NULL) the table value used, or 0 when a unit was
 * given or the size is not in the table (then 0.98 GiB per sold GB is assumed and *approx set).
 * ERR_USAGE with a sentence in e when it is not a size. */
int estimate_parse_vram(const char *arg, int64_t *bytes, double *table_gib, bool *approx,
			struct err *e);

/* nvidia-smi's answers, read (pure: the CLI runs the program).
 * `gpus`: the output of --query-gpu=index,uuid,name,memory.total,memory.used
 * --format=csv,noheader,nounits; `apps`: --query-compute-apps=gpu_uuid,pid,used_memory
 * --format=csv,noheader,nounits (may be NULL). */
#define EST_MAX_GPUS 16
#define EST_MAX_APPS 16
struct est_gpu {
	int index;
	char uuid[64];
	char name[96];
	int64_t total, used;          /* bytes */
	size_t napps;
	struct { long long pid; int64_t bytes; } app[EST_MAX_APPS];
	int64_t apps_total;
};
struct est_gpus {
	size_t n;
	struct est_gpu gpu[EST_MAX_GPUS];
};
/* ERR_DATA with a sentence when `gpus` holds no card line it can read. Lines of `apps` that
 * name no listed card are ignored. */
int estimate_parse_smi(const char *gpus, const char *apps, struct est_gpus *out, struct err *e);

/* Runs nvidia-smi (from PATH) for the cards and the processes holding them now, and reads its
 * answers. ERR_OK; ERR_UNAVAILABLE when it is not installed; ERR_IOERR when it failed; ERR_DATA
 * when its output holds no card (e->msg says which). The only estimate function that runs a
 * program (tens of milliseconds): the UI asks it once, not on every edit. */
int estimate_query_gpus(struct est_gpus *out, struct err *e);

/* One card for every front end (SPEC §12.2): what other processes hold on the card the job is
 * judged on — nvidia-smi's memory in use on card g now, else what the OOM message m shows held
 * by others (their processes, and memory no process accounts for above half a GiB); 0 when
 * neither says. estimate_verdict_beside: the verdict on what they leave of `card`. */
struct memacct;
int64_t est_card_others(const struct est_gpu *g, const struct memacct *m);
enum est_verdict estimate_verdict_beside(const struct estimate *e, int64_t card, int64_t others,
					 enum est_phase *at);
/* "; with the 6.2 GiB others hold: will not fit at training" when that verdict is
 * not the one alone; "" otherwise. */
void estimate_beside_words(const struct estimate *e, int64_t card, int64_t others, char *buf,
			   size_t sz);

/* The shortest path to a fitting job: the first change that acts on the phase that does not
 * fit (SPEC §3.4's decision, est_next_fix), applied to an in-memory copy of the job and estimated
 * again, until it fits or nothing that acts on that phase is left. A job that is tight takes
 * the next change too while there is one (and stays tight when there is none). */
#define EST_MAX_PATH 16
struct est_step {
	enum fix_id fix;
	enum est_phase phase;         /* the phase it was chosen for */
	struct estimate after;
	enum est_verdict verdict;     /* after the change */
	enum est_phase at;
};
struct est_path {
	size_t n;
	struct est_step step[EST_MAX_PATH];
	bool fits;                    /* the job after the path fits (or is tight) */
	bool exhausted;               /* stopped while it does not fit: nothing left that acts on
				       * the phase */
	enum est_phase stuck;         /* that phase, when exhausted */
	bool short_clip;              /* it ends with a clip under about a second */
	bool low_bucket;              /* it ends with nothing above a 512 bucket */
	struct doc *doc;              /* the job after the path (owned; NULL when n == 0) */
	struct job *job;              /* its typed view (owned; NULL when n == 0) */
};
/* j must have a known estimate. keep_batch as `fix --keep-batch`. ERR_OK, or an error from
 * applying an edit. Free with estimate_path_free. */
/* Frames under which a clip is under about a second (Wan and LTX run at 16 to 25 fps). */
#define EST_SHORT_CLIP 17
/* The shortest path of fixes to a job that fits `card`: at most max_steps (0: no limit). */
int estimate_path(const struct job *j, int64_t card, bool keep_batch, size_t max_steps,
		  struct est_path *out, struct err *e);
void estimate_path_free(struct est_path *p);

/* What an OOM message measured beyond the card (SPEC §12.2): in phase `phase` the job needed at
 * least `bytes` more than the card could give it (held + requested − usable). */
struct est_shortfall {
	enum est_phase phase;
	int64_t bytes;
	int64_t removed;   /* out: what the rungs taken off that phase, by the model */
	bool covered;      /* out: removed >= bytes */
};

/* For retry: a step fix (num_frames, drop_largest_bucket) may go down several rungs at once, to
 * the first rung whose band top fits `card` (every phase's high under it; never when card <= 0)
 * and, with a shortfall `sf` (may be NULL), whose model takes off at least sf->bytes from its
 * phase. When no rung does both, the first that covers the shortfall; when none covers it, the
 * floor (*fits false, sf->covered false). Applies the step to an in-memory copy. *rungs gets the
 * number of rungs (>= 1 when the step changed anything, 0 when it is at its floor already), *fits
 * whether the last rung fits; *out (may be NULL) the job after them (the caller frees it with
 * doc_free; NULL when rungs is 0). ERR_DATA when `step` is not a step fix or does not apply.
 * `phase` is the failed phase (enum diag_phase, 0 when none), as fix_edits_after takes it: after
 * a failed training step a clip fix leaves the previews' frames alone. */
int estimate_rungs(const struct job *j, enum fix_id step, int phase, int64_t card,
		   struct est_shortfall *sf, int *rungs, bool *fits, struct doc **out,
		   struct err *e);

/* The job after n rungs of step fix `step` (fewer when its floor comes first), whatever the
 * estimate: for saying which rung the estimate ruled out. *out as estimate_rungs'. */
int estimate_rung_doc(const struct job *j, enum fix_id step, int n, struct doc **out,
		      struct err *e);

/* The estimate after each step of a rollback order (the Plan teaches the order with it):
 * after[i] is job j with every step of fixes[0..i] that is not done yet applied in turn, as `fix
 * JOB next` would apply them; a step that is done (or that changes nothing) leaves the estimate
 * of the step before it, and *changed[i] (may be NULL) says whether it applied. ERR_OK, or an
 * error from applying an edit (after[] then holds what was reached). */
int estimate_plan_after(const struct job *j, const enum fix_id *fixes, size_t n,
			struct estimate *after, bool *changed, struct err *e);

/* The first fix not yet done that acts on phase `at` of job j (SPEC §3.4: never the batch size
 * for a load), or FIX_NONE. The one place the estimator chooses a change. */
enum fix_id est_next_fix(const struct job *j, enum est_phase at);

#endif
