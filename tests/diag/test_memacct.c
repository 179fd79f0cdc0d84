/* Unit tests for memacct: every wording of PyTorch's OOM message read into the account, the
 * environment rule and the fragmentation hint, and the "memory" JSON object of a diagnosis. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/diag.h"
#include "oomfix/json.h"
#include "oomfix/memacct.h"

#define KiB (1LL << 10)
#define MiB (1LL << 20)
#define GiB (1LL << 30)
/* torch prints two decimals: x.yz units, rounded to the byte as memacct does */
#define SZ(whole, cents, unit) ((int64_t)(((whole) * 100 + (cents)) * (unit) * 2 / 100 + 1) / 2)

static struct memacct read_msg(const char *s)
{
	struct memacct m;
	memacct_init(&m);
	memacct_parse(&m, s, strlen(s));
	memacct_finish(&m);
	return m;
}

static void sizes(void **state)
{
	int64_t b;
	(void)state;
	assert_int_equal(memacct_size("0 bytes", 7, &b), 7);
	assert_int_equal(b, 0);
	assert_int_equal(memacct_size("20 bytes is", 11, &b), 8);
	assert_int_equal(b, 20);
	assert_int_equal(memacct_size("2.00 GiB.", 9, &b), 8);
	assert_int_equal(b, 2 * GiB);
	assert_int_equal(memacct_size("512.50 KiB", 10, &b), 10);
	assert_int_equal(b, 512 * KiB + KiB / 2);
	assert_int_equal(memacct_size("43.94 MiB", 9, &b), 9);
	assert_int_equal(b, SZ(43, 94, MiB));
	assert_int_equal(memacct_size("7 GiBs", 6, &b), 0); /* not a unit */
	assert_int_equal(memacct_size("GiB", 3, &b), 0);
	assert_int_equal(memacct_size("99999999999999999999 GiB", 24, &b), 24); /* saturates */
	assert_true(b == MEMACCT_SIZE_MAX);
}

/* torch 2.5+: the process part names this process */
static void torch25_this_process(void **state)
{
	struct memacct m = read_msg(
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
		"total capacity of 23.55 GiB of which 1.06 GiB is free. Including non-PyTorch memory, "
		"this process has 22.47 GiB memory in use. Of the allocated memory 21.80 GiB is "
		"allocated by PyTorch, and 251.38 MiB is reserved by PyTorch but unallocated. If "
		"reserved but unallocated memory is large try setting "
		"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.");
	(void)state;
	assert_true(m.present);
	assert_int_equal(m.requested, 2 * GiB);
	assert_int_equal(m.capacity, SZ(23, 55, GiB));
	assert_int_equal(m.free, SZ(1, 6, GiB));
	assert_int_equal(m.this_process, SZ(22, 47, GiB));
	assert_int_equal(m.this_pid, -1);
	assert_int_equal(m.nother, 0);
	assert_int_equal(m.pytorch_allocated, SZ(21, 80, GiB));
	assert_int_equal(m.pytorch_reserved_unallocated, SZ(251, 38, MiB));
	assert_int_equal(m.private_pools, -1);
	assert_int_equal(m.unaccounted, SZ(23, 55, GiB) - SZ(1, 6, GiB) - SZ(22, 47, GiB));
	assert_false(memacct_environment(&m));
	assert_false(memacct_fragmented(&m));
}

/* 2.1 misspells capacity; in a container the job is one of the "Process N" lines */
static void torch21_capacty_process(void **state)
{
	struct memacct m = read_msg(
		"CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 23.65 GiB "
		"of which 0 bytes is free. Process 2210 has 23.63 GiB memory in use. Of the allocated "
		"memory 22.91 GiB is allocated by PyTorch, and 312.50 MiB is reserved by PyTorch but "
		"unallocated. If reserved but unallocated memory is large try setting max_split_size_mb "
		"to avoid fragmentation.");
	(void)state;
	assert_int_equal(m.capacity, SZ(23, 65, GiB));
	assert_int_equal(m.free, 0);
	assert_int_equal(m.this_process, SZ(23, 63, GiB));
	assert_int_equal(m.this_pid, 2210);
	assert_int_equal(m.nother, 0);
	assert_int_equal(m.others_total, 0);
	assert_false(memacct_environment(&m));
}

/* SPEC §3.6: two other processes hold 13 GiB of a 47.5 GiB card beside a job at 34 GiB; the
 * quarter/half rule misses it (the job holds more than half), but the job would have fitted
 * alone: others + free cover the 4 GiB request, 34 + 4 GiB is under 90 % of the card. Both with
 * "this process has" and with the job listed as a process (a container hides its pid). */
static void would_fit_alone(void **state)
{
	static const char *const msgs[] = {
		"CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 47.50 GiB "
		"of which 120.00 MiB is free. Process 4101 has 8.00 GiB memory in use. Process 4388 has "
		"5.00 GiB memory in use. Including non-PyTorch memory, this process has 34.00 GiB memory "
		"in use. Of the allocated memory 33.10 GiB is allocated by PyTorch, and 410.00 MiB is "
		"reserved by PyTorch but unallocated.",
		"CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 47.50 GiB "
		"of which 120.00 MiB is free. Process 4101 has 8.00 GiB memory in use. Process 4388 has "
		"5.00 GiB memory in use. Process 77 has 34.00 GiB memory in use. Of the allocated memory "
		"33.10 GiB is allocated by PyTorch, and 410.00 MiB is reserved by PyTorch but "
		"unallocated.",
	};
	(void)state;
	for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
		struct memacct m = read_msg(msgs[i]);
		assert_int_equal(m.job, SZ(34, 0, GiB));
		assert_int_equal(m.nother, 2);
		assert_int_equal(m.others_total, SZ(13, 0, GiB));
		assert_false(memacct_environment(&m));
		assert_true(memacct_fits_alone(&m));
	}
	/* the job alone would need more than 90 % of the card: its settings, not the others */
	struct memacct big = read_msg(
		"CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 47.50 GiB "
		"of which 120.00 MiB is free. Process 4101 has 8.00 GiB memory in use. Including "
		"non-PyTorch memory, this process has 39.00 GiB memory in use.");
	assert_false(memacct_fits_alone(&big));
	/* nobody else listed: nothing to stop */
	struct memacct alone = read_msg(
		"CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 47.50 GiB "
		"of which 1.00 GiB is free. Including non-PyTorch memory, this process has 34.00 GiB "
		"memory in use.");
	assert_false(memacct_fits_alone(&alone));
}

/* the field report: two processes seen hold 13 GiB of 47.5, nothing is free */
static void tenant_is_environment(void **state)
{
	struct memacct m = read_msg(
		"CUDA out of memory. Tried to allocate 48.00 MiB. GPU 0 has a total capacity of 47.53 GiB "
		"of which 43.94 MiB is free. Process 654925 has 5.68 GiB memory in use. Process 706098 "
		"has 7.62 GiB memory in use. Of the allocated memory 7.10 GiB is allocated by PyTorch, "
		"and 212.50 MiB is reserved by PyTorch but unallocated.");
	(void)state;
	assert_int_equal(m.this_pid, 706098); /* the smallest holding PyTorch's 7.31 GiB */
	assert_int_equal(m.this_process, SZ(7, 62, GiB));
	assert_int_equal(m.nother, 1);
	assert_int_equal(m.other[0].pid, 654925);
	assert_int_equal(m.other[0].bytes, SZ(5, 68, GiB));
	assert_int_equal(m.unaccounted,
			 SZ(47, 53, GiB) - SZ(43, 94, MiB) - SZ(5, 68, GiB) - SZ(7, 62, GiB));
	assert_true(memacct_environment(&m));
	assert_false(memacct_fragmented(&m));
}

/* without PyTorch's numbers (a message cut short) no process is taken for the job, and the
 * rule still holds on the unaccounted part when the processes seen hold less than half */
static void cut_message_processes_only(void **state)
{
	struct memacct m = read_msg(
		"CUDA out of memory. Tried to allocate 48.00 MiB. GPU 0 has a total capacity of 47.53 GiB "
		"of which 43.94 MiB is free. Process 654925 has 5.68 GiB memory in use. Process 706098 "
		"has 7.62 GiB memory in use.");
	struct memacct one = read_msg(
		"CUDA out of memory. Tried to allocate 48.00 MiB. GPU 0 has a total capacity of 23.55 GiB "
		"of which 10.00 MiB is free. Process 77 has 23.40 GiB memory in use.");
	struct memacct none = read_msg(
		"CUDA out of memory. Tried to allocate 48.00 MiB. GPU 0 has a total capacity of 23.55 GiB "
		"of which 10.00 MiB is free.");
	(void)state;
	assert_int_equal(m.this_process, -1);
	assert_int_equal(m.job, -1);
	assert_int_equal(m.nother, 2);
	assert_true(memacct_environment(&m));
	assert_false(memacct_environment(&one));  /* most likely the job itself */
	assert_false(memacct_environment(&none)); /* nothing seen: cannot tell */
	assert_true(none.present);
	assert_int_equal(none.unaccounted, SZ(23, 55, GiB) - SZ(0, 1000, MiB));
}

/* torch 1.x: sizes before their words, in a parenthesis; reserved in total by PyTorch */
static void torch1_paren(void **state)
{
	struct memacct m = read_msg(
		"RuntimeError: CUDA out of memory. Tried to allocate 36.00 MiB (GPU 0; 7.93 GiB total "
		"capacity; 4.43 GiB already allocated; 0 bytes free; 6.40 GiB reserved in total by "
		"PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to "
		"avoid fragmentation.");
	(void)state;
	assert_int_equal(m.requested, 36 * MiB);
	assert_int_equal(m.capacity, SZ(7, 93, GiB));
	assert_int_equal(m.free, 0);
	assert_int_equal(m.pytorch_allocated, SZ(4, 43, GiB));
	assert_int_equal(m.pytorch_reserved_unallocated, SZ(6, 40, GiB) - SZ(4, 43, GiB));
	assert_int_equal(m.this_process, -1);
	assert_int_equal(m.job, SZ(6, 40, GiB)); /* at least what PyTorch reserved */
	assert_false(memacct_environment(&m));
	assert_true(memacct_fragmented(&m)); /* 1.97 GiB unused beside 4.43 allocated */
}

/* the oldest form says "cached" for reserved, and "MiB free" */
static void torch1_cached(void **state)
{
	struct memacct m = read_msg(
		"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total "
		"capacity; 4.29 GiB already allocated; 10.12 MiB free; 4.46 GiB cached)");
	(void)state;
	assert_int_equal(m.free, SZ(10, 12, MiB));
	assert_int_equal(m.pytorch_reserved_unallocated, SZ(4, 46, GiB) - SZ(4, 29, GiB));
	/* 10.76 − 4.46 − 0.01: 6.3 GiB held by something else, the job under half */
	assert_true(memacct_environment(&m));
}

static void private_pools_and_kib(void **state)
{
	struct memacct m = read_msg(
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 KiB. GPU 0 has a "
		"total capacity of 79.25 GiB of which 2.50 MiB is free. Including non-PyTorch memory, "
		"this process has 79.24 GiB memory in use. Of the allocated memory 60.00 GiB is "
		"allocated by PyTorch, with 4.00 GiB allocated in private pools (e.g., CUDA Graphs), and "
		"18.00 GiB is reserved by PyTorch but unallocated.");
	(void)state;
	assert_int_equal(m.requested, 512 * KiB);
	assert_int_equal(m.private_pools, 4 * GiB);
	assert_int_equal(m.pytorch_reserved_unallocated, 18 * GiB);
	assert_true(memacct_fragmented(&m)); /* 18 ≥ 60 / 4 */
	assert_false(memacct_environment(&m));
}

/* the per-process fraction message spans lines, the limit's value on a line of its own */
static void fraction_lines(void **state)
{
	static const char *const lines[] = {
		"torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)",
		"Currently allocated     : 3.02 GiB",
		"Requested               : 20.00 MiB",
		"Device limit            : 23.99 GiB",
		"Free (according to CUDA): 14.25 GiB",
		"PyTorch limit (set by user-supplied memory fraction)",
		": 3.00 GiB",
	};
	struct memacct m;
	(void)state;
	memacct_init(&m);
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		memacct_parse(&m, lines[i], strlen(lines[i]));
	memacct_finish(&m);
	assert_true(m.present);
	assert_int_equal(m.pytorch_allocated, SZ(3, 2, GiB));
	assert_int_equal(m.requested, 20 * MiB);
	assert_int_equal(m.capacity, SZ(23, 99, GiB));
	assert_int_equal(m.free, SZ(14, 25, GiB));
	assert_int_equal(m.limit, 3 * GiB);
	assert_false(memacct_environment(&m)); /* the limit is the cause, not another tenant */
}

static void no_numbers(void **state)
{
	struct memacct m = read_msg("RuntimeError: CUDA error: out of memory");
	int64_t part[MEMACCT_NPARTS];
	(void)state;
	assert_false(m.present);
	assert_false(memacct_parts(&m, part));
	assert_false(memacct_environment(&m));
	assert_false(memacct_fragmented(&m));
}

/* the same message printed twice (Error running job, then the traceback) is read once */
static void repeated_message(void **state)
{
	const char *s = "CUDA out of memory. Tried to allocate 8.00 MiB. GPU 0 has a total capacity "
			"of 15.77 GiB of which 4.38 MiB is free. Process 9 has 3.00 GiB memory in use.";
	struct memacct m;
	(void)state;
	memacct_init(&m);
	memacct_parse(&m, s, strlen(s));
	memacct_parse(&m, s, strlen(s));
	memacct_finish(&m);
	assert_int_equal(m.nother, 1);
	assert_int_equal(m.others_total, 3 * GiB);
}

static void parts_add_up(void **state)
{
	struct memacct m = read_msg(
		"CUDA out of memory. Tried to allocate 48.00 MiB. GPU 0 has a total capacity of 47.53 GiB "
		"of which 43.94 MiB is free. Process 654925 has 5.68 GiB memory in use. Process 706098 "
		"has 7.62 GiB memory in use. Of the allocated memory 7.10 GiB is allocated by PyTorch, "
		"and 212.50 MiB is reserved by PyTorch but unallocated.");
	int64_t part[MEMACCT_NPARTS], sum = 0;
	char buf[32];
	(void)state;
	assert_true(memacct_parts(&m, part));
	for (int i = 0; i < MEMACCT_NPARTS; i++)
		sum += part[i];
	assert_int_equal(sum, m.capacity);
	memacct_format(part[MEMACCT_UNACCOUNTED], buf, sizeof buf);
	assert_string_equal(buf, "34.19 GiB");
	memacct_format(0, buf, sizeof buf);
	assert_string_equal(buf, "0 B");
}

/* The "memory" object of the diagnosis JSON: exact names, null when not said, null without. */
static char *memory_json(const char *log)
{
	struct diag_result *r = malloc(sizeof *r);
	struct err e;
	struct json j;
	char *out = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&out, &n);

	assert_non_null(r);
	assert_non_null(fp);
	assert_int_equal(diag_buffer(log, strlen(log), NULL, r, &e), ERR_OK);
	json_init(&j, fp, false);
	json_obj_begin(&j);
	diag_json_memory(&j, r);
	json_obj_end(&j);
	json_finish(&j);
	fclose(fp);
	free(r);
	return out;
}

/* A log can claim any size: sizes saturate and no sum of the account wraps (issue: UBSan saw a
 * signed overflow in memacct_finish for "5074343711323766425 MiB"). */
static void huge_sizes_saturate(void **state)
{
	int64_t b, part[MEMACCT_NPARTS], sum = 0;
	struct memacct m;
	(void)state;
	assert_int_equal(memacct_size("5074343711323766425 MiB", 23, &b), 23);
	assert_true(b == MEMACCT_SIZE_MAX);
	assert_int_equal(memacct_size("8589934591.99 GiB", 17, &b), 17);
	assert_true(b > 0 && b <= MEMACCT_SIZE_MAX);
	static const char msg[] = "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
			  "5074343711323766425 MiB of which 5074343711323766425 MiB is free. "
			  "Process 1 has 5074343711323766425 MiB memory in use. "
			  "Process 2 has 5074343711323766425 MiB memory in use. "
			  "Process 3 has 5074343711323766425 MiB memory in use. "
			  "Of the allocated memory 5074343711323766425 MiB is allocated by PyTorch, "
			  "and 5074343711323766425 MiB is reserved by PyTorch but unallocated.";
	memacct_init(&m);
	memacct_parse(&m, msg, strlen(msg));
	memacct_finish(&m);
	assert_true(m.capacity == MEMACCT_SIZE_MAX);
	assert_true(m.others_total >= MEMACCT_SIZE_MAX);
	assert_true(m.job >= MEMACCT_SIZE_MAX);
	assert_true(m.unaccounted == 0);
	assert_true(memacct_parts(&m, part));
	for (int i = 0; i < MEMACCT_NPARTS; i++) {
		assert_true(part[i] >= 0);
		sum += part[i];
	}
	assert_true(sum <= m.capacity);
}

static void json_object(void **state)
{
	char *s = memory_json(
		"Traceback (most recent call last):\n"
		"  File \"run.py\", line 120, in <module>\n"
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
		"capacity of 23.55 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this "
		"process has 22.47 GiB memory in use. Of the allocated memory 21.80 GiB is allocated by "
		"PyTorch, and 251.38 MiB is reserved by PyTorch but unallocated.\n");
	(void)state;
	assert_non_null(strstr(s, "\"capacity\":25286619955"));
	assert_non_null(strstr(s, "\"free\":1138166333"));
	assert_non_null(strstr(s, "\"requested\":2147483648"));
	assert_non_null(strstr(s, "\"this_process\":24126978785"));
	assert_non_null(strstr(s, "\"other_processes\":[]"));
	assert_non_null(strstr(s, "\"pytorch_allocated\":23407571763"));
	assert_non_null(strstr(s, "\"pytorch_reserved_unallocated\":263591035"));
	assert_non_null(strstr(s, "\"unaccounted\":21474837"));
	free(s);
	s = memory_json("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 36.00 MiB (GPU "
			"0; 7.93 GiB total capacity; 4.43 GiB already allocated; 0 bytes free; 6.40 GiB "
			"reserved in total by PyTorch)\n");
	assert_non_null(strstr(s, "\"this_process\":null"));
	assert_non_null(strstr(s, "\"free\":0,"));
	free(s);
	s = memory_json("RuntimeError: CUDA error: out of memory\n");
	assert_string_equal(s, "{\"memory\":null}\n");
	free(s);
}

/* Every key of the "memory" object, in its order, with listed processes, this job's pid and the
 * pools: the whole object is pinned, byte for byte. */
static void json_object_whole(void **state)
{
	char *s = memory_json(
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a "
		"total capacity of 47.50 GiB of which 120.00 MiB is free. Process 4101 has 8.00 GiB "
		"memory in use. Process 77 has 34.00 GiB memory in use. Of the allocated memory 33.10 "
		"GiB is allocated by PyTorch, with 4.00 GiB allocated in private pools (e.g., CUDA "
		"Graphs), and 410.00 MiB is reserved by PyTorch but unallocated.\n");
	(void)state;
	assert_string_equal(s, "{\"memory\":{\"capacity\":51002736640,\"free\":125829120,"
			       "\"requested\":4294967296,\"this_process\":36507222016,"
			       "\"other_processes\":[{\"pid\":4101,\"bytes\":8589934592}],"
			       "\"pytorch_allocated\":35540854374,"
			       "\"pytorch_reserved_unallocated\":429916160,"
			       "\"unaccounted\":5779750912,\"this_pid\":77,"
			       "\"private_pools\":4294967296,\"limit\":null}}\n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes),
		cmocka_unit_test(torch25_this_process),
		cmocka_unit_test(torch21_capacty_process),
		cmocka_unit_test(tenant_is_environment),
		cmocka_unit_test(cut_message_processes_only),
		cmocka_unit_test(torch1_paren),
		cmocka_unit_test(torch1_cached),
		cmocka_unit_test(private_pools_and_kib),
		cmocka_unit_test(fraction_lines),
		cmocka_unit_test(no_numbers),
		cmocka_unit_test(would_fit_alone),
		cmocka_unit_test(repeated_message),
		cmocka_unit_test(parts_add_up),
		cmocka_unit_test(huge_sizes_saturate),
		cmocka_unit_test(json_object),
		cmocka_unit_test(json_object_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
