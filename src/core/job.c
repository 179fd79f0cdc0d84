/* job.c — the typed view of an AI Toolkit job (see job.h).
 *
 * Everything is read through doc_map_get, so anchors, aliases and merge keys resolve exactly as
 * the trainer's YAML loader resolves them. Defaults are the trainer's (config_modules.py), not
 * the web UI's: a hand-written file that omits a key gets what the trainer uses.
 */
#include "oomfix/job.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "oomfix/i18n.h"
#include "oomfix/text.h"

#define PROCESS_PATH "config.process[0]"
#define DS_PREFIX "datasets[]."

/* ---- What each arch is and honours (aitk-reference §b, §c.2) ---- */

enum {
	A_VIDEO = 1u << 0,
	A_LOW_VRAM = 1u << 1,
	A_LAYER_OFFLOAD = 1u << 2,
	A_QUANTIZE = 1u << 3,
};

struct arch_info {
	const char *name; /* the stripped Python arch string (plus the UI's sd15) */
	unsigned flags;
	int frame_step;   /* video frame grid: 4k+1 or 8k+1; 0 for image */
};

/* Every arch the trainer knows, with what its model class honours — read in the trainer's source,
 * not from which checkboxes the web UI shows. The legacy StableDiffusion path quantizes only SD3,
 * PixArt, FLUX and Lumina2, and honours low_vram for FLUX and SD3 (it keeps the transformer on
 * the CPU while quantizing; toolkit/stable_diffusion_model.py load_model); every extension model
 * honours `quantize`. low_vram: also OmniGen2 and Zeta Chroma, whose checkbox the UI hides.
 * Layer offloading: only the classes that attach the memory manager (Wan 2.1 does, the UI hides
 * it; ACE-Step raises NotImplementedError and Boogu and PRX Pixel ignore it, though the UI shows
 * it). An arch missing here is unknown: it falls back to the legacy class, so it gets no
 * capability and its kind comes from the hints. */
static const struct arch_info arch_table[] = {
	/* legacy */
	{ "sd1", 0, 0 },
	{ "sd15", 0, 0 },
	{ "sd2", 0, 0 },
	{ "sd3", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "sdxl", 0, 0 },
	{ "pixart", A_QUANTIZE, 0 },
	{ "pixart_sigma", A_QUANTIZE, 0 },
	{ "auraflow", 0, 0 },
	{ "flux", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "lumina2", A_QUANTIZE, 0 },
	{ "vega", 0, 0 },
	{ "ssd", 0, 0 },
	/* built-in and extension models */
	{ "wan21", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 4 },
	{ "wan21_i2v", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 4 },
	{ "wan22_14b", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 4 },
	{ "wan22_14b_i2v", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 4 },
	{ "wan22_5b", A_VIDEO | A_QUANTIZE | A_LOW_VRAM, 4 },
	{ "ltx2", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 8 },
	{ "ltx2.3", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 8 },
	{ "ltx2.5", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 8 },
	{ "minimax_h3", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 4 },
	{ "minimax_h3_ref2va", A_VIDEO | A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 4 },
	{ "cogview4", A_QUANTIZE, 0 },
	{ "ace_step_15", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "ace_step_15_xl", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "anima", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "boogu_image", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "boogu_image_edit", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "chroma", A_QUANTIZE, 0 },
	{ "chroma_radiance", A_QUANTIZE, 0 },
	{ "ernie_image", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "example", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "f-lite", A_QUANTIZE, 0 },
	{ "flex2", A_QUANTIZE, 0 },
	{ "flux2", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "flux2_klein_4b", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "flux2_klein_9b", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "flux_kontext", A_QUANTIZE, 0 },
	{ "hidream", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "hidream_e1", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "hidream_o1", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "ideogram4", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "krea2", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "mageflow", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "mageflow_edit", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "nucleus_image", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "omnigen2", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "prx_pixel", A_QUANTIZE | A_LOW_VRAM, 0 },
	{ "qwen_image", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "qwen_image_edit", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "qwen_image_edit_plus", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "zimage", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "zimage_l2p", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
	{ "zeta_chroma", A_QUANTIZE | A_LOW_VRAM | A_LAYER_OFFLOAD, 0 },
};

/* Legacy model flags, in the order the trainer tries them when `arch` is absent. */
static const struct {
	const char *key, *arch;
} legacy_flags[] = {
	{ "is_v2", "sd2" },         { "is_v3", "sd3" },
	{ "is_xl", "sdxl" },        { "is_pixart", "pixart" },
	{ "is_pixart_sigma", "pixart_sigma" },
	{ "is_auraflow", "auraflow" },
	{ "is_flux", "flux" },      { "is_lumina2", "lumina2" },
	{ "is_vega", "vega" },      { "is_ssd", "ssd" },
};

static const struct arch_info *arch_find(const char *name)
{
	for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
		if (strcmp(arch_table[i].name, name) == 0)
			return &arch_table[i];
	return NULL;
}

/* ---- The panels (SPEC §6, aitk-reference §c.3) ---- */

/* A member left out is NULL, false or 0: no legacy spelling, no default, every model, no
 * fallback, no arch requirement. */
const struct job_field job_fields[] = {
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Batch Size"), .path = "train.batch_size",
	  .type = JOB_F_INT, .def = "1", .rule = JOB_RULE_POS_INT },
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Gradient Accumulation"),
	  .path = "train.gradient_accumulation", .legacy_path = "train.gradient_accumulation_steps",
	  .type = JOB_F_INT, .def = "1", .rule = JOB_RULE_ACCUM },
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Steps"), .path = "train.steps",
	  .type = JOB_F_INT, .def = "1000", .rule = JOB_RULE_POS_INT },
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Optimizer"), .path = "train.optimizer",
	  .type = JOB_F_STR, .def = "adamw", .rule = JOB_RULE_OPTIMIZER },
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Learning Rate"), .path = "train.lr",
	  .type = JOB_F_FLOAT, .def = "1e-6", .rule = JOB_RULE_POS_FLOAT },
	/* No default: the optimizer's own applies. */
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Weight Decay"),
	  .path = "train.optimizer_params.weight_decay", .type = JOB_F_FLOAT,
	  .rule = JOB_RULE_NONNEG },
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Unload TE"),
	  .path = "train.unload_text_encoder", .type = JOB_F_BOOL, .def = "false",
	  .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Cache Text Embeddings"),
	  .path = "train.cache_text_embeddings", .type = JOB_F_BOOL, .def = "false",
	  .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Gradient Checkpointing"),
	  .path = "train.gradient_checkpointing", .type = JOB_F_BOOL, .def = "true",
	  .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_TRAINING, .label = N_("Data Type"), .path = "train.dtype",
	  .type = JOB_F_STR, .def = "fp32", .rule = JOB_RULE_DTYPE },

	{ .panel = JOB_PANEL_DATASETS, .label = N_("Target Dataset"),
	  .path = "datasets[].folder_path", .type = JOB_F_STR, .rule = JOB_RULE_TEXT },
	{ .panel = JOB_PANEL_DATASETS, .label = N_("Batch Size"), .path = "datasets[].batch_size",
	  .type = JOB_F_INT, .fallback_path = "train.batch_size", .rule = JOB_RULE_POS_INT },
	{ .panel = JOB_PANEL_DATASETS, .label = N_("Num Frames"), .path = "datasets[].num_frames",
	  .type = JOB_F_INT, .def = "1", .video_only = true, .rule = JOB_RULE_FRAMES },
	{ .panel = JOB_PANEL_DATASETS, .label = N_("Cache Latents"),
	  .path = "datasets[].cache_latents_to_disk", .type = JOB_F_BOOL, .def = "false",
	  .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_DATASETS, .label = N_("Resolutions"), .path = "datasets[].resolution",
	  .type = JOB_F_RESLIST, .def = "512", .rule = JOB_RULE_RES8 },

	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Sample Every"), .path = "sample.sample_every",
	  .type = JOB_F_INT, .def = "100", .rule = JOB_RULE_POS_INT },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Sampler"), .path = "sample.sampler",
	  .type = JOB_F_STR, .def = "ddpm", .rule = JOB_RULE_SAMPLER },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Guidance Scale"), .path = "sample.guidance_scale",
	  .type = JOB_F_FLOAT, .def = "7", .rule = JOB_RULE_NONNEG },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Sample Steps"), .path = "sample.sample_steps",
	  .type = JOB_F_INT, .def = "20", .rule = JOB_RULE_POS_INT },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Width"), .path = "sample.width",
	  .type = JOB_F_INT, .def = "512", .rule = JOB_RULE_SIZE16 },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Height"), .path = "sample.height",
	  .type = JOB_F_INT, .def = "512", .rule = JOB_RULE_SIZE16 },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Num Frames"), .path = "sample.num_frames",
	  .type = JOB_F_INT, .def = "1", .video_only = true, .rule = JOB_RULE_FRAMES },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("FPS"), .path = "sample.fps", .type = JOB_F_INT,
	  .def = "16", .video_only = true, .rule = JOB_RULE_POS_INT },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Seed"), .path = "sample.seed", .type = JOB_F_INT,
	  .def = "0", .rule = JOB_RULE_ANY },
	/* These two live in the Sample card but are stored under train. */
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Skip First Sample"),
	  .path = "train.skip_first_sample", .type = JOB_F_BOOL, .def = "false",
	  .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_SAMPLE, .label = N_("Disable Sampling"),
	  .path = "train.disable_sampling", .type = JOB_F_BOOL, .def = "false",
	  .rule = JOB_RULE_ANY },

	/* No default: derived from the legacy is_* flags (job_field_value shows the result). */
	{ .panel = JOB_PANEL_MODEL, .label = N_("Model Architecture"), .path = "model.arch",
	  .type = JOB_F_STR, .rule = JOB_RULE_ARCH },
	{ .panel = JOB_PANEL_MODEL, .label = N_("Name or Path"), .path = "model.name_or_path",
	  .type = JOB_F_STR, .rule = JOB_RULE_TEXT },
	{ .panel = JOB_PANEL_MODEL, .label = N_("Low VRAM"), .path = "model.low_vram",
	  .type = JOB_F_BOOL, .def = "false", .requires = JOB_REQ_LOW_VRAM, .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_MODEL, .label = N_("Quantize"), .path = "model.quantize",
	  .type = JOB_F_BOOL, .def = "false", .requires = JOB_REQ_QUANTIZE, .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_MODEL, .label = N_("Quantize Type"), .path = "model.qtype",
	  .type = JOB_F_STR, .def = "qfloat8", .requires = JOB_REQ_QUANTIZE, .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_MODEL, .label = N_("Quantize Text Encoder"),
	  .path = "model.quantize_te", .type = JOB_F_BOOL, .fallback_path = "model.quantize",
	  .requires = JOB_REQ_QUANTIZE, .rule = JOB_RULE_ANY },
	{ .panel = JOB_PANEL_MODEL, .label = N_("Layer Offloading"),
	  .path = "model.layer_offloading", .legacy_path = "model.auto_memory", .type = JOB_F_BOOL,
	  .def = "false", .requires = JOB_REQ_LAYER_OFFLOADING, .rule = JOB_RULE_ANY },
};

const size_t job_nfields = sizeof job_fields / sizeof job_fields[0];

/* The web editor's "Sample Prompts (N)" heading, without the count. */
const char job_prompts_label[] = N_("Sample Prompts");

/* ---- Reading nodes ---- */

/* A present, non-null value: the trainer treats `key: ~` like a missing key. */
static const struct doc_node *present(const struct doc_node *n)
{
	if (!n)
		return NULL;
	n = doc_deref(n);
	if (!n || (n->kind == DOC_SCALAR && doc_is_null(n)))
		return NULL;
	return n;
}

static const struct doc_node *child(const struct doc_node *map, const char *key)
{
	if (!map)
		return NULL;
	map = doc_deref(map);
	if (!map || map->kind != DOC_MAP)
		return NULL;
	return present(doc_map_get(map, key));
}

/* Follows a dotted relative path ("train.optimizer_params.weight_decay") from `base`. */
static const struct doc_node *walk(const struct doc_node *base, const char *rel)
{
	char seg[128];
	const struct doc_node *n = base;

	while (n && *rel) {
		size_t len = strcspn(rel, ".");
		if (len >= sizeof seg)
			return NULL;
		memcpy(seg, rel, len);
		seg[len] = '\0';
		n = child(n, seg);
		rel += len;
		if (*rel == '.')
			rel++;
	}
	return n;
}

static bool node_long(const struct doc_node *n, long long *out)
{
	double v;

	if (doc_as_long(n, out))
		return true;
	/* `2.0` is a float to YAML but a whole number to the trainer's arithmetic. */
	if (doc_as_double(n, &v) && v >= -9e15 && v <= 9e15 && v == (double)(long long)v) {
		*out = (long long)v;
		return true;
	}
	return false;
}

static bool node_bool(const struct doc_node *n, bool *out)
{
	long long v;

	if (doc_as_bool(n, out))
		return true;
	/* Python truthiness: `1` and `0` work as switches. */
	if (n->kind == DOC_SCALAR && n->style == DOC_PLAIN && doc_as_long(n, &v)) {
		*out = v != 0;
		return true;
	}
	return false;
}

struct shown {
	char s[80];
};

/* How a wrong value is named in an error: the scalar in quotes, clipped, with control bytes made
 * harmless (the message reaches a terminal), or what the collection is. Use as shown(n).s. */
static struct shown shown(const struct doc_node *n)
{
	struct shown out;
	size_t o = 0, max = sizeof out.s - 5;
	const char *v;

	if (!n) {
		snprintf(out.s, sizeof out.s, "null");
		return out;
	}
	if (n->kind != DOC_SCALAR) {
		snprintf(out.s, sizeof out.s, "%s", n->kind == DOC_MAP ? _("a mapping") : _("a list"));
		return out;
	}
	/* The message reaches a terminal: sanitize, then clip to what fits between the quotes. */
	char clean[4 * sizeof out.s];
	v = n->value ? n->value : "";
	size_t cl = text_visible(v, strlen(v), clean, sizeof clean);
	size_t fit = cl < max - 1 ? cl : max - 1;
	while (fit > 0 && fit < cl && ((unsigned char)clean[fit] & 0xC0) == 0x80)
		fit--; /* clip on a character boundary */
	out.s[o++] = '\'';
	memcpy(out.s + o, clean, fit);
	o += fit;
	if (fit < cl || cl >= sizeof clean - 1) {
		memcpy(out.s + o, "...", 3);
		o += 3;
	}
	out.s[o++] = '\'';
	out.s[o] = '\0';
	return out;
}

/* Reading state: the first error wins and later reads become no-ops. */
struct rd {
	const struct doc *d;
	struct err *e;
	int rc;
	char where[256]; /* absolute path of the section being read, for messages */
};

static void rd_fail_node(struct rd *r, const struct doc_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void rd_fail_node(struct rd *r, const struct doc_node *n, const char *fmt, ...)
{
	va_list ap;

	if (r->rc != ERR_OK)
		return;
	va_start(ap, fmt);
	r->rc = err_vset(r->e, ERR_DATA, doc_name(r->d), n ? n->span.line : 0, n ? n->span.col : 0,
			 fmt, ap);
	va_end(ap);
}

static void rd_path(const struct rd *r, const char *key, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s.%s", r->where, key);
}

/* Reads an integer at `key` of `base`; `def` when absent. Returns whether the key is written. */
static bool rd_int(struct rd *r, const struct doc_node *base, const char *key, long long def,
		   long long min, long long *out)
{
	const struct doc_node *n = walk(base, key);
	char path[320];

	*out = def;
	if (!n)
		return false;
	rd_path(r, key, path, sizeof path);
	if (!node_long(n, out)) {
		rd_fail_node(r, n, _("%s: expected a whole number, found %s"), path, shown(n).s);
		*out = def;
	} else if (*out < min) {
		rd_fail_node(r, n, _("%s: must be at least %lld, found %lld"), path, min, *out);
		*out = def;
	}
	return true;
}

static bool rd_bool(struct rd *r, const struct doc_node *base, const char *key, bool def,
		    bool *out)
{
	const struct doc_node *n = walk(base, key);
	char path[320];

	*out = def;
	if (!n)
		return false;
	if (!node_bool(n, out)) {
		rd_path(r, key, path, sizeof path);
		rd_fail_node(r, n, _("%s: expected true or false, found %s"), path, shown(n).s);
		*out = def;
	}
	return true;
}

static bool rd_str(struct rd *r, const struct doc_node *base, const char *key, const char *def,
		   const char **out)
{
	const struct doc_node *n = walk(base, key);
	char path[320];

	*out = def;
	if (!n)
		return false;
	if (n->kind != DOC_SCALAR) {
		rd_path(r, key, path, sizeof path);
		rd_fail_node(r, n, _("%s: expected text, found %s"), path, shown(n).s);
		return true;
	}
	*out = n->value;
	return true;
}

/* A section that must be a mapping when present (train, sample, model). */
static const struct doc_node *rd_section(struct rd *r, const struct doc_node *p0, const char *key)
{
	const struct doc_node *n = child(p0, key);
	char path[320];

	if (n && n->kind != DOC_MAP) {
		rd_path(r, key, path, sizeof path);
		rd_fail_node(r, n, _("%s: expected a mapping, found %s"), path, shown(n).s);
		return NULL;
	}
	return n;
}

/* ---- Finding process[0] ---- */

static int not_a_job(const struct doc *d, struct err *e, const struct doc_node *near,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int not_a_job(const struct doc *d, struct err *e, const struct doc_node *near,
		     const char *fmt, ...)
{
	va_list ap;
	int line = near ? near->span.line : 1, col = near ? near->span.col : 1;

	va_start(ap, fmt);
	err_vset(e, ERR_DATA, doc_name(d), line, col, fmt, ap);
	va_end(ap);
	return ERR_DATA;
}

static int find_process(const struct doc *d, const struct doc_node **out, struct err *e)
{
	const struct doc_node *root = doc_root(d), *kind, *config, *proc, *p0;

	root = root ? doc_deref(root) : NULL;
	if (!root || root->kind != DOC_MAP)
		return not_a_job(d, e, root, _("not an AI Toolkit job: the file holds no mapping "
						"with a 'job' key"));
	kind = child(root, "job");
	if (!kind)
		return not_a_job(d, e, root, _("not an AI Toolkit job: the 'job' key is missing"));
	if (kind->kind != DOC_SCALAR)
		return not_a_job(d, e, kind, _("'job' must be text such as 'extension', found %s"),
				 shown(kind).s);
	if (strcmp(kind->value, "extract") == 0 || strcmp(kind->value, "generate") == 0 ||
	    strcmp(kind->value, "mod") == 0)
		return not_a_job(d, e, kind, _("this is a %s job, not a training job"), shown(kind).s);
	if (strcmp(kind->value, "extension") != 0 && strcmp(kind->value, "train") != 0)
		return not_a_job(d, e, kind, _("unknown job kind %s (a training job says "
					       "'job: extension')"), shown(kind).s);

	config = child(root, "config");
	if (!config)
		return not_a_job(d, e, root, _("not a training job: the 'config' section is missing"));
	if (config->kind != DOC_MAP)
		return not_a_job(d, e, config, _("'config' must be a mapping, found %s"),
				 shown(config).s);
	proc = child(config, "process");
	if (!proc)
		return not_a_job(d, e, config, _("not a training job: 'config.process' is missing"));
	if (proc->kind != DOC_SEQ)
		return not_a_job(d, e, proc, _("'config.process' must be a list, found %s"),
				 shown(proc).s);
	if (proc->n == 0)
		return not_a_job(d, e, proc, _("'config.process' is an empty list: there is no "
					       "training process"));
	p0 = present(proc->items[0]);
	if (!p0 || p0->kind != DOC_MAP)
		return not_a_job(d, e, p0 ? p0 : proc,
				 _("'config.process[0]' must be a mapping of the trainer's "
				   "settings"));
	*out = p0;
	return ERR_OK;
}

/* ---- Building the job ---- */

static void read_arch(struct rd *r, struct job *j, const struct doc_node *model)
{
	const char *written = NULL;

	snprintf(r->where, sizeof r->where, PROCESS_PATH ".model");
	rd_str(r, model, "arch", NULL, &written);
	j->arch_written = written;
	if (written && *written) {
		size_t len = strcspn(written, ":");
		if (len >= sizeof j->arch)
			len = sizeof j->arch - 1;
		memcpy(j->arch, written, len);
		j->arch[len] = '\0';
		if (strcmp(j->arch, "flex1") == 0)
			snprintf(j->arch, sizeof j->arch, "flux");
	}
	if (!j->arch[0]) {
		snprintf(j->arch, sizeof j->arch, "sd1");
		for (size_t i = 0; i < sizeof legacy_flags / sizeof legacy_flags[0]; i++) {
			bool on;
			rd_bool(r, model, legacy_flags[i].key, false, &on);
			if (on) {
				snprintf(j->arch, sizeof j->arch, "%s", legacy_flags[i].arch);
				break;
			}
		}
	}
}

static void read_train(struct rd *r, struct job *j, const struct doc_node *train)
{
	long long ga, gas;
	const struct doc_node *n;

	snprintf(r->where, sizeof r->where, PROCESS_PATH ".train");
	j->has_batch_size_key = rd_int(r, train, "batch_size", 1, 1, &j->batch_size);
	j->has_grad_accum_key = rd_int(r, train, "gradient_accumulation", 1, 1, &ga);
	/* The legacy key also takes -1 ("a whole epoch"); 0 is meaningless. */
	j->has_grad_accum_steps_key =
		rd_int(r, train, "gradient_accumulation_steps", 1, -1, &gas);
	n = walk(train, "gradient_accumulation_steps");
	if (j->has_grad_accum_steps_key && gas == 0)
		rd_fail_node(r, n, _("%s.gradient_accumulation_steps: must be at least 1 (or -1 "
				     "for a whole epoch), found 0"), r->where);
	j->grad_accum_new = ga;
	j->grad_accum_steps = gas;
	if (ga > 1)
		j->grad_accum = ga;
	else if (gas > 1 || gas == -1)
		j->grad_accum = gas;
	else
		j->grad_accum = 1;
	j->grad_accum_legacy = j->has_grad_accum_steps_key &&
			       (!j->has_grad_accum_key || (ga <= 1 && (gas > 1 || gas == -1)));

	j->has_gradient_checkpointing_key =
		rd_bool(r, train, "gradient_checkpointing", true, &j->gradient_checkpointing);
	j->has_disable_sampling_key =
		rd_bool(r, train, "disable_sampling", false, &j->disable_sampling);
	rd_bool(r, train, "skip_first_sample", false, &j->skip_first_sample);
	rd_int(r, train, "steps", 1000, 0, &j->steps);
	j->has_dtype_key = rd_str(r, train, "dtype", "fp32", &j->dtype);
}

static void read_resolution(struct rd *r, struct job_dataset *ds, const struct doc_node *dsn)
{
	const struct doc_node *n = child(dsn, "resolution");
	long long v;

	ds->has_resolution = n != NULL;
	if (!n) {
		ds->res[0] = ds->res_max = 512;
		ds->nres = 1;
		return;
	}
	if (n->kind == DOC_SCALAR) {
		rd_int(r, dsn, "resolution", 512, 1, &v);
		ds->res[0] = ds->res_max = v;
		ds->nres = 1;
		return;
	}
	if (n->kind != DOC_SEQ) {
		rd_fail_node(r, n, _("%s.resolution: expected a number or a list of numbers, "
				     "found %s"), r->where, shown(n).s);
		return;
	}
	ds->res_is_list = true;
	for (size_t i = 0; i < n->n; i++) {
		const struct doc_node *it = present(n->items[i]);
		if (!it || !node_long(it, &v) || v < 1) {
			rd_fail_node(r, it ? it : n, _("%s.resolution[%zu]: expected a positive "
						       "whole number, found %s"),
				     r->where, i, shown(it).s);
			return;
		}
		if (ds->nres < JOB_MAX_RES)
			ds->res[ds->nres++] = v;
		else
			ds->res_truncated = true;
		if (v > ds->res_max)
			ds->res_max = v;
	}
}

static void read_datasets(struct rd *r, struct job *j, const struct doc_node *p0)
{
	const struct doc_node *list = child(p0, "datasets");

	if (!list)
		return;
	if (list->kind != DOC_SEQ) {
		rd_fail_node(r, list, _("%s.datasets: expected a list, found %s"), PROCESS_PATH,
			     shown(list).s);
		return;
	}
	if (list->n == 0)
		return;
	/* Aliases let a small file list millions of datasets; no real job comes near this. */
	if (list->n > JOB_MAX_DATASETS) {
		rd_fail_node(r, list, _("%s.datasets: %zu datasets, more than the %d this program "
					"reads"), PROCESS_PATH, list->n, JOB_MAX_DATASETS);
		return;
	}
	j->datasets = calloc(list->n, sizeof *j->datasets);
	if (!j->datasets) {
		r->rc = err_set(r->e, ERR_SOFTWARE, doc_name(r->d), 0, 0, _("out of memory"));
		return;
	}
	for (size_t i = 0; i < list->n && r->rc == ERR_OK; i++) {
		struct job_dataset *ds = &j->datasets[j->ndatasets++];
		const struct doc_node *dsn = present(list->items[i]);

		snprintf(r->where, sizeof r->where, PROCESS_PATH ".datasets[%zu]", i);
		if (!dsn || dsn->kind != DOC_MAP) {
			rd_fail_node(r, dsn ? dsn : list, _("%s: expected a mapping, found %s"),
				     r->where, shown(dsn).s);
			break;
		}
		ds->node = dsn;
		rd_str(r, dsn, "folder_path", NULL, &ds->folder);
		ds->has_batch_size = rd_int(r, dsn, "batch_size", j->batch_size, 1, &ds->batch_size);
		ds->has_num_frames = rd_int(r, dsn, "num_frames", 1, 1, &ds->num_frames);
		rd_bool(r, dsn, "auto_frame_count", false, &ds->auto_frame_count);
		rd_bool(r, dsn, "cache_latents_to_disk", false, &ds->cache_latents_to_disk);
		rd_bool(r, dsn, "cache_latents", false, &ds->cache_latents_ram);
		ds->cache_latents = ds->cache_latents_to_disk || ds->cache_latents_ram;
		read_resolution(r, ds, dsn);
	}
}

static void read_prompts(struct rd *r, struct job *j, const struct doc_node *sample)
{
	const struct doc_node *samples = child(sample, "samples"), *legacy;

	if (samples) {
		if (samples->kind != DOC_SEQ) {
			rd_fail_node(r, samples, _("%s.samples: expected a list, found %s"), r->where,
				     shown(samples).s);
			return;
		}
		j->nprompts = samples->n;
		if (!samples->n)
			return;
		j->nprompt_items = samples->n < JOB_MAX_PROMPTS ? samples->n : JOB_MAX_PROMPTS;
		j->prompts = calloc(j->nprompt_items, sizeof *j->prompts);
		if (!j->prompts) {
			j->nprompt_items = 0;
			r->rc = err_set(r->e, ERR_SOFTWARE, doc_name(r->d), 0, 0, _("out of memory"));
			return;
		}
		for (size_t i = 0; i < j->nprompt_items && r->rc == ERR_OK; i++) {
			struct job_prompt *p = &j->prompts[i];
			const struct doc_node *it = present(samples->items[i]);

			/* A bare string item carries no overrides. */
			if (!it || it->kind != DOC_MAP)
				continue;
			snprintf(r->where, sizeof r->where, PROCESS_PATH ".sample.samples[%zu]", i);
			p->has_width = rd_int(r, it, "width", 0, 1, &p->width);
			p->has_height = rd_int(r, it, "height", 0, 1, &p->height);
			p->has_num_frames = rd_int(r, it, "num_frames", 0, 1, &p->num_frames);
		}
		snprintf(r->where, sizeof r->where, PROCESS_PATH ".sample");
		return;
	}
	legacy = child(sample, "prompts");
	if (!legacy)
		return;
	if (legacy->kind != DOC_SEQ) {
		rd_fail_node(r, legacy, _("%s.prompts: expected a list, found %s"), r->where,
			     shown(legacy).s);
		return;
	}
	j->nprompts = legacy->n;
	j->prompts_legacy = true;
}

static void read_sample(struct rd *r, struct job *j, const struct doc_node *sample)
{
	snprintf(r->where, sizeof r->where, PROCESS_PATH ".sample");
	j->has_sample = sample != NULL;
	j->has_sample_width_key = rd_int(r, sample, "width", 512, 1, &j->sample_width);
	j->has_sample_height_key = rd_int(r, sample, "height", 512, 1, &j->sample_height);
	j->has_sample_steps_key = rd_int(r, sample, "sample_steps", 20, 1, &j->sample_steps);
	j->has_sample_every_key = rd_int(r, sample, "sample_every", 100, 1, &j->sample_every);
	j->has_sample_num_frames_key =
		rd_int(r, sample, "num_frames", 1, 1, &j->sample_num_frames);
	rd_int(r, sample, "fps", 16, 1, &j->sample_fps);
	read_prompts(r, j, sample);
}

static void read_model(struct rd *r, struct job *j, const struct doc_node *model)
{
	bool legacy_offload = false;

	snprintf(r->where, sizeof r->where, PROCESS_PATH ".model");
	j->has_low_vram_key = rd_bool(r, model, "low_vram", false, &j->low_vram);
	j->has_quantize_key = rd_bool(r, model, "quantize", false, &j->quantize);
	j->has_quantize_te_key = rd_bool(r, model, "quantize_te", j->quantize, &j->quantize_te);
	j->has_layer_offloading_key =
		rd_bool(r, model, "layer_offloading", false, &j->layer_offloading);
	if (!j->has_layer_offloading_key &&
	    rd_bool(r, model, "auto_memory", false, &legacy_offload)) {
		j->layer_offloading = legacy_offload;
		j->layer_offloading_legacy = true;
	}
	rd_str(r, model, "qtype", "qfloat8", &j->qtype);
}

enum job_kind job_kind_guess(const struct doc *d)
{
	const struct doc_node *root = d ? doc_root(d) : NULL, *proc, *model, *arch;
	const struct arch_info *ai;
	char name[64];

	proc = child(child(root, "config"), "process");
	if (!proc || proc->kind != DOC_SEQ || proc->n == 0)
		return JOB_KIND_UNKNOWN;
	model = child(present(proc->items[0]), "model");
	arch = child(model, "arch");
	if (!arch || arch->kind != DOC_SCALAR || !arch->value)
		return JOB_KIND_UNKNOWN;
	snprintf(name, sizeof name, "%.*s", (int)strcspn(arch->value, ":"), arch->value);
	if (strcmp(name, "flex1") == 0)
		snprintf(name, sizeof name, "flux");
	ai = arch_find(name);
	return !ai ? JOB_KIND_UNKNOWN : (ai->flags & A_VIDEO) ? JOB_KIND_VIDEO : JOB_KIND_IMAGE;
}

/* Kind from the arch; an unknown arch is judged by what the job feeds and produces. */
static void decide_kind(struct job *j, const struct arch_info *ai)
{
	if (ai) {
		j->kind = (ai->flags & A_VIDEO) ? JOB_KIND_VIDEO : JOB_KIND_IMAGE;
		return;
	}
	j->kind = JOB_KIND_IMAGE;
	if (j->sample_num_frames > 1)
		j->kind = JOB_KIND_VIDEO;
	for (size_t i = 0; i < j->ndatasets; i++)
		if (j->datasets[i].num_frames > 1 || j->datasets[i].auto_frame_count)
			j->kind = JOB_KIND_VIDEO;
}

int job_from_doc(const struct doc *d, struct job **out, struct err *e)
{
	const struct doc_node *p0 = NULL, *model, *train, *sample;
	const struct arch_info *ai;
	struct rd r = { .d = d, .e = e, .rc = ERR_OK };
	struct job *j;
	int rc;

	*out = NULL;
	rc = find_process(d, &p0, e);
	if (rc != ERR_OK)
		return rc;
	j = calloc(1, sizeof *j);
	if (!j)
		return err_set(e, ERR_SOFTWARE, doc_name(d), 0, 0, _("out of memory"));
	j->doc = d;
	j->process_path = PROCESS_PATH;
	j->process = p0;
	snprintf(r.where, sizeof r.where, "config");
	rd_str(&r, child(doc_root(d), "config"), "name", NULL, &j->name);

	snprintf(r.where, sizeof r.where, PROCESS_PATH);
	train = rd_section(&r, p0, "train");
	sample = rd_section(&r, p0, "sample");
	model = rd_section(&r, p0, "model");

	read_train(&r, j, train);
	read_datasets(&r, j, p0);
	read_sample(&r, j, sample);
	read_model(&r, j, model);
	read_arch(&r, j, model);

	ai = arch_find(j->arch);
	j->arch_has_low_vram = ai && (ai->flags & A_LOW_VRAM);
	j->arch_has_quantize = ai && (ai->flags & A_QUANTIZE);
	j->arch_has_layer_offloading = ai && (ai->flags & A_LAYER_OFFLOAD);
	decide_kind(j, ai);

	if (r.rc != ERR_OK) {
		job_free(&j);
		return r.rc;
	}
	*out = j;
	return ERR_OK;
}

void job_free(struct job **j)
{
	if (!j || !*j)
		return;
	free((*j)->datasets);
	free((*j)->prompts);
	free(*j);
	*j = NULL;
}

/* ---- Questions about the job ---- */

long long job_max_bucket(const struct job *j)
{
	long long m = 0;

	for (size_t i = 0; i < j->ndatasets; i++)
		if (j->datasets[i].res_max > m)
			m = j->datasets[i].res_max;
	return m;
}

bool job_is_conservative(const struct job *j)
{
	if (j->batch_size > 1 || !j->gradient_checkpointing || job_max_bucket(j) > 768)
		return false;
	for (size_t i = 0; i < j->ndatasets; i++) {
		const struct job_dataset *ds = &j->datasets[i];
		if (ds->has_batch_size && ds->batch_size > 1)
			return false;
		/* Frames only cost memory on video models (image archs get 1 from the UI). */
		if (j->kind == JOB_KIND_VIDEO && (ds->num_frames > 33 || ds->auto_frame_count))
			return false;
	}
	return true;
}

int job_frame_step(const struct job *j)
{
	const struct arch_info *ai;

	if (j->kind != JOB_KIND_VIDEO)
		return 0;
	ai = arch_find(j->arch);
	return ai && ai->frame_step ? ai->frame_step : 1;
}

const char *job_kind_name(enum job_kind k)
{
	switch (k) {
	case JOB_KIND_IMAGE:
		return "image";
	case JOB_KIND_VIDEO:
		return "video";
	case JOB_KIND_UNKNOWN:
		break;
	}
	return NULL;
}

size_t job_prompt_count(const struct job *j, bool *legacy)
{
	if (legacy)
		*legacy = j->prompts_legacy;
	return j->nprompts;
}

/* ---- Fields ---- */

const struct job_field *job_field_find(const char *path)
{
	for (size_t i = 0; i < job_nfields; i++)
		if (strcmp(job_fields[i].path, path) == 0)
			return &job_fields[i];
	return NULL;
}

static bool is_ds_path(const char *p)
{
	return strncmp(p, DS_PREFIX, strlen(DS_PREFIX)) == 0;
}

/* The node a relative field path starts from, and the rest of the path. */
static const struct doc_node *field_base(const struct job *j, const char *path, size_t ds,
					 const char **rel)
{
	if (is_ds_path(path)) {
		*rel = path + strlen(DS_PREFIX);
		return ds < j->ndatasets ? j->datasets[ds].node : NULL;
	}
	*rel = path;
	return j->process;
}

static bool accum_beyond_one(const struct doc_node *n)
{
	long long v;
	return node_long(n, &v) && (v > 1 || v == -1);
}

/* The node holding the field's value; *legacy says it is the legacy spelling. The legacy key
 * wins when it alone is in effect (the other one absent, or <= 1 while the legacy one is not). */
static const struct doc_node *field_node(const struct job *j, const struct job_field *f, size_t ds,
					 bool *legacy)
{
	const char *rel;
	const struct doc_node *base = field_base(j, f->path, ds, &rel), *n, *l = NULL;

	*legacy = false;
	if (!base)
		return NULL;
	n = walk(base, rel);
	if (f->legacy_path) {
		const struct doc_node *lbase = field_base(j, f->legacy_path, ds, &rel);
		l = lbase ? walk(lbase, rel) : NULL;
	}
	if (l && (!n || (f->type == JOB_F_INT && !accum_beyond_one(n) && accum_beyond_one(l)))) {
		*legacy = true;
		return l;
	}
	return n;
}

static void put(char *buf, size_t sz, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (!sz || *len >= sz - 1)
		return;
	if (n > sz - 1 - *len)
		n = sz - 1 - *len;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

static void put_flow(char *buf, size_t sz, size_t *len, const struct doc_node *n)
{
	/* Nodes nearly always write a byte or more each, so a buffer's worth of nodes fills the
	 * buffer; the bound keeps an alias-expanded value from being built in full only to be
	 * clipped (past it the text ends in " ..."). */
	char *s = doc_to_flow_bounded(n, sz + 1, NULL);

	if (s)
		put(buf, sz, len, s);
	free(s);
}

static void format_node(const struct doc_node *n, enum job_ftype t, char *buf, size_t sz)
{
	size_t len = 0;
	long long v;
	bool b;
	char num[32];

	buf[0] = '\0';
	switch (t) {
	case JOB_F_INT:
		if (node_long(n, &v)) {
			snprintf(num, sizeof num, "%lld", v);
			put(buf, sz, &len, num);
			return;
		}
		break;
	case JOB_F_BOOL:
		if (node_bool(n, &b)) {
			put(buf, sz, &len, b ? "true" : "false");
			return;
		}
		break;
	case JOB_F_RESLIST:
		/* One bucket or many, always shown as the list the editor toggles. */
		put(buf, sz, &len, "[");
		if (n->kind == DOC_SEQ) {
			for (size_t i = 0; i < n->n; i++) {
				if (i)
					put(buf, sz, &len, ", ");
				put_flow(buf, sz, &len, doc_deref(n->items[i]));
			}
		} else {
			put_flow(buf, sz, &len, n);
		}
		put(buf, sz, &len, "]");
		return;
	case JOB_F_FLOAT:
	case JOB_F_STR:
		break;
	}
	/* Floats keep the file's spelling (`1e-4`); anything unexpected is shown as written. */
	put_flow(buf, sz, &len, n);
}

bool job_field_value(const struct job *j, const struct job_field *f, size_t ds, char *buf,
		     size_t bufsz, bool *is_default)
{
	bool legacy, dflt;
	const struct doc_node *n;
	size_t len = 0;

	if (is_default)
		*is_default = false;
	if (!bufsz)
		return false;
	buf[0] = '\0';
	if (is_ds_path(f->path) && ds >= j->ndatasets)
		return false;
	n = field_node(j, f, ds, &legacy);
	if (n) {
		format_node(n, f->type, buf, bufsz);
		return true;
	}
	if (is_default)
		*is_default = true;
	if (f->fallback_path) {
		const struct job_field *fb = job_field_find(f->fallback_path);
		return fb && fb != f && job_field_value(j, fb, ds, buf, bufsz, &dflt);
	}
	if (strcmp(f->path, "model.arch") == 0) {
		put(buf, bufsz, &len, j->arch);
		return true;
	}
	if (!f->def)
		return false;
	if (f->type == JOB_F_RESLIST) {
		put(buf, bufsz, &len, "[");
		put(buf, bufsz, &len, f->def);
		put(buf, bufsz, &len, "]");
	} else {
		put(buf, bufsz, &len, f->def);
	}
	return true;
}

void job_field_path(const struct job *j, const struct job_field *f, size_t ds, char *buf,
		    size_t bufsz)
{
	bool legacy = false;
	const char *path = f->path, *rel;

	if (!bufsz)
		return;
	field_node(j, f, ds, &legacy);
	if (legacy)
		path = f->legacy_path;
	if (is_ds_path(path)) {
		rel = path + strlen(DS_PREFIX);
		snprintf(buf, bufsz, "%s.datasets[%zu].%s", j->process_path, ds, rel);
	} else {
		snprintf(buf, bufsz, "%s.%s", j->process_path, path);
	}
}

bool job_field_applies(const struct job *j, const struct job_field *f)
{
	if (f->video_only && j->kind != JOB_KIND_VIDEO)
		return false;
	if ((f->requires & JOB_REQ_LOW_VRAM) && !j->arch_has_low_vram)
		return false;
	if ((f->requires & JOB_REQ_QUANTIZE) && !j->arch_has_quantize)
		return false;
	if ((f->requires & JOB_REQ_LAYER_OFFLOADING) && !j->arch_has_layer_offloading)
		return false;
	return true;
}

/* ---- The trainer's rules for typed values (job_field_check) ---- */

/* Names the trainer accepts, from its source (ostris/ai-toolkit): toolkit/optimizer.py
 * get_optimizer (compared in lower case), toolkit/train_tools.py get_torch_dtype,
 * toolkit/sampler.py get_sampler. */
static const char *const optimizers[] = {
	"adam", "adamw", "adam8", "adamw8", "adam8bit", "adamw8bit", "ademamix8bit", "lion",
	"lion8bit", "adagrad", "adafactor", "automagic", "automagic2", "automagic3",
	"automagicexperiment", "prodigy", "prodigyopt", "prodigy8bit", "dadaptation",
	"dadaptationadam", "dadaptationlion", NULL,
};
static const char *const dtypes[] = {
	"fp32", "float", "float32", "single", "fp16", "half", "float16", "bf16", "bfloat16",
	"float8", "8bit", "e4m3fn", NULL,
};
static const char *const samplers[] = {
	"flowmatch", "ddpm", "ddim", "pndm", "lms", "k_lms", "euler", "k_euler", "euler_a",
	"dpmsolver", "dpmsolver++", "k_dpmsolver", "k_dpmsolver++", "dpmsingle", "heun", "dpm_2",
	"dpm_2_a", "lcm", "custom_lcm", "mean_flow", NULL,
};

static bool in_list(const char *const *list, const char *s, bool nocase)
{
	for (; *list; list++)
		if (nocase ? !strcasecmp(*list, s) : !strcmp(*list, s))
			return true;
	return false;
}

/* The first names of a list, for a message ("adamw, adamw8bit, ..."). */
static void list_some(const char *const *list, size_t max, char *buf, size_t sz)
{
	size_t w = 0;

	buf[0] = '\0';
	for (size_t i = 0; list[i] && w + 1 < sz; i++) {
		if (i == max) {
			snprintf(buf + w, sz - w, ", ...");
			return;
		}
		w += (size_t)snprintf(buf + w, sz - w, "%s%s", i ? ", " : "", list[i]);
	}
}

static bool arch_known(const char *text)
{
	char name[64];
	size_t n = strcspn(text, ":");

	if (n == 0 || n >= sizeof name)
		return false;
	memcpy(name, text, n);
	name[n] = '\0';
	return !strcmp(name, "flex1") || arch_find(name) != NULL;
}

static bool parse_ll(const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno == 0 && end != s && *end == '\0';
}

static bool parse_num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && *out == *out; /* not NaN */
}

void job_field_rule(const struct job *j, const struct job_field *f, char *buf, size_t bufsz)
{
	char some[256];
	int step = j ? job_frame_step(j) : 0;

	switch (f->rule) {
	case JOB_RULE_POS_INT:
		snprintf(buf, bufsz, "%s", _("a whole number of at least 1"));
		return;
	case JOB_RULE_ACCUM:
		snprintf(buf, bufsz, "%s", j && j->grad_accum_legacy
			 ? _("a whole number of at least 1, or -1 for a whole epoch")
			 : _("a whole number of at least 1"));
		return;
	case JOB_RULE_POS_FLOAT:
		snprintf(buf, bufsz, "%s", _("a number greater than 0, such as 1e-4"));
		return;
	case JOB_RULE_NONNEG:
		snprintf(buf, bufsz, "%s", _("a number of at least 0"));
		return;
	case JOB_RULE_SIZE16:
		snprintf(buf, bufsz, "%s", _("a multiple of 16 pixels, at least 64 (e.g. 512, 768, 1024)"));
		return;
	case JOB_RULE_RES8:
		snprintf(buf, bufsz, "%s",
			 _("a size or a list of sizes, each a multiple of 8 and at least 64 "
			   "(e.g. [512, 768, 1024])"));
		return;
	case JOB_RULE_FRAMES:
		if (step > 1)
			snprintf(buf, bufsz, _("a frame count on this model's grid, %dk+1 (1, %d, %d, ...)"),
				 step, step + 1, 2 * step + 1);
		else
			snprintf(buf, bufsz, "%s", _("a whole number of at least 1"));
		return;
	case JOB_RULE_TEXT:
		snprintf(buf, bufsz, "%s", _("text that is not empty"));
		return;
	case JOB_RULE_OPTIMIZER:
		list_some(optimizers, 8, some, sizeof some);
		snprintf(buf, bufsz, _("an optimizer the trainer knows: %s"), some);
		return;
	case JOB_RULE_DTYPE:
		snprintf(buf, bufsz, "%s", _("a data type the trainer knows: bf16, fp16, fp32, float8"));
		return;
	case JOB_RULE_SAMPLER:
		snprintf(buf, bufsz, "%s", _("a sampler the trainer knows: flowmatch, ddpm, euler, "
					     "euler_a, ddim, ..."));
		return;
	case JOB_RULE_ARCH:
		snprintf(buf, bufsz, "%s", _("an architecture the trainer knows, e.g. flux, sdxl, "
					     "wan21:14b, ltx2"));
		return;
	case JOB_RULE_ANY:
		break;
	}
	switch (f->type) {
	case JOB_F_INT: snprintf(buf, bufsz, "%s", _("a whole number")); return;
	case JOB_F_FLOAT: snprintf(buf, bufsz, "%s", _("a number")); return;
	case JOB_F_BOOL: snprintf(buf, bufsz, "%s", _("true or false")); return;
	default: snprintf(buf, bufsz, "%s", _("text")); return;
	}
}

/* Checks one number against a numeric rule. */
static bool number_ok(const struct job *j, const struct job_field *f, const char *s)
{
	long long v;
	double d;
	int step;

	if (f->type == JOB_F_FLOAT) {
		if (!parse_num(s, &d))
			return false;
		if (f->rule == JOB_RULE_POS_FLOAT)
			return d > 0;
		if (f->rule == JOB_RULE_NONNEG)
			return d >= 0;
		return true;
	}
	if (!parse_ll(s, &v))
		return false;
	switch (f->rule) {
	case JOB_RULE_POS_INT: return v >= 1;
	case JOB_RULE_ACCUM: return v >= 1 || (v == -1 && j && j->grad_accum_legacy);
	case JOB_RULE_NONNEG: return v >= 0;
	case JOB_RULE_SIZE16: return v >= 64 && v % 16 == 0;
	case JOB_RULE_RES8: return v >= 64 && v % 8 == 0;
	case JOB_RULE_FRAMES:
		step = j ? job_frame_step(j) : 0;
		return v >= 1 && (step <= 1 || (v - 1) % step == 0);
	default: return true;
	}
}

int job_field_check(const struct job *j, const struct job_field *f, const char *text,
		    struct err *e)
{
	char rule[320];
	bool ok = true;

	err_clear(e);
	if (!text[0])
		return ERR_OK;
	switch (f->type) {
	case JOB_F_BOOL:
		ok = in_list((const char *const[]){ "true", "false", "yes", "no", "on", "off", NULL },
			     text, true);
		break;
	case JOB_F_INT:
	case JOB_F_FLOAT:
		ok = number_ok(j, f, text);
		break;
	case JOB_F_RESLIST: {
		/* One size, or a flow list of sizes. */
		char buf[512];
		size_t n = strlen(text);
		if (text[0] == '[') {
			if (n < 2 || text[n - 1] != ']' || n - 2 >= sizeof buf) {
				ok = false;
				break;
			}
			memcpy(buf, text + 1, n - 2);
			buf[n - 2] = '\0';
		} else {
			snprintf(buf, sizeof buf, "%s", text);
		}
		int count = 0;
		for (char *save = NULL, *tok = strtok_r(buf, ",", &save); ok && tok;
		     tok = strtok_r(NULL, ",", &save)) {
			while (*tok == ' ')
				tok++;
			size_t tl = strlen(tok);
			while (tl && tok[tl - 1] == ' ')
				tok[--tl] = '\0';
			ok = number_ok(j, f, tok);
			count++;
		}
		ok = ok && count > 0;
		break;
	}
	case JOB_F_STR:
		if (f->rule == JOB_RULE_OPTIMIZER)
			ok = in_list(optimizers, text, true);
		else if (f->rule == JOB_RULE_DTYPE)
			ok = in_list(dtypes, text, false);
		else if (f->rule == JOB_RULE_SAMPLER)
			ok = in_list(samplers, text, false);
		else if (f->rule == JOB_RULE_ARCH)
			ok = arch_known(text);
		break;
	}
	if (ok)
		return ERR_OK;
	job_field_rule(j, f, rule, sizeof rule);
	return err_set(e, ERR_DATA, NULL, 0, 0, _("%s must be %s; '%s' is not"), _(f->label), rule,
		       text);
}

const struct job_field *job_field_at(const struct job *j, const char *abs_path, size_t *ds)
{
	char rel[256];
	const char *p = abs_path;
	size_t plen = j && j->process_path ? strlen(j->process_path) : 0;
	size_t idx = 0;

	if (!plen || strncmp(p, j->process_path, plen) != 0 || p[plen] != '.')
		return NULL;
	p += plen + 1;
	/* datasets[N].key → datasets[].key */
	if (!strncmp(p, "datasets[", 9)) {
		char *end;
		idx = (size_t)strtoull(p + 9, &end, 10);
		if (end == p + 9 || *end != ']' || end[1] != '.')
			return NULL;
		snprintf(rel, sizeof rel, "datasets[]%s", end + 1);
	} else {
		snprintf(rel, sizeof rel, "%s", p);
	}
	for (size_t i = 0; i < job_nfields; i++) {
		const struct job_field *f = &job_fields[i];
		if (!strcmp(f->path, rel) || (f->legacy_path && !strcmp(f->legacy_path, rel))) {
			if (ds)
				*ds = idx;
			return f;
		}
	}
	return NULL;
}

const char *job_field_memory(const struct job_field *f)
{
	static const struct { const char *path, *text; } notes[] = {
		{ "train.batch_size", N_("Every image in a step holds its own activations: memory grows "
					 "with the batch.") },
		{ "datasets[].batch_size", N_("Overrides the training batch size for this dataset: "
					      "memory grows with it.") },
		{ "train.gradient_accumulation", N_("Runs batches one after another before each "
						    "update: no extra memory.") },
		{ "train.optimizer", N_("8-bit optimizers and Adafactor keep less state than AdamW.") },
		{ "train.gradient_checkpointing", N_("Recomputes activations instead of keeping them: "
						     "much less memory, slower steps.") },
		{ "train.dtype", N_("fp32 takes about twice the memory of bf16 or fp16.") },
		{ "train.unload_text_encoder", N_("Moves the text encoder off the GPU after encoding "
						  "the prompts.") },
		{ "train.cache_text_embeddings", N_("Encodes the captions once, then frees the text "
						    "encoder.") },
		{ "datasets[].resolution", N_("The largest bucket sets the peak activation memory.") },
		{ "datasets[].num_frames", N_("Memory grows about linearly with the frames per "
					      "clip.") },
		{ "datasets[].cache_latents_to_disk", N_("Encodes images once, so the VAE can leave "
							 "the GPU during training.") },
		{ "sample.width", N_("Samples larger than the training buckets can run out of memory "
				     "first.") },
		{ "sample.height", N_("Samples larger than the training buckets can run out of memory "
				      "first.") },
		{ "sample.num_frames", N_("Video samples grow with frames x width x height.") },
		{ "train.disable_sampling", N_("No sampling pass at all: none of it can run out of "
					       "memory.") },
		{ "model.low_vram", N_("Keeps idle parts of the model in CPU memory: less GPU memory, "
				       "slower.") },
		{ "model.quantize", N_("Stores the transformer in 8 bits or fewer: much smaller "
				       "weights.") },
		{ "model.qtype", N_("Fewer bits, smaller weights, a little less precision.") },
		{ "model.quantize_te", N_("Stores the text encoder in 8 bits: smaller weights.") },
		{ "model.layer_offloading", N_("Moves a share of the layers to CPU RAM "
					       "(experimental).") },
	};
	for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
		if (!strcmp(notes[i].path, f->path))
			return _(notes[i].text);
	return _("Not a memory setting.");
}
