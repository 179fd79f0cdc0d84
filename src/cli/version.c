/* version.c — `oomfix --version`: the build's version, the libraries it was linked with and what
 * they can do here, and where the data files are read from (useful for a release unpacked in an
 * unusual place). */
#include <curses.h>
#include <stdio.h>
#include <yaml.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "config.h"
#include "version.h"
#include "oomfix/i18n.h"
#include "oomfix/paths.h"
#include "cli.h"

/* SQLite is linked only once the job database support is in the binary; a weak reference is
 * NULL when it is not, so this file needs no build option for it. */
extern const char *sqlite3_libversion(void) __attribute__((weak));

/* Whether PCRE2 JIT works on this machine, not just whether it was compiled in: JIT needs
 * executable memory, which some hardened kernels and containers refuse. */
static const char *jit_state(void)
{
	uint32_t built = 0;
	int errcode;
	PCRE2_SIZE erroff;

	if (pcre2_config(PCRE2_CONFIG_JIT, &built) < 0 || !built)
		return _("not built in");
	pcre2_code *re = pcre2_compile((PCRE2_SPTR) "CUDA out of memory", PCRE2_ZERO_TERMINATED,
				       0, &errcode, &erroff, NULL);
	int rc = re ? pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) : -1;
	pcre2_code_free(re);
	return rc == 0 ? _("available") : _("built in, but unavailable here (the interpreter is used)");
}

int cli_version(FILE *fp)
{
	char pcre2[64] = "";
	const char *share = paths_share_dir();

	pcre2_config(PCRE2_CONFIG_VERSION, pcre2);
	fprintf(fp, "oomfix %s\n", OOMFIX_BUILD_VERSION);
	fprintf(fp, "libyaml %s, PCRE2 %s, %s", yaml_get_version_string(), pcre2, curses_version());
	if (sqlite3_libversion)
		fprintf(fp, ", SQLite %s", sqlite3_libversion());
	fputc('\n', fp);
	fprintf(fp, _("PCRE2 JIT: %s\n"), jit_state());
	fprintf(fp, _("Data files: %s\n"), share ? share : OOMFIX_DATADIR);
	return ferror(fp) ? 74 : 0;
}
