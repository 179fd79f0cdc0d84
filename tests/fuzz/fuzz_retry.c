/* fuzz_retry.c — the reader of `oomfix retry --events` that the UI runs (src/ui/retry.c): the
 * input is what the child wrote on its events descriptor, read through ui_retry_poll exactly as
 * the UI reads it, then the child is found gone (its pid is not a child of ours).
 *
 * Only the public calls of ui.h are used, so the target does not depend on how the event names
 * are spelled in the reader. What must hold for any input: the loop is ended afterwards with an
 * outcome that fits its buffer; every try's strings are NUL-terminated and its timing fits; the
 * changes counted are there; ui_retry_free releases everything (LeakSanitizer under libFuzzer).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../../src/ui/retry.h"

#include "fuzz.h"

static void check_str(const char *s)
{
	if (s)
		FUZZ_CHECK(strlen(s) < (1u << 21));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ui_retry r;
	int fd = fuzz_memfd(data, size);
	unsigned bits;

	if (fd < 0)
		return 0;
	memset(&r, 0, sizeof r);
	r.pid = getpid(); /* running, and never a child of ours: waitpid says ECHILD, so it is gone */
	r.ev_fd = fd;
	r.err_fd = -1;
	r.started = true;
	bits = ui_retry_poll(&r);
	FUZZ_CHECK(bits & UI_RT_END);
	FUZZ_CHECK(!ui_retry_running(&r));
	FUZZ_CHECK(r.ended);
	FUZZ_CHECK(r.ev_fd == -1);
	FUZZ_CHECK((unsigned)r.outcome < RETRY_OUT_COUNT); /* an outcome of the table, error when unknown */
	check_str(r.text);
	for (size_t i = 0; i < r.ntries; i++) {
		const struct ui_try *t = &r.tries[i];

		FUZZ_CHECK(strnlen(t->timing, sizeof t->timing) < sizeof t->timing);
		check_str(t->log);
		check_str(t->taken);
		check_str(t->waiting);
		check_str(t->summary);
		check_str(t->fix);
		check_str(t->title);
		check_str(t->note);
		check_str(t->lesson);
		FUZZ_CHECK(t->nchanges == 0 || t->changes != NULL);
		for (size_t k = 0; k < t->nchanges; k++)
			FUZZ_CHECK(t->changes[k] != NULL && strlen(t->changes[k]) < (1u << 21));
	}
	{
		char buf[64];

		ui_retry_last_error(&r, buf, sizeof buf);
		FUZZ_CHECK(strnlen(buf, sizeof buf) < sizeof buf);
	}
	ui_retry_free(&r);
	FUZZ_CHECK(r.ntries == 0 && r.tries == NULL && r.line == NULL);
	return 0;
}
