/* fuzz_memacct.c — the account of the card read from an OOM message, line by line as the
 * diagnosis feeds it (memacct_parse on each line, then memacct_finish).
 *
 * What must hold for any input: every size is "not said" (-1) or in [0, MEMACCT_SIZE_MAX]; the
 * derived sums are in range (no signed overflow: UBSan aborts on one); the four parts of the bar
 * are never negative and never add up past the capacity; the rules and the formatter answer.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "oomfix/memacct.h"

#include "fuzz.h"

static void check_size(int64_t v)
{
	FUZZ_CHECK(v == -1 || (v >= 0 && v <= MEMACCT_SIZE_MAX));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size;
	struct memacct m;
	int64_t part[MEMACCT_NPARTS], sum = 0;
	char buf[32];

	memacct_init(&m);
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);

		(void)memacct_parse(&m, s, n);
		s += n + (nl ? 1 : 0);
	}
	check_size(m.capacity);
	check_size(m.free);
	check_size(m.requested);
	check_size(m.this_process);
	check_size(m.pytorch_allocated);
	check_size(m.pytorch_reserved_unallocated);
	check_size(m.private_pools);
	check_size(m.limit);
	FUZZ_CHECK(m.nother <= MEMACCT_MAX_PROCS);
	for (size_t i = 0; i < m.nother; i++)
		FUZZ_CHECK(m.other[i].bytes >= 0 && m.other[i].bytes <= MEMACCT_SIZE_MAX);
	memacct_finish(&m);
	FUZZ_CHECK(m.nother <= MEMACCT_MAX_PROCS);
	FUZZ_CHECK(m.others_total >= 0);
	FUZZ_CHECK(m.job >= -1);
	FUZZ_CHECK(m.unaccounted >= -1);
	if (m.capacity > 0 && m.free >= 0)
		FUZZ_CHECK(m.unaccounted >= 0 && m.unaccounted <= m.capacity);
	(void)memacct_environment(&m);
	(void)memacct_fragmented(&m);
	if (memacct_parts(&m, part)) {
		for (int i = 0; i < MEMACCT_NPARTS; i++) {
			FUZZ_CHECK(part[i] >= 0 && part[i] <= m.capacity);
			sum += part[i];
			FUZZ_CHECK(sum <= m.capacity);
		}
	} else {
		for (int i = 0; i < MEMACCT_NPARTS; i++)
			FUZZ_CHECK(part[i] == 0);
	}
	memacct_format(m.capacity, buf, sizeof buf);
	FUZZ_CHECK(strnlen(buf, sizeof buf) < sizeof buf);
	memacct_format(m.others_total, buf, 6);
	FUZZ_CHECK(strnlen(buf, 6) < 6);
	return 0;
}
