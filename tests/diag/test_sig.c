/* Unit tests for sig: every signature on its real wording, captures, and the decoys. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "oomfix/sig.h"

static struct sig_matcher *m;

static int setup(void **state)
{
	struct err e;
	(void)state;
	return sig_matcher_new(&m, &e) == ERR_OK ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sig_matcher_free(&m);
	return 0;
}

/* The ids that match s, as a bit set (after the pre-filter, as diag uses it). */
static uint32_t ids(const char *s, struct sig_match *out)
{
	struct sig_match hits[SIG_COUNT];
	uint32_t bits = 0;
	size_t n;

	if (!sig_prefilter(s, strlen(s)))
		return 0;
	n = sig_match(m, s, strlen(s), SIG_ALL, hits, SIG_COUNT);
	for (size_t i = 0; i < n; i++) {
		bits |= SIG_BIT(hits[i].id);
		if (out && hits[i].id == out->id)
			*out = hits[i];
	}
	return bits;
}

static void test_positive(void **state)
{
	static const struct { const char *text; enum sig_id id; } cases[] = {
		{ "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", SIG_CUDA_OOM },
		{ "RuntimeError: HIP out of memory. Tried to allocate 1.00 GiB", SIG_CUDA_OOM },
		{ "torch.AcceleratorError: CUDA error: out of memory", SIG_CUDA_ERROR_OOM },
		{ "torch.OutOfMemoryError: CUDA out of memory.", SIG_TORCH_OOM },
		{ "torch.cuda.OutOfMemoryError: CUDA out of memory.", SIG_TORCH_OOM },
		{ "RuntimeError: OOM during training step 3 times in a row, aborting training", SIG_OOM_ABORT },
		{ "# OOM during training step, skipping batch 2/3 #", SIG_OOM_SKIP },
		{ "CUDA out of memory. Tried to allocate 36.00 MiB (GPU 0; 7.93 GiB total capacity)", SIG_TRIED_TO_ALLOCATE },
		{ "GPU 0 has a total capacity of 23.55 GiB of which 0 bytes is free.", SIG_ZERO_BYTES_FREE },
		{ "(GPU 0; 7.93 GiB total capacity; 0 bytes free; 7.2 GiB reserved)", SIG_ZERO_BYTES_FREE },
		{ "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", SIG_CUBLAS_ALLOC_FAILED },
		{ "of which 1.06 GiB is free. Process 12345 has 22.47 GiB memory in use.", SIG_OTHER_PROCESS },
		{ "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)", SIG_FRACTION_OOM },
		{ "!!! Exception during processing !!! Allocation on device 1 would exceed allowed memory.", SIG_FRACTION_OOM },
		{ "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", SIG_CUBLAS_NOT_INIT },
		{ "Error: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")", SIG_CUDA_ERROR_OOM },
		{ "!!! Exception during processing !!! Allocation on device ", SIG_DEVICE_ALLOC_OOM },
		{ "torch.OutOfMemoryError: Allocation on device", SIG_DEVICE_ALLOC_OOM },
		{ "Preview 2/4 failed (OutOfMemoryError) — training continues", SIG_CAUGHT_OOM },
		{ "validation image 3 failed (torch.cuda.OutOfMemoryError); continuing", SIG_CAUGHT_OOM },
		{ "Error: aoti_torch_empty_strided(4, int_array_14, int_array_15, cached_torch_dtype_bfloat16, cached_torch_device_type_cuda, this->device_idx_, &buf3_handle) API call failed at model.wrapper.cpp, line 2210", SIG_AOTI_ALLOC },
		{ "[ 812.3] Out of memory: Killed process 48213 (python) total-vm:47791204kB", SIG_HOST_OOM },
		{ "Killed", SIG_HOST_OOM },
		{ "./train.sh: line 7: 91234 Killed                  python run.py job.yaml", SIG_HOST_OOM },
		{ "run.py exited with status 137", SIG_HOST_OOM },
		{ "Process finished with exit code 137", SIG_HOST_OOM },
		{ "child received SIGKILL", SIG_HOST_OOM },
		{ "FileNotFoundError: [Errno 2] No such file or directory: '/data/x'", SIG_MISSING_FILE },
		{ "huggingface_hub.errors.GatedRepoError: 401 Client Error.", SIG_HF_AUTH },
		{ "Access to model black-forest-labs/FLUX.1-dev is restricted.", SIG_HF_AUTH },
		{ "yaml.scanner.ScannerError: mapping values are not allowed here", SIG_CONFIG_ERROR },
		{ "ValueError: Environment variable HF_TOKEN not set", SIG_CONFIG_ERROR },
		{ "ValueError: quantize and low_vram are mutually exclusive", SIG_CONFIG_ERROR },
		{ "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x92", SIG_PYTHON_ERROR },
		{ "cuda OUT OF MEMORY", SIG_CUDA_OOM }, /* case-insensitive */
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint32_t got = ids(cases[i].text, NULL);
		if (!(got & SIG_BIT(cases[i].id)))
			fail_msg("%s did not match: %s", sig_name(cases[i].id), cases[i].text);
	}
}

static void test_captures(void **state)
{
	struct sig_match h;
	(void)state;
	h.id = SIG_OOM_SKIP;
	assert_true(ids("# OOM during training step, skipping batch 3/3 #", &h) & SIG_BIT(SIG_OOM_SKIP));
	assert_string_equal(h.cap, "3");
	h.id = SIG_TRIED_TO_ALLOCATE;
	ids("CUDA out of memory. Tried to allocate 216.00 MiB. GPU 0", &h);
	assert_string_equal(h.cap, "216.00 MiB");
	h.id = SIG_OTHER_PROCESS;
	ids("Process 2231 has 20.06 GiB memory in use.", &h);
	assert_string_equal(h.cap, "2231 20.06 GiB");
}

static void test_decoys(void **state)
{
	static const char *const decoys[] = {
		"/home/mo/datasets/oom_tests/glitch_posters",
		"try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation",
		"oom_tests: 57 images",
		"my_first_lora_v1:   5%|#         | 150/3000 [04:10<1:19:12,  1.67s/it, lr: 1.0e-04 loss: 3.215e-01]",
		"Generating Samples:  30%|###       | 3/10 [00:41<01:36, 13.8s/it]",
		"the room was full of memories",
		"a band called Killed Process",
		"exit status 1",
		"# OOM during training was fixed by lowering the batch",
		"10 bytes free",
		"Error running job: out of disk",
		"a prompt about an Allocation on device shelves, in a studio",
		"sample 3 failed (ValueError) — training continues",
		"aoti_torch_empty_strided returned a tensor",
	};
	(void)state;
	for (size_t i = 0; i < sizeof decoys / sizeof decoys[0]; i++) {
		uint32_t got = ids(decoys[i], NULL) & ~SIG_BIT(SIG_PYTHON_ERROR);
		if (got)
			fail_msg("decoy matched (bits %#x): %s", got, decoys[i]);
	}
}

static void test_prefilter(void **state)
{
	const char *bar = "job:  50%|#####     | 5/10 [00:05<00:05,  1.00s/it, lr: 1.0e-04 loss: 0.5]";
	(void)state;
	assert_false(sig_prefilter(bar, strlen(bar)));
	assert_false(sig_prefilter("", 0));
	assert_true(sig_prefilter("xx MEMORY yy", 12));
	assert_true(sig_prefilter("Traceback: KeyError", 19));
	/* a NUL in the text does not stop the search */
	assert_true(sig_prefilter("ab\0CUBLAS", 9));
	/* every signature's own sample passes the pre-filter: none is lost by it */
	assert_true(sig_prefilter("Killed", 6));
	assert_true(sig_prefilter("Access to model x is restricted", 31));
}

static void test_names(void **state)
{
	(void)state;
	for (int i = 0; i < SIG_COUNT; i++)
		assert_int_equal(sig_by_name(sig_name((enum sig_id)i)), i);
	assert_int_equal(sig_by_name("nope"), -1);
	assert_null(sig_name(SIG_COUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_positive), cmocka_unit_test(test_captures),
		cmocka_unit_test(test_decoys), cmocka_unit_test(test_prefilter),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
