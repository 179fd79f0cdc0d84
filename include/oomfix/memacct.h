/* memacct.h — the account of the card in PyTorch's out-of-memory message (SPEC §3.6).
 *
 * PyTorch says how the card was used when an allocation failed: total capacity, free bytes,
 * the request, the processes it can see, what it allocated and reserved itself. Every release
 * words it differently (aitk-reference §d.7); this module reads all of them into one account:
 * this job, other processes, unaccounted (capacity − free − the processes seen: another tenant
 * of the card, or a leak), free. It also decides the two things the numbers change: the
 * environment rule (E whatever the phase) and the fragmentation hint.
 *
 * Pure functions over text; no allocation.
 */
#ifndef OOMFIX_MEMACCT_H
#define OOMFIX_MEMACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEMACCT_MAX_PROCS 8

/* Every byte count is -1 when the message does not say it. */
struct memacct {
	bool present;               /* the message had at least capacity or the PyTorch numbers */
	int64_t capacity, free, requested;
	int64_t this_process;       /* said ("this process has"), or the listed process that holds
				     * at least what PyTorch reserved (in a container the job's pid
				     * is not its own, so it is listed as "Process N") */
	long long this_pid;         /* the pid of that listed process, or -1 */
	int64_t pytorch_allocated;  /* "Of the allocated memory X is allocated by PyTorch" */
	int64_t pytorch_reserved_unallocated;
	int64_t private_pools;      /* "with X allocated in private pools" */
	int64_t limit;              /* a per-process memory fraction's limit */
	size_t nother;
	struct { long long pid; int64_t bytes; } other[MEMACCT_MAX_PROCS];
	/* derived by memacct_finish */
	int64_t others_total;       /* sum of other[] (0 when none) */
	int64_t job;                /* this job for the account: this_process, else what PyTorch
				     * reserved (a lower bound), else -1 */
	int64_t unaccounted;        /* capacity − free − job − others, ≥ 0; -1 unknown */
	bool want_limit;            /* parsing: the fraction limit's value is on the next line */
};

/* Sets every count to "not said". */
void memacct_init(struct memacct *m);

/* Reads whatever numbers of an OOM message `s` holds into m (fields already set are kept, so a
 * message wrapped over several lines can be fed line by line). Returns true if it read any. */
bool memacct_parse(struct memacct *m, const char *s, size_t n);

/* Works out which listed process is this job, and the derived fields. Call once, after the
 * last memacct_parse. */
void memacct_finish(struct memacct *m);

/* SPEC §3.6: other processes or unaccounted memory hold a quarter of the card or more while
 * this job holds under half of it. */
bool memacct_environment(const struct memacct *m);

/* SPEC §3.6: the job would have fitted alone — other processes are listed, they and the free
 * memory together cover the failed request, and this job plus the request is at most 90 % of the
 * card. */
bool memacct_fits_alone(const struct memacct *m);

/* PyTorch's reserved-but-unallocated memory is a quarter or more of what it allocated. */
bool memacct_fragmented(const struct memacct *m);

/* The four parts of the card drawn as one bar: this job, other processes, unaccounted, free. */
enum memacct_part { MEMACCT_JOB, MEMACCT_OTHERS, MEMACCT_UNACCOUNTED, MEMACCT_FREE, MEMACCT_NPARTS };

/* Fills part[] with the bytes of each part (0 when unknown) and returns false when the account
 * cannot be drawn (no capacity). The parts never add up to more than the capacity. */
bool memacct_parts(const struct memacct *m, int64_t part[MEMACCT_NPARTS]);

/* Reads a size as torch prints it ("2.00 GiB", "0 bytes", "251.38 MiB") at s; stores the bytes
 * and returns the length read, or 0 if there is no size there. A size above MEMACCT_SIZE_MAX
 * (4 EiB, past any card) reads as MEMACCT_SIZE_MAX, so that the sums of an account stay in
 * range whatever a log claims. */
#define MEMACCT_SIZE_MAX (INT64_MAX / 32)
size_t memacct_size(const char *s, size_t n, int64_t *bytes);

/* Formats bytes for a person ("47.53 GiB", "43.9 MiB", "0 B") into buf. */
void memacct_format(int64_t bytes, char *buf, size_t sz);

#endif
