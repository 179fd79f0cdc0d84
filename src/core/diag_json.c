/* diag_json.c — the names of a result's values and its JSON (the report's keys). */
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
