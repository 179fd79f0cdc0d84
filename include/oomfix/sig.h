/* sig.h — the log signatures of SPEC §3.1 and the non-OOM deaths, as PCRE2 patterns.
 *
 * Every pattern is compiled once (JIT when the library has it), matched case-insensitively in
 * byte mode on ANSI-stripped text, with one match context (match, depth and heap limits) and
 * one match data block reused for every line. A line that hits a limit is skipped and counted
 * as a warning. A cheap literal pre-filter runs first: most of a log never reaches PCRE2.
 *
 * This module only says what a piece of text matches; whether a match is real error output or
 * a mention (config echo, comment, prompt) is decided by diag.c, which knows the context.
 */
#ifndef OOMFIX_SIG_H
#define OOMFIX_SIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oomfix/err.h"

enum sig_id {
	SIG_CUDA_OOM, SIG_CUDA_ERROR_OOM, SIG_TORCH_OOM, SIG_OOM_ABORT, SIG_OOM_SKIP,
	SIG_TRIED_TO_ALLOCATE, SIG_ZERO_BYTES_FREE, SIG_CUBLAS_ALLOC_FAILED,
	SIG_OTHER_PROCESS, SIG_HOST_OOM,
	/* non-OOM deaths (other_failure) */
	SIG_MISSING_FILE, SIG_HF_AUTH, SIG_CONFIG_ERROR, SIG_PYTHON_ERROR,
	/* a hint added later (kept last so the ids above do not move) */
	SIG_CUDNN_NO_MEMORY,
	SIG_FRACTION_OOM, SIG_CUBLAS_NOT_INIT,
	SIG_DEVICE_ALLOC_OOM, SIG_CAUGHT_OOM, SIG_AOTI_ALLOC,
	SIG_COUNT
};

enum sig_class {
	SIG_CLASS_OOM,     /* counts as a GPU OOM */
	SIG_CLASS_DETAIL,  /* part of an OOM message; counts only together with another */
	SIG_CLASS_HINT,    /* other_process, host_oom, cudnn_no_memory: shown, not a GPU OOM */
	SIG_CLASS_DEATH,   /* what killed a non-OOM run */
};

struct sig_def {
	enum sig_id id;
	const char *name;     /* "cuda_oom" */
	const char *pattern;  /* PCRE2, compiled caseless, byte mode */
	enum sig_class cls;
};

extern const struct sig_def sig_defs[SIG_COUNT];

#define SIG_BIT(id) (1u << (id))
#define SIG_ALL ((1u << SIG_COUNT) - 1)

/* One match in a piece of text. */
struct sig_match {
	enum sig_id id;
	size_t start, end;  /* byte range of the whole match */
	char cap[64];       /* what the signature keeps: K of oom_skip, a size, "pid size"; or "" */
};

struct sig_matcher;

/* Compiles every pattern. ERR_SOFTWARE with the pattern offset if one does not compile.
 * Free with sig_matcher_free. */
int sig_matcher_new(struct sig_matcher **out, struct err *e);
void sig_matcher_free(struct sig_matcher **m);

/* True when the text holds one of the rare literals some signature needs (case-insensitive).
 * False means no signature can match, so PCRE2 need not run. */
bool sig_prefilter(const char *s, size_t len);

/* Tries the signatures in `mask` on the text; stores at most `max` matches (in sig id order,
 * at most one per id) and returns how many. A pattern that hits a PCRE2 limit is skipped and
 * counted in sig_warnings. */
size_t sig_match(struct sig_matcher *m, const char *s, size_t len, uint32_t mask,
		 struct sig_match *hits, size_t max);

unsigned long sig_warnings(const struct sig_matcher *m); /* lines skipped at a limit */
bool sig_uses_jit(const struct sig_matcher *m);
const char *sig_name(enum sig_id id);                     /* "cuda_oom", or NULL */
int sig_by_name(const char *name);                        /* enum sig_id, or -1 */

#endif
