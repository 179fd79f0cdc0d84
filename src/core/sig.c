/* sig.c — see sig.h. One JIT-compiled pattern per signature: a pattern with a literal start
 * gets PCRE2's fast first-code-unit scan, which a single alternation would lose. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "oomfix/sig.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"

/* Sizes as torch prints them: "2.00 GiB", "36.00 MiB", "0 bytes". */
#define SIZE "(\\d+(?:\\.\\d+)?\\s*(?:[KMGTP]i?B|bytes?|B)\\b)"

const struct sig_def sig_defs[SIG_COUNT] = {
	{ SIG_CUDA_OOM, "cuda_oom", "\\b(?:CUDA|HIP) out of memory", SIG_CLASS_OOM },
	{ SIG_CUDA_ERROR_OOM, "cuda_error_oom",
	  "\\b(?:CUDA|HIP) error: out of memory|\\bhipErrorOutOfMemory\\b"
	  /* the CUDA driver's own code, from trainers that are not PyTorch (Candle) */
	  "|\\bCUDA_ERROR_OUT_OF_MEMORY\\b", SIG_CLASS_OOM },
	{ SIG_TORCH_OOM, "torch_oom", "\\btorch\\.(?:cuda\\.)?OutOfMemoryError\\b", SIG_CLASS_OOM },
	{ SIG_OOM_ABORT, "oom_abort", "\\bOOM during training step \\d+ times in a row",
	  SIG_CLASS_OOM },
	{ SIG_OOM_SKIP, "oom_skip", "\\bOOM during training step, skipping batch (\\d+)/\\d+",
	  SIG_CLASS_OOM },
	{ SIG_TRIED_TO_ALLOCATE, "tried_to_allocate", "\\bTried to allocate " SIZE,
	  SIG_CLASS_DETAIL },
	{ SIG_ZERO_BYTES_FREE, "zero_bytes_free", "(?<![\\d.])0 bytes (?:is )?free\\b",
	  SIG_CLASS_DETAIL },
	{ SIG_CUBLAS_ALLOC_FAILED, "cublas_alloc_failed", "\\bCUBLAS_STATUS_ALLOC_FAILED\\b",
	  SIG_CLASS_OOM },
	{ SIG_OTHER_PROCESS, "other_process", "\\bProcess (\\d+) has " SIZE " memory in use",
	  SIG_CLASS_HINT },
	{ SIG_HOST_OOM, "host_oom",
	  "\\bOut of memory: Kill(?:ed)? process\\b"
	  "|\\binvoked oom-killer\\b|\\boom-kill:"
	  "|\\bSIGKILL\\b|killed by signal: Killed"
	  "|\\bexit(?:ed)?\\s+(?:with\\s+)?(?:status|code)\\s*[:=]?\\s*(?:137|-9)\\b"
	  "|^\\s*Killed\\s*$|\\bline \\d+:\\s+\\d+ Killed\\b"
	  /* bash job control: "[1]+  Killed   python run.py ..." */
	  "|^\\[\\d+\\][+-]?\\s+Killed\\b",
	  SIG_CLASS_HINT },
	{ SIG_MISSING_FILE, "missing_file", "\\bFileNotFoundError\\b|\\bNo such file or directory\\b",
	  SIG_CLASS_DEATH },
	{ SIG_HF_AUTH, "hf_auth",
	  "\\b(?:GatedRepoError|LocalTokenNotFoundError|RepositoryNotFoundError)\\b"
	  "|\\b401\\b[^\\n]{0,40}(?:Unauthorized|Client Error)"
	  "|\\bAccess to model \\S+ is restricted|\\bgated repo\\b"
	  /* not a bare HF_TOKEN: "Environment variable HF_TOKEN not set" is the config loader */
	  "|\\bInvalid (?:user )?token\\b"
	  "|\\bhugging\\s?face(?:[_ -]?hub)?\\b[^\\n]{0,40}\\btoken\\b",
	  SIG_CLASS_DEATH },
	{ SIG_CONFIG_ERROR, "config_error",
	  "\\byaml\\.(?:scanner|parser)\\.|\\b(?:ScannerError|ParserError)\\b"
	  "|\\bEnvironment variable \\S+ (?:is )?not set\\b|\\bmutually exclusive\\b"
	  "|\\bValueError: [^\\n]*\\bconfig",
	  SIG_CLASS_DEATH },
	{ SIG_PYTHON_ERROR, "python_error",
	  "^\\s*(?:[A-Za-z_]\\w*\\.)*[A-Za-z_]\\w*(?:Error|Exception)(?::\\s|$)", SIG_CLASS_DEATH },
	/* cuDNN's own allocation failure. SPEC §3.1 does not count it as a GPU OOM (only cuBLAS's
	 * is listed), but a user should hear that memory was involved. */
	{ SIG_CUDNN_NO_MEMORY, "cudnn_no_memory", "\\bCUDNN_STATUS_NOT_ENOUGH_MEMORY\\b",
	  SIG_CLASS_HINT },
	/* torch's caching allocator refusing to pass a per-process memory fraction (ComfyUI sets
	 * one): a GPU OOM without the words "out of memory" before it */
	{ SIG_FRACTION_OOM, "memory_fraction_oom",
	  "\\bAllocation on device \\d+ would exceed allowed memory", SIG_CLASS_OOM },
	/* cuBLAS could not create its handle: at load or in step 1 usually a card with no room
	 * left, but not certainly, so a hint */
	{ SIG_CUBLAS_NOT_INIT, "cublas_not_initialized", "\\bCUBLAS_STATUS_NOT_INITIALIZED\\b",
	  SIG_CLASS_HINT },
	/* ComfyUI prints a caught torch.OutOfMemoryError by its text alone: "!!! Exception during
	 * processing !!! Allocation on device" (nothing after it; the fraction form says more) */
	{ SIG_DEVICE_ALLOC_OOM, "allocation_on_device", "\\bAllocation on device\\s*$",
	  SIG_CLASS_OOM },
	/* a trainer that catches an OOM and goes on says so: "Preview 2/4 failed
	 * (OutOfMemoryError) — training continues" (SPEC §3.3: its catch-and-continue message) */
	{ SIG_CAUGHT_OOM, "caught_oom",
	  "\\bfailed\\b[^\\n]{0,60}\\((?:torch\\.)?(?:cuda\\.)?OutOfMemoryError\\)", SIG_CLASS_OOM },
	/* an AOTInductor-compiled model could not allocate its buffer: probably out of GPU memory,
	 * but the call does not say why, so a hint (SPEC §3.6) */
	{ SIG_AOTI_ALLOC, "aoti_alloc_failed",
	  "\\baoti_torch_empty_strided\\b[^\\n]*\\bAPI call failed\\b", SIG_CLASS_HINT },
};

/* The prefilter's table: every signature above needs one of these (compared case-insensitively);
 * a line holding none never reaches PCRE2. A new signature registers one of its rare literals
 * here, or its lines are never matched (its test in tests/diag/test_sig.c goes through this
 * prefilter and fails). */
static const char *const prefilter_lits[] = {
	"memory", "oom", "cublas", "kill", "exit", "allocate", "bytes", "error", "exception",
	"no such file", "401", "access to", "token", "environment variable", "mutually exclusive",
	"gated repo", "cudnn_status", "aoti_torch_empty",
};
#define NLITS (sizeof prefilter_lits / sizeof prefilter_lits[0])
_Static_assert(NLITS <= 32, "first_byte holds one bit per literal");

static uint32_t first_byte[256]; /* byte → bit set of literals that start with it */
static pthread_once_t first_once = PTHREAD_ONCE_INIT; /* the UI diagnoses in a worker thread */

static void prefilter_init(void)
{
	for (size_t i = 0; i < NLITS; i++) {
		unsigned char c = (unsigned char)prefilter_lits[i][0];
		first_byte[c] |= UINT32_C(1) << i;
		if (c >= 'a' && c <= 'z')
			first_byte[c - 32] |= UINT32_C(1) << i;
	}
}

static bool lit_at(const unsigned char *s, size_t avail, const char *lit)
{
	size_t i;

	for (i = 0; lit[i]; i++) {
		unsigned char c;
		if (i >= avail)
			return false;
		c = s[i];
		if (c >= 'A' && c <= 'Z')
			c += 32;
		if (c != (unsigned char)lit[i])
			return false;
	}
	return true;
}

bool sig_prefilter(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	pthread_once(&first_once, prefilter_init);
	for (size_t i = 0; i < len; i++) {
		uint32_t bits = first_byte[u[i]];
		while (bits) {
			unsigned k = (unsigned)__builtin_ctz(bits);
			bits &= bits - 1;
			if (lit_at(u + i, len - i, prefilter_lits[k]))
				return true;
		}
	}
	return false;
}

struct sig_matcher {
	pcre2_code *code[SIG_COUNT];
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	bool jit;
	unsigned long warnings;
};

void sig_matcher_free(struct sig_matcher **pm)
{
	struct sig_matcher *m;

	if (!pm || !*pm)
		return;
	m = *pm;
	for (int i = 0; i < SIG_COUNT; i++)
		pcre2_code_free(m->code[i]);
	pcre2_match_data_free(m->md);
	pcre2_match_context_free(m->mctx);
	free(m);
	*pm = NULL;
}

int sig_matcher_new(struct sig_matcher **out, struct err *e)
{
	struct sig_matcher *m = calloc(1, sizeof *m);
	uint32_t have_jit = 0;

	*out = NULL;
	if (!m)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
	pthread_once(&first_once, prefilter_init);
	pcre2_config(PCRE2_CONFIG_JIT, &have_jit);
	m->jit = have_jit != 0;
	for (int i = 0; i < SIG_COUNT; i++) {
		int ec;
		PCRE2_SIZE eo;
		m->code[i] = pcre2_compile((PCRE2_SPTR)sig_defs[i].pattern, PCRE2_ZERO_TERMINATED,
					   PCRE2_CASELESS | PCRE2_MULTILINE, &ec, &eo, NULL);
		if (!m->code[i]) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(ec, msg, sizeof msg);
			sig_matcher_free(&m);
			return err_set(e, ERR_SOFTWARE, NULL, 0, 0,
				       _("signature %s does not compile at offset %zu: %s"),
				       sig_defs[i].name, (size_t)eo, (const char *)msg);
		}
		/* no JIT (SELinux, exotic CPU): the interpreter gives the same answers, slower */
		if (m->jit && pcre2_jit_compile(m->code[i], PCRE2_JIT_COMPLETE) != 0)
			m->jit = false;
	}
	m->md = pcre2_match_data_create(8, NULL);
	m->mctx = pcre2_match_context_create(NULL);
	if (!m->md || !m->mctx) {
		sig_matcher_free(&m);
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
	}
	/* a line is at most a segment cap long; these limits keep a hostile one cheap */
	pcre2_set_match_limit(m->mctx, 200000);
	pcre2_set_depth_limit(m->mctx, 2000);
	pcre2_set_heap_limit(m->mctx, 4096); /* KiB */
	*out = m;
	return ERR_OK;
}

/* Joins the captured groups of the last match with a space into cap. */
static void keep_captures(struct sig_matcher *m, int rc, const char *s, char *cap, size_t capsz)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
	size_t w = 0;

	cap[0] = '\0';
	for (int g = 1; g < rc; g++) {
		size_t a = ov[2 * g], b = ov[2 * g + 1];
		if (a == PCRE2_UNSET || b < a)
			continue;
		if (w && w + 1 < capsz)
			cap[w++] = ' ';
		for (size_t k = a; k < b && w + 1 < capsz; k++)
			cap[w++] = s[k];
	}
	cap[w] = '\0';
}

size_t sig_match(struct sig_matcher *m, const char *s, size_t len, uint32_t mask,
		 struct sig_match *hits, size_t max)
{
	size_t n = 0;

	for (int i = 0; i < SIG_COUNT && n < max; i++) {
		int rc;
		if (!(mask & SIG_BIT(i)))
			continue;
		if (m->jit)
			rc = pcre2_jit_match(m->code[i], (PCRE2_SPTR)s, len, 0, 0, m->md, m->mctx);
		else
			rc = pcre2_match(m->code[i], (PCRE2_SPTR)s, len, 0, 0, m->md, m->mctx);
		if (rc == PCRE2_ERROR_NOMATCH)
			continue;
		if (rc < 0) {
			/* match/depth/heap limit or JIT stack: give up on this line, say so */
			m->warnings++;
			continue;
		}
		{
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
			hits[n].id = (enum sig_id)i;
			hits[n].start = ov[0];
			hits[n].end = ov[1];
			keep_captures(m, rc == 0 ? 1 : rc, s, hits[n].cap, sizeof hits[n].cap);
			n++;
		}
	}
	return n;
}

unsigned long sig_warnings(const struct sig_matcher *m) { return m->warnings; }
bool sig_uses_jit(const struct sig_matcher *m) { return m->jit; }

const char *sig_name(enum sig_id id)
{
	if ((int)id < 0 || id >= SIG_COUNT)
		return NULL;
	return sig_defs[id].name;
}

int sig_by_name(const char *name)
{
	for (int i = 0; i < SIG_COUNT; i++)
		if (name && !strcmp(sig_defs[i].name, name))
			return i;
	return -1;
}
