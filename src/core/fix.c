/* fix.c — the fix table (SPEC §4): each fix is data plus one function that looks at the job and
 * lists the doc edits that apply it once.
 *
 * Status and edits come from the same function, so a fix is FIX_TODO exactly when it has edits
 * to make: "done" can never disagree with "nothing to change". Values are read from the document
 * itself (not only from the typed job view) because an edit must know whether a key is written,
 * absent, or holds a list, and at which index.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/buf.h"
#include "oomfix/diag.h"
#include "oomfix/i18n.h"
#include "oomfix/plan.h"

#define FLOOR_BUCKET 512
#define FLOOR_FRAMES 9
#define LIGHT_SIDE 512
#define LIGHT_STEPS 20
#define LIGHT_EVERY 500
#define LIGHT_FRAMES 33

/* Trainer defaults used when a sample key is absent (aitk-reference §a.3). */
#define DEF_SAMPLE_SIDE 512
#define DEF_SAMPLE_STEPS 20
#define DEF_SAMPLE_EVERY 100

const struct fix_def fix_defs[FIX_COUNT] = {
	{ FIX_GRADIENT_CHECKPOINTING, "gradient_checkpointing",
	  N_("Turn gradient checkpointing on"),
	  N_("Gradient checkpointing keeps only a few activations from the forward pass and "
	     "recomputes the rest during the backward pass, so activation memory shrinks by a large "
	     "factor. Each step costs roughly a fifth to a third more time. The trainer turns it on "
	     "when the key is absent; only an explicit false needs changing."),
	  N_("Sets train.gradient_checkpointing to true. The key missing already means true, so "
	     "only an explicit false is changed."),
	  N_("During a training step the model keeps the activations of every layer for the "
	     "backward pass. With checkpointing only a few are kept and the rest are computed "
	     "again when needed: activation memory drops sharply, and each step takes a fifth to "
	     "a third longer. It is the cheapest saving there is, so it comes first.") },
	{ FIX_BATCH_SIZE, "batch_size",
	  N_("Batch size 1, same effective batch"),
	  N_("Activation memory grows with every image or clip in a micro-batch, so one item per "
	     "step gives the lowest peak. Gradient accumulation is raised by the same factor, so "
	     "each optimizer update still averages as many items as before and the training "
	     "result stays comparable; a step simply takes longer. Per-dataset batch sizes are "
	     "lowered too, since they override the training batch size."),
	  N_("Sets the batch size to 1 (in train and in every dataset) and raises gradient "
	     "accumulation so that each optimizer update still sees as many images as before."),
	  N_("Every image in a batch carries its own activations, so memory grows with the batch "
	     "size. Gradient accumulation runs several batches of one before each update: the "
	     "training signal is the same as a bigger batch, only each update takes longer.") },
	{ FIX_DROP_LARGEST_BUCKET, "drop_largest_bucket",
	  N_("Drop the largest resolution bucket"),
	  N_("The largest resolution bucket sets the peak activation memory: a 1024 bucket holds "
	     "almost twice the pixels of a 768 one. Removing it from each dataset's list (or "
	     "stepping a single bucket down 1536, 1280, 1024, 768, 512) makes the run fit; the "
	     "model then learns less fine detail until the bucket is added back. One bucket per "
	     "application, never below 512."),
	  N_("Removes the largest resolution from each dataset's list. A single large bucket "
	     "steps down instead: 1536, 1280, 1024, 768, 512."),
	  N_("Activation memory grows with the number of pixels: a 1024 bucket has almost twice "
	     "the pixels of 768. Dropping the largest bucket removes the worst steps; the model "
	     "sees a little less fine detail. Bring it back later, one bucket at a time.") },
	{ FIX_LIGHTER_SAMPLING, "lighter_sampling",
	  N_("Lighter preview samples"),
	  N_("Preview samples run the full model at the sample size, often larger than any "
	     "training bucket, and can run out of memory when training itself fits. Samples are "
	     "made at most 512 pixels on the longer side (aspect kept), with at most 20 steps, "
	     "every 500 steps or less often, and video previews at most 33 frames. Previews get "
	     "smaller and rarer; the training is unchanged."),
	  N_("Makes the preview samples cheaper: the longer side at most 512, at most 20 sample "
	     "steps, a sample at most every 500 steps; video previews at most 33 frames."),
	  N_("Sampling runs the whole model for inference inside the training process, on top of "
	     "everything training already holds. Smaller and fewer samples make it fit; only the "
	     "previews lose detail, the training does not.") },
	{ FIX_DISABLE_SAMPLING, "disable_sampling",
	  N_("Disable sampling for now"),
	  N_("With sampling off there is no baseline sample, no periodic preview and no final "
	     "sample, so no sampling pass can run out of memory. You see no previews until it is "
	     "turned back on; a good first retry when the aim is to prove the job can train."),
	  N_("Turns sampling off during training (train.disable_sampling: true)."),
	  N_("If even light samples do not fit, switch them off and judge the result after "
	     "training. You lose the progress previews, not quality.") },
	{ FIX_NUM_FRAMES, "num_frames",
	  N_("Halve the number of frames"),
	  N_("For video models the frame count is the largest memory lever: memory grows about "
	     "linearly with frames. Dataset clips and the preview are halved onto the model's frame "
	     "grid (4k+1 for Wan and MiniMax, 8k+1 for LTX-2), never below 9. Shorter clips teach "
	     "less motion per sample. One halving per application."),
	  N_("Halves the frames per clip in the datasets and the samples, on the model's frame "
	     "grid, never below 9."),
	  N_("For video every frame is one more image in the same tensor, so memory grows with "
	     "the clip length. Halving the frames roughly halves activation memory; motion is "
	     "learned from shorter clips.") },
	{ FIX_LOW_VRAM, "low_vram",
	  N_("Use the model's low-memory path"),
	  N_("Where the architecture supports it, low_vram keeps idle parts of the model in CPU "
	     "memory and quantizes on the CPU, and quantization stores the transformer and text "
	     "encoder weights in 8 bits instead of 16. Both cut the memory the weights take; low_vram "
	     "makes steps slower and quantization costs a little quality. Layer offloading, where "
	     "available, is experimental and is only suggested, not turned on."),
	  N_("Turns on model.low_vram, and quantization of the model and text encoder, where "
	     "this model supports them."),
	  N_("Low VRAM keeps parts of the model in CPU memory until they are needed, and "
	     "quantization stores the weights in 8 bits or fewer. Both shrink the model itself "
	     "on the GPU; they cost speed, and quantization a little precision.") },
	{ FIX_FRESH_WORKER, "fresh_worker",
	  N_("Start over on a fresh worker"),
	  N_("When a conservative job (batch 1, checkpointing on, small buckets and few frames) "
	     "still fails before or at the first step with no free memory or a cuBLAS allocation "
	     "failure, the GPU or worker is in a bad state, not the settings. Stop retrying the same "
	     "job, start it on a fresh worker or GPU, and contact support if a configuration that "
	     "worked before fails there too. Nothing in the file changes."),
	  N_("Changes nothing in the YAML. Stop retrying on this worker: start a fresh one, and "
	     "escalate if a job known to work fails there too."),
	  N_("When the card's memory is held by something other than this job (another process "
	     "on the GPU, or a worker left in a bad state, which is what a conservative job that "
	     "still finds no memory free points to), changing more settings will not help; a clean "
	     "worker will.") },
};

enum fix_id fix_by_name(const char *name)
{
	if (!name)
		return FIX_NONE;
	for (int i = 0; i < FIX_COUNT; i++)
		if (!strcmp(fix_defs[i].name, name))
			return (enum fix_id)i;
	return FIX_NONE;
}

const char *fix_name(enum fix_id id)
{
	if (id < 0 || id >= FIX_COUNT)
		return NULL;
	return fix_defs[id].name;
}

const char *fix_status_name(enum fix_status s)
{
	switch (s) {
	case FIX_NOT_APPLICABLE: return "not_applicable";
	case FIX_TODO: return "todo";
	case FIX_DONE: return "done";
	}
	return "todo";
}

/* ---- reading the job ---------------------------------------------------------------------- */

static const char *base_path(const struct job *j)
{
	return j->process_path ? j->process_path : "config.process[0]";
}

static const struct doc_node *proc(const struct job *j)
{
	return doc_deref(doc_get(j->doc, base_path(j)));
}

/* Child `key` of the mapping `map`, aliases followed; NULL when absent or not a map. */
static const struct doc_node *child(const struct doc_node *map, const char *key)
{
	map = doc_deref(map);
	if (!map || map->kind != DOC_MAP)
		return NULL;
	return doc_deref(doc_map_get(map, key));
}

static const struct doc_node *section(const struct job *j, const char *name)
{
	const struct doc_node *n = child(proc(j), name);
	return n && n->kind == DOC_MAP ? n : NULL;
}

static bool node_long(const struct doc_node *n, long long *v)
{
	return n && n->kind == DOC_SCALAR && doc_as_long(n, v);
}

static bool node_true(const struct doc_node *n)
{
	bool b = false;
	return n && n->kind == DOC_SCALAR && doc_as_bool(n, &b) && b;
}

static const struct doc_node *datasets(const struct job *j)
{
	const struct doc_node *n = child(proc(j), "datasets");
	return n && n->kind == DOC_SEQ ? n : NULL;
}

/* ---- building the edit list ------------------------------------------------------------------ */

struct builder {
	struct fix_edit_list *l; /* starts empty; its arrays' capacities are below */
	size_t strings_cap, edits_cap;
	const struct job *j;
	bool oom;
	int phase; /* enum diag_phase the run failed in, 0 = not known (fix_edits_after) */
};

static char *keep(struct builder *b, char *s)
{
	if (!s) {
		b->oom = true;
		return NULL;
	}
	if (!ARRAY_GROW(b->l->strings, b->l->nstrings + 1, b->strings_cap)) {
		free(s);
		b->oom = true;
		return NULL;
	}
	b->l->strings[b->l->nstrings++] = s;
	return s;
}

static void add(struct builder *b, enum doc_edit_op op, const char *value, size_t index,
		const char *relfmt, ...) __attribute__((format(printf, 5, 6)));

/* Appends one edit; the path is process[0]'s path plus the formatted relative path. */
static void add(struct builder *b, enum doc_edit_op op, const char *value, size_t index,
		const char *relfmt, ...)
{
	char rel[256], full[512];
	va_list ap;
	va_start(ap, relfmt);
	vsnprintf(rel, sizeof rel, relfmt, ap);
	va_end(ap);
	snprintf(full, sizeof full, "%s.%s", base_path(b->j), rel);

	char *p = keep(b, strdup(full));
	char *v = value ? keep(b, strdup(value)) : NULL;
	if (!p || (value && !v))
		return;
	if (!ARRAY_GROW(b->l->edits, b->l->n + 1, b->edits_cap)) {
		b->oom = true;
		return;
	}
	/* A fix's change is not the user's: a comment beside the old value is marked (D40). */
	if (op == DOC_EDIT_SET)
		op = DOC_EDIT_SET_MARKED;
	else if (op == DOC_EDIT_REMOVE_ITEM)
		op = DOC_EDIT_REMOVE_ITEM_MARKED;
	b->l->edits[b->l->n++] = (struct doc_edit){ .op = op, .path = p, .value = v, .index = index };
}

static void add_set_int(struct builder *b, long long v, const char *relfmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_set_int(struct builder *b, long long v, const char *relfmt, ...)
{
	char rel[256], val[32];
	va_list ap;
	va_start(ap, relfmt);
	vsnprintf(rel, sizeof rel, relfmt, ap);
	va_end(ap);
	snprintf(val, sizeof val, "%lld", v);
	add(b, DOC_EDIT_SET, val, 0, "%s", rel);
}

static void note(struct builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends a sentence to the user-visible note. */
static void note(struct builder *b, const char *fmt, ...)
{
	char *dst = b->l->note;
	size_t used = strlen(dst);
	if (used && used + 1 < sizeof b->l->note)
		dst[used++] = ' ', dst[used] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst + used, sizeof b->l->note - used, fmt, ap);
	va_end(ap);
}

static void say(char *reason, size_t rsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *reason, size_t rsz, const char *fmt, ...)
{
	if (!reason || !rsz)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, rsz, fmt, ap);
	va_end(ap);
}

/* ---- the fixes -------------------------------------------------------------------------------- */

typedef enum fix_status (*fix_fn)(const struct job *j, struct builder *b, bool keep_batch,
				  char *reason, size_t rsz);

static enum fix_status fx_gradient_checkpointing(const struct job *j, struct builder *b,
						 bool keep_batch, char *reason, size_t rsz)
{
	const struct doc_node *train = section(j, "train");
	const struct doc_node *gc = child(train, "gradient_checkpointing");
	if (!gc) {
		say(reason, rsz, "%s", _("absent, and the trainer turns it on by default"));
		return FIX_DONE;
	}
	if (node_true(gc)) {
		say(reason, rsz, "%s", _("train.gradient_checkpointing is already true"));
		return FIX_DONE;
	}
	add(b, DOC_EDIT_SET, "true", 0, "train.gradient_checkpointing");
	say(reason, rsz, "%s", _("train.gradient_checkpointing is off"));
	return FIX_TODO;
}

static enum fix_status fx_batch_size(const struct job *j, struct builder *b, bool keep_batch,
				     char *reason, size_t rsz)
{
	const struct doc_node *train = section(j, "train");
	const struct doc_node *ds = datasets(j);
	long long tb = 1, v;
	const struct doc_node *tbn = child(train, "batch_size");
	if (node_long(tbn, &v))
		tb = v;

	/* The largest effective batch over the datasets (a dataset without its own batch size
	 * uses train.batch_size); without datasets, train.batch_size. */
	long long bmax = 0, bmin = 0;
	bool todo = tb > 1;
	size_t nds = ds ? ds->n : 0;
	for (size_t i = 0; i < nds; i++) {
		long long eff = tb;
		if (node_long(child(ds->items[i], "batch_size"), &v)) {
			eff = v;
			if (v > 1)
				todo = true;
		}
		if (eff < 1)
			eff = 1;
		if (i == 0 || eff > bmax)
			bmax = eff;
		if (i == 0 || eff < bmin)
			bmin = eff;
	}
	if (!nds)
		bmax = bmin = tb < 1 ? 1 : tb;
	if (!todo) {
		say(reason, rsz, "%s", _("the batch size is already 1 everywhere"));
		return FIX_DONE;
	}

	if (tbn && tb > 1)
		add(b, DOC_EDIT_SET, "1", 0, "train.batch_size");
	for (size_t i = 0; i < nds; i++)
		if (node_long(child(ds->items[i], "batch_size"), &v) && v > 1)
			add(b, DOC_EDIT_SET, "1", 0, "datasets[%zu].batch_size", i);

	if (!keep_batch) {
		say(reason, rsz, _("batch size %lld → 1; accumulation left as it is"), bmax);
		note(b, _("The effective batch drops from %lld to 1 per update."), bmax);
		return FIX_TODO;
	}
	if (!train) {
		note(b, "%s", _("The job has no train section, so no gradient accumulation is written."));
		say(reason, rsz, _("batch size %lld → 1"), bmax);
		return FIX_TODO;
	}

	const struct doc_node *ga = child(train, "gradient_accumulation");
	const struct doc_node *gas = child(train, "gradient_accumulation_steps");
	long long ga_v = 1, gas_v = 1;
	bool has_ga = node_long(ga, &ga_v), has_gas = node_long(gas, &gas_v);
	if (!has_ga)
		ga_v = 1;
	if (!has_gas)
		gas_v = 1;
	/* The legacy name is kept when the file uses it and the modern one is absent or idle. */
	bool legacy = has_gas && (!has_ga || (ga_v <= 1 && gas_v != 1));
	if (legacy && gas_v == -1) {
		note(b, "%s", _("gradient_accumulation_steps is -1 (a whole epoch per update), so it is "
				"left as it is."));
		say(reason, rsz, _("batch size %lld → 1"), bmax);
		return FIX_TODO;
	}
	long long cur = legacy ? gas_v : ga_v;
	if (cur < 1)
		cur = 1;
	long long acc = cur * bmax;
	const char *name = legacy ? "gradient_accumulation_steps" : "gradient_accumulation";
	if (acc != cur)
		add_set_int(b, acc, "train.%s", name);
	/* The trainer refuses gradient_accumulation > 1 together with a legacy value other than 1. */
	if (!legacy && has_gas && gas_v != 1 && acc > 1) {
		add(b, DOC_EDIT_SET, "1", 0, "train.gradient_accumulation_steps");
		note(b, _("gradient_accumulation_steps was %lld and is set to 1: the trainer refuses "
			  "both accumulation names above 1."), gas_v);
	}
	if (bmin != bmax)
		note(b, _("The datasets use different batch sizes (%lld to %lld); the accumulation "
			  "follows the largest, %lld, so the smaller ones get a larger effective batch "
			  "than before."), bmin, bmax, bmax);
	say(reason, rsz, _("batch size %lld → 1, %s %lld → %lld"), bmax, name, cur, acc);
	return FIX_TODO;
}

static const long long ladder[] = { 512, 768, 1024, 1280, 1536 };

/* The next lower rung of the bucket ladder (a value off the ladder goes to the next lower one). */
static long long ladder_down(long long v)
{
	long long r = v;
	for (size_t i = 0; i < sizeof ladder / sizeof ladder[0]; i++)
		if (ladder[i] < v)
			r = ladder[i];
	return r;
}

/* The value of `key` written in the mapping itself (not reached through a merge key), not
 * dereferenced; NULL when the mapping does not hold the key itself. */
static const struct doc_node *own_value(const struct doc_node *map, const char *key)
{
	map = doc_deref(map);
	if (!map || map->kind != DOC_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (map->keys[i] && map->keys[i]->value && !strcmp(map->keys[i]->value, key))
			return map->items[i];
	return NULL;
}

/* Sets datasets[i].resolution to `res` one rung lower, written as a flow list. */
static void set_shorter_list(struct builder *b, const struct doc_node *res, size_t i,
			     long long max, bool smaller, size_t first_max, long long nmax)
{
	char buf[1024];
	size_t o = 0;
	bool first = true;
	long long v;
	o += (size_t)snprintf(buf + o, sizeof buf - o, "[");
	for (size_t k = 0; k < res->n && o < sizeof buf; k++) {
		const struct doc_node *it = doc_deref(res->items[k]);
		bool is_max = node_long(it, &v) && v == max;
		char *text = NULL;
		if (is_max && (smaller || k != first_max))
			continue;
		if (is_max) {
			char num[32];
			snprintf(num, sizeof num, "%lld", nmax);
			text = strdup(num);
		} else {
			text = doc_to_flow(it);
		}
		if (!text) {
			b->oom = true;
			return;
		}
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", first ? "" : ", ", text);
		free(text);
		first = false;
	}
	if (o + 2 > sizeof buf) {
		b->oom = true;
		return;
	}
	snprintf(buf + o, sizeof buf - o, "]");
	add(b, DOC_EDIT_SET, buf, 0, "datasets[%zu].resolution", i);
}

static enum fix_status fx_drop_largest_bucket(const struct job *j, struct builder *b,
					      bool keep_batch, char *reason, size_t rsz)
{
	const struct doc_node *ds = datasets(j);
	if (!ds || !ds->n) {
		say(reason, rsz, "%s", _("the job has no datasets"));
		return FIX_NOT_APPLICABLE;
	}
	long long before = 0, after = 0;
	const struct doc_node *seen[64];
	size_t nseen = 0;
	for (size_t i = 0; i < ds->n; i++) {
		const struct doc_node *res = child(ds->items[i], "resolution");
		long long v;
		if (!res) {
			/* The trainer's default bucket is 512: already at the floor. */
			if (before < FLOOR_BUCKET)
				before = FLOOR_BUCKET;
			if (after < FLOOR_BUCKET)
				after = FLOOR_BUCKET;
			continue;
		}
		if (res->kind == DOC_SCALAR) {
			if (!node_long(res, &v))
				continue;
			long long nv = v > FLOOR_BUCKET ? ladder_down(v) : v;
			if (v > before)
				before = v;
			if (nv > after)
				after = nv;
			if (nv != v)
				add_set_int(b, nv, "datasets[%zu].resolution", i);
			continue;
		}
		if (res->kind != DOC_SEQ || !res->n)
			continue;
		long long max = 0, second = 0;
		size_t first_max = 0;
		bool any = false;
		for (size_t k = 0; k < res->n; k++) {
			if (!node_long(doc_deref(res->items[k]), &v))
				continue;
			if (!any || v > max) {
				if (any && max > second)
					second = max;
				max = v, first_max = k;
			} else if (v < max && v > second) {
				second = v;
			}
			any = true;
		}
		if (!any)
			continue;
		if (max > before)
			before = max;
		if (max <= FLOOR_BUCKET) {
			if (max > after)
				after = max;
			continue;
		}
		/* Every item equal to the largest goes; when nothing smaller remains the first one
		 * steps down the ladder instead, so the list never becomes empty. */
		bool smaller = second > 0;
		long long nmax = smaller ? second : ladder_down(max);
		if (nmax > after)
			after = nmax;
		/* A list shared through an anchor is edited once, in place, which changes every
		 * dataset that uses it; a list a dataset only inherits (merge key or alias) is
		 * overridden in that dataset by the shorter list. */
		bool shared_done = false;
		for (size_t k = 0; k < nseen; k++)
			shared_done |= seen[k] == res;
		if (shared_done)
			continue;
		const struct doc_node *raw = own_value(ds->items[i], "resolution");
		if (!raw || raw->kind == DOC_ALIAS) {
			set_shorter_list(b, res, i, max, smaller, first_max, nmax);
			continue;
		}
		if (nseen < sizeof seen / sizeof seen[0])
			seen[nseen++] = res;
		if (!smaller)
			add_set_int(b, nmax, "datasets[%zu].resolution[%zu]", i, first_max);
		for (size_t k = res->n; k-- > 0;) {
			if (!smaller && k == first_max)
				continue;
			if (node_long(doc_deref(res->items[k]), &v) && v == max)
				add(b, DOC_EDIT_REMOVE_ITEM, NULL, k, "datasets[%zu].resolution", i);
		}
	}
	if (!b->l->n) {
		say(reason, rsz, "%s", _("the largest bucket is already 512 or less"));
		return FIX_DONE;
	}
	say(reason, rsz, _("largest bucket %lld → %lld"), before, after);
	return FIX_TODO;
}

/* Rounds x/16 to the nearest integer, times 16, at least 16. */
static long long shrink_side(long long side, long long longest)
{
	long long q = (side * LIGHT_SIDE + 8 * longest) / (16 * longest);
	return q < 1 ? 16 : q * 16;
}

/* Scales w×h so the longer side is at most 512, aspect kept; smaller sizes stay. */
static void shrink(long long w, long long h, long long *nw, long long *nh)
{
	long long l = w > h ? w : h;
	*nw = w, *nh = h;
	if (w <= 0 || h <= 0 || l <= LIGHT_SIDE)
		return;
	*nw = shrink_side(w, l);
	*nh = shrink_side(h, l);
}

static enum fix_status fx_lighter_sampling(const struct job *j, struct builder *b,
					   bool keep_batch, char *reason, size_t rsz)
{
	if (node_true(child(section(j, "train"), "disable_sampling"))) {
		say(reason, rsz, "%s", _("sampling is disabled"));
		return FIX_DONE;
	}
	const struct doc_node *s = section(j, "sample");
	if (!s) {
		say(reason, rsz, "%s", _("the job has no sample section, so nothing is sampled"));
		return FIX_DONE;
	}
	bool video = j->kind != JOB_KIND_IMAGE;
	long long w = DEF_SAMPLE_SIDE, h = DEF_SAMPLE_SIDE, v, nw, nh;
	if (node_long(child(s, "width"), &v))
		w = v;
	if (node_long(child(s, "height"), &v))
		h = v;
	shrink(w, h, &nw, &nh);
	if (nw != w)
		add_set_int(b, nw, "sample.width");
	if (nh != h)
		add_set_int(b, nh, "sample.height");

	long long steps = DEF_SAMPLE_STEPS, every = DEF_SAMPLE_EVERY, frames = 1;
	if (node_long(child(s, "sample_steps"), &v))
		steps = v;
	if (steps > LIGHT_STEPS)
		add_set_int(b, LIGHT_STEPS, "sample.sample_steps");
	/* Absent means every 100 steps: the effective value is what costs memory and time. */
	if (node_long(child(s, "sample_every"), &v))
		every = v;
	if (every < LIGHT_EVERY)
		add_set_int(b, LIGHT_EVERY, "sample.sample_every");
	if (node_long(child(s, "num_frames"), &v))
		frames = v;
	if (video && frames > LIGHT_FRAMES)
		add_set_int(b, LIGHT_FRAMES, "sample.num_frames");

	/* Per-prompt overrides: a prompt's missing side falls back to the section's. */
	const struct doc_node *items = child(s, "samples");
	size_t nitems = items && items->kind == DOC_SEQ ? items->n : 0;
	for (size_t k = 0; k < nitems; k++) {
		const struct doc_node *it = doc_deref(items->items[k]);
		if (!it || it->kind != DOC_MAP)
			continue;
		const struct doc_node *pwn = child(it, "width"), *phn = child(it, "height");
		long long pw = w, ph = h, qw, qh;
		bool hw = node_long(pwn, &pw), hh = node_long(phn, &ph);
		if (!hw)
			pw = w;
		if (!hh)
			ph = h;
		if (hw || hh) {
			shrink(pw, ph, &qw, &qh);
			if (hw ? qw != pw : qw != nw)
				add_set_int(b, qw, "sample.samples[%zu].width", k);
			if (hh ? qh != ph : qh != nh)
				add_set_int(b, qh, "sample.samples[%zu].height", k);
		}
		if (node_long(child(it, "sample_steps"), &v) && v > LIGHT_STEPS)
			add_set_int(b, LIGHT_STEPS, "sample.samples[%zu].sample_steps", k);
		if (video && node_long(child(it, "num_frames"), &v) && v > LIGHT_FRAMES)
			add_set_int(b, LIGHT_FRAMES, "sample.samples[%zu].num_frames", k);
	}
	if (!b->l->n) {
		say(reason, rsz, "%s", _("the samples are already at most 512 px, 20 steps, every 500 "
					 "steps or less often"));
		return FIX_DONE;
	}
	say(reason, rsz, _("samples %lld×%lld, %lld steps, every %lld"), w, h, steps, every);
	return FIX_TODO;
}

static enum fix_status fx_disable_sampling(const struct job *j, struct builder *b,
					   bool keep_batch, char *reason, size_t rsz)
{
	const struct doc_node *train = section(j, "train");
	if (!train) {
		say(reason, rsz, "%s", _("the job has no train section"));
		return FIX_NOT_APPLICABLE;
	}
	if (node_true(child(train, "disable_sampling"))) {
		say(reason, rsz, "%s", _("train.disable_sampling is already true"));
		return FIX_DONE;
	}
	add(b, DOC_EDIT_SET, "true", 0, "train.disable_sampling");
	say(reason, rsz, "%s", _("sampling is on"));
	return FIX_TODO;
}

int fix_frame_grid(const struct job *j)
{
	return j ? job_frame_step(j) : 0; /* the arch table in job.c knows each model's grid */
}

/* Half of v on the grid g·k+1: the grid point nearest v/2 (the lower one on a tie, and always
 * below v), never below the floor. 81 → 41 and 33 → 17 on the 4k+1 grid. */
static long long halve_frames(long long v, int g)
{
	long long half = v / 2;
	long long lo = half >= 1 ? ((half - 1) / g) * g + 1 : 1, hi = lo + g;
	long long n = hi < v && llabs(2 * hi - v) < llabs(2 * lo - v) ? hi : lo;
	return n < FLOOR_FRAMES ? FLOOR_FRAMES : n;
}

static enum fix_status fx_num_frames(const struct job *j, struct builder *b, bool keep_batch,
				     char *reason, size_t rsz)
{
	int g = fix_frame_grid(j);
	if (!g) {
		say(reason, rsz, "%s", _("image model: frame counts do not apply"));
		return FIX_NOT_APPLICABLE;
	}
	const struct doc_node *ds = datasets(j);
	long long v, before = 0, after = 0;
	for (size_t i = 0; ds && i < ds->n; i++) {
		if (node_long(child(ds->items[i], "num_frames"), &v) && v > FLOOR_FRAMES) {
			long long nv = halve_frames(v, g);
			add_set_int(b, nv, "datasets[%zu].num_frames", i);
			if (v > before)
				before = v, after = nv;
		}
		if (node_true(child(ds->items[i], "auto_frame_count")))
			note(b, _("Dataset %zu uses auto_frame_count, which takes every frame of each "
				  "clip whatever num_frames says; turn it off to bound the frames."), i + 1);
	}
	/* The training step failed: its clips are what to shorten; the preview did not fail and
	 * keeps its frames (lighter_sampling is the fix for a preview). */
	bool previews = b->phase != DIAG_P_TRAINING && b->phase != DIAG_P_CACHING;
	const struct doc_node *s = section(j, "sample");
	if (previews && node_long(child(s, "num_frames"), &v) && v > FLOOR_FRAMES) {
		long long nv = halve_frames(v, g);
		add_set_int(b, nv, "sample.num_frames");
		if (v > before)
			before = v, after = nv;
	}
	const struct doc_node *items = child(s, "samples");
	for (size_t k = 0; previews && items && items->kind == DOC_SEQ && k < items->n; k++)
		if (node_long(child(items->items[k], "num_frames"), &v) && v > FLOOR_FRAMES) {
			long long nv = halve_frames(v, g);
			add_set_int(b, nv, "sample.samples[%zu].num_frames", k);
			if (v > before)
				before = v, after = nv;
		}
	if (!b->l->n) {
		say(reason, rsz, _("no clip or preview has more than %d frames"), FLOOR_FRAMES);
		return FIX_DONE;
	}
	say(reason, rsz, _("frames %lld → %lld (%dk+1 grid)"), before, after, g);
	return FIX_TODO;
}

static enum fix_status fx_low_vram(const struct job *j, struct builder *b, bool keep_batch,
				   char *reason, size_t rsz)
{
	if (!j->arch_has_low_vram && !j->arch_has_quantize) {
		say(reason, rsz, _("%s honours neither low_vram nor quantization"),
		    j->arch[0] ? j->arch : "?");
		return FIX_NOT_APPLICABLE;
	}
	const struct doc_node *m = section(j, "model");
	if (!m) {
		say(reason, rsz, "%s", _("the job has no model section"));
		return FIX_NOT_APPLICABLE;
	}
	if (j->arch_has_low_vram && !node_true(child(m, "low_vram")))
		add(b, DOC_EDIT_SET, "true", 0, "model.low_vram");
	if (j->arch_has_quantize) {
		if (!node_true(child(m, "quantize")))
			add(b, DOC_EDIT_SET, "true", 0, "model.quantize");
		/* quantize_te follows quantize when absent; only an explicit false needs writing.
		 * HiDream-O1 has no text-encoder quantization. */
		const struct doc_node *te = child(m, "quantize_te");
		if (te && !node_true(te) && strcmp(j->arch, "hidream_o1") != 0)
			add(b, DOC_EDIT_SET, "true", 0, "model.quantize_te");
	}
	if (j->arch_has_layer_offloading && !node_true(child(m, "layer_offloading")))
		note(b, "%s", _("This architecture can also offload layers to CPU memory "
				"(model.layer_offloading: true). It is experimental and slow, so it is not "
				"turned on here; try it if the job still does not fit."));
	if (!b->l->n) {
		say(reason, rsz, "%s", _("the low-memory settings this architecture has are already on"));
		return FIX_DONE;
	}
	say(reason, rsz, "%s", _("low-memory settings are off"));
	return FIX_TODO;
}

static enum fix_status fx_fresh_worker(const struct job *j, struct builder *b, bool keep_batch,
				       char *reason, size_t rsz)
{
	say(reason, rsz, "%s", _("advice only: nothing in the file changes"));
	note(b, "%s", _("Stop retrying this job as it is. Start it again on a fresh worker or GPU, and "
			"contact support if a configuration that worked before fails there too."));
	return FIX_TODO;
}

static const fix_fn fix_fns[FIX_COUNT] = {
	[FIX_GRADIENT_CHECKPOINTING] = fx_gradient_checkpointing,
	[FIX_BATCH_SIZE] = fx_batch_size,
	[FIX_DROP_LARGEST_BUCKET] = fx_drop_largest_bucket,
	[FIX_LIGHTER_SAMPLING] = fx_lighter_sampling,
	[FIX_DISABLE_SAMPLING] = fx_disable_sampling,
	[FIX_NUM_FRAMES] = fx_num_frames,
	[FIX_LOW_VRAM] = fx_low_vram,
	[FIX_FRESH_WORKER] = fx_fresh_worker,
};

void fix_edits_free(struct fix_edit_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nstrings; i++)
		free(l->strings[i]);
	free(l->strings);
	free(l->edits);
	memset(l, 0, sizeof *l);
}

/* Runs a fix's function into `out` (cleared first). */
static enum fix_status run(const struct job *j, enum fix_id id, bool keep_batch, int phase,
			   struct fix_edit_list *out, char *reason, size_t rsz, bool *oom)
{
	struct builder b = { .l = out, .j = j, .phase = phase };
	memset(out, 0, sizeof *out);
	if (reason && rsz)
		reason[0] = '\0';
	enum fix_status st = fix_fns[id](j, &b, keep_batch, reason, rsz);
	*oom = b.oom;
	if (st != FIX_TODO && out->n) {
		/* A fix that is done or not applicable never edits. */
		for (size_t i = 0; i < out->nstrings; i++)
			free(out->strings[i]);
		free(out->strings), free(out->edits);
		out->strings = NULL, out->edits = NULL, out->n = out->nstrings = 0;
	}
	return st;
}

enum fix_status fix_status(const struct job *j, enum fix_id id, char *reason, size_t reasonsz)
{
	if (reason && reasonsz)
		reason[0] = '\0';
	if (id < 0 || id >= FIX_COUNT)
		return FIX_NOT_APPLICABLE;
	if (!j || !j->doc) {
		say(reason, reasonsz, "%s", _("no job loaded"));
		return FIX_NOT_APPLICABLE;
	}
	struct fix_edit_list l;
	bool oom;
	enum fix_status st = run(j, id, true, 0, &l, reason, reasonsz, &oom);
	fix_edits_free(&l);
	return st;
}

int fix_edits(const struct job *j, enum fix_id id, bool keep_effective_batch,
	      struct fix_edit_list *out, struct err *e)
{
	return fix_edits_after(j, id, keep_effective_batch, 0, out, e);
}

int fix_edits_after(const struct job *j, enum fix_id id, bool keep_effective_batch, int phase,
		    struct fix_edit_list *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (id < 0 || id >= FIX_COUNT)
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", _("unknown fix"));
	if (!j || !j->doc)
		return err_set(e, ERR_DATA, NULL, 0, 0, "%s", _("no job loaded"));
	char reason[256];
	bool oom;
	enum fix_status st = run(j, id, keep_effective_batch, phase, out, reason, sizeof reason, &oom);
	if (oom) {
		fix_edits_free(out);
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	}
	if (st == FIX_NOT_APPLICABLE) {
		fix_edits_free(out);
		return err_set(e, ERR_DATA, doc_name(j->doc), 0, 0, _("%s: not applicable (%s)"),
			       fix_defs[id].name, reason);
	}
	return ERR_OK;
}
