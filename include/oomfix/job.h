/* job.h — the typed view of an AI Toolkit job over a doc.
 *
 * Reads the fields of the web editor's panels (Training, Datasets, Sample, Model) with their
 * *effective* values: the value written in the file, or the trainer's default when the key is
 * absent (aitk-reference §a). Paths in the field table are relative to config.process[0]; a
 * "datasets[]." prefix means "for each dataset". Knows image vs video (§b).
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

/* One field of a panel, as data. */
struct job_field {
	enum job_panel panel;
	const char *label;       /* the web editor's label, e.g. "Batch Size" (translated at display) */
	const char *path;        /* relative to process[0], e.g. "train.batch_size" or "datasets[].num_frames" */
	const char *legacy_path; /* older spelling read when `path` is absent, or NULL */
	enum job_ftype type;
	const char *def;         /* trainer default as YAML text, or NULL (no default) */
	bool video_only;         /* shown only for video models */
};

extern const struct job_field job_fields[];
extern const size_t job_nfields;

struct job_dataset {
	const char *folder;  /* owned by the doc; may be NULL */
	long long batch_size; bool has_batch_size; /* per-dataset override */
	long long num_frames;                      /* effective (1 when absent) */
	long long res[16]; size_t nres;            /* resolution buckets as written (one int → one bucket) */
	bool cache_latents;                        /* cache_latents_to_disk || cache_latents */
};

struct job {
	const struct doc *doc;           /* not owned */
	const char *process_path;        /* "config.process[0]" */
	const char *name;                /* config.name (owned by the doc) */
	char arch[64];                   /* effective arch: tag stripped, flex1→flux, legacy flags */
	enum job_kind kind;

	/* train */
	long long batch_size;
	long long grad_accum;            /* effective accumulation (either name) */
	bool grad_accum_legacy;          /* the file uses gradient_accumulation_steps */
	bool gradient_checkpointing;     /* effective (absent → true) */
	bool disable_sampling, skip_first_sample;
	long long steps;

	/* datasets */
	struct job_dataset *datasets;    /* owned by the job */
	size_t ndatasets;

	/* sample */
	long long sample_width, sample_height, sample_steps, sample_every, sample_num_frames;
	size_t nprompts;

	/* model */
	bool low_vram, quantize, quantize_te, layer_offloading;
	bool arch_has_low_vram, arch_has_quantize, arch_has_layer_offloading;
};

/* Builds the typed view. ERR_DATA (with line/col) when the document is not a trainer job
 * (job: extract, no config.process, ...). */
int job_from_doc(const struct doc *d, struct job **out, struct err *e);
void job_free(struct job **j);

/* Every batch size 1, gradient checkpointing on, largest bucket <= 768, video frames <= 33. */
bool job_is_conservative(const struct job *j);

/* Largest resolution bucket over all datasets (0 when none). */
long long job_max_bucket(const struct job *j);

/* The displayed value of a field (for dataset `ds` when the field is per-dataset) into buf;
 * *is_default is set when the key is absent and the trainer default is shown.
 * Returns false when the field has no value and no default. */
bool job_field_value(const struct job *j, const struct job_field *f, size_t ds, char *buf,
		     size_t bufsz, bool *is_default);

/* Absolute doc path of a field ("config.process[0].datasets[1].num_frames") into buf. */
void job_field_path(const struct job *j, const struct job_field *f, size_t ds, char *buf,
		    size_t bufsz);

const char *job_kind_name(enum job_kind k); /* "image", "video" or NULL */

#endif
