/* fuzz_theme.c — theme files (src/ui/theme.c's parser): the input is the file, read through
 * ui_theme_load_file as the UI reads a theme.
 *
 * What must hold for any input: the load succeeds, or fails with a message that names the file
 * and leaves the compiled-in default in place (never half a theme); a theme that loads has a
 * NUL-terminated name and every colour is the terminal's default (-1) or 0..255.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../src/ui/theme.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ui_theme t, def;
	struct err e;
	char path[64];
	int fd = fuzz_memfd(data, size), rc;

	if (fd < 0)
		return 0;
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ui_theme_default(&def);
	memset(&t, 0x5A, sizeof t);
	err_clear(&e);
	rc = ui_theme_load_file(path, &t, &e);
	close(fd);
	if (rc != ERR_OK) {
		FUZZ_CHECK(e.code == rc);
		FUZZ_CHECK(strcmp(e.file, path) == 0);
		FUZZ_CHECK(e.msg[0] != '\0' && strnlen(e.msg, sizeof e.msg) < sizeof e.msg);
		FUZZ_CHECK(memcmp(&t, &def, sizeof t) == 0);
		return 0;
	}
	FUZZ_CHECK(strnlen(t.name, sizeof t.name) < sizeof t.name);
	for (int i = 0; i < UI_R_COUNT; i++) {
		FUZZ_CHECK(t.role[i].fg >= -1 && t.role[i].fg <= 255);
		FUZZ_CHECK(t.role[i].bg >= -1 && t.role[i].bg <= 255);
	}
	return 0;
}
