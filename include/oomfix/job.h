/* job.h — the typed view of an AI Toolkit job over a doc.
 *
 * Reads the fields of the web editor's panels (Training, Datasets, Sample, Model) with their
 * *effective* values: the value written in the file, or the trainer's default when the key is
 * absent (aitk-reference §a). Paths in the field table are relative to config.process[0]; a
 * "datasets[]." prefix means "for each dataset". Knows image vs video (§b).
 *
 * A key written with a null value (`batch_size:` or `~`) counts as absent, as the trainer falls
 * back to its default for it. Every string in a job is owned by the doc (or is a static default)
 * and lives as long as the doc.
 */
#ifndef OOMFIX_JOB_H
#define OOMFIX_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "oomfix/doc.h"
#include "oomfix/err.h"

enum job_kind { JOB_KIND_UNKNOWN = 0, JOB_KIND_IMAGE, JOB_KIND_VIDEO };

enum job_panel { JOB_PANEL_TRAINING, JOB_PANEL_DATASETS, JOB_PANEL_SAMPLE, JOB_PANEL_MODEL,
		 JOB_PANEL_COUNT };

enum job_ftype { JOB_F_INT, JOB_F_FLOAT, JOB_F_BOOL, JOB_F_STR, JOB_F_RESLIST };

/* Arch capabilities a field needs to have any effect (job_field.requires). */
enum {
	JOB_REQ_LOW_VRAM = 1u << 0,         /* the arch honours model.low_vram */
	JOB_REQ_QUANTIZE = 1u << 1,         /* the arch honours model.quantize* */
	JOB_REQ_LAYER_OFFLOADING = 1u << 2, /* the arch honours model.layer_offloading */
};

/* What values a field takes, from the trainer's rules (job_field.rule; job_field_check). */
enum job_rule {
	JOB_RULE_ANY = 0,    /* any value of the field's type */
	JOB_RULE_POS_INT,    /* a whole number >= 1 (batch, steps, sample every, sample steps, fps) */
	JOB_RULE_ACCUM,      /* >= 1; the legacy gradient_accumulation_steps also takes -1 */
	JOB_RULE_POS_FLOAT,  /* a number > 0 (learning rate) */
	JOB_RULE_NONNEG,     /* a number >= 0 (weight decay, guidance scale) */
	JOB_RULE_SIZE16,     /* sample width/height: a multiple of 16, at least 64 */
	JOB_RULE_RES8,       /* resolution buckets: each a multiple of 8, at least 64 */
	JOB_RULE_FRAMES,     /* frames on the model's grid (job_frame_step): 8k+1 LTX, 4k+1 Wan */
	JOB_RULE_TEXT,       /* any text but empty */
	JOB_RULE_OPTIMIZER,  /* a name toolkit/optimizer.py knows */
	JOB_RULE_DTYPE,      /* a name toolkit/train_tools.py get_torch_dtype knows */
	JOB_RULE_SAMPLER,    /* a name toolkit/sampler.py knows */
	JOB_RULE_ARCH,       /* a known arch (a ":tag" is allowed, as the web UI writes) */
};

/* One field of a panel, as data. */
struct job_field {
	enum job_panel panel;
	const char *label;       /* the web editor's label, e.g. "Batch Size" (translated at display) */
	const char *path;        /* relative to process[0], e.g. "train.batch_size" or "datasets[].num_frames" */
	const char *legacy_path; /* older spelling read when `path` is absent, or NULL */
	enum job_ftype type;
	const char *def;         /* trainer default as YAML text, or NULL (no default) */
	bool video_only;         /* shown only for video models */
	/* When the key is absent, the value of this other field applies instead of `def`
	 * (datasets[].batch_size → train.batch_size, model.quantize_te → model.quantize), or NULL. */
	const char *fallback_path;
	unsigned requires;       /* JOB_REQ_* the arch must have for the field to matter */
	enum job_rule rule;      /* the values the trainer takes, beyond the type */
};

extern const struct job_field job_fields[];
extern const size_t job_nfields;

/* Label of the Sample panel's read-only prompt count (untranslated, like the field labels;
 * the value is job_prompt_count). */
extern const char job_prompts_label[];

#define JOB_MAX_RES 16
#define JOB_MAX_DATASETS 4096  /* more is refused (ERR_DATA) */
#define JOB_MAX_PROMPTS 65536  /* sample.samples items kept in job.prompts (all are counted) */

struct job_dataset {
	const char *folder;  /* owned by the doc; may be NULL */
	long long batch_size; bool has_batch_size; /* per-dataset override */
	long long num_frames;                      /* effective (1 when absent) */
	long long res[JOB_MAX_RES]; size_t nres;   /* resolution buckets as written (one int → one
						      bucket; absent → the default 512) */
	bool cache_latents;                        /* cache_latents_to_disk || cache_latents */

	/* Raw presence, for the fixes. */
	bool has_num_frames;        /* num_frames written */
	bool has_resolution;        /* resolution written (else res = {512}) */
	bool res_is_list;           /* resolution written as a list (flow or block) */
	bool res_truncated;         /* more than JOB_MAX_RES buckets: res holds the first ones */
	long long res_max;          /* largest bucket over the whole list (even when truncated) */
	bool auto_frame_count;      /* auto_frame_count: true (unbounded frames) */
	bool cache_latents_to_disk; /* the two keys apart */
	bool cache_latents_ram;
	const struct doc_node *node; /* the dataset's mapping (owned by the doc) */
};

/* One item of sample.samples (per-prompt overrides; 0/false when not written). */
struct job_prompt {
	long long width, height, num_frames;
	bool has_width, has_height, has_num_frames;
};

struct job {
	const struct doc *doc;           /* not owned */
	const char *process_path;        /* "config.process[0]" */
	const struct doc_node *process;  /* that mapping (owned by the doc) */
	const char *name;                /* config.name (owned by the doc) */
	char arch[64];                   /* effective arch: tag stripped, flex1→flux, legacy flags */
	enum job_kind kind;

	/* train */
	long long batch_size;
	long long grad_accum;            /* effective accumulation (either name): the one > 1, else 1;
					    -1 when the legacy key asks for a whole epoch */
	bool grad_accum_legacy;          /* the legacy gradient_accumulation_steps is the key in effect
					    (written, and gradient_accumulation absent or <= 1 while
					    the legacy one is > 1): a fix should write that key */
	bool gradient_checkpointing;     /* effective (absent → true) */
	bool disable_sampling, skip_first_sample;
	long long steps;

	/* datasets */
	struct job_dataset *datasets;    /* owned by the job */
	size_t ndatasets;

	/* sample */
	long long sample_width, sample_height, sample_steps, sample_every, sample_num_frames;
	size_t nprompts;                 /* sample.samples count, else sample.prompts count */

	/* model */
	bool low_vram, quantize, quantize_te, layer_offloading;
	bool arch_has_low_vram, arch_has_quantize, arch_has_layer_offloading;

	/* --- Raw presence and extra values, for the fixes and the UI. --- */
	const char *arch_written;        /* model.arch as written (tag kept), or NULL */
	const char *dtype;               /* train.dtype effective ("fp32" when absent) */
	const char *qtype;               /* model.qtype effective ("qfloat8" when absent) */
	bool has_batch_size_key;         /* train.batch_size written */
	bool has_gradient_checkpointing_key;
	bool has_dtype_key;
	bool has_grad_accum_key;         /* train.gradient_accumulation written */
	bool has_grad_accum_steps_key;   /* train.gradient_accumulation_steps written */
	long long grad_accum_new;        /* gradient_accumulation (1 when absent) */
	long long grad_accum_steps;      /* gradient_accumulation_steps (1 when absent) */
	bool has_disable_sampling_key;

	bool has_sample;                 /* a sample: section exists */
	bool has_sample_width_key, has_sample_height_key, has_sample_steps_key,
	     has_sample_every_key, has_sample_num_frames_key;
	long long sample_fps;            /* effective (16 when absent) */
	bool prompts_legacy;             /* the prompt count comes from sample.prompts */
	struct job_prompt *prompts;      /* sample.samples items (owned by the job); NULL with legacy
					    prompts, which carry no sizes */
	size_t nprompt_items;            /* entries in `prompts`: nprompts, capped at JOB_MAX_PROMPTS */

	bool has_low_vram_key, has_quantize_key, has_quantize_te_key, has_layer_offloading_key;
	bool layer_offloading_legacy;    /* only the deprecated model.auto_memory is written */
};

/* Builds the typed view. ERR_DATA (with line/col) when the document is not a trainer job
 * (job: extract, no config.process, ...) or a memory-relevant value has the wrong type.
 * On success *out is a new job the caller frees with job_free; it borrows `d`, which must
 * outlive it. */
int job_from_doc(const struct doc *d, struct job **out, struct err *e);

/* Frees the job and sets *j to NULL. Safe on NULL. */
void job_free(struct job **j);

/* Every batch size 1, gradient checkpointing on, largest bucket <= 768, and for video every
 * dataset's num_frames <= 33 with no auto_frame_count. */
bool job_is_conservative(const struct job *j);

/* Largest resolution bucket over all datasets (0 when none). */
long long job_max_bucket(const struct job *j);

/* The model's frame grid: 4 for Wan/MiniMax (4k+1 frames), 8 for LTX-2 (8k+1), 1 for a video
 * job whose grid is unknown (any count), 0 for an image job. */
int job_frame_step(const struct job *j);

/* The displayed value of a field (for dataset `ds` when the field is per-dataset) into buf;
 * *is_default is set when the key is absent and the trainer default is shown.
 * Returns false when the field has no value and no default. */
bool job_field_value(const struct job *j, const struct job_field *f, size_t ds, char *buf,
		     size_t bufsz, bool *is_default);

/* Absolute doc path of a field ("config.process[0].datasets[1].num_frames") into buf. When the
 * file holds the field under its legacy name (and that is the one in effect), the legacy path is
 * given, so an edit changes the key the trainer reads. */
void job_field_path(const struct job *j, const struct job_field *f, size_t ds, char *buf,
		    size_t bufsz);

/* True when the field matters for this job's model: video-only fields on video jobs, Low VRAM,
 * Quantize and Layer Offloading only where the arch honours them. */
bool job_field_applies(const struct job *j, const struct job_field *f);

/* The field whose `path` is exactly `path`, or NULL. Points into job_fields. */
const struct job_field *job_field_find(const char *path);

/* Checks `text`, a value typed for field f (YAML scalar text: "4", "1e-4", "true", "adamw",
 * "[512, 768]" for resolutions), against the field's type and rule; j (may be NULL) gives the
 * model's frame grid and whether the legacy accumulation key is in effect. An empty text is
 * accepted: it removes the key. Returns ERR_OK, or ERR_DATA with e->msg a translated sentence
 * naming the field and the rule, e.g. "Batch Size must be a whole number of at least 1". */
int job_field_check(const struct job *j, const struct job_field *f, const char *text,
		    struct err *e);

/* The rule of field f as a short translated phrase ("a whole number of at least 1") into buf. */
void job_field_rule(const struct job *j, const struct job_field *f, char *buf, size_t bufsz);

/* What field f does to GPU memory, in one translated sentence (static; never NULL). */
const char *job_field_memory(const struct job_field *f);

/* The field an absolute doc path names ("config.process[0].datasets[2].num_frames", or the
 * legacy spelling), for job j; NULL when the path is not a panel field. *ds (may be NULL)
 * receives the dataset index of a per-dataset field. */
const struct job_field *job_field_at(const struct job *j, const char *abs_path, size_t *ds);

/* Number of sample prompts (sample.samples wins over the legacy sample.prompts); *legacy, when
 * not NULL, says the count came from sample.prompts. */
size_t job_prompt_count(const struct job *j, bool *legacy);

const char *job_kind_name(enum job_kind k); /* "image", "video" or NULL (static strings) */

/* The model kind of a file that is not a valid job but whose config.process[0].model.arch can
 * still be read (a misspelt top key such as `jobs:`): the arch's kind, or JOB_KIND_UNKNOWN when
 * there is no known arch. Never fails. */
enum job_kind job_kind_guess(const struct doc *d);

#endif
