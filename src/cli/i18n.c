/* i18n.c — the locale and the message catalogues, found wherever oomfix was unpacked.
 *
 * A release binary is linked statically against glibc, which still reads locales from the
 * running system (the locale archive or /usr/lib/locale). A bare container or cluster node may
 * have none, not even C.UTF-8 (glibc builds it like any other locale, it is not compiled in), so
 * the release carries the C.UTF-8 locale it was built with in share/oomfix/locale and loads it
 * through LOCPATH when the system cannot supply the UTF-8 locale the user asked for. The
 * catalogues then come through LANGUAGE, which gettext reads whenever the locale is not "C".
 */
#include <locale.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "oomfix/i18n.h"
#include "oomfix/paths.h"

/* The value the user set for a category, in setlocale's order of precedence. */
static const char *requested(const char *category_var)
{
	const char *v = getenv("LC_ALL");
	if (v && *v)
		return v;
	v = getenv(category_var);
	if (v && *v)
		return v;
	v = getenv("LANG");
	return v && *v ? v : NULL;
}

static bool names_utf8(const char *loc)
{
	const char *dot = loc ? strchr(loc, '.') : NULL;
	return dot && (!strncasecmp(dot + 1, "utf-8", 5) || !strncasecmp(dot + 1, "utf8", 4));
}

static bool is_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && !strcmp(cs, "UTF-8");
}

/* setlocale for C.UTF-8 from the release's own copy; LOCPATH is put back as it was, so a
 * program oomfix starts ($EDITOR) sees the user's environment. */
static bool bundled_c_utf8(void)
{
	char dir[4096];
	if (!paths_share_file("oomfix/locale/C.utf8/LC_CTYPE", dir, sizeof dir) ||
	    !paths_share_file("oomfix/locale", dir, sizeof dir))
		return false;
	const char *old = getenv("LOCPATH");
	char *saved = old ? strdup(old) : NULL;
	setenv("LOCPATH", dir, 1);
	bool ok = setlocale(LC_ALL, "C.UTF-8") != NULL;
	if (saved) {
		setenv("LOCPATH", saved, 1);
		free(saved);
	} else {
		unsetenv("LOCPATH");
	}
	return ok;
}

void i18n_setlocale(void)
{
	const char *ctype = requested("LC_CTYPE");

	if (setlocale(LC_ALL, "") && (is_utf8() || !names_utf8(ctype)))
		return;
	/* A UTF-8 locale was asked for and is missing (ja_JP.UTF-8 where only C.UTF-8 exists, or no
	 * locale at all): keep UTF-8 with C.UTF-8, the system's or ours. Anything else stays as
	 * setlocale left it, and the UI draws plain ASCII. */
	if (!names_utf8(ctype))
		return;
	if (!setlocale(LC_ALL, "C.UTF-8") && !bundled_c_utf8())
		return;
	/* The language the missing locale named still selects the catalogue. */
	const char *msgs = requested("LC_MESSAGES"), *lang = getenv("LANGUAGE");
	if ((!lang || !*lang) && msgs && strcmp(msgs, "C") && strcmp(msgs, "POSIX") &&
	    strncasecmp(msgs, "C.", 2)) {
		char buf[64];
		size_t n = strcspn(msgs, ".@");
		if (n > 0 && n < sizeof buf) {
			memcpy(buf, msgs, n);
			buf[n] = '\0';
			setenv("LANGUAGE", buf, 1);
		}
	}
}

void i18n_init(void)
{
	const char *dir = OOMFIX_LOCALEDIR;
	char reloc[4096];

	/* Beside the binary first (a release, a relocated install), then the build tree (tests, the
	 * quick start), then where it was installed. */
	if (paths_share_file("locale", reloc, sizeof reloc))
		dir = reloc;
#ifdef OOMFIX_BUILD_LOCALEDIR
	else if (access(OOMFIX_BUILD_LOCALEDIR "/ja/LC_MESSAGES/oomfix.mo", F_OK) == 0)
		dir = OOMFIX_BUILD_LOCALEDIR;
#endif
	bindtextdomain(GETTEXT_PACKAGE, dir);
	bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
	textdomain(GETTEXT_PACKAGE);
}
